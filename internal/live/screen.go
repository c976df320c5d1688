package live

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Screen is the stream that progress is drawn on (stderr) as the live lines
// see it.
type Screen struct {
	// W receives every frame in one Write.
	W io.Writer
	// Live: W is a terminal that takes cursor codes (not TERM=dumb); the
	// live lines are redrawn in place. Otherwise no escape code is written:
	// each progress line is printed once.
	Live bool
	// Width is the terminal's width in cells, read at each frame so that a
	// resize is followed; nil or a width ≤ 0: 80.
	Width func() int
	// Palette colours the status words of the lines, on a live screen
	// only (tty.ColorOn decides).
	Palette tty.Palette
}

// NewScreen returns the screen of w. When live is false, the lines written
// through it are meant for a log: each starts with the time of day
// ("14:05:09 "), and is made safe for a terminal (termsafe.Text).
func NewScreen(w io.Writer, live bool, width func() int) Screen {
	if !live {
		w = &stampWriter{w: w, now: time.Now}
	}
	return Screen{W: w, Live: live, Width: width}
}

// IsLive says whether a terminal that stream is takes cursor codes: it is a
// terminal and TERM is not "dumb".
func IsLive(isTerminal bool, term string) bool { return isTerminal && term != "dumb" }

func (s Screen) width() int {
	if s.Width != nil {
		if w := s.Width(); w > 0 {
			return w
		}
	}
	return 80
}

// stampWriter puts the time of day before each line, and writes the lines
// safe for a terminal (termsafe.Text): off a terminal no escape code is
// written, not even one of an agent's that a line quotes.
type stampWriter struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	mid bool // the last write ended within a line
}

func (s *stampWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out bytes.Buffer
	stamp := s.now().Format("15:04:05 ")
	for line := range strings.Lines(termsafe.Text(string(p))) {
		if !s.mid {
			out.WriteString(stamp)
		}
		out.WriteString(line)
		s.mid = !strings.HasSuffix(line, "\n")
	}
	if _, err := s.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Synchronized output (DEC private mode 2026): the terminal shows the frame
// at once; terminals that do not know the mode ignore it.
const (
	syncBegin = "\x1b[?2026h"
	syncEnd   = "\x1b[?2026l"
)

// live is a region of lines at the bottom of a screen, redrawn in place by
// one goroutine (on a terminal); lines that stay are written above it. Each
// frame (erase the region, the lines above, the region again) is one Write.
// Progress, TaskLine and BatchBoard are built on it.
type live struct {
	s     Screen
	mu    sync.Mutex
	lines func() []string // the region's lines now, called with mu held
	drawn []int           // cells of each line of the region on the screen

	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	closed bool
}

// start starts the redraws of lines (on a terminal only).
func (l *live) start(s Screen, lines func() []string) {
	l.s, l.lines = s, lines
	if !s.Live {
		return
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(redraw)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				l.frame("")
				l.mu.Unlock()
			}
		}
	}()
}

// frame writes, in one Write, above (whole lines) and the region below it,
// in place of the region on the screen. Off a terminal it writes above
// only. above and the region's lines are made safe for a terminal
// (termsafe): the only escape codes written are the frame's own. l.mu is
// held.
func (l *live) frame(above string) {
	above = termsafe.Text(above)
	if !l.s.Live {
		if above != "" {
			io.WriteString(l.s.W, above)
		}
		return
	}
	above = colorLines(l.s.Palette, above)
	w := l.s.width()
	var lines []string
	if !l.closed {
		lines = l.lines()
	}
	if above == "" && len(lines) == 0 && len(l.drawn) == 0 {
		return
	}
	var b bytes.Buffer
	b.WriteString(syncBegin)
	if rows := l.rows(w); rows > 0 {
		// Each row of the region is erased on its own (EL), not the end
		// of the screen (ED): a terminal (tmux's scroll-on-clear) keeps
		// in its history a screen erased from its top-left corner.
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[2K", rows)
		if rows > 1 {
			b.WriteString(strings.Repeat("\x1b[1B\x1b[2K", rows-1))
			fmt.Fprintf(&b, "\x1b[%dA", rows-1)
		}
	}
	b.WriteString(above)
	l.drawn = l.drawn[:0]
	for _, line := range lines {
		// The last column is left free: a terminal that wraps as soon as
		// it is written would scroll.
		line = fit(line, w-1)
		b.WriteString(colorLines(l.s.Palette, line) + "\n")
		l.drawn = append(l.drawn, cells(line))
	}
	b.WriteString(syncEnd)
	l.s.W.Write(b.Bytes())
}

// rows is the number of rows the region takes on a screen w cells wide: a
// terminal made narrower since it was drawn may have wrapped its lines.
func (l *live) rows(w int) int {
	n := 0
	for _, c := range l.drawn {
		n += max(1, (c+w-1)/w)
	}
	return n
}

// event writes lines, an event's, above the region: on a terminal each
// cut to its width (one row, "…" ending it when cut), elsewhere (a log)
// whole up to 300 cells. l.mu is held.
func (l *live) event(lines ...string) {
	n := 300
	if l.s.Live {
		n = l.s.width() - 1 // as the region's lines
	}
	var b strings.Builder
	for _, line := range lines {
		b.WriteString(fit(line, n) + "\n")
	}
	l.frame(b.String())
}

// above writes text (whole lines) above the region.
func (l *live) above(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frame(text)
}

// redraw draws the region again now.
func (l *live) redraw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frame("")
}

// close stops the redraws and erases the region; it may be called more than
// once.
func (l *live) close() {
	if l.stop != nil {
		l.once.Do(func() { close(l.stop) })
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.frame("")
}

// oneLine makes the line ends and tabs of a text spaces.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\t", " ")

// printable is s on one line, safe for a terminal: its line ends and tabs
// are spaces, its escape sequences and other control characters are shown
// (termsafe.Line: "\x1b[31m"), never run.
func printable(s string) string { return termsafe.Line(oneLine.Replace(s)) }

// cells is the width of s on a terminal, in cells.
func cells(s string) int { return tty.Cells(s) }

// fit is s printable and cut to n cells, ending with "…" when cut.
func fit(s string, n int) string { return tty.Fit(printable(s), n) }

// maxAgentLines bounds the agent's lines printed off a terminal in one
// call: a CLI that retries for minutes does not flood the log.
const maxAgentLines = 20

// agentLines are the agent's retry and error lines of one call, as the
// progress shows them: the last on the live line; off a terminal each
// line once (not again when it repeats), at most maxAgentLines of them.
type agentLines struct {
	last    string
	printed int
}

// reset starts a new call.
func (a *agentLines) reset() { *a = agentLines{} }

// add takes line; off a terminal it returns what to print ("" for
// nothing), with prefix before the line.
func (a *agentLines) add(line, prefix string) string {
	line = strings.TrimSpace(printable(line))
	if line == "" || line == a.last {
		return ""
	}
	a.last = line
	a.printed++
	switch {
	case a.printed < maxAgentLines:
		return prefix + "agent: " + line + "\n"
	case a.printed == maxAgentLines:
		return prefix + "agent: " + line + " (its further lines in this call are left out)\n"
	}
	return ""
}

// agentLine shows the agent's line on l (the caller holds no lock):
// on a terminal its next frame shows it (lines reads a.last); off one it
// is printed, "jlgcli: " before it.
func (l *live) agentLine(a *agentLines, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text := a.add(line, "jlgcli: ")
	if l.s.Live {
		l.frame("")
	} else if text != "" {
		io.WriteString(l.s.W, text)
	}
}

// waitingText is the line that says a run waits for a subscription window
// to reset: until when, and why.
func waitingText(until time.Time, reason string) string {
	return fmt.Sprintf("waiting until %s for a subscription window to reset: %s", until.Local().Format("15:04:05"), firstLine(reason))
}
