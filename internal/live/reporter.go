package live

import (
	"fmt"
	"io"
	"sync"

	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Reporter writes jlgcli's messages on stderr, one whole line at a time,
// each with its prefix: "jlgcli: ", "jlgcli: warning: ", "jlgcli: hint: ",
// "jlgcli: error: ". A message is made safe for a terminal (termsafe.Text):
// it may quote an agent, a check or a repository. A quiet reporter leaves
// out progress messages only.
// When a live status line is attached, a message clears it and draws it
// again after itself, so that it never tears the line. It is safe for
// concurrent use.
type Reporter struct {
	mu      sync.Mutex
	w       io.Writer
	quiet   bool
	live    Live
	palette tty.Palette // colours "error:", "warning:", "hint:" and status words
	// width is the width of a live terminal, to which progress messages
	// are cut; nil: none (not a terminal: a log keeps them whole).
	width func() int
}

// Live are status lines drawn in place on the reporter's terminal
// (TaskLine, Progress, BatchBoard).
type Live interface {
	// Above writes text, whole lines, above the status lines, in the same
	// write as the lines drawn again under it.
	Above(text string)
}

// NewReporter returns a reporter writing to w.
func NewReporter(w io.Writer, quiet bool) *Reporter { return &Reporter{w: w, quiet: quiet} }

// SetQuiet says whether progress messages are left out from now on.
func (r *Reporter) SetQuiet(quiet bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quiet = quiet
}

// SetPalette sets the colours of the messages written while no live line
// is attached (a live line draws them in its own: Screen.Palette).
func (r *Reporter) SetPalette(p tty.Palette) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.palette = p
}

// SetWidth says that w is a live terminal width cells wide (nil: 80):
// from now on a progress message is cut to it, on one row ("…" ending it
// when cut). Notices, warnings, hints and errors are written whole.
func (r *Reporter) SetWidth(width func() int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.width = func() int {
		if width != nil {
			if n := width(); n > 0 {
				return n
			}
		}
		return 80
	}
}

// Attach makes l the live line that messages go around; nil detaches it.
func (r *Reporter) Attach(l Live) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = l
}

// Progress says what jlgcli is doing; quiet leaves it out.
func (r *Reporter) Progress(msg string) {
	r.mu.Lock()
	quiet := r.quiet
	r.mu.Unlock()
	if !quiet {
		r.mu.Lock()
		if r.width != nil {
			msg = fit(msg, r.width()-1-len("jlgcli: "))
		}
		r.mu.Unlock()
		r.line("jlgcli: ", msg)
	}
}

// Notice says what the user must know, quiet or not.
func (r *Reporter) Notice(msg string) { r.line("jlgcli: ", msg) }

// Warn reports something that went wrong without stopping the run.
func (r *Reporter) Warn(msg string) { r.line("jlgcli: warning: ", msg) }

// Hint tells the user what to do.
func (r *Reporter) Hint(msg string) { r.line("jlgcli: hint: ", msg) }

// Error reports why jlgcli stopped.
func (r *Reporter) Error(msg string) { r.line("jlgcli: error: ", msg) }

// Printf writes a formatted Notice.
func (r *Reporter) Printf(format string, a ...any) { r.Notice(fmt.Sprintf(format, a...)) }

func (r *Reporter) line(prefix, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := prefix + termsafe.Text(msg) + "\n"
	if r.live != nil {
		r.live.Above(text)
		return
	}
	io.WriteString(r.w, colorLines(r.palette, text))
}
