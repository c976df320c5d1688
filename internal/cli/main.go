package cli

import (
	"os"

	"golang.org/x/term"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/live"
	"github.com/jlgcli/jlgcli/internal/proc"
)

// Run is the whole program for main: the real streams and environment, and a
// context that the first SIGINT or SIGTERM cancels (the agent is stopped and
// the result reported). A second signal kills every agent's process group
// and exits 130 at once.
func Run() int {
	stdio := Stdio{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
	}
	if stdio.ErrIsTerminal {
		stdio.ErrWidth = live.TermWidth(os.Stderr)
	}
	if stdio.OutIsTerminal {
		stdio.OutWidth = func() int {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0
			}
			return w
		}
	}
	ctx, cancel := proc.Interruptible(stdio.Reporter().Notice, exit.Interrupted)
	defer cancel()
	return Main(ctx, os.Args[1:], stdio)
}
