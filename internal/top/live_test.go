package top

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

// TestLiveChange: the diff of a task under way is its worktree as it is
// now, measured again at most every liveEvery, and never twice at once:
// while a measurement runs, the last one is given (errMeasuring before the
// first).
func TestLiveChange(t *testing.T) {
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
	s := &Store{}
	write("a.txt")
	ch, err := s.liveChange(ctx, *wt)
	if err != nil || len(ch.Files) != 1 || ch.Files[0].Path != "a.txt" || ch.Files[0].Added != 1 {
		t.Fatalf("first: %v %v", err, paths(ch))
	}
	write("b.txt")
	if ch, _ := s.liveChange(ctx, *wt); len(ch.Files) != 1 {
		t.Errorf("within %s: measured again: %v", liveEvery, paths(ch))
	}
	s.live[wt.Path].at = time.Now().Add(-liveEvery)
	if ch, _ := s.liveChange(ctx, *wt); len(ch.Files) != 2 {
		t.Errorf("after %s: %v, want a.txt and b.txt", liveEvery, paths(ch))
	}
	// A measurement under way: the last one, not a second measurement.
	s.live[wt.Path].busy, s.live[wt.Path].at = true, time.Now().Add(-time.Hour)
	write("c.txt")
	if ch, _ := s.liveChange(ctx, *wt); len(ch.Files) != 2 {
		t.Errorf("while measured: %v, want the last measurement's", paths(ch))
	}
	other := *wt
	other.Path += "-other"
	s.live[other.Path] = &measured{busy: true}
	if _, err := s.liveChange(ctx, other); !errors.Is(err, errMeasuring) {
		t.Errorf("while first measured: %v, want errMeasuring", err)
	}
}
