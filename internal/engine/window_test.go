package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
)

func TestWindowWaitDecision(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	five := Window{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: now.Add(10 * time.Minute), At: now}
	week := Window{Backend: "claude", Kind: "weekly", Used: 0.5, ResetsAt: now.Add(72 * time.Hour), At: now}
	other := Window{Backend: "codex", Kind: "5h", Used: 1, ResetsAt: now.Add(time.Hour), At: now}
	ws := Windows{five, week, other}
	limit := WindowLimits{"": 80}
	cases := []struct {
		name    string
		ws      Windows
		backend string
		limits  WindowLimits
		maxWait time.Duration
		waited  time.Duration
		want    string // "" go; "wait <d>"; "stop <details part>"
	}{
		{"no limit", ws, "claude", nil, time.Hour, 0, ""},
		{"over the limit waits for its reset", ws, "claude", limit, time.Hour, 0, "wait 10m1s"},
		{"at the limit exactly", Windows{{Backend: "claude", Kind: "5h", Used: 0.8, ResetsAt: now.Add(time.Minute)}}, "claude", limit, time.Hour, 0, "wait 1m1s"},
		{"below the limit", ws, "claude", WindowLimits{"": 95}, time.Hour, 0, ""},
		{"another backend's window", Windows{other}, "claude", limit, time.Hour, 0, ""},
		{"per backend limit", ws, "claude", WindowLimits{"": 80, "claude": 95}, time.Hour, 0, ""},
		{"a window already reset", Windows{{Backend: "claude", Kind: "5h", Used: 1, ResetsAt: now.Add(-time.Second)}}, "claude", limit, time.Hour, 0, ""},
		{"no reset time known", Windows{{Backend: "claude", Kind: "5h", Used: 1}}, "claude", limit, time.Hour, 0, ""},
		{"the latest reset of two over", ws, "claude", WindowLimits{"": 50}, 100 * time.Hour, 0, "wait 72h0m1s"},
		{"beyond max-wait", ws, "claude", WindowLimits{"": 50}, time.Hour, 0, "stop claude weekly window at 50% (--window-limit 50%), resets at 2026-11-25T12:00:00Z; waiting 72h0m1s would pass --max-wait 1h0m0s"},
		{"max-wait spent", ws, "claude", limit, time.Hour, time.Hour, "stop claude 5h window at 92% (--window-limit 80%), resets at 2026-11-22T12:10:00Z; --max-wait 1h0m0s is spent"},
		{"no max-wait", ws, "claude", limit, 0, 0, "stop claude 5h window at 92% (--window-limit 80%), resets at 2026-11-22T12:10:00Z; --max-wait is 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := WindowWait(now, c.ws, c.backend, c.limits, c.waited, c.maxWait)
			got := ""
			switch {
			case h == nil:
			case h.OK:
				got = "wait " + h.Wait.String()
			default:
				got = "stop " + h.Details
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestWindowsNoteKeepsTheNewest(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ws := Windows{}.Note("claude", t0, []agent.Window{{Kind: "5h", Used: 0.5}, {Kind: "weekly", Used: 0.2}})
	ws = ws.Note("claude", t0.Add(time.Minute), []agent.Window{{Kind: "5h", Used: 0.9}})
	ws = ws.Note("claude", t0.Add(-time.Minute), []agent.Window{{Kind: "weekly", Used: 0.1}}) // older: ignored
	ws = ws.Note("codex", t0, []agent.Window{{Kind: "5h", Used: 0.3}})
	var got []string
	for _, w := range ws {
		got = append(got, w.Backend+" "+w.Kind+" "+Percent(w.Used))
	}
	if diff := cmp.Diff([]string{"claude 5h 90%", "claude weekly 20%", "codex 5h 30%"}, got); diff != "" {
		t.Error(diff)
	}
}

// windowReply is a reply reporting the 5h window at used, resetting at
// reset.
func windowReply(text string, used float64, reset time.Time) agent.Response {
	return agent.Response{Text: text, Windows: []agent.Window{{Kind: "5h", Used: used, ResetsAt: reset, Status: "allowed_warning"}}}
}

func TestLoopWaitsForAWindowOverTheLimit(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var slept []time.Duration
	j := &memJournal{}
	a := &fakeAgent{replies: []agent.Response{windowReply("one", 0.92, clock.Add(20*time.Minute)), windowReply("DONE", 0.1, clock.Add(5*time.Hour))}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.Journal = j
		o.MaxWait = time.Hour
		o.WindowLimits = WindowLimits{"": 80}
		o.Now = func() time.Time { return clock }
		o.Sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			clock = clock.Add(d)
			return nil
		}
	}))
	if res.Status != StatusDone || res.Iterations != 2 {
		t.Fatalf("%s after %d: %s", res.Status, res.Iterations, res.Details)
	}
	if diff := cmp.Diff([]time.Duration{20*time.Minute + time.Second}, slept); diff != "" {
		t.Errorf("slept: %s", diff)
	}
	if diff := cmp.Diff([]string{"start", "iteration", "rate-limit-wait", "iteration", "stop"}, j.types()); diff != "" {
		t.Errorf("events: %s", diff)
	}
	var w WaitData
	if err := json.Unmarshal(j.events[2].Data, &w); err != nil || w.Window == nil || w.Window.Kind != "5h" ||
		!strings.Contains(w.Message, "fake 5h window at 92% (--window-limit 80%)") {
		t.Errorf("wait event: %s", j.events[2].Data)
	}
	if res.DurationMs != 0 {
		t.Errorf("duration %dms counts the wait", res.DurationMs)
	}
	if len(res.Windows) != 1 || res.Windows[0].Used != 0.1 || res.Windows[0].Backend != "fake" {
		t.Errorf("windows: %+v", res.Windows)
	}
	st, _, _, _ := Replay(j.events)
	if len(st.Windows) != 1 || st.Windows[0].Used != 0.1 {
		t.Errorf("replayed windows: %+v", st.Windows)
	}
	if cp := j.cps[len(j.cps)-1]; len(cp.Windows) != 1 {
		t.Errorf("checkpoint windows: %+v", cp.Windows)
	}
}

func TestLoopWithoutWindowLimitDoesNotWait(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	a := &fakeAgent{replies: []agent.Response{windowReply("one", 0.99, clock.Add(20*time.Minute)), {Text: "DONE"}}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = time.Hour
		o.Now = func() time.Time { return clock }
		o.Sleep = func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }
	}))
	if res.Status != StatusDone || res.Iterations != 2 || len(res.Windows) != 1 {
		t.Fatalf("%s after %d: %s (windows %+v)", res.Status, res.Iterations, res.Details, res.Windows)
	}
}

func TestLoopStopsWhenAWindowResetsBeyondMaxWait(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	a := &fakeAgent{replies: []agent.Response{windowReply("one", 0.92, clock.Add(3*time.Hour))}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = time.Hour
		o.WindowLimits = WindowLimits{"": 80}
		o.Now = func() time.Time { return clock }
		o.Sleep = func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }
	}))
	if res.Status != StatusRateLimited || res.ExitCode != 69 || res.Iterations != 1 || len(a.reqs) != 1 {
		t.Fatalf("%s (%d) after %d calls: %s", res.Status, res.ExitCode, len(a.reqs), res.Details)
	}
	if !strings.Contains(res.Details, "fake 5h window at 92% (--window-limit 80%), resets at 2026-11-22T15:00:00Z; waiting 3h0m1s would pass --max-wait 1h0m0s") {
		t.Errorf("details: %s", res.Details)
	}
}

// A shared book holds back a run on a backend whose window another run
// filled, before its first call.
func TestWindowBookHoldsBackAnotherRun(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	book := NewWindowBook(Windows{{Backend: "fake", Kind: "5h", Used: 0.95, ResetsAt: clock.Add(time.Hour), At: clock}})
	a := &fakeAgent{}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = 10 * time.Minute
		o.WindowLimits = WindowLimits{"fake": 90}
		o.Windows = book
		o.Now = func() time.Time { return clock }
	}))
	if res.Status != StatusRateLimited || len(a.reqs) != 0 {
		t.Fatalf("%s after %d calls: %s", res.Status, len(a.reqs), res.Details)
	}
}

func TestWindowsText(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ws := Windows{
		{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: now.Add(2*time.Hour + 5*time.Minute)},
		{Backend: "claude", Kind: "weekly", Used: 0.5, ResetsAt: now.Add(84 * time.Hour)},
	}
	if got, want := ws.Text(now, time.UTC), "5h 92% (resets 14:05), weekly 50% (resets Nov 26 00:00)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	ws = append(ws, Window{Backend: "codex", Kind: "5h", Used: 1, ResetsAt: now.Add(-time.Minute)})
	if got, want := ws.Text(now, time.UTC), "claude 5h 92% (resets 14:05), claude weekly 50% (resets Nov 26 00:00), codex 5h 100% (reset 11:59)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Windows(nil).Text(now, time.UTC); got != "" {
		t.Errorf("none: %q", got)
	}
}
