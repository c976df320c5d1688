package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/ui"
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
		stdio.ErrWidth = ui.TermWidth(os.Stderr)
	}
	say := stdio.reporter()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		sig := <-sigs
		cancel(fmt.Errorf("%w by %v", errInterrupted, sig))
		<-sigs
		proc.KillAll()
		say.Notice("second signal: agent killed, exiting now")
		os.Exit(engine.ExitInterrupted)
	}()
	return Main(ctx, os.Args[1:], stdio)
}

var errInterrupted = errors.New("interrupted")
