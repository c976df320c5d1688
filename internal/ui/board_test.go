package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// The board keeps a line per running task and a summary line at the
// bottom; what stays (events, attempts, messages) is written above it.
func TestBatchBoard(t *testing.T) {
	var buf syncBuffer
	b := NewBatchBoard(Screen{W: &buf, Live: true, Width: func() int { return 200 }}, 3)
	now := time.Now()
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusRunning}})
	b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "c", Status: batch.StatusRunning}})
	b.Task("a").AttemptStarted(engine.TaskProgress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, Number: 1})
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
	last := out[strings.LastIndex(out, "jlgcli: [a] run r1 ended done\n"):]
	if !strings.Contains(last, "⟳ [c] starting\nbatch: 0 done, 2 running, 1 waiting, 0 failed · $0.2500\n") || strings.Contains(last, "⟳ [a]") {
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
	obs.AttemptStarted(engine.TaskProgress{Tier: "claude", Tiers: 1, InTier: 1, Attempts: 3, Number: 1})
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
