package local

import (
	"context"
	"errors"
	"time"

	"github.com/jlgcli/jlgcli/internal/store"
)

// ErrStopRequested is the cause of a run's context cancelled by a stop
// request from another process (store.Run.RequestStop, as `jlgcli stop`
// makes): the run stops as a SIGINT stops it, interrupted and resumable.
var ErrStopRequested = errors.New("interrupted by a stop request")

// stopPoll is how often a running run looks for a stop request.
var stopPoll = 200 * time.Millisecond

// watchStop returns ctx, cancelled as a SIGINT cancels the command's when
// another process asks this one to stop run, so that the run ends exactly
// as on Ctrl-C: its agent's process group stopped, its state checkpointed,
// its status interrupted. Only run stops: a task inside a batch is stopped
// alone, the batch goes on. The returned function ends the watch and
// removes a request that came meanwhile; call it when the run stops.
func watchStop(ctx context.Context, run *store.Run) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(stopPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if run.StopRequested() {
					cancel(ErrStopRequested)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		<-ended
		cancel(nil)
		run.ClearStop()
	}
}
