// Package batch runs the tasks of a batch: a DAG of tasks, several at once,
// each started once its dependencies are done and merged, their merges into
// the base branch one at a time in the order the tasks finish. It knows
// nothing of agents or git: a Runner runs a task and a Merger merges it,
// both given to the Scheduler.
package batch

import (
	"context"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

// Status is where a task of a batch stands. Besides the statuses below, a
// task whose run failed has the run's own status (max-iterations,
// no-progress, budget-exceeded, timeout, error, …).
type Status string

// The statuses the scheduler gives.
const (
	// StatusPending: not started; Reason says why when the batch ended.
	StatusPending Status = "pending"
	// StatusRunning: its run is under way.
	StatusRunning Status = "running"
	// StatusUnmerged: its run ended done and its merge is still to come
	// (queued, or not attempted because the batch was interrupted).
	StatusUnmerged Status = "unmerged"
	// StatusDone: its run ended done and its work is merged.
	StatusDone Status = "done"
	// StatusInterrupted: its run was interrupted; resuming the batch
	// resumes the run (RunID).
	StatusInterrupted Status = "interrupted"
	// StatusBlocked: never started because a dependency failed (BlockedBy).
	StatusBlocked Status = "blocked"
	// StatusSkipped: the task was not run, for a reason outside the batch
	// (its issue is claimed by someone else, or was closed); its
	// dependents are blocked.
	StatusSkipped Status = "skipped"
	// StatusMergeConflict and StatusMergeFailed: its run ended done but its
	// work could not be merged; a failure.
	StatusMergeConflict Status = "conflict"
	StatusMergeFailed   Status = "merge-failed"
	// StatusError is given to a run whose outcome has no status, or one of
	// the scheduler's own.
	StatusError Status = "error"
)

// Failed reports whether s is a failure: a run that ended neither done
// nor interrupted, or a merge that failed. A failed task blocks its
// dependents.
func (s Status) Failed() bool {
	switch s {
	case StatusPending, StatusRunning, StatusUnmerged, StatusDone, StatusInterrupted, StatusBlocked, "":
		return false
	}
	return true
}

// Start is what a Runner is asked to run.
type Start struct {
	// ID is the task's id.
	ID string
	// ResumeRunID, when not empty, is the task's interrupted run: the
	// runner resumes it rather than start anew.
	ResumeRunID string
	// BudgetUSD is the budget the task runs with: its own (Budget.Tasks),
	// bounded by what the batch's budget leaves it (what is left of it,
	// less what the other running tasks are expected to cost): TaskBudget.
	// 0: none (no budget of its own, and the batch has none).
	BudgetUSD float64
}

// TaskBudget is the budget a task whose own budget is own (0 or less:
// none) runs with when the batch's budget leaves it share (0: the batch has
// no budget): its own, bounded by the share.
func TaskBudget(own, share float64) float64 {
	if share > 0 && (own <= 0 || share < own) {
		return share
	}
	return own
}

// Outcome is how a task's run ended.
type Outcome struct {
	// Status is StatusDone, StatusInterrupted, or the failure's status.
	Status Status
	// ExitCode is the run's exit code under the exit-code contract.
	ExitCode int
	// RunID names the run, to resume or inspect it.
	RunID string
	// CostUSD is what the run cost in all, including before a resume;
	// CostKnown says whether its CLIs reported or priced it.
	CostUSD   float64
	CostKnown bool
	// Details says why it stopped.
	Details string
}

// Runner runs one task to its end, as `jlgcli task` does: the task's own
// worktree and branch, made from the base branch as it is when Run is
// called. It must return when ctx is cancelled, with StatusInterrupted
// once the run is checkpointed. Run is called from several goroutines at
// once, for different tasks.
type Runner interface {
	Run(ctx context.Context, s Start) Outcome
}

// MergeStatus is how a merge ended.
type MergeStatus string

// The merge statuses.
const (
	MergeMerged      MergeStatus = "merged"
	MergeConflict    MergeStatus = "conflict"
	MergeFailed      MergeStatus = "failed"
	MergeInterrupted MergeStatus = "interrupted"
)

// MergeOutcome is how the merge of a task into the base branch ended.
type MergeOutcome struct {
	Status MergeStatus `json:"status"`
	// Commit is the commit on the base branch, when merged.
	Commit  string `json:"commit,omitempty"`
	Details string `json:"details,omitempty"`
	// Rerun is the task's second run, when the merger ran it again (its
	// first run's change could not land); the scheduler counts its cost
	// and duration in the task's.
	Rerun *Rerun `json:"rerun,omitempty"`
}

// Merger merges a task whose run ended done into the base branch. The
// scheduler calls it for one task at a time, in the order the tasks
// finished, right after the run; a task's dependents start only once it
// is merged. When ctx is cancelled during a merge it should leave the base
// branch as it was and return MergeInterrupted.
type Merger interface {
	Merge(ctx context.Context, id string, run Outcome) MergeOutcome
}

// Why a task's first run did not land, and it was run again (Rerun.Why).
const (
	// RerunConflict: its change conflicts with the work merged since it
	// started.
	RerunConflict = "conflict"
	// RerunChecksFailed: the checks fail on its change laid on that work.
	RerunChecksFailed = "checks-failed"
)

// Rerun is a task's second run: made from the base branch as it had become
// when the change of the task's first run passed its checks but could not
// land there, told what the first run tried (it starts at the tier that
// passed there). Its cost and duration count in the task's.
type Rerun struct {
	// RunID is the second run.
	RunID string `json:"runId"`
	// Why is what kept the first run's change out (RerunConflict,
	// RerunChecksFailed); With the tasks whose work, merged since the
	// first run started, it met there (as far as the batch knows: its
	// conflicting files, else every task merged since); Details says how
	// (git's or the checks' words).
	Why     string   `json:"why"`
	With    []string `json:"with,omitempty"`
	Details string   `json:"details,omitempty"`
	// Status is the second run's ("" while it runs); Landed: its change
	// landed, in the first run's place.
	Status Status `json:"status,omitempty"`
	Landed bool   `json:"landed,omitempty"`
	// CostUSD and CostKnown, StartedAt and DurationMs are the second
	// run's own.
	CostUSD    float64         `json:"costUsd"`
	CostKnown  bool            `json:"costKnown"`
	StartedAt  time.Time       `json:"startedAt,omitzero"`
	DurationMs millis.Duration `json:"durationMs"`
	// Attempts and Branch are the second run's, in a batch's summary.
	Attempts int    `json:"attempts,omitempty"`
	Branch   string `json:"branch,omitempty"`
}

// After says after what the task was run again: "a conflict with p",
// "its checks failed with p's and q's work".
func (r *Rerun) After() string {
	who := ""
	switch len(r.With) {
	case 0:
	case 1:
		who = r.With[0]
	default:
		who = strings.Join(r.With[:len(r.With)-1], ", ") + " and " + r.With[len(r.With)-1]
	}
	switch {
	case r.Why == RerunChecksFailed && who != "":
		return "its checks failed on its change laid on " + possessive(r.With) + " work"
	case r.Why == RerunChecksFailed:
		return "its checks failed on its change laid on the work merged since it started"
	case who != "":
		return "a conflict with " + who
	}
	return "a conflict with the work merged since it started"
}

func possessive(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id + "'s"
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// Of says what the second run is, for the first run firstRun: "re-run of
// X after a conflict with p".
func (r *Rerun) Of(firstRun string) string {
	return "re-run of " + firstRun + " after " + r.After()
}

// As says what became of the first run: "re-run as Z after a conflict
// with p, which landed" (or which ended STATUS, or which runs).
func (r *Rerun) As() string {
	s := "re-run as " + r.RunID + " after " + r.After()
	switch {
	case r.Landed:
		return s + ", which landed"
	case r.Status == "" || r.Status == StatusRunning:
		return s + ", which is under way"
	case r.Status == StatusDone:
		return s + ", which passed but did not land"
	}
	return s + ", which ended " + string(r.Status)
}
