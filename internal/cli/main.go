package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// Run is the whole program for main: the real streams and environment, and a
// context that the first SIGINT or SIGTERM cancels (the agent is stopped and
// the result reported); a second signal kills jlgcli at once.
func Run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the next signal gets the default action
	}()
	stdio := Stdio{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	return Main(ctx, os.Args[1:], stdio)
}
