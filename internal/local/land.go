package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
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

// Outcome is the scheduler's outcome of a landing on into that landed (a
// local batch's or one on Temporal).
func (l Landing) Outcome(into string) batch.MergeOutcome {
	m := batch.MergeOutcome{Status: batch.MergeMerged, Commit: l.Commit}
	if l.Status == LandNothing {
		m.Details = "its branch holds no change for " + into + ": nothing was merged"
	}
	return m
}

// AgainPrompt is the task given to the run a batch makes from its base as
// it is now, when the change of the task's first run (on branch first)
// passed its checks but could not land on base: why, and what the checks
// said there.
func AgainPrompt(task, first, base string, l Landing) string {
	prompt := task + "\n\n## Before you start\n\n" + fmt.Sprintf("An earlier run of this task (branch %s) passed its checks, "+
		"but its work could not be merged into %s, which other tasks changed meanwhile: %s. You start again from %s as it "+
		"is now, with their work in it: make the change fit it.", first, base, l.Details, base)
	if l.Gate != nil {
		prompt += "\n\nWhat the checks said there:\n\n" + taskengine.GateDigest(*l.Gate, 8<<10)
	}
	return prompt
}

// LandSite is where a done task's change lands, for LandTask: the user's
// checkout (a local batch, Land) or a worker's clone of the remote (a batch
// on Temporal, the land activity).
type LandSite interface {
	// Lay lays the task's change on the branch as it is now.
	Lay(ctx context.Context) (Laid, error)
	// Baseline is the task's gate baseline (nil: none), which the checks
	// on a moved branch are judged against, as the task's gate was.
	Baseline() (*gate.Report, error)
	// Checkout checks out the change laid on the moved branch aside, for
	// the checks to run there; remove removes it.
	Checkout(ctx context.Context) (dir string, remove func(), err error)
	// Commit lands the change laid on the branch and returns its commit.
	Commit(ctx context.Context) (string, error)
}

// Laid is a task's change laid on the branch it lands on (LandSite.Lay).
type Laid struct {
	// Nothing: the change holds nothing new for the branch.
	Nothing bool
	// Landed is the commit of the change landed already (by a run stopped
	// before it said so).
	Landed string
	// Conflict says how the change conflicts with the branch as it is
	// now; "": it does not.
	Conflict string
	// Moved: the branch moved since the task branched from it; Head is
	// its head now.
	Moved bool
	Head  string
}

// LandTask lands the done task run runID, whose settings are s, on branch
// into at site; every landing of a task goes this way (Land, the land
// activity of a batch on Temporal). When into has not moved since the task
// branched, the tree that lands is the one the task's gate passed on. When
// it has moved, the change is laid on into's head, refused when it
// conflicts, checked out aside, and the task's checks run there against
// its baseline: it lands only if they pass, so that into never receives a
// commit whose checks did not pass on exactly that tree. moved, when not
// nil, is told into's head before those checks run.
func LandTask(ctx context.Context, site LandSite, runID, into string, s TaskSpec, moved func(head string)) (Landing, error) {
	laid, err := site.Lay(ctx)
	switch {
	case err != nil:
		return Landing{}, err
	case laid.Nothing:
		return Landing{Status: LandNothing}, nil
	case laid.Conflict != "":
		return Landing{Status: LandConflict, Regated: true, Details: laid.Conflict}, nil
	case laid.Landed != "":
		return Landing{Status: LandMerged, Commit: laid.Landed}, nil
	}
	l := Landing{Regated: laid.Moved}
	if laid.Moved && len(s.Checks) > 0 {
		if moved != nil {
			moved(laid.Head)
		}
		dir, remove, err := site.Checkout(ctx)
		if err != nil {
			return Landing{}, err
		}
		baseline, err := site.Baseline()
		if err != nil {
			remove()
			return Landing{}, err
		}
		env := append(slices.Clip(s.Env), RunTag(runID))
		box, _, err := Confine(s.Sandbox, Parts{}, Site{RunID: runID})
		if err != nil {
			remove()
			return Landing{}, err
		}
		rep := gate.Test(ctx, dir, env, s.Checks, gate.TestOptions{Baseline: baseline, Gaming: s.AntiGaming, Box: box})
		remove()
		if ctx.Err() != nil {
			return Landing{}, ctx.Err()
		}
		l.Gate = &rep
		if !rep.OK() {
			l.Status = LandGateFailed
			l.Details = fmt.Sprintf("the checks fail on the change laid on %s as it is now (%s): %s", into, git.ShortSHA(laid.Head), rep.Summary())
			return l, nil
		}
	}
	c, err := site.Commit(ctx)
	if err != nil {
		return Landing{}, err
	}
	l.Status, l.Commit = LandMerged, c
	return l, nil
}

// Land brings the branch of the done task run into the branch into of the
// user's checkout as one squash commit (LandTask; git.Repo.PrepareSquash
// lays the change with git merge-tree). The caller serializes Land calls
// on one branch. A refusal that is not the task's (the user's tree is
// dirty, files in the way) is an error.
func Land(ctx context.Context, root string, res taskengine.Result, into string, p Parts) (Landing, error) {
	return land(ctx, nil, root, res, into, p)
}

// land is Land in repo, the user's checkout as the caller opened it (nil,
// or not the task's: the task's, opened here).
func land(ctx context.Context, repo *git.Repo, root string, res taskengine.Result, into string, p Parts) (Landing, error) {
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
	if repo == nil || repo.Dir != s.Repo {
		repo = s.repo(ctx)
	}
	site := &checkoutSite{repo: repo, run: run, spec: s, res: res, into: into, p: p}
	return LandTask(ctx, site, run.ID, into, s, func(head string) {
		p.progress("%s moved since task %s branched: running its checks on its change laid on %s", into, run.ID, git.ShortSHA(head))
	})
}

// checkoutSite is the user's checkout, where a local batch lands its tasks.
type checkoutSite struct {
	repo *git.Repo
	run  *store.Run
	spec TaskSpec
	res  taskengine.Result
	into string
	p    Parts
	sq   *git.Squash
}

func (c *checkoutSite) Lay(ctx context.Context) (Laid, error) {
	sq, err := c.repo.PrepareSquash(ctx, c.into, c.spec.Worktree.Branch, false, "")
	var refused *git.MergeRefusedError
	switch {
	case errors.Is(err, git.ErrNothingToMerge):
		return Laid{Nothing: true}, nil
	case errors.As(err, &refused) && refused.Reason == git.RefusedConflict:
		return Laid{Conflict: refused.Detail}, nil
	case errors.As(err, &refused) && refused.Reason == git.RefusedReview:
		// Not the base's doing: no run from it would land either.
		refused.Command = squashByHand(c.spec.Worktree.Branch, c.res.Task)
		return Laid{}, refused
	case err != nil:
		return Laid{}, err
	}
	c.sq = sq
	return Laid{Landed: sq.Landed, Moved: sq.Moved, Head: sq.Head}, nil
}

func (c *checkoutSite) Baseline() (*gate.Report, error) { return c.spec.loggedBaseline(c.run) }

func (c *checkoutSite) Checkout(ctx context.Context) (string, func(), error) {
	dir := filepath.Join(filepath.Dir(c.spec.Worktree.Path), c.run.ID+"-land")
	remove, err := c.repo.CheckoutSquash(ctx, c.sq, dir)
	if err != nil {
		return "", nil, fmt.Errorf("check out %s on %s: %w", c.spec.Worktree.Branch, c.into, err)
	}
	return dir, func() {
		if err := remove(); err != nil {
			c.p.warn("remove %s: %v", dir, err)
		}
	}, nil
}

func (c *checkoutSite) Commit(ctx context.Context) (string, error) {
	return c.repo.Land(ctx, c.sq, squashMessage(c.res, c.spec.Worktree.Branch))
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

// SettleLanding is what every command of jlgcli does first in the checkout
// that holds dir (the console, when it resolves the command's directory):
// the landing that a stopped jlgcli left there half done, if any, is
// finished when the checkout is as it left it, and the notice says so; when
// the user changed the checkout since, what it had staged or written is
// put back and the error is a *LandingError (exit 3) that says what
// happened and the command that lands it (git.Repo.SettleLanding). When
// there is nothing to do it reads a file or two and runs no git process
// (git.LandingPending).
func SettleLanding(ctx context.Context, dir string) (notice string, err error) {
	if !git.LandingPending(dir) {
		return "", nil
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		return "", nil // not a checkout after all: nothing of jlgcli's there
	}
	settled, err := repo.SettleLanding(ctx)
	var refused *git.MergeRefusedError
	switch {
	case errors.As(err, &refused):
		return "", &LandingError{Refusal: refused}
	case err != nil:
		return "", fmt.Errorf("the landing that a stopped jlgcli left in %s: %w", repo.Dir, err)
	case settled != nil:
		return settled.String(), nil
	}
	return "", nil
}

// LandingError is a landing that a stopped jlgcli left half done and that
// could not be finished, because the user changed the checkout since: what
// it had staged or written there was put back, and the user's changes
// left as they are. Its status is incomplete (exit 3).
type LandingError struct{ Refusal *git.MergeRefusedError }

func (e *LandingError) Error() string { return e.Refusal.Detail }
func (e *LandingError) Unwrap() error { return e.Refusal }

// Hint is the command that lands it.
func (e *LandingError) Hint() string {
	if e.Refusal.Command == "" {
		return ""
	}
	return "to land it: " + e.Refusal.Command
}

// Status is the status a command that met it ends with.
func (e *LandingError) Status() engine.Status { return engine.StatusIncomplete }
