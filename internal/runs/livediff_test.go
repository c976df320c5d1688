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

// liveWorktree is the worktree of task run id in a new repository of one
// empty commit.
func liveWorktree(t *testing.T, id string) *git.Worktree {
	t.Helper()
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
	wt, err := repo.NewWorktree(ctx, id, "Go on", "", false)
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// TestLiveDiffs: the diff of a task under way is its worktree as it is
// now, measured again at most every LiveEvery, and never twice at once:
// while a measurement runs, the last one is given (ErrMeasuring before the
// first).
func TestLiveDiffs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	wt := liveWorktree(t, "20261128T050000Z-00live00")
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
	// settled is the change once the measurement under way ended (within
	// LiveWait here, unless the machine is busy).
	settled := func() (git.Change, error) {
		for {
			ch, err := s.Of(ctx, *wt)
			s.mu.Lock()
			busy := s.by[wt.Path].busy
			s.mu.Unlock()
			if !errors.Is(err, ErrMeasuring) && busy == nil {
				return ch, err
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	write("a.txt")
	ch, err := settled()
	if err != nil || len(ch.Files) != 1 || ch.Files[0].Path != "a.txt" || ch.Files[0].Added != 1 {
		t.Fatalf("first: %v %v", err, paths(ch))
	}
	write("b.txt")
	if ch, _ := s.Of(ctx, *wt); len(ch.Files) != 1 {
		t.Errorf("within %s: measured again: %v", LiveEvery, paths(ch))
	}
	s.by[wt.Path].ended = time.Now().Add(-LiveEvery)
	s.Of(ctx, *wt)
	if ch, _ := settled(); len(ch.Files) != 2 {
		t.Errorf("after %s: %v, want a.txt and b.txt", LiveEvery, paths(ch))
	}
	// A measurement under way: the last one, not a second measurement.
	s.by[wt.Path].busy, s.by[wt.Path].ended = make(chan struct{}), time.Now().Add(-time.Hour)
	write("c.txt")
	if ch, _ := s.Of(ctx, *wt); len(ch.Files) != 2 {
		t.Errorf("while measured: %v, want the last measurement's", paths(ch))
	}
	other := *wt
	other.Path += "-other"
	s.by[other.Path] = &measured{busy: make(chan struct{})}
	if _, err := s.Of(ctx, other); !errors.Is(err, ErrMeasuring) {
		t.Errorf("while first measured: %v, want ErrMeasuring", err)
	}
}

// TestLiveDiffsDoNotHoldTheAsker: an agent may leave a file of gigabytes
// in its worktree, whose measurement takes minutes: whoever asks (a page of
// the board, which waits for its answer) gets, after LiveWait at most,
// ErrMeasuring before the first measurement (the last one after it) while
// it goes on, and its result once it is done. Here git takes 3s to diff.
func TestLiveDiffsDoNotHoldTheAsker(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	wt := liveWorktree(t, "20261128T050000Z-00slow00")
	if err := os.WriteFile(filepath.Join(wt.Path, "huge.bin"), []byte("as good as gigabytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	slow := "#!/bin/sh\ncase \" $* \" in *\" diff-tree \"*\" -p \"*) sleep 3;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(slow), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	s := &LiveDiffs{}
	began := time.Now()
	_, err = s.Of(ctx, *wt)
	if took := time.Since(began); took > LiveWait+time.Second {
		t.Fatalf("the first asker waited %s for the measurement, want %s at most", took.Round(time.Millisecond), LiveWait)
	}
	if !errors.Is(err, ErrMeasuring) {
		t.Fatalf("while first measured: %v, want ErrMeasuring", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ch, err := s.Of(ctx, *wt)
		if err == nil {
			if len(ch.Files) != 1 || ch.Files[0].Path != "huge.bin" {
				t.Fatalf("measured: %+v", ch.Files)
			}
			break
		}
		if !errors.Is(err, ErrMeasuring) || time.Now().After(deadline) {
			t.Fatalf("the measurement under way never ended: %v", err)
		}
	}
}

// TestLiveDiffsForget: what a worktree measured is forgotten once nobody
// asked for it for a while (its task ended): a board that runs for weeks
// does not keep the change of every task it showed (each up to 256 KiB of
// diff and a file list as long as an agent made it).
func TestLiveDiffsForget(t *testing.T) {
	s := &LiveDiffs{by: map[string]*measured{
		"/gone":   {asked: time.Now().Add(-liveForget - time.Second), at: time.Now(), change: git.Change{Text: "old"}},
		"/recent": {asked: time.Now(), at: time.Now()},
		"/busy":   {asked: time.Now().Add(-time.Hour), busy: make(chan struct{})},
	}}
	if _, err := s.Of(context.Background(), git.Worktree{Path: "/recent"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.by["/gone"]; ok {
		t.Errorf("a worktree nobody asked for in %s is kept", liveForget)
	}
	if _, ok := s.by["/busy"]; !ok {
		t.Errorf("a worktree being measured is forgotten")
	}
}

// A worktree that cannot be measured says why, not that it is being
// measured, once no measurement is under way.
func TestLiveDiffsSayWhyNot(t *testing.T) {
	s := &LiveDiffs{}
	_, err := s.Of(context.Background(), git.Worktree{Path: filepath.Join(t.TempDir(), "gone")})
	if err == nil || errors.Is(err, ErrMeasuring) {
		t.Errorf("a worktree that is no more: %v, want why it cannot be measured", err)
	}
}
