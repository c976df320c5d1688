package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attacks of an agent on jlgcli's own git calls (issue 27): each test
// proves the attack with plain git first, then runs every method jlgcli
// uses and finds no payload run.

// payload writes an executable script that appends its arguments to a
// marker file, and returns the script and the marker.
func payload(t *testing.T) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "marker")
	script = filepath.Join(dir, "payload")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+shellQuote(marker)+"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

// ran reports what wrote the marker, and removes it.
func ran(marker string) string {
	b, err := os.ReadFile(marker)
	if err != nil {
		return ""
	}
	os.Remove(marker)
	return strings.TrimSpace(string(b))
}

// noPayload fails the test when the marker was written during what.
func noPayload(t *testing.T, marker, what string) {
	t.Helper()
	if got := ran(marker); got != "" {
		t.Errorf("%s ran the agent's payload: %s", what, got)
	}
}

// hijackPointer does what a hostile agent does in its worktree: a git
// directory of its own, outside the repository, that borrows the user's
// objects (objects/info/alternates) and has the worktree's branch, and runs
// script as its fsmonitor; the worktree's .git file then points at it. It
// returns that git directory.
func hijackPointer(t *testing.T, r *Repo, w *Worktree, script string) string {
	t.Helper()
	evil := filepath.Join(t.TempDir(), "evil.git")
	tgit(t, t.TempDir(), "init", "-q", "--bare", evil)
	write(t, evil, "objects/info/alternates", filepath.Join(r.CommonDir(), "objects")+"\n")
	tgit(t, evil, "update-ref", "refs/heads/"+w.Branch, tgit(t, r.Dir, "rev-parse", "refs/heads/"+w.Branch))
	tgit(t, evil, "symbolic-ref", "HEAD", "refs/heads/"+w.Branch)
	tgit(t, evil, "config", "core.bare", "false")
	tgit(t, evil, "config", "core.fsmonitor", script)
	write(t, w.Path, ".git", "gitdir: "+evil+"\n")
	return evil
}

// TestRewrittenPointerRunsNothing: a worktree whose .git file an agent
// pointed at a git directory of its own, whose fsmonitor is a payload. Plain
// git in the worktree runs it; every method jlgcli uses works on the real
// git directory and runs nothing.
func TestRewrittenPointerRunsNothing(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	script, marker := payload(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "greet.go", "package main\n\nfunc greet() string { return \"hi\" }\n")
	evil := hijackPointer(t, r, w, script)

	// The attack, proven: git finds the agent's repository and runs its
	// fsmonitor.
	tgit(t, w.Path, "status", "--porcelain")
	if ran(marker) == "" {
		t.Fatal("plain git status in the hijacked worktree did not run the payload: the test proves nothing")
	}

	// A value read back from an older run's record has no GitDir: it is
	// derived from the repository, not from the .git file.
	old := *w
	old.GitDir = ""
	for _, w := range []*Worktree{w, &old} {
		if _, err := w.Dirty(ctx); err != nil {
			t.Fatalf("Dirty: %v", err)
		}
		noPayload(t, marker, "Dirty")
		if w.GitDir != filepath.Join(r.CommonDir(), "worktrees", "t1") {
			t.Errorf("GitDir = %q, want the repository's worktrees/t1", w.GitDir)
		}
	}

	c, err := w.Diff(ctx)
	if err != nil || len(c.Files) != 1 || c.Files[0].Path != "greet.go" {
		t.Fatalf("Diff = %+v, %v", c.Files, err)
	}
	noPayload(t, marker, "Diff")
	if _, err := w.DiffFrom(ctx, w.Base); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "DiffFrom")
	snap, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Snapshot")
	if got := tgit(t, dir, "rev-parse", "refs/jlgcli/t1/1"); got != snap {
		t.Errorf("the snapshot is not in the user's repository: %s, want %s", got, snap)
	}
	sha, ok, err := w.Commit(ctx, "feat: greet")
	if err != nil || !ok {
		t.Fatalf("Commit = %v, %v", ok, err)
	}
	noPayload(t, marker, "Commit")
	if got := tgit(t, dir, "rev-parse", w.Branch); got != sha {
		t.Errorf("the commit is not on the user's task branch: %s, want %s", got, sha)
	}
	if _, err := tgitErr(evil, "rev-parse", "--verify", "-q", "refs/jlgcli/t1/1"); err == nil {
		t.Error("the snapshot went into the agent's git directory")
	}
	write(t, w.Path, "greet.go", "changed\n")
	if err := w.Restore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Restore")
	if got := read(t, w.Path, "greet.go"); !strings.Contains(got, "greet()") {
		t.Errorf("Restore left greet.go = %q", got)
	}
	if _, err := w.Head(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Head")

	// The landing works on the user's checkout.
	s, err := r.PrepareSquash(ctx, "main", w.Branch, true, "")
	if err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "PrepareSquash")
	if _, err := r.Land(ctx, s, "feat: greet"); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Land")

	if err := w.ResetToBase(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "ResetToBase")
	if got := tgit(t, dir, "rev-parse", w.Branch); got != w.Base {
		t.Errorf("ResetToBase left the user's branch at %s, want %s", got, w.Base)
	}
	write(t, w.Path, "wip.txt", "kept\n")
	hijackPointer(t, r, w, script) // as the agent left it, after the reset
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Remove")
	if exists(dir, ".jlgcli/worktrees/t1") || exists(r.CommonDir(), "worktrees/t1") {
		t.Error("Remove left the worktree or its git directory")
	}
	if got := tgit(t, dir, "show", "refs/jlgcli/t1/final:wip.txt"); got != "kept" {
		t.Errorf("the final snapshot holds wip.txt = %q", got)
	}

	// SquashMerge, and Discard of a task that made nothing.
	w2 := newTask(t, r, "t2")
	write(t, w2.Path, "more.txt", "more\n")
	if _, _, err := w2.Commit(ctx, "feat: more"); err != nil {
		t.Fatal(err)
	}
	hijackPointer(t, r, w2, script)
	if _, err := r.SquashMerge(ctx, "main", w2.Branch, "feat: more", ""); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "SquashMerge")
	w3 := newTask(t, r, "t3")
	hijackPointer(t, r, w3, script)
	if ok, err := w3.Discard(ctx); err != nil || !ok {
		t.Fatalf("Discard = %v, %v", ok, err)
	}
	noPayload(t, marker, "Discard")
	if exists(dir, ".jlgcli/worktrees/t3") {
		t.Error("Discard left the worktree")
	}

	// Reopen makes the removed worktree again, under the record's name.
	if err := w.Reopen(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Reopen")
	if got := read(t, w.Path, ".git"); !strings.Contains(got, r.CommonDir()) {
		t.Errorf("the reopened worktree's .git = %q", got)
	}
}

// trackedHooks gives the repository at dir a tracked hooks directory
// (core.hooksPath = .githooks, as husky-style repositories have) whose
// post-checkout, post-merge, pre-push and pre-commit hooks run script.
func trackedHooks(t *testing.T, dir, script string) {
	t.Helper()
	for _, h := range []string{"post-checkout", "post-merge", "pre-push", "pre-commit", "reference-transaction"} {
		write(t, dir, ".githooks/"+h, "#!/bin/sh\nexec "+shellQuote(script)+" "+h+"\n")
		if err := os.Chmod(filepath.Join(dir, ".githooks", h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tgit(t, dir, "add", ".githooks")
	tgit(t, dir, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "hooks")
	tgit(t, dir, "config", "core.hooksPath", ".githooks")
}

// TestNoHookRuns: with a tracked hooks directory, plain git runs its
// post-checkout (worktree add), post-merge (merge --ff-only) and pre-push
// (push); NewWorktree, FastForward, SquashMerge and Push run none.
func TestNoHookRuns(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	script, marker := payload(t)
	trackedHooks(t, dir, script)
	bare := newRemote(t, dir)
	ran(marker)

	// The attack, proven.
	tgit(t, dir, "worktree", "add", "-q", "-b", "plain", filepath.Join(t.TempDir(), "plain"), "HEAD")
	if got := ran(marker); !strings.Contains(got, "post-checkout") {
		t.Fatalf("plain git worktree add ran %q, not post-checkout", got)
	}
	tgit(t, dir, "push", "-q", "origin", "plain")
	if got := ran(marker); !strings.Contains(got, "pre-push") {
		t.Fatalf("plain git push ran %q, not pre-push", got)
	}
	tgit(t, dir, "switch", "-q", "-c", "side")
	write(t, dir, "side.txt", "x\n")
	tgit(t, dir, "add", "side.txt")
	tgit(t, dir, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "side")
	tgit(t, dir, "switch", "-q", "main")
	ran(marker)
	tgit(t, dir, "merge", "-q", "--ff-only", "side")
	if got := ran(marker); !strings.Contains(got, "post-merge") {
		t.Fatalf("plain git merge --ff-only ran %q, not post-merge", got)
	}

	w := newTask(t, r, "t1")
	noPayload(t, marker, "NewWorktree")
	write(t, w.Path, "a.txt", "a\n")
	if _, _, err := w.Commit(ctx, "feat: a"); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Commit")
	if _, err := r.FastForward(ctx, "main", w.Branch); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "FastForward")
	if err := r.Push(ctx, w.Branch); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Push")
	if got, want := tgit(t, bare, "rev-parse", w.Branch), tgit(t, dir, "rev-parse", w.Branch); got != want {
		t.Errorf("pushed %s, want %s", got, want)
	}
	w2 := newTask(t, r, "t2")
	write(t, w2.Path, "b.txt", "b\n")
	if _, _, err := w2.Commit(ctx, "feat: b"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SquashMerge(ctx, "main", w2.Branch, "feat: b", ""); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "SquashMerge")
	if err := w2.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Remove")

	// A worker's clone of that repository: no hook either.
	c, err := OpenClone(ctx, filepath.Join(t.TempDir(), "clone"), bare)
	if err != nil {
		t.Fatal(err)
	}
	tgit(t, c.Dir, "config", "core.hooksPath", ".githooks")
	cw, err := c.Checkout(ctx, "t3", "jlgcli/t3", "main", tgit(t, bare, "rev-parse", "main"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, cw.Path, "c.txt", "c\n")
	sha, _, err := cw.Commit(ctx, "feat: c")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Push(ctx, sha+":refs/heads/jlgcli/t3"); err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(ctx, "+refs/heads/main:refs/remotes/origin/main"); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "a clone's Checkout, Commit, Push and Fetch")
}

// nestedRepo makes, in the working tree at dir, what an agent can make: a
// repository of its own at sub/ whose configuration runs script as its
// fsmonitor and as the clean filter of every file (.gitattributes), with a
// file changed since its commit.
func nestedRepo(t *testing.T, dir, script string) {
	t.Helper()
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tgit(t, sub, "init", "-q")
	write(t, sub, "data.txt", "data\n")
	write(t, sub, ".gitattributes", "* filter=x\n")
	tgit(t, sub, "add", "-A")
	tgit(t, sub, "commit", "-q", "-m", "nested")
	tgit(t, sub, "config", "core.fsmonitor", script)
	tgit(t, sub, "config", "filter.x.clean", script+" clean")
	write(t, sub, "data.txt", "data changed by the agent\n")
}

// TestNestedRepositoryRunsNothing: a repository an agent made inside a
// worktree, with an fsmonitor and a filter driver in its own config. Once
// jlgcli committed it (a submodule entry), plain git status in the
// worktree runs both (git runs a status inside the submodule); capturing
// the tree, Diff, Dirty, Commit and the rest run neither.
func TestNestedRepositoryRunsNothing(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	script, marker := payload(t)
	w := newTask(t, r, "t1")
	nestedRepo(t, w.Path, script)

	for round := 1; round <= 2; round++ {
		// Round 1: sub is untracked; round 2: it is a submodule entry of
		// the index and of the branch.
		if _, err := w.Dirty(ctx); err != nil {
			t.Fatal(err)
		}
		noPayload(t, marker, "Dirty")
		c, err := w.Diff(ctx)
		if err != nil {
			t.Fatal(err)
		}
		noPayload(t, marker, "Diff")
		if round == 1 && (len(c.Files) != 1 || c.Files[0].Path != "sub" || c.Files[0].Status != "A") {
			t.Errorf("Diff = %+v, want sub added (a submodule entry)", c.Files)
		}
		if _, err := w.Snapshot(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		noPayload(t, marker, "Snapshot")
		if _, _, err := w.Commit(ctx, "feat: nested"); err != nil {
			t.Fatal(err)
		}
		noPayload(t, marker, "Commit")
		write(t, w.Path, "sub/data.txt", "changed again\n")
	}
	if mode := tgit(t, dir, "ls-tree", w.Branch, "sub"); !strings.HasPrefix(mode, "160000 ") {
		t.Fatalf("the branch holds sub as %q, want a submodule entry", mode)
	}

	// The attack, proven: plain git status in the worktree runs a status
	// inside sub, with sub's own configuration.
	tgit(t, w.Path, "status", "--porcelain")
	if got := ran(marker); !strings.Contains(got, "clean") {
		t.Fatalf("plain git status ran %q: the test proves nothing", got)
	}

	if err := w.ResetToBase(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "ResetToBase")
	nestedRepo(t, w.Path, script)
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	noPayload(t, marker, "Remove")
}
