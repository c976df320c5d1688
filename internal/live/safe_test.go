package live

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// hostile is what a hostile agent or check writes: the clipboard (OSC
// 52), the window title, a cursor move and line erasure, a carriage return,
// a C1 CSI and a bidi override.
const hostile = "\x1b]52;c;ZWNobyBwd25lZAo=\x07\x1b]0;pwned-title\x07escape: ok\x1b[1A\x1b[2K\rdone \u009b2J\u202eexe"

// hostileSeen is hostile on one line as the status lines show it.
const hostileSeen = `\x1b]52;c;ZWNobyBwd25lZAo=\a\x1b]0;pwned-title\aescape: ok\x1b[1A\x1b[2K\rdone \u009b2J\u202eexe`

// On a terminal of 80 columns (vt, which fails on any escape code but the
// live lines' own), a loop's status line shows the agent's reply and its
// retry line with their escapes visible, cut to the width; the messages
// that quote them too.
func TestLiveLinesShowEscapes(t *testing.T) {
	term := newVT(80)
	s := Screen{W: term, Live: true, Width: func() int { return 80 }}
	p := NewProgress(s)
	say := NewReporter(term, false)
	say.Attach(p)
	p.IterationStarted(1, 10, time.Now())
	p.IterationDone(engine.Entry{Iteration: 1, Response: hostile}, &engine.Result{})
	p.l.redraw()
	lines := term.lines()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "⟳ iteration 1/10 · ") || !strings.Contains(lines[0], ` · \x1b]52;c;ZWNobyBwd25lZAo=\a\x1b]0;`) ||
		!strings.HasSuffix(lines[0], "…") || cells(lines[0]) != 79 {
		t.Errorf("the status line at 80 columns: %q", lines)
	}
	p.AgentLine("API error\x1b]0;title\x07 retrying\r")
	if lines := term.lines(); !strings.HasPrefix(lines[0], `⟳ agent: API error\x1b]0;title\a retrying\r · iteration 1/10`) {
		t.Errorf("the agent's line at 80 columns: %q", lines)
	}
	p.Refused(1, engine.Refusal{Guard: "checks", Details: "go test\x1b[2K\rPASS"})
	say.Notice("failed: " + hostile)
	say.Error("the agent said: \x1b]52;c;eA==\x07\nsecond line\x9b")
	p.Close()
	want := []string{
		`jlgcli: iteration 1/10: done refused by the checks guard: go test\x1b[2K\rPASS`,
		"jlgcli: failed: " + hostileSeen,
		`jlgcli: error: the agent said: \x1b]52;c;eA==\a`,
		`second line\x9b`,
	}
	got := term.lines()
	var joined []string // the rows a long line wrapped to, joined again
	for _, row := range got {
		if len(joined) > 0 && !strings.HasPrefix(row, "jlgcli: ") && !strings.HasPrefix(row, "second") {
			joined[len(joined)-1] += row
			continue
		}
		joined = append(joined, row)
	}
	if strings.Join(joined, "\n") != strings.Join(want, "\n") {
		t.Errorf("after Close, the terminal holds\n%s\nwant\n%s", strings.Join(joined, "\n"), strings.Join(want, "\n"))
	}
}

// A batch's board: a sheet's id, a task's details, a check's output and
// an agent's line with escape codes are shown, none run.
func TestBoardShowsEscapes(t *testing.T) {
	term := newVT(100)
	b := NewBatchBoard(Screen{W: term, Live: true, Width: func() int { return 100 }}, 2)
	id := "fix\x1b[8m"
	b.Event(batch.Event{Kind: batch.EventStarted, Task: batch.TaskResult{ID: id, Status: batch.StatusRunning}})
	tp := taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, Number: 1}
	b.Task(id).AttemptStarted(tp)
	b.Task(id).(engine.AgentObserver).AgentLine("overloaded\x1b]0;t\x07")
	b.l.redraw()
	if lines := term.lines(); len(lines) != 3 || lines[0] != `jlgcli: [fix\x1b[8m] started` || !strings.HasPrefix(lines[1], `⟳ [fix\x1b[8m] agent: overloaded\x1b]0;t\a · tier fast`) {
		t.Errorf("the task's line: %q", lines)
	}
	fail := gate.Report{Status: "fail", Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "go test", ExitCode: 1, OutputTail: "ok\n--- FAIL\x1b[2K\rPASS\n"}}}}
	b.Task(id).AttemptDone(tp, taskengine.Attempt{Tier: "fast", Action: taskengine.ActionRetry, Gate: fail})
	b.Writer(id).Write([]byte("jlgcli: merging \x1b]52;c;eA==\x07\n"))
	b.Event(batch.Event{Kind: batch.EventFinished, Task: batch.TaskResult{ID: id, Status: batch.Status("failed"), RunStatus: "failed", Details: "its checks failed: \x1b[31mFAIL"}})
	b.Event(batch.Event{Kind: batch.EventStopped, Reason: "a task failed\x1b[2J"})
	b.Close()
	out := strings.Join(term.lines(), "\n")
	for _, want := range []string{
		`jlgcli: [fix\x1b[8m] gate fail · retry · exit 1: --- FAIL\x1b[2K\rPASS · cost unknown · tier fast …`,
		`jlgcli: [fix\x1b[8m] merging \x1b]52;c;eA==\a`,
		`jlgcli: [fix\x1b[8m] ended failed: its checks failed: \x1b[31mFAIL · run `,
		`jlgcli: batch: no more task is started: a task failed\x1b[2J`,
	} {
		if !strings.Contains(strings.ReplaceAll(out, "\n", ""), want) {
			t.Errorf("the terminal holds no %q:\n%s", want, out)
		}
	}
}

// Off a terminal, the lines for a log are safe too.
func TestLogLinesShowEscapes(t *testing.T) {
	var buf syncBuffer
	s := NewScreen(&buf, false, nil)
	p := NewProgress(s)
	p.IterationStarted(1, 3, time.Now())
	p.IterationDone(engine.Entry{Iteration: 1, Response: hostile}, &engine.Result{})
	p.AgentLine("retry\x1b[2K")
	bl := NewBatchLines(s.W, 1)
	bl.Event(batch.Event{Kind: batch.EventStopped, Reason: "stop\x1b]0;t\x07"})
	lt := NewPrefixedTaskLine(s, "a\x1b[8m")
	lt.AttemptStarted(taskengine.Progress{Tier: "t\x1b[8m", Tiers: 1, InTier: 1, Attempts: 1, Number: 1})
	p.Close()
	out := buf.String()
	if !termsafe.Safe(out) {
		t.Errorf("not safe for a terminal: %q", out)
	}
	for _, want := range []string{
		` jlgcli: iteration 1/3 done in `,
		` · "` + hostileSeen[:95],
		` jlgcli: agent: retry\x1b[2K`,
		` jlgcli: batch: no more task is started: stop\x1b]0;t\a`,
		` jlgcli: [a\x1b[8m] tier t\x1b[8m (1/1)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
