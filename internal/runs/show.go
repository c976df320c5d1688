package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// State is one run as it stands: what every front end shows of it.
type State struct {
	// ID is the run's whole id, Dir its directory, Meta what it was
	// started with.
	ID   string
	Dir  string
	Meta store.Meta
	// Status is the run's: running, or how it ended. Live: it goes on now,
	// in a process here or on the workers of a Temporal server; a run
	// whose status is running and that is not live was killed, and resume
	// continues it.
	Status string
	Live   bool
	// Loop, Task or Batch is the run's result, of its kind (Meta.Command):
	// a loop's (or a single run's) rebuilt from its journal, a task's, a
	// batch's.
	Loop  *engine.Result
	Task  *taskengine.Result
	Batch *batch.Summary
	// PR is a pull-request run's (jlgcli pr, task --until).
	PR *local.PRResult
	// Worktree is the worktree and branch a task made here was given.
	Worktree git.Worktree
	// Running are the tasks of a batch that runs (or was killed) here and
	// that were running, each read from its own run.
	Running []RunningTask
	// ParentCommand is the kind of the run that started this one
	// (Meta.Parent): "batch" for a batch's task, "pr" for a pull-request
	// run's round, "task" for a pull-request run that a task opened; ""
	// without one (or when it cannot be read). Round is, for a round, its
	// number, from 1.
	ParentCommand string
	Round         int
}

// OutputPath is the file that holds the raw output of an iteration of the
// run.
func (s State) OutputPath(iteration int) string {
	return (&store.Run{Dir: s.Dir}).OutputPath(iteration)
}

// Show reads run id (or a unique prefix of it) under the state root root:
// a run on Temporal is brought up to date from its server first (Refresh),
// reached through connect. p says what is noticed on the way (a journal
// repaired).
func Show(ctx context.Context, root, id string, p local.Parts, connect Connect) (State, error) {
	run, err := Open(root, id)
	if err != nil {
		return State{}, err
	}
	defer run.Close()
	if err := Refresh(ctx, run, connect); err != nil {
		return State{}, err
	}
	st := State{ID: run.ID, Dir: run.Dir, Meta: run.Meta}
	switch run.Meta.Command {
	case "task":
		res, err := TaskResult(run, p)
		if err != nil {
			return st, err
		}
		st.Task, st.Status = &res, string(res.Status)
		var s local.TaskSpec
		_ = json.Unmarshal(run.Meta.Options, &s)
		st.Worktree = s.Worktree
	case "pr":
		res, err := showPR(run, p)
		if err != nil {
			return st, err
		}
		st.PR, st.Status = &res, string(res.Status)
	case "batch":
		sum, running, err := batchState(run)
		if err != nil {
			return st, err
		}
		st.Batch, st.Status, st.Running = &sum, sum.Status, running
	default:
		evs, err := events(run, p, false)
		if err != nil {
			return st, err
		}
		res, err := engine.ResultOf(run.ID, run.Meta.Backend, evs)
		if err != nil {
			return st, fmt.Errorf("run %s: %w", run.ID, err)
		}
		st.Loop, st.Status = &res, string(res.Status)
	}
	if id := run.Meta.Parent; id != "" {
		if parent, err := store.Open(root, id); err == nil {
			st.ParentCommand = parent.Meta.Command
			if st.ParentCommand == "pr" {
				if pr, err := prResult(parent); err == nil {
					st.Round = roundOf(pr, run.ID)
				}
			}
			parent.Close()
		}
	}
	if run.Meta.Temporal != nil {
		st.Live = st.Status == store.Running
	} else {
		st.Live = run.Live()
	}
	if st.Loop != nil && st.Loop.Status == engine.StatusRunning {
		st.Loop.Details = engine.NotStopped(st.Loop.Iterations, st.Live, true)
	}
	return st, nil
}

// showPR is the result of a pull-request run as show gives it: from its
// journal (repaired, as p notices) when it runs here, from its record
// (Refresh) when on Temporal.
func showPR(run *store.Run, p local.Parts) (local.PRResult, error) {
	if run.Meta.Temporal != nil {
		return temporalPR(run)
	}
	evs, err := events(run, p, false)
	if err != nil {
		return local.PRResult{}, err
	}
	return local.PRResultOf(run, evs)
}

// TaskResult is the result of a task run (local.TaskResultOf); a journal
// that cannot be read leaves the result the task wrote. A task that a batch
// merged says so (local.WithBatchMerge). p says what is noticed on the
// way.
func TaskResult(run *store.Run, p local.Parts) (taskengine.Result, error) {
	evs, err := events(run, p, false)
	if err != nil {
		var saved taskengine.Result
		if found, rerr := run.ReadReport(&saved); found && rerr == nil {
			return local.WithBatchMerge(run, saved), nil
		}
		return taskengine.Result{}, err
	}
	res, err := local.TaskResultOf(run, evs, p)
	if err != nil {
		return res, err
	}
	return local.WithBatchMerge(run, res), nil
}

// batchState is where a batch run stands: the result it wrote when it
// stopped, else its checkpoint with each running task read from its own
// run (running).
func batchState(run *store.Run) (batch.Summary, []RunningTask, error) {
	var res batch.Summary
	found, err := run.ReadReport(&res)
	if err != nil || found {
		return res, nil, err
	}
	var cp local.BatchCheckpoint
	if err := run.ReadCheckpoint(&cp); err != nil {
		return res, nil, err
	}
	res = batch.Summary{RunID: run.ID, Status: cp.Status, CostUSD: cp.CostUSD, CostKnown: cp.CostKnown, DurationMs: cp.DurationMs}
	var journaled map[string]batch.TaskResult
	if evs, err := events(run, local.Parts{}, true); err == nil {
		journaled = local.BatchTasks(evs)
	}
	var running []RunningTask
	for _, t := range cp.Tasks {
		ts := batch.TaskSummary{ID: t.ID, Status: string(t.Status), ExitCode: t.ExitCode, CostUSD: t.CostUSD, CostKnown: t.CostKnown,
			DurationMs: t.DurationMs, Details: t.Reason, DependsOn: []string{}}
		if t.RunID == "" {
			t.RunID = journaled[t.ID].RunID
		}
		if !t.StartedAt.IsZero() {
			at := t.StartedAt.UTC()
			ts.StartedAt = &at
		}
		if t.RunID != "" {
			id := t.RunID
			ts.RunID = &id
		}
		switch {
		case t.Status == batch.StatusRunning && t.RunID != "":
			if rt, ok := runningBatchTask(run.Root(), &ts, &res); ok {
				running = append(running, rt)
			}
		case t.RunID != "":
			// A task whose run ended: its attempts, from its own run.
			if row, ok := taskRow(run.Root(), t.RunID); ok {
				ts.Attempts = row.Iterations
			}
		}
		if r := t.Rerun; r != nil {
			c := *r
			ts.Rerun = &c
			if row, ok := taskRow(run.Root(), r.RunID); ok {
				c.Attempts = row.Iterations
				if r.Status == "" {
					// Under way (or cut short): what it spent so far.
					c.CostUSD, c.CostKnown = row.CostUSD, row.CostKnown
					ts.CostUSD += row.CostUSD - r.CostUSD
					ts.CostKnown = ts.CostKnown || row.CostKnown
					res.CostUSD += row.CostUSD - r.CostUSD
					res.CostKnown = res.CostKnown || row.CostKnown
					ts.Details = strings.TrimPrefix(ts.Details+"; ", "; ") + r.As() + fmt.Sprintf(" (in attempt %d)", row.Iterations+1)
				}
			}
			ts.Attempts += c.Attempts
		}
		res.Tasks = append(res.Tasks, ts)
	}
	return res, running, nil
}

// taskRow is the index row of task run id under root, read from its run
// directory.
func taskRow(root, id string) (store.RunRow, bool) {
	r, err := store.Open(root, id)
	if err != nil {
		return store.RunRow{}, false
	}
	defer r.Close()
	row, err := r.Row()
	return row, err == nil
}

// runningBatchTask fills ts, a running task of a batch that has not
// stopped, from its own run under root: the attempts it made, the one it
// is in, and what it spent so far (added to the batch's cost, res).
func runningBatchTask(root string, ts *batch.TaskSummary, res *batch.Summary) (RunningTask, bool) {
	r, err := store.Open(root, *ts.RunID)
	if err != nil {
		return RunningTask{}, false
	}
	defer r.Close()
	row, err := r.Row()
	if err != nil {
		return RunningTask{}, false
	}
	ts.Attempts = row.Iterations
	ts.CostUSD, ts.CostKnown = row.CostUSD, row.CostKnown
	res.CostUSD += row.CostUSD
	res.CostKnown = res.CostKnown || row.CostKnown
	ts.Details = fmt.Sprintf("in attempt %d (run %s)", row.Iterations+1, r.ID)
	return RunningTask{ID: ts.ID, RunID: r.ID, Attempt: row.Iterations + 1, CostUSD: row.CostUSD, CostKnown: row.CostKnown}, true
}
