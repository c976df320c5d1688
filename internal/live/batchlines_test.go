package live

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The summary line counts blocked tasks apart from failed ones, and the
// cost includes what the running tasks have spent so far.
func TestBatchLinesSummary(t *testing.T) {
	var buf strings.Builder
	l := NewBatchLines(&buf, 4)
	now := time.Now()
	l.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusRunning}})
	l.Observe("a", nil).AttemptDone(taskengine.Progress{Number: 1, CostUSD: 0.5, CostKnown: true}, taskengine.Attempt{})
	l.Event(batch.Event{Kind: batch.EventFinished, Time: now, Task: batch.TaskResult{ID: "b", Status: batch.Status("max-iterations"),
		RunID: "r2", RunStatus: batch.Status("max-iterations"), CostUSD: 0.25, CostKnown: true}})
	l.Event(batch.Event{Kind: batch.EventBlocked, Time: now, Task: batch.TaskResult{ID: "c", Status: batch.StatusBlocked, Reason: "b failed"}})
	if got, want := l.Summary(), "0 done, 1 running, 1 waiting, 1 failed, 1 blocked · $0.7500"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if !strings.HasSuffix(buf.String(), "jlgcli: batch: 0 done, 1 running, 1 waiting, 1 failed, 1 blocked · $0.7500\n") {
		t.Errorf("lines:\n%s", buf.String())
	}
	// Once a's run ends, its own total counts, not its progress as well.
	l.Event(batch.Event{Kind: batch.EventFinished, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusUnmerged,
		RunID: "r1", RunStatus: batch.StatusDone, CostUSD: 0.75, CostKnown: true}})
	if got, want := l.Summary(), "0 done, 0 running, 1 to merge, 1 waiting, 1 failed, 1 blocked · $1.0000"; got != want {
		t.Errorf("after a ended: summary %q, want %q", got, want)
	}
}

// An observer that Observe wraps still gets the agent's retry lines: a
// batch off a terminal shows them as a task or a loop does.
func TestBatchLinesObservePassesAgentLines(t *testing.T) {
	l := NewBatchLines(&strings.Builder{}, 1)
	next := &keptAgentLines{}
	o, ok := l.Observe("a", next).(engine.AgentObserver)
	if !ok {
		t.Fatal("the observer Observe returns does not take the agent's lines")
	}
	o.AgentLine("retrying in 5s (attempt 1/10)")
	if got := strings.Join(next.lines, "|"); got != "retrying in 5s (attempt 1/10)" {
		t.Errorf("lines passed on %q", got)
	}
}

// keptAgentLines is a task observer that keeps the agent lines it is given.
type keptAgentLines struct{ lines []string }

func (*keptAgentLines) AttemptStarted(taskengine.Progress)                  {}
func (*keptAgentLines) Phase(taskengine.Progress, string)                   {}
func (*keptAgentLines) AttemptDone(taskengine.Progress, taskengine.Attempt) {}
func (a *keptAgentLines) AgentLine(line string)                             { a.lines = append(a.lines, line) }

// A task merged with no commit (its run changed nothing the base branch
// lacks) says that nothing was merged and why, never "merged as" nothing.
func TestBatchLinesNothingMerged(t *testing.T) {
	var buf strings.Builder
	l := NewBatchLines(&buf, 2)
	now := time.Now()
	l.Event(batch.Event{Kind: batch.EventMerged, Time: now, Task: batch.TaskResult{ID: "a", Status: batch.StatusDone,
		Merge: &batch.MergeOutcome{Status: batch.MergeMerged, Details: "its branch holds no change for main: nothing was merged"}}})
	l.Event(batch.Event{Kind: batch.EventMerged, Time: now, Task: batch.TaskResult{ID: "b", Status: batch.StatusDone,
		Merge: &batch.MergeOutcome{Status: batch.MergeMerged, Commit: "0123456789abcdef0123"}}})
	out := buf.String()
	if !strings.Contains(out, "jlgcli: [a] nothing merged: its branch holds no change for main\n") || strings.Contains(out, "[a] merged as") {
		t.Errorf("a changed nothing:\n%s", out)
	}
	if !strings.Contains(out, "jlgcli: [b] merged as 0123456789\n") {
		t.Errorf("b was merged:\n%s", out)
	}
}
