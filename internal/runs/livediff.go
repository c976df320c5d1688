package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/git"
)

// LiveEvery is how often the worktree of a task under way is measured
// again for its diff: at most once in that time per worktree.
const LiveEvery = 2 * time.Second

// LiveWait is how long LiveDiffs.Of waits for a measurement it started (or
// the first one of a worktree) before it answers without it.
const LiveWait = time.Second

// maxMeasure bounds one measurement of a worktree, which no asker waits
// for once LiveWait has passed.
const maxMeasure = 10 * time.Minute

// liveForget is how long what a worktree measured is kept once nobody asks
// for it (its task ended, its page closed).
const liveForget = time.Minute

// ErrMeasuring: the first measurement of a worktree is under way.
var ErrMeasuring = errors.New("the worktree is being measured")

// LiveDiffs are the changes of the worktrees of tasks under way, as `top`
// and the board show them while an attempt works. Its zero value is
// ready; it is safe for concurrent use.
type LiveDiffs struct {
	mu sync.Mutex
	by map[string]*measured // by the worktree's path
}

// measured is a worktree's change as last measured, and the measurement
// under way.
type measured struct {
	asked  time.Time // when it was last asked for
	at     time.Time // when change was measured (zero: never)
	ended  time.Time // when the last measurement ended, measured or not
	err    error     // why the last one failed, when none was measured yet
	change git.Change
	busy   chan struct{} // closed when the measurement under way ends; nil: none
}

// Of is the change of a task's worktree now against its base
// (git.Worktree.Peek: through a temporary index and a scratch object
// store, its git calls hardened as the engine's are, nothing in the
// worktree or the repository changed), measured again at most every
// LiveEvery.
//
// One measurement of a worktree at a time, and nobody held by it (an agent
// may leave a file of gigabytes to hash): it runs on its own, and the
// asker that started it, or that has no measurement yet, waits LiveWait
// at most for it; past that, or while one is under way, the last one is
// given, or ErrMeasuring before the first (the error of the last one when
// it failed and none is under way), so a page that asks every second
// neither hangs nor piles measurements up.
func (l *LiveDiffs) Of(ctx context.Context, wt git.Worktree) (git.Change, error) {
	l.mu.Lock()
	if l.by == nil {
		l.by = map[string]*measured{}
	}
	now := time.Now()
	for path, m := range l.by {
		if m.busy == nil && now.Sub(m.asked) > liveForget {
			delete(l.by, path)
		}
	}
	c := l.by[wt.Path]
	if c == nil {
		c = &measured{}
		l.by[wt.Path] = c
	}
	c.asked = now
	started := false
	if c.busy == nil && time.Since(c.ended) >= LiveEvery {
		c.busy, started = make(chan struct{}), true
		go l.measure(context.WithoutCancel(ctx), wt, c, c.busy)
	}
	busy, first := c.busy, c.at.IsZero()
	l.mu.Unlock()
	if busy != nil && (started || first) {
		t := time.NewTimer(LiveWait)
		select {
		case <-busy:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !c.at.IsZero():
		return c.change, nil
	case c.busy == nil && c.err != nil:
		return c.change, c.err
	}
	return c.change, ErrMeasuring
}

// measure measures wt for c, then ends the measurement busy.
func (l *LiveDiffs) measure(ctx context.Context, wt git.Worktree, c *measured, busy chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, maxMeasure)
	defer cancel()
	ch, err := wt.Peek(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	c.ended, c.err = time.Now(), err
	if err == nil {
		c.at, c.change = c.ended, ch
	}
	c.busy = nil
	close(busy)
}
