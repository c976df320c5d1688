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

// ErrMeasuring: the first measurement of a worktree is under way.
var ErrMeasuring = errors.New("the worktree is being measured")

// LiveDiffs are the changes of the worktrees of tasks under way, as `top`
// and the board show them while an attempt works. Its zero value is
// ready; it is safe for concurrent use.
type LiveDiffs struct {
	mu sync.Mutex
	by map[string]*measured // by the worktree's path
}

// measured is a worktree's change as last measured, and whether a
// measurement of it is under way.
type measured struct {
	at     time.Time
	change git.Change
	busy   bool
}

// Of is the change of a task's worktree now against its base
// (git.Worktree.Diff: through a temporary index, its git calls hardened
// as the engine's are, nothing in the worktree changed), measured again
// at most every LiveEvery.
//
// One measurement of a worktree at a time: while one is under way (an
// agent may leave a file of gigabytes to hash), the last one is given, or
// ErrMeasuring before the first, and a page or pane that asks every
// second piles no measurements up.
func (l *LiveDiffs) Of(ctx context.Context, wt git.Worktree) (git.Change, error) {
	l.mu.Lock()
	if l.by == nil {
		l.by = map[string]*measured{}
	}
	c := l.by[wt.Path]
	switch {
	case c == nil:
		c = &measured{}
		l.by[wt.Path] = c
	case c.busy || time.Since(c.at) < LiveEvery:
		ch, ok := c.change, !c.at.IsZero()
		l.mu.Unlock()
		if !ok {
			return ch, ErrMeasuring
		}
		return ch, nil
	}
	c.busy = true
	l.mu.Unlock()
	ch, err := wt.Diff(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	c.busy = false
	if err != nil {
		return ch, err
	}
	c.at, c.change = time.Now(), ch
	return ch, nil
}
