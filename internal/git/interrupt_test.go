package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRefWritesOutliveCtrlC: a git command that writes a ref runs to its
// end under a cancelled context (a kill in its middle would leave
// refs/…/NAME.lock and fail every later write of that ref, a resume's
// included); any other command is not started.
func TestRefWritesOutliveCtrlC(t *testing.T) {
	dir, r := newRepo(t)
	head, err := r.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := r.git()
	if _, _, err := g.run(ctx, call{args: []string{"update-ref", "refs/jlgcli/x/1", head}}); err != nil {
		t.Fatalf("update-ref under a cancelled context: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "jlgcli", "x", "1.lock")); !os.IsNotExist(err) {
		t.Errorf("a lock file is left: %v", err)
	}
	if got, err := revCommit(context.Background(), g, "refs/jlgcli/x/1"); err != nil || got != head {
		t.Errorf("refs/jlgcli/x/1 = %s, %v; want %s", got, err, head)
	}
	if _, _, err := g.run(ctx, call{args: []string{"status"}}); err == nil {
		t.Error("git status ran under a cancelled context")
	}
}
