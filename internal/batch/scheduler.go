package batch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/dag"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// Scheduler runs the tasks of a graph. Its fields are its settings; Run
// does not change them, and may be called again.
type Scheduler struct {
	// Graph holds the tasks and their dependencies.
	Graph *dag.Graph
	// Runner runs a task; Merger merges a done one (nil: a task is done
	// when its run is, with nothing to merge).
	Runner Runner
	Merger Merger
	// Jobs is how many tasks run at once (≥ 1). Merges do not count.
	Jobs int
	// FailFast: after the first failure no task is started; those running
	// go on.
	FailFast bool
	// Budget bounds the cost of the whole batch.
	Budget Budget
	// Initial is the state a resumed batch starts from, by id (a previous
	// Result's tasks): done tasks are not run again; unmerged ones are
	// merged; interrupted ones (and any not-done one with a RunID that
	// did not fail) resume their run; failed ones (merge failures too)
	// stay failed and block their dependents; the rest start anew. Their
	// costs count against the budget.
	Initial map[string]TaskResult
	// Observer, when not nil, is told of each event, from one goroutine
	// at a time, before the scheduler goes on: it should be quick.
	Observer func(Event)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// task is the scheduler's state of one task.
type task struct {
	TaskResult
	index   int       // in the graph's order
	waiting int       // dependencies not done
	resume  string    // the run to resume
	began   time.Time // when its run started
	outcome Outcome   // its run's, for the merge
}

type runEnd struct {
	id string
	o  Outcome
}

type mergeEnd struct {
	id string
	m  MergeOutcome
}

// Machine is one execution of a Scheduler as a state machine, without
// goroutines or clock of its own: Ready says which tasks to start, Ended
// and Merged take what became of them, NextMerge says which done task to
// merge. Run drives it with goroutines; a Temporal workflow drives the same
// machine with child workflows, so that a batch follows the same DAG rules
// wherever it runs.
type Machine = run

// run is one execution of a Scheduler.
type run struct {
	s        *Scheduler
	now      func() time.Time
	tasks    map[string]*task
	order    []*task
	running  int
	merging  bool
	queue    []*task // done, to merge, in the order they finished
	stop     string  // why no task is started any more
	budget   string  // why the budget refuses a start, while tasks run
	cancel   bool
	runEnds  chan runEnd
	mergeEnd chan mergeEnd
}

// Run runs the graph's tasks until every one is done, failed, blocked or
// left unstarted, and returns what became of each. Tasks start in the
// graph's order (level, then id) as soon as all their dependencies are
// done and merged, Jobs at a time. When ctx is cancelled no task or merge
// is started any more, and Run returns once the running tasks (which see
// ctx cancelled) and the merge under way have returned. Its error is only
// for settings that cannot run.
func (s *Scheduler) Run(ctx context.Context) (Result, error) {
	r, err := s.Machine()
	if err != nil {
		return Result{}, err
	}
	began := r.now()
	r.runEnds = make(chan runEnd, len(r.order))
	r.mergeEnd = make(chan mergeEnd, 1)
	done := ctx.Done()
	for {
		for _, start := range r.Ready(ctx.Err() != nil) {
			go func() {
				r.runEnds <- runEnd{id: start.ID, o: r.s.Runner.Run(ctx, start)}
			}()
		}
		if id, o, ok := r.NextMerge(); ok {
			go func() {
				r.mergeEnd <- mergeEnd{id: id, m: r.s.Merger.Merge(ctx, id, o)}
			}()
		}
		if !r.Busy() {
			break
		}
		select {
		case e := <-r.runEnds:
			r.Ended(e.id, e.o)
		case e := <-r.mergeEnd:
			r.Merged(e.id, e.m)
		case <-done:
			done = nil
			r.Interrupt()
		}
	}
	return r.Result(began), nil
}

// Machine checks the settings and makes the machine of one execution, in
// the state Initial gives.
func (s *Scheduler) Machine() (*Machine, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	r := &run{s: s, now: s.Now, tasks: map[string]*task{}}
	if r.now == nil {
		r.now = time.Now
	}
	r.init()
	return r, nil
}

// Busy reports whether a run or a merge is under way.
func (r *run) Busy() bool { return r.running > 0 || r.merging }

// check refuses settings that cannot run.
func (s *Scheduler) check() error {
	switch {
	case s.Graph == nil:
		return errors.New("batch: no graph")
	case s.Runner == nil:
		return errors.New("batch: no runner")
	case s.Jobs < 1:
		return fmt.Errorf("batch: %d jobs: want 1 or more", s.Jobs)
	}
	for _, id := range slices.Sorted(maps.Keys(s.Initial)) {
		if !s.Graph.Has(id) {
			return fmt.Errorf("batch: the initial state names %s, which is no task of the batch", id)
		}
	}
	return nil
}

// init makes the tasks' state from the graph and the initial state.
func (r *run) init() {
	for i, id := range r.s.Graph.Order() {
		t := &task{TaskResult: TaskResult{ID: id, Status: StatusPending}, index: i}
		if prev, ok := r.s.Initial[id]; ok {
			t.TaskResult = prev
			t.ID = id
			switch {
			case prev.Status == StatusDone:
			case prev.Status == StatusUnmerged:
				if r.s.Merger == nil {
					t.Status = StatusDone
				} else {
					t.outcome = Outcome{Status: StatusDone, ExitCode: prev.ExitCode, RunID: prev.RunID,
						CostUSD: prev.CostUSD, CostKnown: prev.CostKnown, Details: prev.Details}
					r.queue = append(r.queue, t)
				}
			case prev.Status.Failed():
			default: // interrupted, pending, blocked, running: start, or resume the run
				t.Status, t.Reason, t.BlockedBy, t.resume = StatusPending, "", "", prev.RunID
				t.StartedAt, t.DurationMs = time.Time{}, 0 // its run in this batch is to come
			}
		}
		r.tasks[id] = t
		r.order = append(r.order, t)
	}
	for _, t := range r.order {
		for _, d := range r.s.Graph.Deps(t.ID) {
			if r.tasks[d].Status != StatusDone {
				t.waiting++
			}
		}
	}
	for _, t := range r.order {
		if t.Status.Failed() {
			r.block(t)
		}
	}
}

// Ready marks the ready tasks running, in order, while there are jobs and
// budget for them, and returns what the caller must start; canceled: the
// batch is interrupted, nothing starts any more.
func (r *run) Ready(canceled bool) []Start {
	if canceled && !r.cancel {
		r.Interrupt()
	}
	var out []Start
	for r.stop == "" && r.running < r.s.Jobs {
		t := r.next()
		if t == nil {
			return out
		}
		ok, cap, why := r.s.Budget.canStart(r.budgetState())
		if !ok {
			r.budget = why
			if r.running == 0 && !r.merging && len(r.queue) == 0 {
				r.stopStarting(why)
			}
			return out
		}
		r.budget = ""
		t.Status, t.Reason = StatusRunning, ""
		t.began = r.now()
		t.StartedAt = t.began
		t.Resumed = t.resume != ""
		r.running++
		r.emit(EventStarted, t)
		out = append(out, Start{ID: t.ID, ResumeRunID: t.resume, BudgetUSD: TaskBudget(r.s.Budget.Tasks[t.ID], cap)})
	}
	return out
}

// next is the first pending task in order whose dependencies are done.
func (r *run) next() *task {
	for _, t := range r.order {
		if t.Status == StatusPending && t.waiting == 0 {
			return t
		}
	}
	return nil
}

// budgetState sums the costs for the budget.
func (r *run) budgetState() budgetState {
	st := budgetState{running: r.running}
	for _, t := range r.order {
		// A resumed run's earlier cost counts until its outcome replaces it.
		if !t.CostKnown {
			continue
		}
		st.spent += t.CostUSD
		if t.RunStatus == StatusDone || t.RunStatus.Failed() {
			st.finished++
			st.sum += t.CostUSD
		}
	}
	return st
}

// Ended records the end of task id's run.
func (r *run) Ended(id string, o Outcome) {
	r.running--
	t := r.tasks[id]
	switch o.Status {
	case StatusDone, StatusInterrupted:
	case "", StatusPending, StatusRunning, StatusUnmerged, StatusBlocked:
		o.Details = fmt.Sprintf("the run ended with status %q: %s", o.Status, o.Details)
		o.Status = StatusError
	}
	t.outcome = o
	t.RunID, t.RunStatus, t.ExitCode, t.Details = o.RunID, o.Status, o.ExitCode, o.Details
	t.CostUSD, t.CostKnown = o.CostUSD, o.CostKnown
	t.DurationMs = millis.Of(r.now().Sub(t.began))
	switch {
	case o.Status == StatusDone && r.s.Merger != nil:
		t.Status = StatusUnmerged
		r.queue = append(r.queue, t)
		r.emit(EventFinished, t)
	case o.Status == StatusDone:
		t.Status = StatusDone
		r.emit(EventFinished, t)
		r.done(t)
	case o.Status == StatusInterrupted:
		t.Status = StatusInterrupted
		r.emit(EventFinished, t)
	default:
		t.Status = o.Status
		r.emit(EventFinished, t)
		r.failed(t)
	}
}

// NextMerge marks the first task of the queue merging, when none is, and
// returns it and its run's outcome for the caller to merge; false when
// there is nothing to merge now.
func (r *run) NextMerge() (string, Outcome, bool) {
	if r.merging || len(r.queue) == 0 || r.cancel {
		return "", Outcome{}, false
	}
	t := r.queue[0]
	r.queue = r.queue[1:]
	r.merging = true
	r.emit(EventMergeStarted, t)
	return t.ID, t.outcome, true
}

// Merged records the end of task id's merge.
func (r *run) Merged(id string, m MergeOutcome) {
	r.merging = false
	t := r.tasks[id]
	t.SetRerun(m.Rerun)
	m.Rerun = nil // the task's own (TaskResult.Rerun)
	t.Merge = &m
	switch m.Status {
	case MergeMerged:
		t.Status = StatusDone
		r.emit(EventMerged, t)
		r.done(t)
	case MergeInterrupted:
		t.Status, t.Reason = StatusUnmerged, "the merge was interrupted"
		r.emit(EventMerged, t)
	case MergeConflict:
		t.Status, t.Reason = StatusMergeConflict, "merge conflict"
		r.mergeFailed(t, m)
	default:
		t.Status, t.Reason = StatusMergeFailed, "the merge failed"
		r.mergeFailed(t, m)
	}
}

func (r *run) mergeFailed(t *task, m MergeOutcome) {
	if m.Details != "" {
		t.Reason += ": " + m.Details
	}
	r.emit(EventMerged, t)
	r.failed(t)
}

// done makes t's dependents one dependency closer to ready.
func (r *run) done(t *task) {
	for _, d := range r.s.Graph.Dependents(t.ID) {
		r.tasks[d].waiting--
	}
}

// failed blocks t's dependents and, with FailFast, stops the batch.
func (r *run) failed(t *task) {
	if r.s.FailFast {
		r.stopStarting(fmt.Sprintf("fail-fast: %s failed (status %s)", t.ID, t.Status))
	}
	r.block(t)
}

// block blocks the tasks not started that depend on the failed task f,
// directly or not.
func (r *run) block(f *task) {
	for _, id := range r.s.Graph.Descendants(f.ID) {
		t := r.tasks[id]
		if t.Status != StatusPending {
			continue
		}
		t.Status, t.BlockedBy = StatusBlocked, f.ID
		t.Reason = fmt.Sprintf("blocked by failed dependency %s (status %s)", f.ID, f.Status)
		// Through which dependency, when not directly.
		deps := r.s.Graph.Deps(id)
		for _, d := range deps {
			if slices.Contains(deps, f.ID) {
				break
			}
			if dt := r.tasks[d]; dt.Status == StatusBlocked && dt.BlockedBy == f.ID {
				t.Reason += " through " + d
				break
			}
		}
		r.emit(EventBlocked, t)
	}
}

// stopStarting stops starting tasks, the first time only.
func (r *run) stopStarting(why string) {
	if r.stop != "" {
		return
	}
	r.stop = why
	if r.s.Observer != nil {
		r.s.Observer(Event{Kind: EventStopped, Time: r.now(), Reason: why})
	}
}

// Interrupt stops starting tasks and merges: the batch was interrupted.
func (r *run) Interrupt() {
	r.cancel = true
	r.stopStarting("the batch was interrupted")
}

func (r *run) emit(k EventKind, t *task) {
	if r.s.Observer != nil {
		r.s.Observer(Event{Kind: k, Time: r.now(), Task: t.TaskResult})
	}
}

// Result says what became of the batch started at began.
func (r *run) Result(began time.Time) Result {
	res := Result{Interrupted: r.cancel, StopReason: r.stop, StartedAt: began, CostKnown: true}
	if res.StopReason == "" && r.budget != "" {
		res.StopReason = r.budget
	}
	for _, t := range r.order {
		switch t.Status {
		case StatusPending:
			t.Reason = "not started: " + r.why(t)
		case StatusUnmerged:
			if t.Reason == "" {
				t.Reason = "not merged: the batch was interrupted"
			}
		}
		if t.CostKnown {
			res.CostUSD += t.CostUSD
		} else if t.RunStatus != "" {
			res.CostKnown = false
		}
		res.Tasks = append(res.Tasks, t.TaskResult)
	}
	res.Status, res.ExitCode = Verdict(res.Tasks, r.cancel)
	res.DurationMs = millis.Of(r.now().Sub(began))
	return res
}

// why says why a pending task was not started.
func (r *run) why(t *task) string {
	if r.stop != "" {
		return r.stop
	}
	for _, d := range r.s.Graph.Deps(t.ID) {
		switch dt := r.tasks[d]; dt.Status {
		case StatusDone:
		case StatusInterrupted:
			return fmt.Sprintf("dependency %s was interrupted", d)
		case StatusUnmerged:
			return fmt.Sprintf("dependency %s is not merged", d)
		default:
			return fmt.Sprintf("dependency %s is %s", d, dt.Status)
		}
	}
	if r.budget != "" {
		return r.budget
	}
	return "never ready"
}
