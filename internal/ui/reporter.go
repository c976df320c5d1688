package ui

import (
	"fmt"
	"io"
	"sync"
)

// Reporter writes jlgcli's messages on stderr, one whole line at a time,
// each with its prefix: "jlgcli: ", "jlgcli: warning: ", "jlgcli: hint: ",
// "jlgcli: error: ". A quiet reporter leaves out progress messages only.
// It is safe for concurrent use.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
}

// NewReporter returns a reporter writing to w.
func NewReporter(w io.Writer, quiet bool) *Reporter { return &Reporter{w: w, quiet: quiet} }

// Progress says what jlgcli is doing; quiet leaves it out.
func (r *Reporter) Progress(msg string) {
	if !r.quiet {
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
	fmt.Fprintf(r.w, "%s%s\n", prefix, msg)
}
