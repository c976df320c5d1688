package git

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// taskWithCommits makes a task that commits two files in two commits.
func taskWithCommits(t *testing.T, r *Repo, id string) *Worktree {
	t.Helper()
	w := newTask(t, r, id)
	write(t, w.Path, "greet.go", "package main\n\nfunc greet() string { return \"hi\" }\n")
	if _, _, err := w.Commit(ctx, "feat: greet (tier fast, attempt 1)"); err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "greet_test.go", "package main\n")
	write(t, w.Path, "README.md", "# demo\n\nGreets.\n")
	if _, _, err := w.Commit(ctx, "feat: greet (tier strong, attempt 2)"); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestSquashMerge(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	base := tgit(t, dir, "rev-parse", "HEAD")
	w := taskWithCommits(t, r, "t1")
	tip := tgit(t, dir, "rev-parse", w.Branch)
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "notes.txt", "an untracked file of the user's, not in the way\n")
	// README.md is rewritten with the same bytes and a new time: not a change.
	write(t, dir, "README.md", "# demo\n")
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "README.md"), future, future)

	sha, err := r.SquashMerge(ctx, "main", w.Branch, "feat: Add a greeting", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "main"); got != sha {
		t.Errorf("main at %s, want %s", got, sha)
	}
	if got := tgit(t, dir, "rev-list", base+"..main"); got != sha {
		t.Errorf("new commits on main: %q, want exactly %s", got, sha)
	}
	if got := tgit(t, dir, "rev-list", "--parents", "-n", "1", sha); got != sha+" "+base {
		t.Errorf("parents: %s, want the old main only", got)
	}
	if got := tgit(t, dir, "log", "-1", "--format=%B", sha); got != "feat: Add a greeting" {
		t.Errorf("message %q", got)
	}
	if a, b := tgit(t, dir, "rev-parse", sha+"^{tree}"), tgit(t, dir, "rev-parse", tip+"^{tree}"); a != b {
		t.Errorf("merged tree %s, branch tree %s", a, b)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != tip {
		t.Errorf("the branch moved to %s", got)
	}
	if n := tgit(t, dir, "rev-list", "--count", base+".."+w.Branch); n != "2" {
		t.Errorf("the branch has %s commits, want its 2", n)
	}
	if s := tgit(t, dir, "status", "--porcelain"); s != "?? notes.txt" {
		t.Errorf("user status after the merge:\n%s", s)
	}
	if read(t, dir, "greet.go") != "package main\n\nfunc greet() string { return \"hi\" }\n" || read(t, dir, "README.md") != "# demo\n\nGreets.\n" {
		t.Error("the merged files are not in the user's tree")
	}
	// Merging it again (a task stopped after its landing, before its
	// report, resumed) finds where it landed and moves nothing.
	if again, err := r.SquashMerge(ctx, "main", w.Branch, "feat: again", ""); err != nil || again != sha {
		t.Errorf("merging again = %s, %v; want %s, landed already", again, err, sha)
	}
	if got := tgit(t, dir, "rev-parse", "main"); got != sha {
		t.Errorf("main moved to %s", got)
	}
}

func TestSquashMergeAfterTheBaseMoved(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := taskWithCommits(t, r, "t1")
	write(t, dir, "other.go", "package main\n")
	tgit(t, dir, "add", "other.go")
	tgit(t, dir, "commit", "-q", "-m", "meanwhile")
	moved := tgit(t, dir, "rev-parse", "HEAD")

	sha, err := r.SquashMerge(ctx, "main", w.Branch, "feat: Add a greeting", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", sha+"^"); got != moved {
		t.Errorf("parent %s, want %s", got, moved)
	}
	got := tgit(t, dir, "ls-tree", "-r", "--name-only", sha)
	if !strings.Contains(got, "other.go") || !strings.Contains(got, "greet.go") {
		t.Errorf("merged tree lacks a side:\n%s", got)
	}
	if s := tgit(t, dir, "status", "--porcelain"); s != "" {
		t.Errorf("user status:\n%s", s)
	}
}

func TestSquashMergeRefused(t *testing.T) {
	t.Parallel()
	type setup func(t *testing.T, dir string)
	cases := []struct {
		name    string
		into    string
		setup   setup
		reason  MergeRefusal
		command string
	}{
		{"not checked out", "main", func(t *testing.T, dir string) { tgit(t, dir, "switch", "-q", "-c", "other") },
			RefusedNotCheckedOut, "git switch main && git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"detached", "main", func(t *testing.T, dir string) { tgit(t, dir, "switch", "-q", "--detach") },
			RefusedNotCheckedOut, "git switch main && git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"dirty", "main", func(t *testing.T, dir string) { write(t, dir, "main.go", "the user's change") },
			RefusedDirty, "git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"staged", "main", func(t *testing.T, dir string) { write(t, dir, "new.txt", "x"); tgit(t, dir, "add", "new.txt") },
			RefusedDirty, "git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"untracked in the way", "main", func(t *testing.T, dir string) { write(t, dir, "greet.go", "the user's own") },
			RefusedWouldOverwrite, "git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"conflict", "main", func(t *testing.T, dir string) {
			write(t, dir, "README.md", "# demo\n\nSomething else.\n")
			tgit(t, dir, "commit", "-q", "-am", "meanwhile")
		}, RefusedConflict, "git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
		{"no base branch", "", func(t *testing.T, dir string) {},
			RefusedNoBaseBranch, "git merge --squash BRANCH && git commit -m 'feat: Add a greeting'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, r := newRepo(t)
			w := taskWithCommits(t, r, "t1")
			tip := tgit(t, dir, "rev-parse", w.Branch)
			c.setup(t, dir)
			mainBefore := tgit(t, dir, "rev-parse", "main")
			before := stateOf(t, dir)
			_, err := r.SquashMerge(ctx, c.into, w.Branch, "feat: Add a greeting", "")
			var refused *MergeRefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("SquashMerge = %v, want a *MergeRefusedError", err)
			}
			if refused.Reason != c.reason {
				t.Errorf("Reason = %s, want %s (%v)", refused.Reason, c.reason, err)
			}
			if want := strings.ReplaceAll(c.command, "BRANCH", w.Branch); refused.Command != want {
				t.Errorf("Command = %q, want %q", refused.Command, want)
			}
			if !strings.Contains(err.Error(), refused.Command) || !strings.Contains(err.Error(), "cannot merge") {
				t.Errorf("message %q lacks the command", err)
			}
			sameState(t, "a refused merge", before, stateOf(t, dir))
			if got := tgit(t, dir, "rev-parse", "main"); got != mainBefore {
				t.Errorf("main moved to %s", got)
			}
			if got := tgit(t, dir, "rev-parse", w.Branch); got != tip {
				t.Errorf("the branch moved to %s", got)
			}
		})
	}
}

func TestMergeCommandQuotes(t *testing.T) {
	t.Parallel()
	got := mergeCommand("main", "jlgcli/x-1", "feat: it's \"done\" $HOME", true)
	want := `git switch main && git merge --squash jlgcli/x-1 && git commit -m 'feat: it'\''s "done" $HOME'`
	if got != want {
		t.Errorf("command\n%s\nwant\n%s", got, want)
	}
}

// newRemote gives dir a bare remote "origin" holding main.
func newRemote(t *testing.T, dir string) string {
	t.Helper()
	bare := t.TempDir()
	tgit(t, bare, "init", "-q", "--bare")
	tgit(t, dir, "remote", "add", "origin", bare)
	tgit(t, dir, "push", "-q", "origin", "main")
	return bare
}

func TestPush(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	bare := newRemote(t, dir)
	mainRemote := tgit(t, bare, "rev-parse", "main")
	w := taskWithCommits(t, r, "t1")
	// main has a local commit of the user's that must not be pushed.
	write(t, dir, "local.txt", "x")
	tgit(t, dir, "add", "local.txt")
	tgit(t, dir, "commit", "-q", "-m", "local only")
	configBefore := read(t, dir, ".git/config")

	if err := r.Push(ctx, w.Branch); err != nil {
		t.Fatal(err)
	}
	if got, want := tgit(t, bare, "rev-parse", w.Branch), tgit(t, dir, "rev-parse", w.Branch); got != want {
		t.Errorf("remote branch at %s, want %s", got, want)
	}
	if got := tgit(t, bare, "rev-parse", "main"); got != mainRemote {
		t.Errorf("the remote's main moved to %s", got)
	}
	if read(t, dir, ".git/config") != configBefore {
		t.Error("Push changed the git config")
	}
	if err := r.Push(ctx, "main"); !errors.Is(err, ErrNotTaskBranch) {
		t.Errorf("Push(main) = %v, want ErrNotTaskBranch", err)
	}
	if err := r.Push(ctx, "jlgcli/missing"); err == nil {
		t.Error("pushing a missing branch succeeded")
	}

	// Somebody else pushes to the task branch; ours diverges: no force.
	other := t.TempDir()
	tgit(t, other, "clone", "-q", "-b", w.Branch, bare, ".")
	write(t, other, "theirs.txt", "theirs")
	tgit(t, other, "add", "theirs.txt")
	tgit(t, other, "commit", "-q", "-m", "theirs")
	tgit(t, other, "push", "-q", "origin", w.Branch)
	theirs := tgit(t, other, "rev-parse", "HEAD")
	write(t, w.Path, "ours.txt", "ours")
	if _, _, err := w.Commit(ctx, "feat: ours"); err != nil {
		t.Fatal(err)
	}
	err := r.Push(ctx, w.Branch)
	if !errors.Is(err, ErrPushRejected) || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("diverged push = %v, want ErrPushRejected with git's message", err)
	}
	if got := tgit(t, bare, "rev-parse", w.Branch); got != theirs {
		t.Errorf("the remote branch was overwritten: %s, want %s", got, theirs)
	}
}

func TestPushRemoteChoice(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	if err := r.Push(ctx, w.Branch); !errors.Is(err, ErrNoRemote) {
		t.Errorf("no remote: %v, want ErrNoRemote", err)
	}
	a, b := t.TempDir(), t.TempDir()
	tgit(t, a, "init", "-q", "--bare")
	tgit(t, b, "init", "-q", "--bare")
	tgit(t, dir, "remote", "add", "upstream", a)
	if err := r.Push(ctx, w.Branch); err != nil {
		t.Errorf("the only remote: %v", err)
	}
	tgit(t, dir, "remote", "add", "fork", b)
	if err := r.Push(ctx, w.Branch); !errors.Is(err, ErrNoRemote) {
		t.Errorf("two remotes, no origin: %v, want ErrNoRemote", err)
	}
	tgit(t, dir, "config", "remote.pushDefault", "fork")
	if err := r.Push(ctx, w.Branch); err != nil {
		t.Fatal(err)
	}
	if _, err := tgitErr(b, "rev-parse", "--verify", w.Branch); err != nil {
		t.Errorf("remote.pushDefault not used: %v", err)
	}
}

func TestFastForward(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	base := tgit(t, dir, "rev-parse", "HEAD")
	w := taskWithCommits(t, r, "t1")
	tip := tgit(t, dir, "rev-parse", w.Branch)
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README.md", "# dirty\n")
	var refused *MergeRefusedError
	if _, err := r.FastForward(ctx, "main", w.Branch); !errors.As(err, &refused) || refused.Reason != RefusedDirty {
		t.Fatalf("fast-forward into a dirty tree = %v", err)
	}
	tgit(t, dir, "checkout", "--", "README.md")
	got, err := r.FastForward(ctx, "main", w.Branch)
	if err != nil || got != tip {
		t.Fatalf("FastForward = %s, %v; want %s", got, err, tip)
	}
	if n := tgit(t, dir, "rev-list", "--count", base+"..main"); n != "2" {
		t.Errorf("main got %s commits, want the branch's 2", n)
	}
	if s := tgit(t, dir, "status", "--porcelain"); s != "" {
		t.Errorf("user status after the fast-forward:\n%s", s)
	}
	if _, err := r.FastForward(ctx, "main", w.Branch); !errors.Is(err, ErrNothingToMerge) {
		t.Errorf("again = %v, want ErrNothingToMerge", err)
	}
}
