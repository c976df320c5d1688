package batch

import (
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// TaskResult is what became of one task of a batch. A batch's result is
// also the initial state of its resume (Scheduler.Initial).
type TaskResult struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Reason says why a task is not done: which failed dependency blocks
	// it, why it was not started, why its merge failed.
	Reason string `json:"reason,omitempty"`
	// BlockedBy is the failed task that blocks a blocked one (maybe through
	// others).
	BlockedBy string `json:"blockedBy,omitempty"`

	// RunID, RunStatus, ExitCode and Details are the run's, once it ran.
	RunID     string `json:"runId,omitempty"`
	RunStatus Status `json:"runStatus,omitempty"`
	ExitCode  int    `json:"exitCode"`
	Details   string `json:"details,omitempty"`
	// Resumed: the run resumed an interrupted one.
	Resumed bool `json:"resumed,omitempty"`

	// CostUSD is what the run cost in all, its second run's cost included
	// (Rerun); CostKnown whether any of it is known.
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`

	// StartedAt is when the run started; DurationMs how long it ran (not
	// counting the merge), its second run's time included (Rerun). A task
	// that a resumed batch does not run again keeps those of its earlier
	// run.
	StartedAt  time.Time       `json:"startedAt,omitzero"`
	DurationMs millis.Duration `json:"durationMs"`

	// Merge is how its merge ended, nil before one.
	Merge *MergeOutcome `json:"merge,omitempty"`

	// Rerun is the task's second run, made when the change of its run
	// (RunID) passed its checks but could not land; nil when there was
	// none. CostUSD and DurationMs count both runs (SetRerun).
	Rerun *Rerun `json:"rerun,omitempty"`
}

// SetRerun makes r the task's second run: its cost and duration count in
// the task's, in place of those of the second run it held before (the same
// run, seen earlier).
func (t *TaskResult) SetRerun(r *Rerun) {
	if r == nil {
		return
	}
	if old := t.Rerun; old != nil {
		t.CostUSD -= old.CostUSD
		t.DurationMs -= old.DurationMs
	}
	c := *r
	c.With = append([]string(nil), r.With...)
	t.Rerun = &c
	t.CostUSD += c.CostUSD
	t.CostKnown = t.CostKnown || c.CostKnown
	t.DurationMs += c.DurationMs
}

// BatchStatus is how a batch ended.
type BatchStatus string

// The batch statuses.
const (
	// BatchDone: every task is done (run done, work merged).
	BatchDone BatchStatus = "done"
	// BatchIncomplete: some task is not done: failed, blocked, not merged,
	// or not started (fail-fast, budget).
	BatchIncomplete BatchStatus = "incomplete"
	// BatchInterrupted: the batch was interrupted (SIGINT, SIGTERM) before
	// every task was done; resuming it continues.
	BatchInterrupted BatchStatus = "interrupted"
)

// A batch's tasks end in many ways, so it has no code of a task's status
// of its own: exit.OK when every task is done, exit.Interrupted when it was
// interrupted (resume continues), else exit.Incomplete, whose row of the
// contract says so. No agent's code passes through a batch.

// Verdict is the status and exit code of a batch whose tasks ended as
// tasks; interrupted tells whether the batch was interrupted.
func Verdict(tasks []TaskResult, interrupted bool) (BatchStatus, int) {
	for _, t := range tasks {
		if t.Status != StatusDone {
			if interrupted {
				return BatchInterrupted, exit.Interrupted
			}
			return BatchIncomplete, exit.Incomplete
		}
	}
	return BatchDone, exit.OK
}

// Result is what became of a batch.
type Result struct {
	Status   BatchStatus `json:"status"`
	ExitCode int         `json:"exitCode"`
	// Tasks are the batch's tasks in the graph's order.
	Tasks []TaskResult `json:"tasks"`
	// Interrupted: the context was cancelled.
	Interrupted bool `json:"interrupted,omitempty"`
	// StopReason says why the batch stopped starting tasks (fail-fast,
	// budget, interruption); "" when it did not.
	StopReason string `json:"stopReason,omitempty"`
	// CostUSD is the sum of the tasks' known costs; CostKnown is false when
	// a task that ran has no known cost.
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
	// StartedAt and DurationMs are the batch's.
	StartedAt  time.Time       `json:"startedAt"`
	DurationMs millis.Duration `json:"durationMs"`
}

// Count is the number of tasks of status s.
func (r *Result) Count(s Status) int {
	n := 0
	for _, t := range r.Tasks {
		if t.Status == s {
			n++
		}
	}
	return n
}

// Task returns the result of task id; false when there is none.
func (r *Result) Task(id string) (TaskResult, bool) {
	for _, t := range r.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return TaskResult{}, false
}
