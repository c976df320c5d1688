package live

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The board keeps a line per running task and a summary line at the
// bottom; what stays (events, attempts, messages) is written above it.
func TestBatchBoard(t *testing.T) {
	var buf syncBuffer
	b := NewBatchBoard(Screen{W: &buf, Live: true, Width: func() int { return 200 }}, 3)
	now := time.Now()
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusRunning}})
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "c", Status: batch.StatusRunning}})
	b.Task("a").AttemptStarted(taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, Number: 1})
	b.Above("jlgcli: a message\n")
	out := buf.String()
	for _, want := range []string{"jlgcli: [a] started\n", "⟳ [a] tier fast (1/1) · attempt 1/3", "⟳ [c] starting\n",
		"batch: 0 done, 2 running, 1 waiting, 0 failed · cost unknown\n", "jlgcli: a message\n⟳ [a]"} {
		if !strings.Contains(out, want) {
			t.Errorf("board output lacks %q:\n%q", want, out)
		}
	}
	b.Event(batch.Event{Kind: batch.EventFinished, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusUnmerged, RunID: "r1", RunStatus: batch.StatusDone, CostUSD: 0.25, CostKnown: true}})
	b.Close()
	out = buf.String()
	last := out[strings.LastIndex(out, "jlgcli: [a] ended done · run r1\n"):]
	if !strings.Contains(last, "⟳ [c] starting\nbatch: 0 done, 1 running, 1 to merge, 1 waiting, 0 failed · $0.2500\n") || strings.Contains(last, "⟳ [a]") {
		t.Errorf("after a's run ended, the board is:\n%q", last)
	}
	if !strings.HasSuffix(out, syncBegin+"\x1b[2A\r\x1b[2K\x1b[1B\x1b[2K\x1b[1A"+syncEnd) {
		t.Errorf("Close does not clear the board: %q", out[max(0, len(out)-40):])
	}
}

// A task that waits for a subscription window says so on its line, and why
// above the board.
func TestBatchBoardWaitingTask(t *testing.T) {
	var buf syncBuffer
	b := NewBatchBoard(Screen{W: &buf, Live: true, Width: func() int { return 200 }}, 2)
	now := time.Now()
	until := now.Add(time.Hour)
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "b", Status: batch.StatusRunning}})
	obs := b.Task("b")
	obs.AttemptStarted(taskengine.Progress{Tier: "claude", Tiers: 1, InTier: 1, Attempts: 3, Number: 1})
	obs.(engine.WaitObserver).Waiting(until, "claude 5h window at 92% (--window-limit 80%)")
	b.Close()
	out := buf.String()
	for _, want := range []string{"jlgcli: [b] waiting until " + until.Format("15:04:05") + " for a subscription window to reset: claude 5h window at 92%",
		"· waiting until " + until.Format("15:04:05")} {
		if !strings.Contains(out, want) {
			t.Errorf("board output lacks %q:\n%q", want, out)
		}
	}
}

// A task's second run (its first run's change could not land) has a live
// line of its own, timed from its start: its attempts' lines do not say
// 0s, and the summary counts the task to merge, not running, with what
// the second run spends so far.
func TestBatchBoardRerun(t *testing.T) {
	var buf syncBuffer
	b := NewBatchBoard(Screen{W: &buf, Live: true, Width: func() int { return 200 }}, 2)
	now := time.Now()
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "q", Status: batch.StatusRunning}})
	b.Event(batch.Event{Kind: batch.EventFinished, Time: now, Task: batch.TaskResult{ID: "q", Status: batch.StatusUnmerged, RunID: "r1",
		RunStatus: batch.StatusDone, CostUSD: 0.5, CostKnown: true}})
	q := batch.TaskResult{ID: "q", Status: batch.StatusUnmerged, RunID: "r1", RunStatus: batch.StatusDone, CostUSD: 0.5, CostKnown: true}
	q.SetRerun(&batch.Rerun{RunID: "r2", Why: batch.RerunConflict, With: []string{"p"}})
	b.Event(batch.Event{Kind: batch.EventRerunStarted, Time: now, Task: q})
	b.l.mu.Lock()
	b.tasks["q"].start = now.Add(-90 * time.Second) // the second run started 90s ago
	b.l.mu.Unlock()
	obs := b.Task("q")
	p := taskengine.Progress{Tier: "strong", TierIndex: 1, Tiers: 2, InTier: 1, Attempts: 2, Number: 1, CostUSD: 0.25, CostKnown: true}
	obs.AttemptStarted(p)
	obs.AttemptDone(p, taskengine.Attempt{Number: 1, Tier: "strong", Action: taskengine.ActionPass,
		Gate: gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit}})
	out := buf.String()
	for _, want := range []string{"jlgcli: [q] run r1 did not land after a conflict with p; re-run as r2\n",
		"⟳ [q] tier strong (2/2) · attempt 1/2", "jlgcli: [q] gate pass · pass · $0.2500 · tier strong (2/2) · attempt 1/2 · 1m30s\n",
		"batch: 0 done, 0 running, 1 to merge, 1 waiting, 0 failed · $0.7500\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("board output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "attempt 1/2 · 0s\n") {
		t.Errorf("the second run's attempt says 0s:\n%q", out)
	}
	b.Close()
}
