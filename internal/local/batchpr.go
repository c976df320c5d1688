package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// BatchPR is how the tasks of a batch land when each is a pull request
// worked until a target (batch --pr --until): kept in the batch's spec.
// Nothing merges into the user's checkout: each task starts from the
// remote's base branch as it is then (a dependency merged there is in
// it), pushes its branch, opens its pull request and works it in a run
// of its own until the target; the task is done when its pull request
// is.
type BatchPR struct {
	// Remote is the git remote the branches are pushed to and the base
	// read from; Forge the [forge] settings; Policy the loop's.
	Remote string         `json:"remote"`
	Forge  forge.Settings `json:"forge"`
	Policy pull.Policy    `json:"policy"`
}

// EventBatchPR holds the pull-request run of a task, journaled before
// the run exists (BatchPRData): a resumed batch goes on with it.
const EventBatchPR = "batch-pr"

// BatchPRData is the payload of EventBatchPR.
type BatchPRData struct {
	Task string `json:"task"`
	Run  string `json:"run"`
}

// OpenTaskPR opens, or finds open, the pull request of the done task run
// res, its branch pushed, into base on f; closes, when not 0, is the
// issue the change closes (its body says "Closes #N").
func OpenTaskPR(ctx context.Context, f forge.Forge, res taskengine.Result, base string, target pull.Target, closes int, p Parts) (forge.PR, error) {
	g := res.Git
	pr, created, err := f.OpenPR(ctx, forge.NewPR{Head: g.Branch, Base: base, Title: SquashSubject(res.Task), Body: PRBody(res, target, closes)})
	if err != nil {
		return forge.PR{}, fmt.Errorf("open the pull request of %s: %w", g.Branch, err)
	}
	if created {
		p.progress("opened pull request #%d: %s", pr.Number, pr.URL)
	}
	return pr, nil
}

// PRBody is the text of the pull request that task run res opens to be
// worked until target: its summary, who made it, and, when closes is not
// 0, the issue its merge closes.
func PRBody(res taskengine.Result, target pull.Target, closes int) string {
	body := fmt.Sprintf("%s\n\nMade by jlgcli task %s; jlgcli works this pull request until it is %s.", res.Summary, res.RunID, target)
	if closes > 0 {
		body += fmt.Sprintf("\n\nCloses #%d", closes)
	}
	return body
}

// prBase is where task id starts from in a batch of pull requests: the
// remote's base branch, fetched now.
func (b *batchRun) prBase(ctx context.Context) (string, error) {
	sha, err := b.checkout(ctx).FetchBranch(ctx, b.spec.PR.Remote, b.spec.BaseBranch)
	if err != nil {
		return "", fmt.Errorf("the base of its pull request: %w", err)
	}
	return sha, nil
}

// landByPR opens the pull request of task id's done run res and works it
// until the batch's target (or goes on with the run that did, for a
// resumed batch): the task's outcome is its pull request's.
func (b *batchRun) landByPR(ctx context.Context, id string, res taskengine.Result, p Parts) batch.Outcome {
	fail := func(err error) batch.Outcome {
		code := exit.Error
		if exit.IsUsage(err) {
			code = exit.Usage
		}
		return batch.Outcome{Status: batch.StatusError, ExitCode: code, RunID: res.RunID, CostUSD: res.CostUSD, CostKnown: res.CostKnown, Details: err.Error()}
	}
	t := b.byID[id]
	var out PRResult
	b.mu.Lock()
	prID := b.prRuns[id]
	b.mu.Unlock()
	resumed := false
	if prID != "" {
		run, err := store.Open(b.root, prID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			p.progress("pull-request run %s was stopped before it was made: it starts anew", prID)
		case err != nil:
			return fail(err)
		default:
			events, err := lockedEvents(run)
			if err == nil {
				out, _, err = ResumePR(ctx, b.root, run, events, p)
			}
			run.Close()
			if err != nil {
				return fail(err)
			}
			resumed = true
		}
	}
	if !resumed {
		if res.Git == nil || !res.Git.Pushed {
			return fail(fmt.Errorf("its branch was not pushed to %s: no pull request to work", b.spec.PR.Remote))
		}
		pr, err := OpenTaskPR(ctx, b.forge, res, b.spec.BaseBranch, b.spec.PR.Policy.Target, issueOf(t), p)
		if err != nil {
			return fail(err)
		}
		if b.issues != nil {
			b.issues.update(id, func(s *intake.Status) { s.PR = pr.URL })
		}
		if prID == "" {
			prID = store.NewRunID(time.Now())
			b.mu.Lock()
			b.prRuns[id] = prID
			b.mu.Unlock()
			data, _ := json.Marshal(BatchPRData{Task: id, Run: prID})
			b.record(engine.Event{Type: EventBatchPR, Time: time.Now(), Data: data})
		}
		spec := PRSpec{Task: t.Spec, Number: pr.Number, Remote: b.spec.PR.Remote, Forge: b.spec.PR.Forge, Policy: b.spec.PR.Policy, From: res.RunID}
		out, err = StartPR(ctx, NewPR{Spec: spec, Prompt: t.Prompt, Repo: b.checkout(ctx), ID: prID, StateDir: b.root}, b.forge, p)
		if err != nil {
			return fail(err)
		}
	}
	b.mu.Lock()
	b.prResults[id] = out
	b.mu.Unlock()
	if b.issues != nil && out.URL != "" {
		b.issues.update(id, func(s *intake.Status) { s.PR = out.URL })
	}
	return PROutcome(out, res.RunID, res.CostUSD, res.CostKnown)
}

// PROutcome is the outcome of a batch task whose run taskRun (which cost
// taskCost) opened the pull request that out worked: the pull request's.
func PROutcome(out PRResult, taskRun string, taskCost float64, taskCostKnown bool) batch.Outcome {
	return batch.Outcome{Status: batchStatus(out.Status), ExitCode: out.ExitCode, RunID: taskRun,
		CostUSD: taskCost + out.CostUSD, CostKnown: taskCostKnown || out.CostKnown,
		Details: fmt.Sprintf("pull request #%d (%s), run %s: %s", out.Number, out.URL, out.RunID, cmp.Or(out.Reason, string(out.Status)))}
}

// issueOf is the issue task t came from, 0 for a sheet's.
func issueOf(t BatchTask) int {
	if t.Issue != nil {
		return t.Issue.Number
	}
	return 0
}

// replayPRRuns are the pull-request runs a batch's journal holds, by task.
func replayPRRuns(events []engine.Event) map[string]string {
	out := map[string]string{}
	for _, ev := range events {
		if ev.Type != EventBatchPR {
			continue
		}
		var d BatchPRData
		if json.Unmarshal(ev.Data, &d) == nil && d.Task != "" {
			out[d.Task] = d.Run
		}
	}
	return out
}
