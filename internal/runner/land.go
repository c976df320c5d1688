package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Landing is how a done task's branch was brought into its base branch by
// Land.
type Landing struct {
	Status LandStatus `json:"status"`
	// Commit is the commit made on the base branch when merged.
	Commit string `json:"commit,omitempty"`
	// Regated: the base had moved since the task branched; the checks ran
	// again on the change laid on it before it landed (or failed there).
	Regated bool `json:"regated,omitempty"`
	// Details say why it did not land, for the user and for the prompt of
	// an attempt from the new base.
	Details string `json:"details,omitempty"`
	// Gate is the report of the checks run on the moved base.
	Gate *gate.Report `json:"gate,omitempty"`
}

// LandStatus says how a landing ended.
type LandStatus string

const (
	// LandMerged: the change is on the base branch, at Commit.
	LandMerged LandStatus = "merged"
	// LandNothing: the branch holds nothing new for the base branch.
	LandNothing LandStatus = "nothing"
	// LandConflict: the change conflicts with the base as it is now.
	LandConflict LandStatus = "conflict"
	// LandGateFailed: the checks fail on the change laid on the base as
	// it is now.
	LandGateFailed LandStatus = "gate-failed"
)

// Landed reports whether the task's work is in the base branch.
func (l Landing) Landed() bool { return l.Status == LandMerged || l.Status == LandNothing }

// AgainPrompt is the task given to the run a batch makes from its base as
// it is now, when the change of the task's first run (on branch first)
// passed its checks but could not land on base: why, and what the checks
// said there.
func AgainPrompt(task, first, base string, l Landing) string {
	prompt := task + "\n\n## Before you start\n\n" + fmt.Sprintf("An earlier run of this task (branch %s) passed its checks, "+
		"but its work could not be merged into %s, which other tasks changed meanwhile: %s. You start again from %s as it "+
		"is now, with their work in it: make the change fit it.", first, base, l.Details, base)
	if l.Gate != nil {
		prompt += "\n\nWhat the checks said there:\n\n" + engine.GateDigest(*l.Gate, 8<<10)
	}
	return prompt
}

// Land brings the branch of the done task run into the branch into as one
// squash commit. When into has not moved since the task branched, the tree
// that lands is the one the task's gate passed on. When it has moved, the
// change is laid on into's head (git merge-tree), checked out aside, and
// the task's checks run there, against the task's baseline: it lands only
// if they pass, so that into never receives a commit whose gate did not
// pass on exactly that tree. The caller serializes Land calls on one branch.
// A refusal that is not the task's (the user's tree is dirty, files in the
// way) is an error.
func Land(ctx context.Context, root string, res engine.TaskResult, into string, p Parts) (Landing, error) {
	ctx = context.WithoutCancel(ctx) // a landing is never left half done
	run, err := store.Open(root, res.RunID)
	if err != nil {
		return Landing{}, err
	}
	defer run.Close()
	var s TaskSpec
	if err := settings(run, &s, p); err != nil {
		return Landing{}, err
	}
	repo := &git.Repo{Dir: s.Repo}
	sq, err := repo.PrepareSquash(ctx, into, s.Worktree.Branch, false, "")
	var refused *git.MergeRefusedError
	switch {
	case errors.Is(err, git.ErrNothingToMerge):
		return Landing{Status: LandNothing}, nil
	case errors.As(err, &refused) && refused.Reason == git.RefusedConflict:
		return Landing{Status: LandConflict, Regated: true, Details: refused.Detail}, nil
	case err != nil:
		return Landing{}, err
	}
	if sq.Landed != "" { // landed already, by a run that was stopped before it said so
		return Landing{Status: LandMerged, Commit: sq.Landed}, nil
	}
	l := Landing{Regated: sq.Moved}
	if sq.Moved {
		p.progress("%s moved since task %s branched: running its checks on its change laid on %s", into, run.ID, shortSHA(sq.Head))
		dir := filepath.Join(filepath.Dir(s.Worktree.Path), run.ID+"-land")
		remove, err := repo.CheckoutSquash(ctx, sq, dir)
		if err != nil {
			return Landing{}, fmt.Errorf("check out %s on %s: %w", s.Worktree.Branch, into, err)
		}
		baseline, err := s.loggedBaseline(run)
		if err != nil {
			_ = remove()
			return Landing{}, err
		}
		env := append(slices.Clip(s.Env), RunTag(run.ID))
		rep := gate.Test(ctx, dir, env, s.Checks, gate.TestOptions{Baseline: baseline, Gaming: s.AntiGaming})
		if err := remove(); err != nil {
			p.warn("remove %s: %v", dir, err)
		}
		l.Gate = &rep
		if !rep.OK() {
			l.Status = LandGateFailed
			l.Details = fmt.Sprintf("the checks fail on the change laid on %s as it is now (%s): %s", into, shortSHA(sq.Head), rep.Summary())
			return l, nil
		}
	}
	msg := fmt.Sprintf("feat: %s\n\n%s\n\nMade by jlgcli task %s on branch %s, which keeps each attempt's commit.\n",
		engine.Subject(res.Task), res.Summary, res.RunID, s.Worktree.Branch)
	c, err := repo.Land(ctx, sq, msg)
	if err != nil {
		return Landing{}, err
	}
	l.Status, l.Commit = LandMerged, c
	return l, nil
}

// loggedBaseline is the gate's baseline the task recorded, nil when none.
func (s TaskSpec) loggedBaseline(run *store.Run) (*gate.Report, error) {
	events, _, err := Events(run)
	if err != nil {
		return nil, err
	}
	return baselineIn(run.ID, events)
}

// baselineIn is the gate's baseline in the events of task run id, nil when
// none.
func baselineIn(id string, events []engine.Event) (*gate.Report, error) {
	for _, ev := range events {
		if ev.Type == EventTaskBaseline {
			var r gate.Report
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				return nil, fmt.Errorf("run %s: baseline: %w", id, err)
			}
			return &r, nil
		}
	}
	return nil, nil
}
