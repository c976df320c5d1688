package live

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// syncBuffer is a bytes.Buffer safe for the redraw goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPlainLinePerIteration(t *testing.T) {
	var buf syncBuffer
	p := NewProgress(NewScreen(&buf, false, nil))
	res := &engine.Result{CostUSD: 0.0123, CostKnown: true}
	p.IterationStarted(1, 3, time.Now())
	p.IterationDone(engine.Entry{Iteration: 1, Response: "\n  First line of reply\nsecond", DurationMs: 1500}, res)
	p.IterationStarted(2, 3, time.Now())
	p.IterationDone(engine.Entry{Iteration: 2, Response: ""}, res)
	p.Close()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	if !stamped.MatchString(lines[0]) || !strings.Contains(lines[0], " jlgcli: iteration 1/3 done in 1.5s") || !strings.Contains(lines[0], "$0.0123") || !strings.HasSuffix(lines[0], `"First line of reply"`) {
		t.Errorf("line 1: %q", lines[0])
	}
	if !strings.Contains(lines[1], "iteration 2/3") || !strings.Contains(lines[1], "(empty reply)") {
		t.Errorf("line 2: %q", lines[1])
	}
	if strings.Contains(buf.String(), "\r") || strings.Contains(buf.String(), "\x1b") {
		t.Error("control characters on a stream that is not a terminal")
	}
}

func TestTerminalStatusLine(t *testing.T) {
	var buf syncBuffer
	p := NewProgress(Screen{W: &buf, Live: true, Width: func() int { return 111 }})
	p.IterationStarted(2, 10, time.Now())
	p.IterationDone(engine.Entry{Iteration: 2, Response: strings.Repeat("long reply ", 50)}, &engine.Result{})
	p.Close()
	out := buf.String()
	if !strings.Contains(out, syncBegin+"⟳ iteration 2/10 · ") {
		t.Fatalf("no status line: %q", out)
	}
	if !strings.HasSuffix(out, "\x1b[1A\r\x1b[2K"+syncEnd) {
		t.Errorf("Close must clear the line: %q", out)
	}
	for _, draw := range strings.Split(escape.ReplaceAllString(out, ""), "\n") {
		if n := cells(strings.TrimPrefix(draw, "\r")); n > 110 {
			t.Errorf("status line of %d cells on a terminal of 111, over 110", n)
		}
	}
	if strings.Contains(out, "$") {
		t.Errorf("no cost is shown when the CLI reports none: %q", out)
	}
}

// A message written through the reporter while a live line is drawn
// clears the line first and draws it again after the message: the message
// stands on a line of its own.
func TestReporterGoesAroundTheLiveLine(t *testing.T) {
	var buf syncBuffer
	l := NewTaskLine(Screen{W: &buf, Live: true})
	defer l.Close()
	r := NewReporter(&buf, false)
	r.Attach(l)
	l.AttemptStarted(taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, Number: 1})
	r.Warn("push: no remote")
	if out := buf.String(); !strings.Contains(out, syncBegin+"\x1b[1A\r\x1b[2Kjlgcli: warning: push: no remote\n⟳ tier fast") {
		t.Errorf("output %q: want in one frame the line cleared, the message, then the line drawn again", out)
	}
	r.SetQuiet(true)
	start := len(buf.String())
	r.Progress("left out")
	r.Notice("kept")
	if out := buf.String()[start:]; strings.Contains(out, "left out") || !strings.Contains(out, "jlgcli: kept\n") {
		t.Errorf("quiet output %q", out)
	}
}

func TestWindowsAndWaitsOnTheLine(t *testing.T) {
	var buf syncBuffer
	p := NewProgress(NewScreen(&buf, false, nil))
	reset := time.Now().Add(90 * time.Minute)
	res := &engine.Result{Windows: engine.Windows{{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: reset}}}
	p.IterationStarted(1, 3, time.Now())
	p.IterationDone(engine.Entry{Iteration: 1, Response: "one"}, res)
	p.Waiting(reset, "claude 5h window at 92% (--window-limit 80%)")
	p.Close()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	if want := " · 5h 92% (resets " + reset.Format("15:04") + ") · "; !strings.Contains(lines[0], want) {
		t.Errorf("line 1 %q does not hold %q", lines[0], want)
	}
	if want := "jlgcli: waiting until " + reset.Format("15:04:05") + " for a subscription window to reset: claude 5h window at 92% (--window-limit 80%)"; !strings.HasSuffix(lines[1], want) {
		t.Errorf("line 2 %q, want it to end with %q", lines[1], want)
	}
}
