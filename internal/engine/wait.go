package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
)

// What both engines do the same way while they wait: for a rate limit, for
// a timer, and between heartbeats.

// RateLimitWait is how long to wait for a rate limit f to reset, given the
// time already waited; ok is false when maxWait does not allow it, details
// then says why. Without a reset time the back-off is capped at what is left
// of maxWait: the call is made again once that is spent, and only a refusal
// then stops the run. A reset time given beyond what is left stops it at
// once: a call before it would be refused.
func RateLimitWait(now time.Time, f *agent.Failure, waited, maxWait time.Duration) (wait time.Duration, details string, ok bool) {
	details = "rate limited: " + f.Message
	if !f.ResetAt.IsZero() {
		details += "; resets at " + f.ResetAt.Format(time.RFC3339)
		wait = f.ResetAt.Sub(now) + time.Second
	}
	left := maxWait - waited
	if maxWait <= 0 || left <= 0 {
		if maxWait > 0 {
			details += fmt.Sprintf("; --max-wait %s is spent", maxWait)
		}
		return wait, details, false
	}
	if wait > left {
		details += fmt.Sprintf("; waiting %s more would pass --max-wait %s", wait.Round(time.Second), maxWait)
		return wait, details, false
	}
	if wait <= 0 {
		// No reset time: back off, 30s doubling per wait already made,
		// up to 10 minutes, with jitter, within what is left.
		n := min(waited/(30*time.Second), 5)
		wait = min(30*time.Second<<n, 10*time.Minute)
		wait += time.Duration(rand.Int64N(int64(wait / 4)))
		wait = min(wait, left)
	}
	return wait, details, true
}

// Sleep waits d, or less when ctx is done first (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Beat calls f every interval (0: every 10 seconds) until the returned
// function is called; that function returns once f is no longer running.
func Beat(every time.Duration, f func()) func() {
	if every <= 0 {
		every = 10 * time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
