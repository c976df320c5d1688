package taskengine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// windowReply is a reply reporting the 5h window at used, resetting at
// reset.
func windowReply(text string, used float64, reset time.Time) agent.Response {
	return agent.Response{Text: text, Windows: []agent.Window{{Kind: "5h", Used: used, ResetsAt: reset, Status: "allowed_warning"}}}
}

func TestTaskWaitsForAWindowBeforeItsNextAttempt(t *testing.T) {
	for _, limit := range []float64{0, 80} {
		w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 3, replies: []reply{
			{write: map[string]string{"a.go": "wrong"}, resp: windowReply("wrote wrong", 0.92, time.Date(2026, 1, 2, 10, 10, 0, 0, time.UTC))},
			edit("a.go", "right answer"),
		}}}, answer("right answer", nil))
		w.opts.MaxWait = time.Hour
		w.opts.WindowLimits = engine.WindowLimits{"fake": limit}
		r := w.run(context.Background())
		if r.Status != engine.StatusDone || len(r.Attempts) != 2 {
			t.Fatalf("limit %v: %s after %d attempts: %s", limit, r.Status, len(r.Attempts), r.Details)
		}
		if len(r.Windows) != 1 || r.Windows[0].Kind != "5h" {
			t.Errorf("limit %v: windows %+v", limit, r.Windows)
		}
		var want []time.Duration
		if limit > 0 {
			want = []time.Duration{10*time.Minute + time.Second}
		}
		if diff := cmp.Diff(want, w.clock.sleeps); diff != "" {
			t.Errorf("limit %v: sleeps (-want +got):\n%s", limit, diff)
		}
		events := w.journal.all()
		i := slices.IndexFunc(events, func(ev engine.Event) bool { return ev.Type == engine.EventWait })
		if (i >= 0) != (limit > 0) {
			t.Errorf("limit %v: events %v", limit, w.journal.types())
		}
	}
}

func TestTaskStopsWhenAWindowResetsBeyondMaxWait(t *testing.T) {
	w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 3, replies: []reply{
		{write: map[string]string{"a.go": "wrong"}, resp: windowReply("wrote wrong", 0.92, time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))},
		edit("a.go", "right answer"),
	}}}, answer("right answer", nil))
	w.opts.MaxWait = time.Hour
	w.opts.WindowLimits = engine.WindowLimits{"": 80}
	r := w.run(context.Background())
	if r.Status != engine.StatusRateLimited || r.ExitCode != 69 || len(r.Attempts) != 1 {
		t.Fatalf("%s (%d) after %d attempts: %s", r.Status, r.ExitCode, len(r.Attempts), r.Details)
	}
	if !strings.Contains(r.Details, "tier t1: fake 5h window at 92% (--window-limit 80%), resets at 2026-01-02T15:00:00Z; waiting") {
		t.Errorf("details: %s", r.Details)
	}
	j, err := Replay(w.journal.all())
	if err != nil || len(j.Resume.State.Windows) != 1 {
		t.Errorf("replayed windows %+v (%v)", j.Resume.State.Windows, err)
	}
}
