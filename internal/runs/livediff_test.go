package runs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/git"
)

// TestLiveDiffs: the diff of a task under way is its worktree as it is
// now, measured again at most every LiveEvery, and never twice at once:
// while a measurement runs, the last one is given (ErrMeasuring before the
// first).
func TestLiveDiffs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := git.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.NewWorktree(ctx, "20261128T050000Z-00live00", "Go on", "", false)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(c git.Change) (out []string) {
		for _, f := range c.Files {
			out = append(out, f.Path)
		}
		return out
	}
	s := &LiveDiffs{}
	write("a.txt")
	ch, err := s.Of(ctx, *wt)
	if err != nil || len(ch.Files) != 1 || ch.Files[0].Path != "a.txt" || ch.Files[0].Added != 1 {
		t.Fatalf("first: %v %v", err, paths(ch))
	}
	write("b.txt")
	if ch, _ := s.Of(ctx, *wt); len(ch.Files) != 1 {
		t.Errorf("within %s: measured again: %v", LiveEvery, paths(ch))
	}
	s.by[wt.Path].at = time.Now().Add(-LiveEvery)
	if ch, _ := s.Of(ctx, *wt); len(ch.Files) != 2 {
		t.Errorf("after %s: %v, want a.txt and b.txt", LiveEvery, paths(ch))
	}
	// A measurement under way: the last one, not a second measurement.
	s.by[wt.Path].busy, s.by[wt.Path].at = true, time.Now().Add(-time.Hour)
	write("c.txt")
	if ch, _ := s.Of(ctx, *wt); len(ch.Files) != 2 {
		t.Errorf("while measured: %v, want the last measurement's", paths(ch))
	}
	other := *wt
	other.Path += "-other"
	s.by[other.Path] = &measured{busy: true}
	if _, err := s.Of(ctx, other); !errors.Is(err, ErrMeasuring) {
		t.Errorf("while first measured: %v, want ErrMeasuring", err)
	}
}
