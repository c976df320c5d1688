package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Runtime is the Source of the runs kept under one state root, through
// package runs: the same reading and acting as the command line's.
type Runtime struct {
	Root string
	// Connect reaches the server of a run on Temporal (nil: as the run's
	// record says).
	Connect runs.Connect
	// Exe is the jlgcli that resumes a run in a process of its own;
	// "": this one. Env is its environment (nil: this process's).
	Exe string
	Env []string

	mu sync.Mutex
	// ended are the results of the batch tasks' runs that are done, by run
	// id: they do not change, so a batch's page, fetched again at each
	// event, does not read their journals again.
	ended map[string]endedTask
	// live are the changes of the worktrees of tasks under way.
	live runs.LiveDiffs
}

// endedTask is a batch's task run that ended: its result and its start.
type endedTask struct {
	res     *taskengine.Result
	started time.Time
}

// taskResult is the result of a batch's task run id (nil when it cannot be
// read), and when it started.
func (r *Runtime) taskResult(id string) (*taskengine.Result, time.Time) {
	r.mu.Lock()
	e, ok := r.ended[id]
	r.mu.Unlock()
	if ok {
		return e.res, e.started
	}
	run, err := store.Open(r.Root, id)
	if err != nil {
		return nil, time.Time{}
	}
	defer run.Close()
	got, err := runs.TaskResult(run, local.Parts{})
	if err != nil {
		return nil, run.Meta.StartedAt
	}
	if got.Status == engine.StatusDone && !run.Live() { // a task that stopped otherwise may be resumed: read again
		r.mu.Lock()
		if r.ended == nil {
			r.ended = map[string]endedTask{}
		}
		r.ended[id] = endedTask{&got, run.Meta.StartedAt}
		r.mu.Unlock()
	}
	return &got, run.Meta.StartedAt
}

// httpError gives an error of the runtime its status: a run not found 404,
// a request the run refuses (a usage error) 400.
func httpError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrEmptyID):
		return &StatusError{Code: http.StatusNotFound, Err: err}
	case exit.IsUsage(err), errors.Is(err, store.ErrAmbiguous):
		return &StatusError{Code: http.StatusBadRequest, Err: err}
	}
	return err
}

func (r *Runtime) List(ctx context.Context) ([]runs.Listed, error) {
	list, err := runs.List(r.Root, store.Filter{})
	return list, httpError(err)
}

func (r *Runtime) Show(ctx context.Context, id string) (Shown, error) {
	st, err := runs.Show(ctx, r.Root, id, local.Parts{}, r.Connect)
	if err != nil {
		return Shown{}, httpError(err)
	}
	out := Shown{ID: st.ID, Command: st.Meta.Command, Title: st.Meta.Prompt, Parent: st.Meta.Parent, Live: st.Live,
		StartedAt: st.Meta.StartedAt, Loop: st.Loop, Task: st.Task, Batch: st.Batch, PR: st.PR, ParentCommand: st.ParentCommand, Round: st.Round}
	if t := st.Meta.Temporal; t != nil {
		out.Temporal = t.Address
	}
	if st.Task != nil && st.Live && st.Worktree.Path != "" {
		// Its attempt under way: the worktree as it is now.
		switch ch, err := r.live.Of(ctx, st.Worktree); {
		case err == nil:
			kept := taskengine.ChangeOf(ch)
			out.Working = &kept
		case errors.Is(err, runs.ErrMeasuring):
			out.Measuring = true
		}
	}
	if st.Batch != nil {
		// Each task's attempts, for the chart; a running task's start and
		// attempts so far, which the batch's own record has only once
		// the task ends.
		out.Tasks = map[string]*taskengine.Result{}
		withGraph(st.Batch, st.Meta.Options)
		for i := range st.Batch.Tasks {
			t := &st.Batch.Tasks[i]
			if t.RunID == nil {
				continue
			}
			res, started := r.taskResult(*t.RunID)
			if t.StartedAt == nil && !started.IsZero() {
				t.StartedAt = &started
			}
			if res != nil {
				out.Tasks[t.ID] = res
				if t.Status == string(batch.StatusRunning) {
					t.Attempts = len(res.Attempts)
				}
			}
			if rr := t.Rerun; rr != nil {
				if res, _ := r.taskResult(rr.RunID); res != nil {
					out.Tasks[t.ID+rerunRow] = res
				}
			}
		}
	}
	return out, nil
}

func (r *Runtime) Follow(ctx context.Context, id string, from int64, fn func(Event) error) error {
	return httpError(runs.Follow(ctx, r.Root, id, runs.FollowOptions{From: from, NoOutput: true}, func(e runs.Event) error {
		return fn(Event{Offset: e.Next, Line: e.Line})
	}))
}

func (r *Runtime) Output(ctx context.Context, id string, _ int64, fn func(Chunk) error) error {
	return httpError(runs.Follow(ctx, r.Root, id, runs.FollowOptions{}, func(e runs.Event) error {
		if e.Kind != runs.KindOutput {
			return nil
		}
		return fn(Chunk{Call: e.N, Offset: e.Next, Data: e.Output})
	}))
}

func (r *Runtime) Now(_ context.Context, id string, lines int) (runs.Activity, error) {
	a, err := runs.Now(r.Root, id, lines)
	return a, httpError(err)
}

func (r *Runtime) Stop(ctx context.Context, id string) (string, error) {
	run, err := runs.Stop(ctx, r.Root, id, r.Connect)
	if err != nil {
		return "", httpError(err)
	}
	return fmt.Sprintf("run %s stopped: %s; resume continues it", run.ID, run.Status), nil
}

// Resume starts `jlgcli resume` of the run in a process of its own (its
// own session: it goes on if the server stops), and says so once the run
// is live again, or why the resume ended at once.
func (r *Runtime) Resume(ctx context.Context, id string) (string, error) {
	st, err := runs.Show(ctx, r.Root, id, local.Parts{}, r.Connect)
	if err != nil {
		return "", httpError(err)
	}
	switch {
	case st.Live:
		return "", &StatusError{Code: http.StatusBadRequest, Err: fmt.Errorf("run %s is running", st.ID)}
	case st.Status == string(engine.StatusDone):
		return "", &StatusError{Code: http.StatusBadRequest, Err: fmt.Errorf("run %s is done: nothing to resume", st.ID)}
	}
	d, err := runs.ResumeDetached(r.Root, st.ID, r.Exe, r.Env)
	if err != nil {
		return "", httpError(err)
	}
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-d.Exited:
			if err != nil {
				return "", &StatusError{Code: http.StatusBadRequest, Err: fmt.Errorf("resume of run %s ended at once (%v): %s", st.ID, err, lastLine(d.Log))}
			}
			return fmt.Sprintf("run %s was resumed and ended", st.ID), nil
		case <-tick.C:
			if run, err := store.Open(r.Root, st.ID); err == nil {
				live := run.Live()
				run.Close()
				if live {
					return fmt.Sprintf("run %s resumed (process %d)", st.ID, d.PID), nil
				}
			}
		case <-deadline:
			return fmt.Sprintf("run %s is being resumed (process %d)", st.ID, d.PID), nil
		}
	}
}

// withGraph gives the tasks of sum their dependencies and levels from the
// batch's spec (options, its record's) where sum has none: a batch that
// has not ended has them only there.
func withGraph(sum *batch.Summary, options []byte) {
	var spec local.BatchSpec
	if json.Unmarshal(options, &spec) != nil {
		return
	}
	g, err := local.BatchGraph(spec.Tasks)
	if err != nil {
		return
	}
	level := map[string]int{}
	for i, ids := range g.Levels() {
		for _, id := range ids {
			level[id] = i
		}
	}
	deps := map[string][]string{}
	for _, t := range spec.Tasks {
		deps[t.ID] = t.Depends
	}
	for i := range sum.Tasks {
		t := &sum.Tasks[i]
		if len(t.DependsOn) == 0 && len(deps[t.ID]) > 0 {
			t.DependsOn = deps[t.ID]
		}
		if t.Level == 0 {
			t.Level = level[t.ID]
		}
	}
}

// lastLine is the last line of the file at path that says something.
func lastLine(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1]
}
