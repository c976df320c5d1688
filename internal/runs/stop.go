package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
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
// returns the run as List shows it then. A run that no process runs, or
// that runs on a Temporal server, is a runner.UsageError.
func Stop(ctx context.Context, root, id string) (Run, error) {
	run, err := Open(root, id)
	if err != nil {
		return Run{}, err
	}
	defer run.Close()
	if t := run.Meta.Temporal; t != nil {
		// Its workflows do not take a cancellation as an interruption: the
		// attempt under way would end as an error, not resumable.
		return Run{}, &runner.UsageError{
			Err: fmt.Errorf("run %s runs on the workers of the Temporal server %s: it cannot be stopped from here (its workflow does not stop gracefully on a cancellation)",
				run.ID, t.Address),
			Hint: "stop the workers with Ctrl-C (the attempt under way is handed back and made again), or wait for it to end"}
	}
	if err := run.RequestStop(); errors.Is(err, store.ErrNotLive) {
		return Run{}, notLive(root, run)
	} else if err != nil {
		return Run{}, err
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for run.Live() {
		select {
		case <-ctx.Done():
			return Run{}, fmt.Errorf("run %s was asked to stop and has not stopped yet (it will): %w", run.ID, ctx.Err())
		case <-t.C:
		}
	}
	return get(root, run.ID)
}

// notLive is the error of a stop of a run that no process runs.
func notLive(root string, run *store.Run) error {
	status := store.Running
	if r, err := get(root, run.ID); err == nil {
		status = r.Status
	}
	if status == store.Running {
		return &runner.UsageError{Err: fmt.Errorf("run %s is not live: its process was killed, there is nothing to stop", run.ID),
			Hint: "'jlgcli resume " + run.ID + "' continues it"}
	}
	return &runner.UsageError{Err: fmt.Errorf("run %s is not live: it has ended (%s), there is nothing to stop", run.ID, status)}
}

// get is run id (a full id) as List shows it.
func get(root, id string) (Run, error) {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return Run{}, err
	}
	defer idx.Close()
	row, err := idx.Get(id)
	if err != nil {
		return Run{}, err
	}
	l := lister{root: root, batches: map[string]batchRuns{}}
	return l.run(row), nil
}
