package batch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// runAsync runs s in the background; wait returns its result.
func runAsync(t *testing.T, ctx context.Context, s *Scheduler) (wait func() Result) {
	t.Helper()
	ch := make(chan Result, 1)
	go func() {
		r, err := s.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		ch <- r
	}()
	return func() Result { return <-ch }
}

func TestJobsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		r := &fakeRunner{gates: gates(ids...)}
		var ev events
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, ids...), Runner: r, Jobs: 3, Observer: ev.observe})
		synctest.Wait()
		// The scheduler starts them in order.
		if d := cmp.Diff([]string{"started a", "started b", "started c"}, ev.kinds()); d != "" {
			t.Fatalf("events (-want +got):\n%s", d)
		}
		// The runs start in their own goroutines: in any order.
		if d := cmp.Diff([]string{"a", "b", "c"}, sorted(r.started())); d != "" {
			t.Fatalf("started (-want +got):\n%s", d)
		}
		close(r.gates["b"])
		synctest.Wait()
		if d := cmp.Diff([]string{"a", "b", "c", "d"}, sorted(r.started())); d != "" {
			t.Fatalf("after b, started (-want +got):\n%s", d)
		}
		for _, id := range ids {
			if id != "b" {
				close(r.gates[id])
			}
		}
		res := wait()
		if r.max != 3 || res.Count(StatusDone) != len(ids) || res.ExitCode != 0 || res.Status != BatchDone {
			t.Errorf("max %d at once, %d done, exit %d, %s", r.max, res.Count(StatusDone), res.ExitCode, res.Status)
		}
	})
}

// TestStartOrder: among ready tasks, the lower level first, then the id.
func TestStartOrder(t *testing.T) {
	r := &fakeRunner{}
	g := graph(t, "z", "a", "b:a", "c:z", "y:b,c", "m")
	res, err := (&Scheduler{Graph: g, Runner: r, Merger: &fakeMerger{}, Jobs: 1}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "m", "z", "b", "c", "y"}, r.started()); d != "" {
		t.Errorf("start order (-want +got):\n%s", d)
	}
	var ids []string
	for _, tr := range res.Tasks {
		ids = append(ids, tr.ID)
	}
	if d := cmp.Diff(g.Order(), ids); d != "" {
		t.Errorf("result order (-want +got):\n%s", d)
	}
}

// TestDependentsWaitForMerge: a task starts once its dependencies are
// merged, not when their runs end.
func TestDependentsWaitForMerge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{}
		m := &fakeMerger{gates: gates("a")}
		var ev events
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, "a", "b:a"), Runner: r, Merger: m, Jobs: 2, Observer: ev.observe})
		synctest.Wait()
		if d := cmp.Diff([]string{"a"}, r.started()); d != "" {
			t.Fatalf("started before a's merge (-want +got):\n%s", d)
		}
		evs := ev.list()
		if last := evs[len(evs)-1]; last.Kind != EventMergeStarted || last.Task.Status != StatusUnmerged {
			t.Errorf("last event %s %s, want merge-started unmerged", last.Kind, last.Task.Status)
		}
		close(m.gates["a"])
		res := wait()
		if d := cmp.Diff([]string{"a", "b"}, r.started()); d != "" {
			t.Errorf("started (-want +got):\n%s", d)
		}
		want := []string{"started a", "finished a", "merge-started a", "merged a", "started b", "finished b", "merge-started b", "merged b"}
		if d := cmp.Diff(want, ev.kinds()); d != "" {
			t.Errorf("events (-want +got):\n%s", d)
		}
		a, _ := res.Task("a")
		if a.Merge == nil || a.Merge.Commit != "c-a" || a.Status != StatusDone {
			t.Errorf("a: %+v", a)
		}
	})
}

// TestMergesSerialized: one merge at a time, in the order the runs ended.
func TestMergesSerialized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{gates: gates("x", "y", "z")}
		m := &fakeMerger{gates: gates("y")}
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, "x", "y", "z"), Runner: r, Merger: m, Jobs: 3})
		synctest.Wait()
		for _, id := range []string{"y", "z", "x"} {
			close(r.gates[id])
			synctest.Wait()
		}
		// y's merge holds the queue: z and x wait.
		if got := m.merged(); len(got) != 0 {
			t.Fatalf("merged %v during y's merge", got)
		}
		close(m.gates["y"])
		res := wait()
		if d := cmp.Diff([]string{"y", "z", "x"}, m.merged()); d != "" {
			t.Errorf("merge order (-want +got):\n%s", d)
		}
		if m.max != 1 || res.Count(StatusDone) != 3 {
			t.Errorf("%d merges at once, %d done", m.max, res.Count(StatusDone))
		}
	})
}

func TestBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{
			outcomes: map[string]Outcome{"a": {Status: "max-iterations", ExitCode: 4, RunID: "run-a", Details: "3 attempts"}},
			gates:    gates("a"),
		}
		m := &fakeMerger{outcomes: map[string]MergeOutcome{"m": {Status: MergeConflict, Details: "CONFLICT in x.go"}}}
		var ev events
		g := graph(t, "a", "b:a", "c:b", "d:c,e", "e", "f", "m", "n:m,f", "o:a,n")
		wait := runAsync(t, t.Context(), &Scheduler{Graph: g, Runner: r, Merger: m, Jobs: 2, Observer: ev.observe})
		synctest.Wait()
		close(r.gates["a"])
		res := wait()
		want := map[string]Status{"a": "max-iterations", "b": StatusBlocked, "c": StatusBlocked, "d": StatusBlocked, "e": StatusDone,
			"f": StatusDone, "m": StatusMergeConflict, "n": StatusBlocked, "o": StatusBlocked}
		if d := cmp.Diff(want, statuses(res)); d != "" {
			t.Fatalf("statuses (-want +got):\n%s", d)
		}
		reasons := map[string]string{
			"b": "blocked by failed dependency a (status max-iterations)",
			"c": "blocked by failed dependency a (status max-iterations) through b",
			"d": "blocked by failed dependency a (status max-iterations) through c",
			"m": "merge conflict: CONFLICT in x.go",
			"n": "blocked by failed dependency m (status conflict)",
			// m's merge failed before a ended.
			"o": "blocked by failed dependency m (status conflict) through n",
		}
		for id, want := range reasons {
			tr, _ := res.Task(id)
			if tr.Reason != want {
				t.Errorf("%s: reason %q, want %q", id, tr.Reason, want)
			}
		}
		if b, _ := res.Task("d"); b.BlockedBy != "a" || b.RunID != "" || !b.StartedAt.IsZero() {
			t.Errorf("d: %+v", b)
		}
		if a, _ := res.Task("a"); a.RunStatus != "max-iterations" || a.ExitCode != 4 || a.Details != "3 attempts" || a.Merge != nil {
			t.Errorf("a: %+v", a)
		}
		for _, id := range []string{"b", "c", "d", "n", "o"} {
			if slices.Contains(r.started(), id) {
				t.Errorf("%s started", id)
			}
		}
		blocked := 0
		for _, e := range ev.list() {
			if e.Kind == EventBlocked {
				blocked++
			}
		}
		if blocked != 5 || res.ExitCode != exit.Incomplete || res.Status != BatchIncomplete || res.StopReason != "" {
			t.Errorf("%d blocked events, exit %d, %s, stop %q", blocked, res.ExitCode, res.Status, res.StopReason)
		}
	})
}

func TestFailFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{
			outcomes: map[string]Outcome{"a": {Status: StatusError, ExitCode: 1}},
			gates:    gates("a", "b"),
		}
		var ev events
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, "a", "b", "c", "d:b"), Runner: r, Merger: &fakeMerger{},
			Jobs: 2, FailFast: true, Observer: ev.observe})
		synctest.Wait()
		close(r.gates["a"])
		synctest.Wait()
		close(r.gates["b"]) // b, running when a failed, goes on and is merged
		res := wait()
		want := map[string]Status{"a": StatusError, "b": StatusDone, "c": StatusPending, "d": StatusPending}
		if d := cmp.Diff(want, statuses(res)); d != "" {
			t.Errorf("statuses (-want +got):\n%s", d)
		}
		c, _ := res.Task("c")
		if c.Reason != "not started: fail-fast: a failed (status error)" || res.StopReason != "fail-fast: a failed (status error)" {
			t.Errorf("reason %q, stop %q", c.Reason, res.StopReason)
		}
		if res.ExitCode != exit.Incomplete {
			t.Errorf("exit %d", res.ExitCode)
		}
		stopped := 0
		for _, e := range ev.list() {
			if e.Kind == EventStopped {
				stopped++
			}
		}
		if stopped != 1 {
			t.Errorf("%d stop events", stopped)
		}
	})
}

func TestBudgetStops(t *testing.T) {
	r := &fakeRunner{outcomes: map[string]Outcome{
		"a": {Status: StatusDone, CostUSD: 0.4, CostKnown: true},
		"b": {Status: "no-progress", CostUSD: 0.4, CostKnown: true},
		"c": {Status: StatusDone, CostUSD: 0.4, CostKnown: true},
	}}
	res, err := (&Scheduler{Graph: graph(t, "a", "b", "c", "d"), Runner: r, Jobs: 1, Budget: Budget{BudgetUSD: 1}}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b"}, r.started()); d != "" {
		t.Errorf("started (-want +got):\n%s", d)
	}
	a, _ := r.start("a")
	b, _ := r.start("b")
	if a.BudgetUSD != 1 || b.BudgetUSD != 0.6 {
		t.Errorf("caps %v, %v; want 1, 0.6", a.BudgetUSD, b.BudgetUSD)
	}
	why := "$0.2000 left of the $1.00 batch budget is less than the mean cost of the finished tasks (2) ($0.4000)"
	if c, _ := res.Task("c"); c.Status != StatusPending || c.Reason != "not started: "+why || res.StopReason != why {
		t.Errorf("c %s %q; stop %q", c.Status, c.Reason, res.StopReason)
	}
	if res.CostUSD != 0.8 || !res.CostKnown || res.ExitCode != exit.Incomplete {
		t.Errorf("cost %v (known %v), exit %d", res.CostUSD, res.CostKnown, res.ExitCode)
	}
}

// TestBudgetOwn: a task runs with its own budget, bounded by what the
// batch's leaves it; without a batch budget, with its own; a task without
// one of its own, with what the batch's leaves it.
func TestBudgetOwn(t *testing.T) {
	own := map[string]float64{"a": 0.3, "b": 2}
	for _, c := range []struct {
		batch        float64
		wantA, wantB float64
	}{{1, 0.3, 0.7}, {0, 0.3, 2}} {
		r := &fakeRunner{outcomes: map[string]Outcome{
			"a": {Status: StatusDone, CostUSD: 0.3, CostKnown: true},
			"b": {Status: StatusDone, CostUSD: 0.1, CostKnown: true},
		}}
		if _, err := (&Scheduler{Graph: graph(t, "a", "b", "c"), Runner: r, Jobs: 1, Budget: Budget{BudgetUSD: c.batch, Tasks: own}}).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		a, _ := r.start("a")
		b, _ := r.start("b")
		cs, _ := r.start("c")
		wantC := 0.6
		if c.batch == 0 {
			wantC = 0
		}
		if math.Abs(a.BudgetUSD-c.wantA) > 1e-9 || math.Abs(b.BudgetUSD-c.wantB) > 1e-9 || math.Abs(cs.BudgetUSD-wantC) > 1e-9 {
			t.Errorf("batch budget %v: a %v, b %v, c %v; want %v, %v, %v", c.batch, a.BudgetUSD, b.BudgetUSD, cs.BudgetUSD, c.wantA, c.wantB, wantC)
		}
	}
}

// TestBudgetRunning: what the running tasks are expected to cost is kept
// aside; a start refused while tasks run is tried again when they end.
func TestBudgetRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{
			outcomes: map[string]Outcome{
				"a": {Status: StatusDone, CostUSD: 0.5, CostKnown: true},
				"b": {Status: StatusDone, CostUSD: 0.1, CostKnown: true},
				"c": {Status: StatusDone, CostUSD: 0.3, CostKnown: true},
			},
			gates: gates("a", "b"),
		}
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, "a", "b", "c", "d"), Runner: r, Jobs: 2,
			Budget: Budget{BudgetUSD: 1, MinTaskUSD: 0.3}})
		synctest.Wait()
		a, _ := r.start("a")
		b, _ := r.start("b")
		if a.BudgetUSD != 1 || b.BudgetUSD != 0.7 {
			t.Errorf("caps %v, %v; want 1, 0.7", a.BudgetUSD, b.BudgetUSD)
		}
		close(r.gates["a"]) // spent 0.5, mean 0.5, b running: 0.5-0.5 < 0.5
		synctest.Wait()
		if got := r.started(); len(got) != 2 {
			t.Fatalf("started %v while b runs", got)
		}
		close(r.gates["b"]) // spent 0.6, mean 0.3: 0.4 left pays for c
		res := wait()
		if d := cmp.Diff([]string{"a", "b", "c"}, sorted(r.started())); d != "" {
			t.Errorf("started (-want +got):\n%s", d)
		}
		if c, _ := r.start("c"); c.BudgetUSD < 0.4-1e-9 || c.BudgetUSD > 0.4+1e-9 {
			t.Errorf("c's cap %v, want 0.4", c.BudgetUSD)
		}
		if d, _ := res.Task("d"); d.Status != StatusPending || !strings.Contains(d.Reason, "batch budget") {
			t.Errorf("d: %s %q", d.Status, d.Reason)
		}
	})
}

func TestBudgetCheck(t *testing.T) {
	for _, tt := range []struct {
		name   string
		b      Budget
		st     budgetState
		ok     bool
		cap    float64
		reason string
	}{
		{"no budget", Budget{}, budgetState{spent: 100}, true, 0, ""},
		{"NaN budget", Budget{BudgetUSD: nanf()}, budgetState{spent: 100}, true, 0, ""},
		{"first task", Budget{BudgetUSD: 2}, budgetState{}, true, 2, ""},
		{"first tasks, no minimum: all may start", Budget{BudgetUSD: 2}, budgetState{running: 5}, true, 2, ""},
		{"spent", Budget{BudgetUSD: 2}, budgetState{spent: 2}, false, 0, "the batch budget of $2.00 is spent ($2.00)"},
		{"overspent", Budget{BudgetUSD: 2}, budgetState{spent: 2.5, finished: 1, sum: 2.5}, false, 0, "the batch budget of $2.00 is spent ($2.50)"},
		{"the mean fits exactly", Budget{BudgetUSD: 1}, budgetState{spent: 0.5, finished: 1, sum: 0.5}, true, 0.5, ""},
		{"the mean does not fit", Budget{BudgetUSD: 1}, budgetState{spent: 0.6, finished: 2, sum: 0.6, running: 1}, false, 0,
			"$0.4000 left of the $1.00 batch budget, less $0.3000 expected of the 1 running, is less than the mean cost of the finished tasks (2) ($0.3000)"},
		{"the minimum before any finished", Budget{BudgetUSD: 1, MinTaskUSD: 0.4}, budgetState{running: 2}, false, 0,
			"$1.00 left of the $1.00 batch budget, less $0.8000 expected of the 2 running, is less than the least a task is expected to cost ($0.4000)"},
		{"the minimum over a lower mean", Budget{BudgetUSD: 1, MinTaskUSD: 0.4}, budgetState{spent: 0.7, finished: 2, sum: 0.2}, false, 0,
			"$0.3000 left of the $1.00 batch budget is less than the least a task is expected to cost ($0.4000)"},
		{"unfinished costs count as spent only", Budget{BudgetUSD: 1}, budgetState{spent: 0.9, finished: 1, sum: 0.05}, true, 0.1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, cap, why := tt.b.canStart(tt.st)
			if ok != tt.ok || why != tt.reason || cap < tt.cap-1e-9 || cap > tt.cap+1e-9 {
				t.Errorf("canStart = %v, %v, %q; want %v, %v, %q", ok, cap, why, tt.ok, tt.cap, tt.reason)
			}
		})
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func nanf() float64 { z := 0.0; return z / z }

// TestUnknownCost: a run whose cost is unknown does not count against the
// budget, and the batch's cost says it is not known.
func TestUnknownCost(t *testing.T) {
	r := &fakeRunner{outcomes: map[string]Outcome{
		"a": {Status: StatusDone, CostUSD: 0, CostKnown: false},
		"b": {Status: StatusDone, CostUSD: 0.9, CostKnown: true},
	}}
	res, err := (&Scheduler{Graph: graph(t, "a", "b", "c"), Runner: r, Jobs: 1, Budget: Budget{BudgetUSD: 1}}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.CostKnown || res.CostUSD != 0.9 || res.Count(StatusDone) != 2 {
		t.Errorf("cost %v known %v, %d done", res.CostUSD, res.CostKnown, res.Count(StatusDone))
	}
}

func TestResume(t *testing.T) {
	r := &fakeRunner{outcomes: map[string]Outcome{"c": {Status: StatusDone, RunID: "r-c", CostUSD: 0.5, CostKnown: true}}}
	m := &fakeMerger{}
	initial := map[string]TaskResult{
		"a": {ID: "a", Status: StatusDone, RunID: "r-a", RunStatus: StatusDone, CostUSD: 0.2, CostKnown: true},
		"b": {ID: "b", Status: StatusUnmerged, RunID: "r-b", RunStatus: StatusDone},
		"c": {ID: "c", Status: StatusInterrupted, RunID: "r-c", RunStatus: StatusInterrupted, CostUSD: 0.1, CostKnown: true},
		"d": {ID: "d", Status: "max-iterations", RunID: "r-d", RunStatus: "max-iterations", CostUSD: 0.3, CostKnown: true},
		"e": {ID: "e", Status: StatusBlocked, BlockedBy: "d", Reason: "blocked by failed dependency d (status max-iterations)"},
		"g": {ID: "g", Status: StatusPending, Reason: "not started: the batch was interrupted"},
		"h": {ID: "h", Status: StatusMergeConflict, RunID: "r-h", RunStatus: StatusDone},
	}
	var ev events
	s := &Scheduler{Graph: graph(t, "a", "b:a", "c", "d", "e:d", "f", "g:c,b", "h", "i:h"), Runner: r, Merger: m, Jobs: 1,
		Initial: initial, Observer: ev.observe}
	res, err := s.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c", "f", "g"}, r.started()); d != "" {
		t.Errorf("started (-want +got):\n%s", d)
	}
	if c, _ := r.start("c"); c.ResumeRunID != "r-c" {
		t.Errorf("c resumed %q, want r-c", c.ResumeRunID)
	}
	if f, _ := r.start("f"); f.ResumeRunID != "" {
		t.Errorf("f resumed %q", f.ResumeRunID)
	}
	if d := cmp.Diff([]string{"b", "c", "f", "g"}, m.merged()); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
	want := map[string]Status{"a": StatusDone, "b": StatusDone, "c": StatusDone, "d": "max-iterations", "e": StatusBlocked,
		"f": StatusDone, "g": StatusDone, "h": StatusMergeConflict, "i": StatusBlocked}
	if d := cmp.Diff(want, statuses(res)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	c, _ := res.Task("c")
	if !c.Resumed || c.Reason != "" || c.CostUSD != 0.5 {
		t.Errorf("c: %+v", c)
	}
	// a 0.2 + c 0.5 (its whole run) + d 0.3
	if res.CostUSD < 1-1e-9 || res.CostUSD > 1+1e-9 {
		t.Errorf("cost %v, want 1", res.CostUSD)
	}
	if i, _ := res.Task("i"); i.Reason != "blocked by failed dependency h (status conflict)" {
		t.Errorf("i: %q", i.Reason)
	}
	if ev.kinds()[0] != "blocked e" {
		t.Errorf("first events %v", ev.kinds()[:3])
	}
	// Resuming from a done batch runs nothing.
	r2 := &fakeRunner{}
	s.Runner, s.Initial = r2, nil
	s.Initial = map[string]TaskResult{}
	for i, tr := range res.Tasks {
		if tr.Status == StatusDone {
			tr.StartedAt, tr.DurationMs = time.Date(2026, 11, 25, 6, i, 0, 0, time.UTC), millis.Duration(1000*(i+1))
			s.Initial[tr.ID] = tr
		}
	}
	s.Graph = graph(t, "a", "b:a", "c", "f", "g:c,b")
	res2, err := s.Run(t.Context())
	if err != nil || len(r2.started()) != 0 || res2.ExitCode != 0 {
		t.Errorf("resumed a done batch: started %v, exit %d, %v", r2.started(), res2.ExitCode, err)
	}
	// The tasks done before the resume keep when and how long they ran.
	for id, before := range s.Initial {
		after, _ := res2.Task(id)
		if before.StartedAt.IsZero() || !after.StartedAt.Equal(before.StartedAt) || after.DurationMs != before.DurationMs {
			t.Errorf("task %s: started %v for %dms after the resume, %v for %dms before", id, after.StartedAt, after.DurationMs, before.StartedAt, before.DurationMs)
		}
	}
}

func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := &fakeRunner{gates: gates("a", "b")}
		wait := runAsync(t, ctx, &Scheduler{Graph: graph(t, "a", "b", "c:a", "d"), Runner: r, Merger: &fakeMerger{}, Jobs: 2})
		synctest.Wait()
		if d := cmp.Diff([]string{"a", "b"}, sorted(r.started())); d != "" {
			t.Fatalf("started (-want +got):\n%s", d)
		}
		cancel()
		res := wait()
		want := map[string]Status{"a": StatusInterrupted, "b": StatusInterrupted, "c": StatusPending, "d": StatusPending}
		if d := cmp.Diff(want, statuses(res)); d != "" {
			t.Errorf("statuses (-want +got):\n%s", d)
		}
		if res.Status != BatchInterrupted || res.ExitCode != exit.Interrupted || !res.Interrupted || res.StopReason != "the batch was interrupted" {
			t.Errorf("%s, exit %d, interrupted %v, stop %q", res.Status, res.ExitCode, res.Interrupted, res.StopReason)
		}
		for _, id := range []string{"c", "d"} {
			if tr, _ := res.Task(id); tr.Reason != "not started: the batch was interrupted" {
				t.Errorf("%s: %q", id, tr.Reason)
			}
		}
		if a, _ := res.Task("a"); a.RunID != "run-a" || a.ExitCode != 130 || a.RunStatus != StatusInterrupted {
			t.Errorf("a: %+v", a)
		}
	})
}

// TestCancelMerges: a merge under way sees the cancellation; the queued
// ones are not started and stay unmerged, for resume.
func TestCancelMerges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := &fakeRunner{gates: gates("b")}
		m := &fakeMerger{gates: gates("a")}
		wait := runAsync(t, ctx, &Scheduler{Graph: graph(t, "a", "b", "c:a"), Runner: r, Merger: m, Jobs: 2})
		synctest.Wait() // a's merge under way
		close(r.gates["b"])
		synctest.Wait() // b queued behind it
		cancel()
		res := wait()
		want := map[string]Status{"a": StatusUnmerged, "b": StatusUnmerged, "c": StatusPending}
		if d := cmp.Diff(want, statuses(res)); d != "" {
			t.Errorf("statuses (-want +got):\n%s", d)
		}
		a, _ := res.Task("a")
		b, _ := res.Task("b")
		if a.Reason != "the merge was interrupted" || a.Merge == nil || a.Merge.Status != MergeInterrupted ||
			b.Reason != "not merged: the batch was interrupted" || b.Merge != nil {
			t.Errorf("a %q %+v; b %q %+v", a.Reason, a.Merge, b.Reason, b.Merge)
		}
		if res.ExitCode != exit.Interrupted {
			t.Errorf("exit %d", res.ExitCode)
		}
	})
}

// TestInterruptedRun: a run interrupted while the batch goes on (not a
// failure) leaves its dependents pending; the others go on.
func TestInterruptedRun(t *testing.T) {
	r := &fakeRunner{outcomes: map[string]Outcome{"a": {Status: StatusInterrupted, RunID: "r-a", ExitCode: 130}}}
	res, err := (&Scheduler{Graph: graph(t, "a", "b:a", "c"), Runner: r, Jobs: 1}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"a": StatusInterrupted, "b": StatusPending, "c": StatusDone}
	if d := cmp.Diff(want, statuses(res)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if b, _ := res.Task("b"); b.Reason != "not started: dependency a was interrupted" {
		t.Errorf("b: %q", b.Reason)
	}
	if res.ExitCode != exit.Incomplete {
		t.Errorf("exit %d", res.ExitCode)
	}
}

// TestBadOutcome: a run without a status, or with one of the scheduler's,
// is an error, and blocks.
func TestBadOutcome(t *testing.T) {
	r := &fakeRunner{outcomes: map[string]Outcome{"a": {Details: "oops"}, "b": {Status: StatusBlocked}}}
	res, err := (&Scheduler{Graph: graph(t, "a", "b", "c:a"), Runner: r, Jobs: 2}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"a": StatusError, "b": StatusError, "c": StatusBlocked}
	if d := cmp.Diff(want, statuses(res)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if a, _ := res.Task("a"); a.Details != `the run ended with status "": oops` {
		t.Errorf("a: %q", a.Details)
	}
}

// TestClock: events and durations come from the scheduler's clock.
func TestClock(t *testing.T) {
	var mu sync.Mutex
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	var ev events
	res, err := (&Scheduler{Graph: graph(t, "a"), Runner: &fakeRunner{}, Merger: &fakeMerger{}, Jobs: 1, Now: clock, Observer: ev.observe}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	evs := ev.list()
	for i, e := range evs {
		if i > 0 && !e.Time.After(evs[i-1].Time) {
			t.Errorf("event %d at %v, not after %v", i, e.Time, evs[i-1].Time)
		}
	}
	a := res.Tasks[0]
	if !res.StartedAt.Equal(t0.Add(time.Second)) || !a.StartedAt.Equal(t0.Add(2*time.Second)) || a.DurationMs != 2000 || res.DurationMs <= a.DurationMs {
		t.Errorf("batch at %v for %dms; a at %v for %dms", res.StartedAt, res.DurationMs, a.StartedAt, a.DurationMs)
	}
}

func TestSettings(t *testing.T) {
	g := graph(t, "a")
	for _, tt := range []struct {
		s   Scheduler
		err string
	}{
		{Scheduler{Runner: &fakeRunner{}, Jobs: 1}, "batch: no graph"},
		{Scheduler{Graph: g, Jobs: 1}, "batch: no runner"},
		{Scheduler{Graph: g, Runner: &fakeRunner{}}, "batch: 0 jobs: want 1 or more"},
		{Scheduler{Graph: g, Runner: &fakeRunner{}, Jobs: 1, Initial: map[string]TaskResult{"zz": {}}}, "batch: the initial state names zz, which is no task of the batch"},
	} {
		if _, err := tt.s.Run(t.Context()); err == nil || err.Error() != tt.err {
			t.Errorf("error %v, want %q", err, tt.err)
		}
	}
}

func TestVerdict(t *testing.T) {
	done := TaskResult{Status: StatusDone}
	for _, tt := range []struct {
		name        string
		tasks       []TaskResult
		interrupted bool
		status      BatchStatus
		exit        int
	}{
		{"no task", nil, false, BatchDone, 0},
		{"all done", []TaskResult{done, done}, false, BatchDone, 0},
		{"all done, interrupted after", []TaskResult{done}, true, BatchDone, 0},
		{"a failure", []TaskResult{done, {Status: "no-progress"}}, false, BatchIncomplete, exit.Incomplete},
		{"blocked", []TaskResult{{Status: StatusBlocked}}, false, BatchIncomplete, 3},
		{"pending", []TaskResult{{Status: StatusPending}}, false, BatchIncomplete, 3},
		{"unmerged", []TaskResult{{Status: StatusUnmerged}}, false, BatchIncomplete, 3},
		{"interrupted", []TaskResult{done, {Status: StatusInterrupted}}, true, BatchInterrupted, 130},
		{"interrupted with a failure", []TaskResult{{Status: StatusError}}, true, BatchInterrupted, 130},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, code := Verdict(tt.tasks, tt.interrupted)
			if s != tt.status || code != tt.exit {
				t.Errorf("Verdict = %s, %d; want %s, %d", s, code, tt.status, tt.exit)
			}
		})
	}
}

func TestStatusFailed(t *testing.T) {
	for s, want := range map[Status]bool{
		StatusPending: false, StatusRunning: false, StatusUnmerged: false, StatusDone: false, StatusInterrupted: false, StatusBlocked: false,
		StatusMergeConflict: true, StatusMergeFailed: true, StatusError: true, "max-iterations": true, "budget-exceeded": true,
	} {
		if s.Failed() != want {
			t.Errorf("%s.Failed() = %v", s, !want)
		}
	}
}

// TestRandomDAGs checks the invariants on random graphs and run lengths:
// never more than Jobs at once, one merge at a time, every task started
// after its dependencies were merged, and every task done.
func TestRandomDAGs(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 1))
				n, jobs := 5+rng.IntN(30), 1+rng.IntN(5)
				var specs []string
				sleep := map[string]time.Duration{}
				for i := range n {
					id := fmt.Sprintf("t%02d", i)
					var deps []string
					for j := range i {
						if rng.IntN(6) == 0 {
							deps = append(deps, fmt.Sprintf("t%02d", j))
						}
					}
					if len(deps) > 0 {
						id += ":" + strings.Join(deps, ",")
					}
					specs = append(specs, id)
					sleep[fmt.Sprintf("t%02d", i)] = time.Duration(rng.IntN(1000)) * time.Millisecond
				}
				g := graph(t, specs...)
				r := &fakeRunner{sleep: sleep}
				m := &fakeMerger{}
				merged := map[string]bool{}
				observe := func(e Event) { // called by one goroutine at a time
					switch e.Kind {
					case EventMerged:
						merged[e.Task.ID] = e.Task.Status == StatusDone
					case EventStarted:
						for _, d := range g.Deps(e.Task.ID) {
							if !merged[d] {
								t.Errorf("%s started before its dependency %s was merged", e.Task.ID, d)
							}
						}
					}
				}
				res, err := (&Scheduler{Graph: g, Runner: r, Merger: m, Jobs: jobs, Observer: observe}).Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if res.Count(StatusDone) != n || r.max > jobs || m.max != 1 {
					t.Errorf("%d/%d done, %d at once (jobs %d), %d merges at once", res.Count(StatusDone), n, r.max, jobs, m.max)
				}
			})
		})
	}
}

// TestCancelledBeforeStart: nothing starts, nothing merges.
func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, m := &fakeRunner{}, &fakeMerger{}
	res, err := (&Scheduler{Graph: graph(t, "a", "b"), Runner: r, Merger: m, Jobs: 2,
		Initial: map[string]TaskResult{"b": {Status: StatusUnmerged, RunID: "r-b", RunStatus: StatusDone}}}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.started()) != 0 || len(m.merged()) != 0 {
		t.Errorf("started %v, merged %v", r.started(), m.merged())
	}
	want := map[string]Status{"a": StatusPending, "b": StatusUnmerged}
	if d := cmp.Diff(want, statuses(res)); d != "" || res.ExitCode != exit.Interrupted {
		t.Errorf("exit %d; statuses (-want +got):\n%s", res.ExitCode, d)
	}
}

// TestNoMerger: without a merger a task is done when its run is.
func TestNoMerger(t *testing.T) {
	r := &fakeRunner{}
	res, err := (&Scheduler{Graph: graph(t, "a", "b:a"), Runner: r, Jobs: 4,
		Initial: map[string]TaskResult{"a": {Status: StatusUnmerged}}}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"b"}, r.started()); d != "" || res.ExitCode != 0 {
		t.Errorf("exit %d; started (-want +got):\n%s", res.ExitCode, d)
	}
	if b, _ := r.start("b"); b.BudgetUSD != 0 {
		t.Errorf("cap %v without a budget", b.BudgetUSD)
	}
}

// TestResumedCostCounts: a resumed run's earlier cost counts against the
// budget while it runs, and its outcome's total replaces it.
func TestResumedCostCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{
			outcomes: map[string]Outcome{"a": {Status: StatusDone, CostUSD: 0.95, CostKnown: true}},
			gates:    gates("a"),
		}
		initial := map[string]TaskResult{"a": {Status: StatusInterrupted, RunID: "r-a", RunStatus: StatusInterrupted, CostUSD: 0.9, CostKnown: true}}
		wait := runAsync(t, t.Context(), &Scheduler{Graph: graph(t, "a", "b"), Runner: r, Jobs: 2, Initial: initial,
			Budget: Budget{BudgetUSD: 1, MinTaskUSD: 0.05}})
		synctest.Wait()
		// 0.1 left, less 0.05 for a: 0.05 pays for b.
		if b, ok := r.start("b"); !ok || b.BudgetUSD < 0.05-1e-9 || b.BudgetUSD > 0.05+1e-9 {
			t.Errorf("b: %+v, %v", b, ok)
		}
		close(r.gates["a"])
		res := wait()
		if res.CostUSD < 0.95-1e-9 || res.CostUSD > 0.95+1e-9 {
			t.Errorf("cost %v, want 0.95 (a's whole run; b's unknown)", res.CostUSD)
		}
	})
}

// TestTaskBudget: a task in a batch runs with its own budget, bounded by the
// batch's share; without a share, its own (none stays none).
func TestTaskBudget(t *testing.T) {
	for _, c := range []struct{ share, own, want float64 }{
		{0, 0, 0}, {0, 2, 2}, {1, 0, 1}, {1, 2, 1}, {3, 2, 2}, {1, -1, 1},
	} {
		if got := TaskBudget(c.own, c.share); got != c.want {
			t.Errorf("share %v, own %v: %v, want %v", c.share, c.own, got, c.want)
		}
	}
}

// TestRerunCounts: a task whose first run's change could not land and
// that its merger ran again (MergeOutcome.Rerun) costs both runs, and so
// does the batch: its line, its duration and the batch's total count the
// second run, whose record the task keeps (the merge outcome does not
// keep it twice). A resumed batch whose merger tells the same second run
// again (its cost so far was journaled when it started) counts it once.
func TestRerunCounts(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return t0 }
	second := &Rerun{RunID: "run-b2", Why: RerunConflict, With: []string{"a"}, Status: StatusDone, Landed: true,
		CostUSD: 0.5, CostKnown: true, DurationMs: 3000}
	r := &fakeRunner{outcomes: map[string]Outcome{
		"a": {Status: StatusDone, RunID: "run-a", CostUSD: 0.3, CostKnown: true},
		"b": {Status: StatusDone, RunID: "run-b", CostUSD: 0.4, CostKnown: true},
	}}
	m := &fakeMerger{outcomes: map[string]MergeOutcome{"b": {Status: MergeMerged, Commit: "c-b", Details: "landed", Rerun: second}}}
	res, err := (&Scheduler{Graph: graph(t, "a", "b"), Runner: r, Merger: m, Jobs: 1, Now: clock}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := res.Task("b")
	if b.Status != StatusDone || b.RunID != "run-b" || b.Rerun == nil || b.Rerun.RunID != "run-b2" || !b.Rerun.Landed {
		t.Fatalf("b: %+v", b)
	}
	if b.Merge == nil || b.Merge.Rerun != nil || b.Merge.Commit != "c-b" {
		t.Errorf("b's merge: %+v", b.Merge)
	}
	if !near(b.CostUSD, 0.9) || !b.CostKnown || b.DurationMs != 3000 {
		t.Errorf("b costs %v (known %v) in %dms, want 0.9 in 3000ms: both runs", b.CostUSD, b.CostKnown, b.DurationMs)
	}
	if !near(res.CostUSD, 1.2) {
		t.Errorf("the batch costs %v, want 1.2 (a 0.3, b's runs 0.4 and 0.5)", res.CostUSD)
	}
	if got := b.Rerun.Of("run-b"); got != "re-run of run-b after a conflict with a" {
		t.Errorf("Of: %q", got)
	}
	if got := b.Rerun.As(); got != "re-run as run-b2 after a conflict with a, which landed" {
		t.Errorf("As: %q", got)
	}

	// Resumed while the second run ran: journaled with what it had spent.
	interim := TaskResult{ID: "b", Status: StatusUnmerged, RunID: "run-b", RunStatus: StatusDone, CostUSD: 0.4, CostKnown: true, DurationMs: 1000}
	interim.SetRerun(&Rerun{RunID: "run-b2", Why: RerunConflict, CostUSD: 0.2, CostKnown: true, DurationMs: 500})
	done := TaskResult{ID: "a", Status: StatusDone, RunID: "run-a", RunStatus: StatusDone, CostUSD: 0.3, CostKnown: true,
		Merge: &MergeOutcome{Status: MergeMerged, Commit: "c-a"}}
	res, err = (&Scheduler{Graph: graph(t, "a", "b"), Runner: &fakeRunner{}, Merger: m, Jobs: 1, Now: clock,
		Initial: map[string]TaskResult{"a": done, "b": interim}}).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, _ = res.Task("b")
	if !near(b.CostUSD, 0.9) || b.DurationMs != 4000 || !near(res.CostUSD, 1.2) {
		t.Errorf("resumed: b costs %v in %dms, the batch %v; want 0.9 in 4000ms, 1.2", b.CostUSD, b.DurationMs, res.CostUSD)
	}
}

func near(a, b float64) bool { return a > b-1e-9 && a < b+1e-9 }

func TestRerunAfter(t *testing.T) {
	for _, c := range []struct {
		r    Rerun
		want string
	}{
		{Rerun{Why: RerunConflict}, "a conflict with the work merged since it started"},
		{Rerun{Why: RerunConflict, With: []string{"p", "q", "r"}}, "a conflict with p, q and r"},
		{Rerun{Why: RerunChecksFailed, With: []string{"p"}}, "its checks failed on its change laid on p's work"},
		{Rerun{Why: RerunChecksFailed, With: []string{"p", "q"}}, "its checks failed on its change laid on p's and q's work"},
		{Rerun{Why: RerunChecksFailed}, "its checks failed on its change laid on the work merged since it started"},
	} {
		if got := c.r.After(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
