package ui

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// TaskLine is an engine.TaskObserver that draws a task's progress on w:
// step, tier, attempt, phase, last gate status and cost. On a terminal one
// goroutine owns a live status line; elsewhere a line is printed when an
// attempt starts and when it ends.
type TaskLine struct {
	w   io.Writer
	tty bool

	mu      sync.Mutex
	start   time.Time
	p       engine.TaskProgress
	phase   string
	started bool
	drawn   bool

	stop   chan struct{}
	done   chan struct{}
	once   sync.Once // Close
	closed bool
}

// NewTaskLine returns a TaskLine writing to w; tty says whether w is a
// terminal.
func NewTaskLine(w io.Writer, tty bool) *TaskLine {
	l := &TaskLine{w: w, tty: tty, start: time.Now()}
	if tty {
		l.stop = make(chan struct{})
		l.done = make(chan struct{})
		go l.loop()
	}
	return l
}

func (l *TaskLine) loop() {
	defer close(l.done)
	t := time.NewTicker(redraw)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if l.started {
				l.draw()
			}
			l.mu.Unlock()
		}
	}
}

// AttemptStarted implements engine.TaskObserver.
func (l *TaskLine) AttemptStarted(p engine.TaskProgress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p, l.phase, l.started = p, "develop", true
	if l.tty {
		l.draw()
		return
	}
	fmt.Fprintf(l.w, "jlgcli: %s · develop\n", l.text())
}

// Phase implements engine.TaskObserver.
func (l *TaskLine) Phase(p engine.TaskProgress, phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p, l.phase, l.started = p, phase, true
	if l.tty {
		l.draw()
		return
	}
	if phase == "plan" {
		fmt.Fprintf(l.w, "jlgcli: planning with tier %s\n", p.Tier)
	}
}

// AttemptDone implements engine.TaskObserver.
func (l *TaskLine) AttemptDone(p engine.TaskProgress, a engine.Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p, l.phase = p, a.Action
	if l.tty {
		l.clear()
	}
	line := fmt.Sprintf("jlgcli: %s · gate %s · %s", l.text(), a.Gate.Status, a.Action)
	if a.Detection != nil {
		line += fmt.Sprintf(" (loop: %s)", a.Detection.Names())
	}
	fmt.Fprintln(l.w, clip(line, 160))
	if l.tty {
		l.draw()
	}
}

// Close stops the redraws and clears the status line; it may be called
// more than once.
func (l *TaskLine) Close() {
	if !l.tty {
		return
	}
	l.once.Do(func() { close(l.stop) })
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	l.closed = true
}

// Around clears the status line, calls write, and draws the line again: a
// message written by write does not tear it.
func (l *TaskLine) Around(write func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	write()
	if l.tty && l.started && !l.closed {
		l.draw()
	}
}

func (l *TaskLine) clear() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

func (l *TaskLine) text() string { return taskText(l.p, l.start) }

// taskText is where a task stands: step, tier, attempt, last gate, cost
// and budget, time since start.
func taskText(p engine.TaskProgress, start time.Time) string {
	s := ""
	if p.Steps > 1 {
		s = fmt.Sprintf("step %d/%d · ", p.Step, p.Steps)
	}
	s += fmt.Sprintf("tier %s (%d/%d) · attempt %d/%d", p.Tier, p.TierIndex+1, p.Tiers, p.InTier, p.Attempts)
	if p.LastGate != "" {
		s += " · last gate " + p.LastGate
	}
	c := cost.Phrase(p.CostUSD, p.CostKnown, p.Estimated)
	switch {
	case p.BudgetUSD > 0 && p.CostKnown:
		c += fmt.Sprintf("/$%.2f", p.BudgetUSD)
	case p.BudgetUSD > 0:
		c += fmt.Sprintf(" (budget $%.2f)", p.BudgetUSD)
	}
	return s + " · " + c + " · " + fmtDuration(time.Since(start))
}

func (l *TaskLine) draw() {
	fmt.Fprint(l.w, "\r\x1b[K"+clip("⟳ "+l.text()+" · "+l.phase, 150))
	l.drawn = true
}
