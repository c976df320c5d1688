package live

import (
	"os"
	"sync/atomic"

	"golang.org/x/term"
)

// TermWidth returns the width of terminal f in cells, as a function that
// the live lines call at each frame. It is read once, then again each time
// the terminal is resized (SIGWINCH; where there is no such signal, at each
// call). 0 when f is no terminal.
func TermWidth(f *os.File) func() int {
	fd := int(f.Fd())
	read := func() int {
		w, _, err := term.GetSize(fd)
		if err != nil {
			return 0
		}
		return w
	}
	var width atomic.Int64
	width.Store(int64(read()))
	if !onResize(func() { width.Store(int64(read())) }) {
		return read
	}
	return func() int { return int(width.Load()) }
}
