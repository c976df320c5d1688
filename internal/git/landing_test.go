package git

import (
	"errors"
	"testing"
)

// stopLanding stands for a process killed at step of a landing: Land
// panics there (its lock is released, as a dead process's is).
type stopLanding struct{}

func landStoppedAt(t *testing.T, step string, land func()) {
	t.Helper()
	LandHook = func(s string) {
		if s == step {
			panic(stopLanding{})
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
// changed since, is neither ended nor dropped: the next landing refuses
// and touches nothing; once the user put it back, it is ended.
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
	status := tgit(t, dir, "status", "--porcelain")

	_, err := r.SquashMerge(ctx, "main", w.Branch, "feat: greet", "")
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedInterrupted {
		t.Fatalf("landing again over the user's edit: %v, want refused (interrupted)", err)
	}
	if got := tgit(t, dir, "rev-parse", "main"); got != head {
		t.Errorf("main moved to %s", got)
	}
	if got := tgit(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("the status changed:\n%s\nwas\n%s", got, status)
	}
	if got := read(t, dir, "greet.go"); got != "package main // the user's edit\n" {
		t.Errorf("the user's edit was overwritten: %q", got)
	}

	write(t, dir, "greet.go", "package main\n\nfunc greet() string { return \"hi\" }\n")
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
// before its branch move, is dropped by the next one, which lands anew.
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
	s, err = r.PrepareSquash(ctx, "trunk", w.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Landed != "" {
		t.Fatalf("a landing that never moved trunk is taken as landed at %s", s.Landed)
	}
	c, err := r.Land(ctx, s, "feat: one")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "trunk"); got != c {
		t.Errorf("trunk at %s, want %s", got, c)
	}
}
