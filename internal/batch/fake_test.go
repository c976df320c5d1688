package batch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/dag"
)

// fakeRunner runs tasks as told: each returns its outcome (done by
// default), once its gate (if any) is closed; a cancelled context ends it
// interrupted.
type fakeRunner struct {
	mu       sync.Mutex
	outcomes map[string]Outcome
	gates    map[string]chan struct{}
	sleep    map[string]time.Duration
	starts   []Start
	cur, max int
}

func (f *fakeRunner) Run(ctx context.Context, s Start) Outcome {
	f.mu.Lock()
	f.starts = append(f.starts, s)
	f.cur++
	f.max = max(f.max, f.cur)
	gate, d := f.gates[s.ID], f.sleep[s.ID]
	o, ok := f.outcomes[s.ID]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.cur--
		f.mu.Unlock()
	}()
	if d > 0 {
		time.Sleep(d)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Outcome{Status: StatusInterrupted, ExitCode: 130, RunID: "run-" + s.ID}
		}
	}
	if !ok {
		o = Outcome{Status: StatusDone, RunID: "run-" + s.ID}
	}
	return o
}

// started returns the ids started so far, in order.
func (f *fakeRunner) started() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, s := range f.starts {
		ids = append(ids, s.ID)
	}
	return ids
}

func (f *fakeRunner) start(id string) (Start, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.starts {
		if s.ID == id {
			return s, true
		}
	}
	return Start{}, false
}

// fakeMerger merges as told (merged by default), once its gate (if any)
// is closed; it records the order and the most merges at once.
type fakeMerger struct {
	mu       sync.Mutex
	outcomes map[string]MergeOutcome
	gates    map[string]chan struct{}
	order    []string
	cur, max int
}

func (m *fakeMerger) Merge(ctx context.Context, id string, run Outcome) MergeOutcome {
	m.mu.Lock()
	m.cur++
	m.max = max(m.max, m.cur)
	gate := m.gates[id]
	o, ok := m.outcomes[id]
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.cur--
		m.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return MergeOutcome{Status: MergeInterrupted}
		}
	}
	if !ok {
		o = MergeOutcome{Status: MergeMerged, Commit: "c-" + id}
	}
	m.mu.Lock()
	m.order = append(m.order, id)
	m.mu.Unlock()
	return o
}

func (m *fakeMerger) merged() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.order...)
}

// graph builds a graph from "id:dep,dep" specs.
func graph(t testing.TB, specs ...string) *dag.Graph {
	t.Helper()
	var nodes []dag.Node
	for _, s := range specs {
		n := dag.Node{}
		id, deps, _ := cut(s, ':')
		n.ID = id
		for deps != "" {
			var d string
			d, deps, _ = cut(deps, ',')
			n.Deps = append(n.Deps, d)
		}
		nodes = append(nodes, n)
	}
	g, err := dag.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func cut(s string, sep byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// statuses maps each task to its status.
func statuses(r Result) map[string]Status {
	m := map[string]Status{}
	for _, t := range r.Tasks {
		m[t.ID] = t.Status
	}
	return m
}

// gates makes a closed-later gate for each id.
func gates(ids ...string) map[string]chan struct{} {
	m := map[string]chan struct{}{}
	for _, id := range ids {
		m[id] = make(chan struct{})
	}
	return m
}

// events records a scheduler's events.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) observe(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) list() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.evs...)
}

// kinds lists "kind id" of the events.
func (e *events) kinds() []string {
	var out []string
	for _, ev := range e.list() {
		out = append(out, string(ev.Kind)+" "+ev.Task.ID)
	}
	return out
}
