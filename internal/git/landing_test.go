package git

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stopLanding stands for a process killed at step of a landing: Land
// panics there (its lock is released, as a dead process's is).
type stopLanding struct{}

func landStoppedAt(t *testing.T, step string, land func()) {
	t.Helper()
	landStoppedAtNth(t, step, 0, land)
}

// landStoppedAtNth stops land at the step after n others of that name.
func landStoppedAtNth(t *testing.T, step string, n int, land func()) {
	t.Helper()
	LandHook = func(s string) {
		if s == step {
			if n == 0 {
				panic(stopLanding{})
			}
			n--
		}
	}
	defer func() {
		LandHook = nil
		if v := recover(); v != (stopLanding{}) {
			t.Fatalf("the landing did not stop at %s: %v", step, v)
		}
	}()
	land()
}

// A landing cut short after the files moved, in a checkout the user
// changed since, is not ended: the next landing takes back out what it
// had staged and written, leaves the user's edit (of a file it added) as
// it is, and refuses, saying how to land it; the one after lands anew.
func TestInterruptedLandingTheUserChanged(t *testing.T) {
	dir, r := newRepo(t)
	head := tgit(t, dir, "rev-parse", "main")
	w := taskWithCommits(t, r, "t1")
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	landStoppedAt(t, "checked-out", func() { _, _ = r.SquashMerge(ctx, "main", w.Branch, "feat: greet", "") })
	if got := tgit(t, dir, "rev-parse", "main"); got != head {
		t.Fatalf("main moved to %s before its step", got)
	}
	write(t, dir, "greet.go", "package main // the user's edit\n")

	_, err := r.SquashMerge(ctx, "main", w.Branch, "feat: greet", "")
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted {
		t.Fatalf("landing again over the user's edit: %v, want refused (interrupted)", err)
	}
	for _, s := range []string{"greet.go", "put back as it was before (README.md, greet.go (its index entry), greet_test.go)", "git stash -u && git merge --ff-only "} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the refusal does not say %q: %v", s, err)
		}
	}
	if got := tgit(t, dir, "rev-parse", "main"); got != head {
		t.Errorf("main moved to %s", got)
	}
	if got := tgit(t, dir, "status", "--porcelain"); got != "?? greet.go" {
		t.Errorf("the status is\n%s\nwant the user's greet.go alone, untracked as before the landing", got)
	}
	if got := read(t, dir, "README.md"); got != "# demo\n" {
		t.Errorf("README.md, which the landing wrote, holds %q", got)
	}
	if got := read(t, dir, "greet.go"); got != "package main // the user's edit\n" {
		t.Errorf("the user's edit was overwritten: %q", got)
	}

	if err := os.Remove(filepath.Join(dir, "greet.go")); err != nil {
		t.Fatal(err)
	}
	c, err := r.SquashMerge(ctx, "main", w.Branch, "feat: greet", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "main"); got != c || tgit(t, dir, "rev-parse", c+"^") != head {
		t.Errorf("main at %s, want %s on %s", got, c, head)
	}
	if s := tgit(t, dir, "status", "--porcelain"); s != "" {
		t.Errorf("status:\n%s", s)
	}
}

// A landing into a branch that is not checked out (a batch's), stopped
// before its branch move, is finished by the next one, which finds it
// landed.
func TestInterruptedLandingAside(t *testing.T) {
	dir, r := newRepo(t)
	tgit(t, dir, "branch", "trunk")
	head := tgit(t, dir, "rev-parse", "trunk")
	w := newTask(t, r, "one")
	write(t, w.Path, "one.txt", "1\n")
	if _, _, err := w.Commit(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	s, err := r.PrepareSquash(ctx, "trunk", w.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	landStoppedAt(t, "recorded", func() { _, _ = r.Land(ctx, s, "feat: one") })
	if got := tgit(t, dir, "rev-parse", "trunk"); got != head {
		t.Fatalf("trunk moved to %s", got)
	}
	rec, err := readLanding(filepath.Join(r.GitDir(), landRecordName))
	if err != nil || rec == nil || rec.Done {
		t.Fatalf("the record of the landing stopped: %+v, %v", rec, err)
	}
	s, err = r.PrepareSquash(ctx, "trunk", w.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Landed != rec.Commit {
		t.Fatalf("the landing stopped before trunk moved is taken as landed at %q, want it finished at %s", s.Landed, rec.Commit)
	}
	c, err := r.Land(ctx, s, "feat: one")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "trunk"); got != c || c != rec.Commit || tgit(t, dir, "rev-parse", c+"^") != head {
		t.Errorf("trunk at %s, want %s on %s", got, rec.Commit, head)
	}
}
