package proc

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// The first SIGINT cancels the context, its cause saying so; the process
// goes on.
func TestInterruptibleFirstSignalCancels(t *testing.T) {
	ctx, cancel := Interruptible(func(string) {}, 130)
	defer cancel()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGINT did not cancel the context")
	}
	if cause := context.Cause(ctx); !errors.Is(cause, ErrInterrupted) || cause.Error() != "interrupted by interrupt" {
		t.Errorf("cause = %v, want interrupted by interrupt", cause)
	}
}
