//go:build unix

package live

import (
	"os"
	"os/signal"
	"syscall"
)

// onResize calls f each time the terminal is resized (SIGWINCH).
func onResize(f func()) bool {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	go func() {
		for range c {
			f()
		}
	}()
	return true
}
