package git

import (
	"fmt"
	"sync"
	"testing"
)

// A batch's tasks make, remove and reopen their worktrees at the same time
// in one repository: none of them fails for the others.
func TestWorktreesAtOnce(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			w, err := r.NewWorktree(ctx, fmt.Sprintf("t%d", i), fmt.Sprintf("task %d", i), "", false)
			if err == nil {
				err = w.Remove(ctx)
			}
			if err == nil {
				err = w.Reopen(ctx)
			}
			if err == nil {
				err = w.Remove(ctx)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
