// Package live shows a run's progress on stderr: live status lines redrawn in
// place on a terminal, fitted to its width; one plain line per event, after
// the time of day, otherwise.
package live

import (
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
)

// Progress is an engine.Observer that draws on a screen. On a terminal
// one goroutine owns the status line and redraws it every redraw interval;
// elsewhere a line is printed at the end of each iteration.
type Progress struct {
	l live

	start     time.Time
	iteration int
	max       int
	cost      float64
	costKnown bool
	last      string
	windows   string     // the windows the agent reported, as Windows.Text
	agent     agentLines // the agent's retry and error lines this iteration
}

const redraw = 250 * time.Millisecond

// NewProgress returns a Progress drawn on s.
func NewProgress(s Screen) *Progress {
	p := &Progress{start: time.Now()}
	p.l.start(s, p.lines)
	return p
}

// IterationStarted implements engine.Observer.
func (p *Progress) IterationStarted(iteration, max int, _ time.Time) {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	p.iteration, p.max = iteration, max
	p.agent.reset()
	p.l.frame("")
}

// IterationDone implements engine.Observer.
func (p *Progress) IterationDone(e engine.Entry, r *engine.Result) {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	p.cost, p.costKnown = r.CostUSD, r.CostKnown
	p.windows = r.Windows.Text(time.Now(), time.Local)
	p.last = firstLine(e.Response)
	p.agent.reset()
	if p.l.s.Live {
		p.l.frame("")
		return
	}
	fmt.Fprintf(p.l.s.W, "jlgcli: iteration %d/%d done in %s · elapsed %s%s · %s\n",
		e.Iteration, p.max, fmtDuration(e.DurationMs.Duration()),
		fmtDuration(time.Since(p.start)), p.costText(), quoteOrEmpty(p.last, 100))
}

// Refused implements engine.RefusalObserver: a line says which guard
// refused done, and why.
func (p *Progress) Refused(iteration int, ref engine.Refusal) {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	line := fmt.Sprintf("jlgcli: iteration %d/%d: done refused by the %s guard", iteration, p.max, ref.Guard)
	if d := firstLine(ref.Details); d != "" {
		line += ": " + d
	}
	p.l.event(line)
}

// AgentLine implements engine.AgentObserver: the agent's retry or error
// line is shown on the status line, or printed off a terminal.
func (p *Progress) AgentLine(line string) {
	p.l.agentLine(&p.agent, line)
}

// Close stops the redraws and clears the status line; it may be called
// more than once.
func (p *Progress) Close() { p.l.close() }

// Above implements Live: text stays above the status line.
func (p *Progress) Above(text string) { p.l.above(text) }

func (p *Progress) lines() []string {
	if p.iteration == 0 {
		return nil
	}
	line := fmt.Sprintf("⟳ iteration %d/%d · %s%s", p.iteration, p.max, fmtDuration(time.Since(p.start)), p.costText())
	switch {
	case p.agent.last != "":
		// The news first: a narrow terminal cuts the end.
		line = fmt.Sprintf("⟳ agent: %s · iteration %d/%d · %s%s", p.agent.last, p.iteration, p.max, fmtDuration(time.Since(p.start)), p.costText())
	case p.last != "":
		line += " · " + p.last
	}
	return []string{line}
}

// costText is the cost so far and the windows the agent reported, each
// after " · ", when known.
func (p *Progress) costText() string {
	s := ""
	if p.costKnown {
		s = fmt.Sprintf(" · $%.4f", p.cost)
	}
	if p.windows != "" {
		s += " · " + p.windows
	}
	return s
}

// Waiting implements engine.WaitObserver: a line says until when the run
// waits for a window to reset, and why.
func (p *Progress) Waiting(until time.Time, reason string) {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	p.l.event("jlgcli: " + waitingText(until, reason))
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// quoteOrEmpty is s cut to n cells, safe for a terminal (clip), in double
// quotes; "(empty reply)" for none.
func quoteOrEmpty(s string, n int) string {
	if s == "" {
		return "(empty reply)"
	}
	return `"` + clip(s, n) + `"`
}

// clip is s on one line, safe for a terminal, cut to n cells (fit).
func clip(s string, n int) string { return fit(s, n) }

func fmtDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

var (
	_ engine.WaitObserver    = (*Progress)(nil)
	_ engine.WaitObserver    = (*TaskLine)(nil)
	_ engine.WaitObserver    = boardObserver{}
	_ engine.WaitObserver    = progressObserver{}
	_ engine.RefusalObserver = (*Progress)(nil)
	_ engine.AgentObserver   = (*Progress)(nil)
	_ engine.AgentObserver   = (*TaskLine)(nil)
	_ engine.AgentObserver   = boardObserver{}
	_ engine.AgentObserver   = progressObserver{}
)
