package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

const runID = "20261122T041500Z-aaaa1111"

// newRun creates a loop run under a new state root, locked (live) by this
// process until closed.
func newRun(t *testing.T) (string, *store.Run) {
	t.Helper()
	root := t.TempDir()
	run, err := store.Create(root, runID, store.Meta{Command: "loop", Backend: "fake", Prompt: "Do the task"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return root, run
}

// collector gathers what Follow hands out.
type collector struct {
	mu     sync.Mutex
	events []runs.Event
}

func (c *collector) add(e runs.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
	return nil
}

// journal is the types of the journal events so far, and the output.
func (c *collector) journal() (types []string, output string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.events {
		switch e.Kind {
		case runs.KindJournal:
			types = append(types, e.Event.Type)
		case runs.KindOutput:
			output += string(e.Output)
		}
	}
	return types, output
}

// eventually waits until ok holds.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Follow hands out each journal line once it is whole (never a line being
// written), the output of the call under way line by line, and ends once
// the run's process has let go of it, with everything written handed out.
func TestFollowLive(t *testing.T) {
	t.Parallel()
	root, run := newRun(t)
	if err := run.Append(store.Event{Type: engine.EventStart}); err != nil {
		t.Fatal(err)
	}
	var c collector
	done := make(chan error, 1)
	go func() { done <- runs.Follow(context.Background(), root, runID, runs.FollowOptions{}, c.add) }()
	eventually(t, "the start event", func() bool { types, _ := c.journal(); return len(types) == 1 })

	// A line being written is not handed out until its newline is.
	f, err := os.OpenFile(run.EventsPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := json.Marshal(store.Event{Type: engine.EventIteration, Iteration: 1, Time: time.Now().UTC(), Data: json.RawMessage(`{"x":1}`)})
	if _, err := f.Write(line[:len(line)/2]); err != nil {
		t.Fatal(err)
	}
	out, err := run.Output(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("first line\nsecond li")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the output's first line", func() bool { _, o := c.journal(); return o == "first line\n" })
	if types, _ := c.journal(); len(types) != 1 {
		t.Fatalf("a partial line was handed out: %v", types)
	}
	if _, err := f.Write(append(line[len(line)/2:], '\n')); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the completed line", func() bool { types, _ := c.journal(); return len(types) == 2 })

	if _, err := out.Write([]byte("ne\n")); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if err := run.Append(store.Event{Type: engine.EventStop}); err != nil {
		t.Fatal(err)
	}
	run.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Follow did not end with the run")
	}
	types, output := c.journal()
	if strings.Join(types, " ") != "start iteration stop" || output != "first line\nsecond line\n" {
		t.Errorf("Follow handed out %v and output %q", types, output)
	}
	// The raw line is the journal's, as written.
	for _, e := range c.events {
		if e.Kind == runs.KindJournal && e.Event.Type == engine.EventIteration && string(e.Line) != string(line) {
			t.Errorf("the raw line %s differs from what was written: %s", e.Line, line)
		}
	}
}

// Follow from the Next of an event goes on after it; a run that is not
// live (killed: no stop) ends the follow once its lines are handed out; an
// offset that is not a line's start is a usage error; a done ctx ends it.
func TestFollowFrom(t *testing.T) {
	t.Parallel()
	root, run := newRun(t)
	for _, typ := range []string{engine.EventStart, engine.EventIteration, engine.EventIteration} {
		if err := run.Append(store.Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	// A torn last line, as a kill in the middle of a write leaves.
	f, err := os.OpenFile(run.EventsPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"itera`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// Live: a done ctx ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var all collector
	if err := runs.Follow(ctx, root, runID, runs.FollowOptions{NoOutput: true}, all.add); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Follow of a live run whose ctx ends: %v", err)
	}
	if types, _ := all.journal(); strings.Join(types, " ") != "start iteration iteration" {
		t.Fatalf("Follow handed out %v", types)
	}

	run.Close() // killed: not live, no stop
	var rest collector
	from := all.events[0].Next
	if err := runs.Follow(context.Background(), root, runID[:10], runs.FollowOptions{From: from}, rest.add); err != nil {
		t.Fatal(err)
	}
	if len(rest.events) != 2 || rest.events[0].Offset != from || rest.events[1].Next != all.events[2].Next {
		t.Errorf("Follow from %d handed out %+v", from, rest.events)
	}

	for _, bad := range []int64{from + 1, -1, 1 << 20} {
		err := runs.Follow(context.Background(), root, runID, runs.FollowOptions{From: bad}, rest.add)
		if !exit.IsUsage(err) {
			t.Errorf("Follow from %d: %v, want a usage error", bad, err)
		}
	}
	if err := runs.Follow(context.Background(), root, "nosuchrun", runs.FollowOptions{}, rest.add); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Follow of no run: %v", err)
	}
	// fn's error ends it.
	stop := errors.New("enough")
	if err := runs.Follow(context.Background(), root, runID, runs.FollowOptions{}, func(runs.Event) error { return stop }); err != stop {
		t.Errorf("Follow whose fn fails: %v", err)
	}
}

// List adds where a running run stands; a killed one is running and not
// live; a status no run has is a usage error.
func TestList(t *testing.T) {
	t.Parallel()
	root, run := newRun(t)
	cp := engine.Checkpoint{RunID: runID, State: engine.State{Iterations: 3}, Progress: store.Progress{Status: store.Running, Iterations: 3, CostUSD: 0.5, CostKnown: true}}
	if err := run.WriteCheckpoint(cp); err != nil {
		t.Fatal(err)
	}
	run.Close()
	list, err := runs.List(root, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("List: %+v", list)
	}
	r := list[0]
	if r.ID != runID || r.Live || r.Status != store.Running || r.Current == nil || r.Current.Iteration != 4 || r.SpentUSD != 0.5 || !r.SpentKnown || r.Title != "Do the task" {
		t.Errorf("List: %+v (current %+v)", r, r.Current)
	}
	// Its JSON is the index's row with fields added, none renamed.
	data, _ := json.Marshal(r)
	var row, got map[string]any
	rowData, _ := json.Marshal(r.RunRow)
	_ = json.Unmarshal(rowData, &row)
	_ = json.Unmarshal(data, &got)
	for k, v := range row {
		if w, ok := got[k]; !ok || !equalJSON(v, w) {
			t.Errorf("JSON field %s: %v, the row's is %v", k, w, v)
		}
	}
	if _, err := runs.List(root, store.Filter{Status: "nosuchstatus"}); !exit.IsUsage(err) {
		t.Errorf("List of an invalid status: %v", err)
	}
	if list, err := runs.List(filepath.Join(t.TempDir(), "none"), store.Filter{}); err != nil || list == nil || len(list) != 0 {
		t.Errorf("List of an empty root: %v, %v (want an empty list, not nil)", list, err)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
