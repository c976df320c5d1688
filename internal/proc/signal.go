package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// ErrInterrupted is the cause of a context that Interruptible's signal
// canceled.
var ErrInterrupted = errors.New("interrupted")

// Interruptible returns a context that the first SIGINT or SIGTERM
// cancels, its cause ErrInterrupted by that signal (the agent under way is
// stopped and the result reported). A second signal kills every agent's
// process group (KillAll), tells notice so, and exits with code at once.
// cancel releases the context.
func Interruptible(notice func(string), code int) (ctx context.Context, cancel func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancelCause := context.WithCancelCause(context.Background())
	go func() {
		sig := <-sigs
		cancelCause(fmt.Errorf("%w by %v", ErrInterrupted, sig))
		<-sigs
		KillAll()
		notice("second signal: agent killed, exiting now")
		os.Exit(code)
	}()
	return ctx, func() { cancelCause(nil) }
}
