// Package ui shows a run's progress on stderr: one live status line on a
// terminal, one plain line per iteration otherwise.
package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jlgcli/jlgcli/internal/engine"
)

// Progress is an engine.Observer that draws on w. On a terminal one
// goroutine owns the line and redraws it every redraw interval; elsewhere a
// line is printed at the end of each iteration.
type Progress struct {
	w   io.Writer
	tty bool

	mu        sync.Mutex
	start     time.Time
	iteration int
	max       int
	cost      float64
	costKnown bool
	last      string
	drawn     bool

	stop   chan struct{}
	done   chan struct{}
	once   sync.Once // Close
	closed bool
}

const redraw = 250 * time.Millisecond

// NewProgress returns a Progress writing to w; tty says whether w is a
// terminal.
func NewProgress(w io.Writer, tty bool) *Progress {
	p := &Progress{w: w, tty: tty, start: time.Now()}
	if tty {
		p.stop = make(chan struct{})
		p.done = make(chan struct{})
		go p.loop()
	}
	return p
}

func (p *Progress) loop() {
	defer close(p.done)
	t := time.NewTicker(redraw)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.iteration > 0 {
				p.draw()
			}
			p.mu.Unlock()
		}
	}
}

// IterationStarted implements engine.Observer.
func (p *Progress) IterationStarted(iteration, max int, _ time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.iteration, p.max = iteration, max
	if p.tty {
		p.draw()
	}
}

// IterationDone implements engine.Observer.
func (p *Progress) IterationDone(e engine.Entry, r *engine.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cost, p.costKnown = r.CostUSD, r.CostKnown
	p.last = firstLine(e.Response)
	if p.tty {
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "jlgcli: iteration %d/%d done in %s · elapsed %s%s · %s\n",
		e.Iteration, p.max, fmtDuration(time.Duration(e.DurationMs)*time.Millisecond),
		fmtDuration(time.Since(p.start)), p.costText(), quoteOrEmpty(p.last, 100))
}

// Close stops the redraws and clears the status line; it may be called
// more than once.
func (p *Progress) Close() {
	if !p.tty {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.closed = true
}

func (p *Progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Around clears the status line, calls write, and draws the line again: a
// message written by write does not tear it.
func (p *Progress) Around(write func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	write()
	if p.tty && p.iteration > 0 && !p.closed {
		p.draw()
	}
}

func (p *Progress) draw() {
	line := fmt.Sprintf("⟳ iteration %d/%d · %s%s", p.iteration, p.max, fmtDuration(time.Since(p.start)), p.costText())
	if p.last != "" {
		line += " · " + p.last
	}
	fmt.Fprint(p.w, "\r\x1b[K"+clip(line, 110))
	p.drawn = true
}

func (p *Progress) costText() string {
	if !p.costKnown {
		return ""
	}
	return fmt.Sprintf(" · $%.4f", p.cost)
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

func quoteOrEmpty(s string, n int) string {
	if s == "" {
		return "(empty reply)"
	}
	return fmt.Sprintf("%q", clip(s, n))
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func fmtDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
