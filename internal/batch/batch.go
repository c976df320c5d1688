// Package batch runs the tasks of a batch: a DAG of tasks, several at once,
// each started once its dependencies are done and merged, their merges into
// the base branch one at a time in the order the tasks finish. It knows
// nothing of agents or git: a Runner runs a task and a Merger merges it,
// both given to the Scheduler.
package batch

import "context"

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
	// BudgetUSD is the most the task can spend for the batch's budget to
	// hold: what is left of it, less what the other running tasks are
	// expected to cost. 0 when the batch has no budget. The runner should
	// bound the task's own budget by it (Cap).
	BudgetUSD float64
}

// Cap is the budget a task whose own budget is own (0 or less: none) runs
// with in the batch: its own, bounded by the batch's share s.BudgetUSD.
func (s Start) Cap(own float64) float64 {
	if s.BudgetUSD > 0 && (own <= 0 || s.BudgetUSD < own) {
		return s.BudgetUSD
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
}

// Merger merges a task whose run ended done into the base branch. The
// scheduler calls it for one task at a time, in the order the tasks
// finished, right after the run; a task's dependents start only once it
// is merged. When ctx is cancelled during a merge it should leave the base
// branch as it was and return MergeInterrupted.
type Merger interface {
	Merge(ctx context.Context, id string, run Outcome) MergeOutcome
}
