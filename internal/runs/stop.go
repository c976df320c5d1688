package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Stop stops run id (its id or a unique prefix) under the state root from
// another process, as Ctrl-C stops it: it asks the process that runs it
// (store.Run.RequestStop), which cancels the run's context as a SIGINT
// cancels the command's (runner's stop watch): the agent's process group is
// stopped, the state checkpointed, the status is interrupted, and `jlgcli
// resume` continues it. The command that runs a loop, a task or a batch
// that is stopped so exits 130, as on Ctrl-C.
//
// A task that a running batch started is stopped alone: the batch goes
// on with its other tasks, leaves the tasks that depend on the stopped one
// unstarted, and ends incomplete (exit 3) unless something else
// interrupts it; resuming the batch resumes the stopped task's run.
// Stopping the batch itself stops all its tasks, as Ctrl-C does.
//
// Stop waits until the run's process has let go of it (or ctx is done,
// with ctx's error: the request stays, and the run still stops) and
// returns the run as List shows it then. A run that no process runs is a
// exit.UsageError.
//
// A run on a Temporal server is stopped by cancelling its workflow, which
// ends interrupted once the attempt under way on a worker has stopped
// (temporal.TaskWorkflow): the jlgcli that follows it exits 130, and `jlgcli
// resume` continues it on the workers. A task of a batch on Temporal,
// named by its full run id (as show BATCH gives it), is stopped alone as
// a local batch's task is. connect reaches the server (nil: as the run's
// record says).
func Stop(ctx context.Context, root, id string, connect Connect) (Listed, error) {
	run, err := Open(root, id)
	if err != nil {
		if parent := temporalBatchOf(root, id); parent != nil {
			defer parent.Close()
			return stopTemporal(ctx, parent, id, connect)
		}
		return Listed{}, err
	}
	defer run.Close()
	if run.Meta.Temporal != nil {
		return stopTemporal(ctx, run, run.ID, connect)
	}
	if err := run.RequestStop(); errors.Is(err, store.ErrNotLive) {
		return Listed{}, notLive(root, run)
	} else if err != nil {
		return Listed{}, err
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for run.Live() {
		select {
		case <-ctx.Done():
			return Listed{}, fmt.Errorf("run %s was asked to stop and has not stopped yet (it will): %w", run.ID, ctx.Err())
		case <-t.C:
		}
	}
	return get(root, run.ID)
}

// temporalBatchOf is the record of the batch on Temporal whose task's run
// is id (the batch's id, a dash, the task's), opened; nil for none.
func temporalBatchOf(root, id string) *store.Run {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return nil
	}
	defer idx.Close()
	rows, err := idx.List(store.Filter{Command: "batch"})
	if err != nil {
		return nil
	}
	for _, row := range rows {
		if !strings.HasPrefix(id, row.ID+"-") {
			continue
		}
		if run, err := store.Open(root, row.ID); err == nil {
			if run.Meta.Temporal != nil {
				return run
			}
			run.Close()
		}
	}
	return nil
}

// stopTemporal cancels the workflow id of run on its Temporal server (run's
// own, or a task's of the batch run), waits for it to end, and returns the
// run as it ended: as List shows it once the jlgcli that follows it (if
// any) has kept its result, else brought up to date from the server.
func stopTemporal(ctx context.Context, run *store.Run, id string, connect Connect) (Listed, error) {
	addr := run.Meta.Temporal.Address
	conn, err := connect.connection(run)
	if err != nil {
		return Listed{}, err
	}
	c, err := Dial(ctx, conn)
	if err != nil {
		return Listed{}, err
	}
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return Listed{}, fmt.Errorf("run %s on %s: %w", id, addr, err)
	}
	if d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
		return Listed{}, &exit.UsageError{Err: fmt.Errorf("run %s is not running on %s: it has ended (%s), there is nothing to stop",
			id, addr, strings.ToLower(d.GetWorkflowExecutionInfo().GetStatus().String()))}
	}
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		return Listed{}, fmt.Errorf("stop run %s on %s: %w", id, addr, err)
	}
	if id != run.ID { // a task of the batch run: the batch goes on
		var res taskengine.Result
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
			return Listed{}, fmt.Errorf("run %s on %s was asked to stop: %w", id, addr, err)
		}
		return Listed{RunRow: store.RunRow{ID: id, Command: "task", Status: string(res.Status), Parent: run.ID, CostUSD: res.CostUSD,
			CostKnown: res.CostKnown, Iterations: len(res.Attempts), DurationMs: res.DurationMs}, Temporal: run.Meta.Temporal}, nil
	}
	var raw json.RawMessage
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &raw); err != nil {
		return Listed{}, fmt.Errorf("run %s on %s was asked to stop: %w", id, addr, err)
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for run.Live() { // its follower keeps the result
		select {
		case <-ctx.Done():
			return Listed{}, fmt.Errorf("run %s has stopped; the jlgcli that follows it has not let go of it yet: %w", id, ctx.Err())
		case <-t.C:
		}
	}
	if err := Refresh(ctx, run, connect); err != nil {
		return Listed{}, err
	}
	return get(run.Root(), id)
}

// notLive is the error of a stop of a run that no process runs.
func notLive(root string, run *store.Run) error {
	status := store.Running
	if r, err := get(root, run.ID); err == nil {
		status = r.Status
	}
	if status == store.Running {
		return &exit.UsageError{Err: fmt.Errorf("run %s is not live: its process was killed, there is nothing to stop", run.ID),
			Hint: "'jlgcli resume " + run.ID + "' continues it"}
	}
	return &exit.UsageError{Err: fmt.Errorf("run %s is not live: it has ended (%s), there is nothing to stop", run.ID, status)}
}

// get is run id (a full id) as List shows it.
func get(root, id string) (Listed, error) {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return Listed{}, err
	}
	defer idx.Close()
	row, err := idx.Get(id)
	if err != nil {
		return Listed{}, err
	}
	l := newLister(root)
	return l.run(row), nil
}
