package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	dir, _ := newRepo(t)
	write(t, dir, "sub/deeper/x.txt", "x")
	r, err := Open(ctx, filepath.Join(dir, "sub", "deeper"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir != dir {
		t.Errorf("Dir = %q, want the top level %q", r.Dir, dir)
	}

	_, err = Open(ctx, t.TempDir())
	if !errors.Is(err, ErrNotRepository) {
		t.Errorf("Open(not a repository) = %v, want ErrNotRepository", err)
	}
	bare := t.TempDir()
	tgit(t, bare, "init", "-q", "--bare")
	if _, err := Open(ctx, bare); !errors.Is(err, ErrNotRepository) {
		t.Errorf("Open(bare) = %v, want ErrNotRepository", err)
	}
	if _, err := Open(ctx, filepath.Join(dir, "missing")); err == nil {
		t.Error("Open(missing directory) succeeded")
	}
}

func TestHeadBranchDirty(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	head, err := r.Head(ctx)
	if err != nil || head != tgit(t, dir, "rev-parse", "HEAD") {
		t.Errorf("Head = %q, %v", head, err)
	}
	if b, err := r.CurrentBranch(ctx); b != "main" || err != nil {
		t.Errorf("CurrentBranch = %q, %v; want main", b, err)
	}
	check := func(what string, want bool) {
		t.Helper()
		if d, err := r.Dirty(ctx); d != want || err != nil {
			t.Errorf("%s: Dirty = %v, %v; want %v", what, d, err, want)
		}
	}
	check("clean", false)
	write(t, dir, "x.log", "ignored")
	check("ignored file", false)
	write(t, dir, "new.txt", "untracked")
	check("untracked file", true)
	os.Remove(filepath.Join(dir, "new.txt"))
	write(t, dir, "README.md", "changed")
	check("modified file", true)
	tgit(t, dir, "add", "README.md")
	check("staged file", true)
	tgit(t, dir, "reset", "-q", "--hard")

	tgit(t, dir, "checkout", "-q", "--detach")
	if b, err := r.CurrentBranch(ctx); b != "" || err != nil {
		t.Errorf("detached: CurrentBranch = %q, %v; want empty", b, err)
	}

	empty := t.TempDir()
	tgit(t, empty, "init", "-q")
	er, err := Open(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := er.Head(ctx); !errors.Is(err, ErrNoCommits) {
		t.Errorf("Head of an empty repository = %v, want ErrNoCommits", err)
	}
	if _, err := er.NewWorktree(ctx, "t1", "x", "", false); !errors.Is(err, ErrNoCommits) {
		t.Errorf("NewWorktree in an empty repository = %v, want ErrNoCommits", err)
	}
}

func TestNewWorktree(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	head := tgit(t, dir, "rev-parse", "HEAD")
	w, err := r.NewWorktree(ctx, "20261122T041500Z-3fa91c07", "Créer l'API « hello »!", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Branch != "jlgcli/creer-l-api-hello-3fa91c07" {
		t.Errorf("Branch = %q", w.Branch)
	}
	if want := filepath.Join(dir, ".jlgcli", "worktrees", "20261122T041500Z-3fa91c07"); w.Path != want {
		t.Errorf("Path = %q, want %q", w.Path, want)
	}
	if w.Base != head || w.BaseBranch != "main" || w.DirtyIncluded || w.RepoDir != dir {
		t.Errorf("Worktree = %+v; want base %s on main", w, head)
	}
	if got := tgit(t, w.Path, "symbolic-ref", "HEAD"); got != "refs/heads/"+w.Branch {
		t.Errorf("worktree HEAD = %q", got)
	}
	if got := tgit(t, dir, "rev-parse", "refs/jlgcli/"+w.ID+"/base"); got != head {
		t.Errorf("base ref = %q, want %s", got, head)
	}
	if got := read(t, w.Path, "main.go"); got != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go in the worktree = %q", got)
	}
	if s := tgit(t, dir, "status", "--porcelain", "--untracked-files=all"); s != "" {
		t.Errorf("the worktree shows in the user's status:\n%s", s)
	}

	// The same id again, or an invalid one, is refused.
	if _, err := r.NewWorktree(ctx, w.ID, "again", "", false); err == nil {
		t.Error("a second worktree with the same id was created")
	}
	for _, id := range []string{"", "../x", "a/b", ".hidden", "x.lock", "a..b", "-x", "sp ace"} {
		if _, err := r.NewWorktree(ctx, id, "x", "", false); err == nil {
			t.Errorf("id %q accepted", id)
		}
	}
}

func TestNewWorktreeFromBaseRef(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	first := tgit(t, dir, "rev-parse", "HEAD")
	tgit(t, dir, "branch", "stable")
	write(t, dir, "later.txt", "later\n")
	tgit(t, dir, "add", "later.txt")
	tgit(t, dir, "commit", "-q", "-m", "later")

	w, err := r.NewWorktree(ctx, "t-branch", "x", "stable", false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Base != first || w.BaseBranch != "stable" || exists(w.Path, "later.txt") {
		t.Errorf("from branch stable: %+v", w)
	}
	w, err = r.NewWorktree(ctx, "t-commit", "x", first, false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Base != first || w.BaseBranch != "" {
		t.Errorf("from a commit: base %s, base branch %q; want %s and none", w.Base, w.BaseBranch, first)
	}
	if _, err := r.NewWorktree(ctx, "t-bad", "x", "no-such-ref", false); err == nil {
		t.Error("a missing base ref was accepted")
	}
	write(t, dir, "dirty.txt", "x")
	if _, err := r.NewWorktree(ctx, "t-dirty", "x", "stable", true); err == nil {
		t.Error("include-dirty with a base other than HEAD was accepted")
	}
}

// TestNewWorktreeLeavesTheUserTreeAlone: with and without includeDirty, the
// user's status, index file and files are byte for byte what they were.
func TestNewWorktreeLeavesTheUserTreeAlone(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		t.Run(map[bool]string{false: "without", true: "include-dirty"}[include], func(t *testing.T) {
			dir, r := newRepo(t)
			head := tgit(t, dir, "rev-parse", "HEAD")
			dirtyUserTree(t, dir)
			if d, err := r.Dirty(ctx); !d || err != nil {
				t.Fatalf("Dirty = %v, %v; want true", d, err)
			}
			before := stateOf(t, dir)
			w, err := r.NewWorktree(ctx, "t1", "Add a greeting", "", include)
			if err != nil {
				t.Fatal(err)
			}
			after := stateOf(t, dir)
			sameState(t, "NewWorktree", before, after)

			if got := tgit(t, dir, "rev-parse", "HEAD"); got != head {
				t.Errorf("the user's HEAD moved to %s", got)
			}
			got := files(t, w.Path, false)
			if !include {
				if w.Base != head || w.DirtyIncluded {
					t.Errorf("Base %s, DirtyIncluded %v; want HEAD %s, false", w.Base, w.DirtyIncluded, head)
				}
				want := map[string]string{
					".gitignore":   "*.log\nbuild/\n",
					"main.go":      "package main\n\nfunc main() {}\n",
					"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n",
					"README.md":    "# demo\n",
				}
				if dump(got) != dump(want) {
					t.Errorf("worktree files:\n%s\nwant:\n%s", dump(got), dump(want))
				}
				return
			}
			if !w.DirtyIncluded || w.Base == head {
				t.Fatalf("Base %s, DirtyIncluded %v; want a new commit on %s", w.Base, w.DirtyIncluded, head)
			}
			if p := tgit(t, dir, "rev-parse", w.Base+"^"); p != head {
				t.Errorf("the dirty commit's parent is %s, want HEAD %s", p, head)
			}
			if n := tgit(t, dir, "rev-list", "--count", head+".."+w.Branch); n != "1" {
				t.Errorf("%s commits on the branch, want 1", n)
			}
			if h := tgit(t, w.Path, "rev-parse", "HEAD"); h != w.Base {
				t.Errorf("worktree HEAD %s, want the dirty commit %s", h, w.Base)
			}
			want := map[string]string{
				".gitignore":          "*.log\nbuild/\n",
				"main.go":             "package main\n\nfunc main() { println(1) }\n",
				"README.md":           "# demo\nstaged line\nunstaged line\n",
				"staged.txt":          "staged\n",
				"notes/untracked.txt": "untracked\n",
			}
			if dump(got) != dump(want) {
				t.Errorf("worktree files:\n%s\nwant (the user's tree less its ignored files):\n%s", dump(got), dump(want))
			}
			if s := tgit(t, w.Path, "status", "--porcelain"); s != "" {
				t.Errorf("the new worktree is not clean:\n%s", s)
			}
			if c, err := w.Diff(ctx); err != nil || !c.Empty {
				t.Errorf("Diff against the dirty base = %+v, %v; want empty", c, err)
			}
		})
	}
}

func TestIncludeDirtyOnACleanTreeMakesNoCommit(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w, err := r.NewWorktree(ctx, "t1", "x", "HEAD", true)
	if err != nil {
		t.Fatal(err)
	}
	if w.DirtyIncluded || w.Base != tgit(t, dir, "rev-parse", "HEAD") {
		t.Errorf("clean tree with include-dirty: %+v", w)
	}
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	head := tgit(t, w.Path, "rev-parse", "HEAD")

	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	write(t, w.Path, "greet/greet.go", "package greet\n")
	write(t, w.Path, "greet/data.bin", "\x00\x01\x02binary\xff")
	os.Remove(filepath.Join(w.Path, "README.md"))
	write(t, w.Path, "cache.log", "ignored, kept by restore\n")
	tgit(t, w.Path, "add", "greet/greet.go") // staged or not: the state is what counts
	saved := files(t, w.Path, false)
	indexBefore := tgit(t, w.Path, "ls-files", "--stage")
	c1, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}

	snap, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "refs/jlgcli/t1/1"); got != snap {
		t.Errorf("snapshot ref = %s, want %s", got, snap)
	}
	if got := tgit(t, w.Path, "rev-parse", "HEAD"); got != head {
		t.Errorf("Snapshot moved HEAD to %s", got)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != head {
		t.Errorf("Snapshot moved the branch to %s", got)
	}
	if got := tgit(t, w.Path, "ls-files", "--stage"); got != indexBefore {
		t.Errorf("Snapshot changed the worktree's index:\n%s\nwas:\n%s", got, indexBefore)
	}
	if got := files(t, w.Path, false); dump(got) != dump(saved) {
		t.Errorf("Snapshot changed files:\n%s", dump(got))
	}
	if p := tgit(t, dir, "rev-parse", snap+"^"); p != head {
		t.Errorf("snapshot parent %s, want %s", p, head)
	}
	if got := tgit(t, dir, "ls-tree", "-r", "--name-only", snap); strings.Contains(got, "cache.log") || !strings.Contains(got, "greet/data.bin") {
		t.Errorf("snapshot tree:\n%s", got)
	}

	// Mess everything up, then restore.
	write(t, w.Path, "main.go", "broken")
	write(t, w.Path, "greet/data.bin", "other")
	os.Remove(filepath.Join(w.Path, "greet", "greet.go"))
	write(t, w.Path, "junk/a/b.txt", "junk")
	write(t, w.Path, "junk.txt", "junk")
	write(t, w.Path, "README.md", "back")
	write(t, w.Path, "build/x.o", "ignored, kept")
	tgit(t, w.Path, "add", "junk.txt")
	if err := w.Restore(ctx, snap); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for k, v := range saved {
		want[k] = v
	}
	want["build/x.o"] = "ignored, kept"
	if got := files(t, w.Path, false); dump(got) != dump(want) {
		t.Errorf("after Restore:\n%s\nwant:\n%s", dump(got), dump(want))
	}
	if got := tgit(t, w.Path, "rev-parse", "HEAD"); got != head {
		t.Errorf("Restore moved HEAD to %s", got)
	}
	c2, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Hash != c1.Hash {
		t.Errorf("Diff after the round trip %s, before %s", c2.Hash, c1.Hash)
	}
	// The index is HEAD's: the restored state shows as changes.
	if got := tgit(t, w.Path, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("staged after Restore: %s", got)
	}

	// Restoring the base empties the change; a missing commit is an error
	// naming git's complaint.
	if err := w.Restore(ctx, w.Base); err != nil {
		t.Fatal(err)
	}
	if c, _ := w.Diff(ctx); !c.Empty {
		t.Errorf("after restoring the base: %+v", c.Files)
	}
	if err := w.Restore(ctx, "refs/jlgcli/t1/nope"); err == nil {
		t.Error("Restore of a missing snapshot succeeded")
	}
	for _, name := range []string{"base", "", "a/b", "x..y"} {
		if _, err := w.Snapshot(ctx, name); err == nil {
			t.Errorf("Snapshot(%q) accepted", name)
		}
	}
}

func TestCommit(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	sha, ok, err := w.Commit(ctx, "feat: nothing (tier fast, attempt 1)")
	if sha != "" || ok || err != nil {
		t.Errorf("Commit with nothing to commit = %q, %v, %v; want no-op", sha, ok, err)
	}
	write(t, w.Path, "hello.go", "package main\n")
	write(t, w.Path, "main.go", "package main\n\nfunc main() { hello() }\n")
	write(t, w.Path, "out.log", "ignored")
	msg := "feat: Add a greeting (tier fast, attempt 2)\n\n#42 stays in the body"
	sha, ok, err = w.Commit(ctx, msg)
	if err != nil || !ok || sha == "" {
		t.Fatalf("Commit = %q, %v, %v", sha, ok, err)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != sha {
		t.Errorf("branch at %s, want %s", got, sha)
	}
	if got := tgit(t, dir, "log", "-1", "--format=%B", sha); got != msg {
		t.Errorf("message %q, want %q", got, msg)
	}
	if got := tgit(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha); got != "jlgcli <jlgcli@localhost>|jlgcli <jlgcli@localhost>" {
		t.Errorf("identity without a configured one: %s", got)
	}
	if got := tgit(t, dir, "rev-parse", sha+"^"); got != w.Base {
		t.Errorf("parent %s, want the base", got)
	}
	if got := tgit(t, dir, "ls-tree", "-r", "--name-only", sha); strings.Contains(got, "out.log") || !strings.Contains(got, "hello.go") {
		t.Errorf("committed tree:\n%s", got)
	}
	if s := tgit(t, w.Path, "status", "--porcelain"); s != "" {
		t.Errorf("worktree not clean after Commit:\n%s", s)
	}
	if _, ok, err := w.Commit(ctx, "again"); ok || err != nil {
		t.Errorf("second Commit = %v, %v; want a no-op", ok, err)
	}

	// A configured identity is the user's, and stays in their config.
	tgit(t, dir, "config", "user.name", "Ada")
	tgit(t, dir, "config", "user.email", "ada@example.com")
	write(t, w.Path, "more.go", "package main\n")
	sha, _, err = w.Commit(ctx, "WIP: Add a greeting (needs manual review)")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "log", "-1", "--format=%an <%ae>", sha); got != "Ada <ada@example.com>" {
		t.Errorf("identity with a configured one: %s", got)
	}
	if n := tgit(t, dir, "rev-list", "--count", w.Base+".."+w.Branch); n != "2" {
		t.Errorf("%s commits on the branch, want 2", n)
	}
	if _, _, err := w.Commit(ctx, " \n"); err == nil {
		t.Error("an empty message was accepted")
	}
}

func TestIdentityFallbackPerField(t *testing.T) {
	dir, r := newRepo(t)
	g := r.git()
	cases := []struct {
		name   string
		config map[string]string
		env    map[string]string
		want   string
	}{
		{"none", nil, nil, "user.name=jlgcli user.email=jlgcli@localhost"},
		{"user", map[string]string{"user.name": "A", "user.email": "a@x"}, nil, ""},
		{"name only", map[string]string{"user.name": "A"}, nil, "user.email=jlgcli@localhost"},
		{"EMAIL", map[string]string{"user.name": "A"}, map[string]string{"EMAIL": "a@x"}, ""},
		{"author only", map[string]string{"author.name": "A", "author.email": "a@x"}, nil, "user.name=jlgcli user.email=jlgcli@localhost"},
		{"env", nil, map[string]string{"GIT_AUTHOR_NAME": "A", "GIT_COMMITTER_NAME": "A"}, "user.email=jlgcli@localhost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"user.name", "user.email", "author.name", "author.email"} {
				tgitErr(dir, "config", "--unset", k)
			}
			for k, v := range c.config {
				tgit(t, dir, "config", k, v)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			id, err := identity(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(id, " "); got != c.want {
				t.Errorf("fallback = %q, want %q", got, c.want)
			}
		})
	}
}

func TestResetToBase(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "a.go", "package main\n")
	if _, _, err := w.Commit(ctx, "feat: a"); err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "b.go", "package main\n")
	write(t, w.Path, "main.go", "changed")
	write(t, w.Path, "keep.log", "ignored")
	if err := w.ResetToBase(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != w.Base {
		t.Errorf("branch at %s, want the base %s", got, w.Base)
	}
	if c, err := w.Diff(ctx); err != nil || !c.Empty {
		t.Errorf("Diff after ResetToBase = %+v, %v", c.Files, err)
	}
	if exists(w.Path, "a.go") || exists(w.Path, "b.go") || !exists(w.Path, "keep.log") {
		t.Errorf("files after ResetToBase: %s", dump(files(t, w.Path, false)))
	}
}

// TestDestructiveOperationsCheckThePath: a Worktree value pointing at the
// user's own tree (a corrupt checkpoint) must not reset it.
func TestDestructiveOperationsCheckThePath(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, dir, "precious.txt", "the user's work")
	write(t, dir, "main.go", "the user's change")
	before := stateOf(t, dir)
	for _, bad := range []Worktree{
		{ID: "t1", RepoDir: dir, Path: dir, Branch: w.Branch, Base: w.Base},
		{ID: "t1", RepoDir: dir, Path: dir, Branch: "main", Base: w.Base},
		{ID: "t1", RepoDir: dir, Path: w.Path, Branch: "main", Base: w.Base},
		{ID: "t1", RepoDir: dir, Path: filepath.Join(w.Path, "sub"), Branch: w.Branch, Base: w.Base},
	} {
		os.MkdirAll(filepath.Join(w.Path, "sub"), 0o755)
		if err := bad.ResetToBase(ctx); !errors.Is(err, ErrNotWorktree) {
			t.Errorf("ResetToBase on %s (%s) = %v, want ErrNotWorktree", bad.Path, bad.Branch, err)
		}
		if err := bad.Restore(ctx, w.Base); !errors.Is(err, ErrNotWorktree) {
			t.Errorf("Restore on %s (%s) = %v, want ErrNotWorktree", bad.Path, bad.Branch, err)
		}
		if _, _, err := bad.Commit(ctx, "x"); !errors.Is(err, ErrNotWorktree) {
			t.Errorf("Commit on %s (%s) = %v, want ErrNotWorktree", bad.Path, bad.Branch, err)
		}
		if bad.Path == w.Path {
			continue // Remove takes a linked worktree whatever its branch
		}
		if err := bad.Remove(ctx); !errors.Is(err, ErrNotWorktree) {
			t.Errorf("Remove on %s (%s) = %v, want ErrNotWorktree", bad.Path, bad.Branch, err)
		}
	}
	sameState(t, "operations on a bad Worktree", before, stateOf(t, dir))
}

func TestRemoveKeepsBranchAndRefs(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "done.go", "package main\n")
	sha, _, err := w.Commit(ctx, "feat: done")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Snapshot(ctx, "2"); err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "leftover.txt", "not committed\n")
	write(t, w.Path, "big.log", "ignored")
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(w.Path, "") {
		t.Errorf("%s still exists", w.Path)
	}
	if list := tgit(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, w.Path) {
		t.Errorf("git still lists the worktree:\n%s", list)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != sha {
		t.Errorf("branch at %s, want %s", got, sha)
	}
	refs := tgit(t, dir, "for-each-ref", "--format=%(refname)", "refs/jlgcli/t1/")
	if refs != "refs/jlgcli/t1/2\nrefs/jlgcli/t1/base\nrefs/jlgcli/t1/final" {
		t.Errorf("refs after Remove:\n%s", refs)
	}
	if got := tgit(t, dir, "show", "refs/jlgcli/t1/final:leftover.txt"); got != "not committed" {
		t.Errorf("the final snapshot holds %q", got)
	}
	if err := w.Remove(ctx); err != nil {
		t.Errorf("second Remove = %v", err)
	}
	if s := tgit(t, dir, "status", "--porcelain", "--untracked-files=all"); s != "" {
		t.Errorf("user status after Remove:\n%s", s)
	}
}

func TestWorktreeJSONRoundTrip(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w, err := r.NewWorktree(ctx, "t1", "x", "", false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back Worktree
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != *w {
		t.Errorf("round trip: %+v, want %+v", back, *w)
	}
	write(t, back.Path, "n.txt", "n")
	if _, ok, err := back.Commit(ctx, "feat: n"); !ok || err != nil {
		t.Errorf("Commit on the value read back = %v, %v", ok, err)
	}
}

func TestErrorsCarryStderrAndTimeout(t *testing.T) {
	_, r := newRepo(t)
	_, _, err := r.git().run(ctx, call{args: []string{"rev-parse", "--verify", "no-such-thing"}})
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode == 0 || !strings.Contains(err.Error(), "fatal:") || !strings.Contains(err.Error(), "git rev-parse --verify no-such-thing") {
		t.Errorf("error = %v", err)
	}
	start := time.Now()
	slow := r.git()
	slow.timeout = 300 * time.Millisecond
	_, _, err = slow.run(ctx, call{args: []string{"-c", "alias.slow=!sleep 30", "slow"}})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &gerr) || !gerr.TimedOut || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("a call past its timeout: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timed-out call took %v", d)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Head(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("with a cancelled context: %v, want Canceled", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := r.Head(ctx); !errors.Is(err, ErrGitNotFound) {
		t.Errorf("without git in PATH: %v, want ErrGitNotFound", err)
	}
}

// TestInheritedRepositoryVariablesAreIgnored: jlgcli started from a git
// hook inherits GIT_DIR and GIT_INDEX_FILE; they must not redirect it.
func TestInheritedRepositoryVariablesAreIgnored(t *testing.T) {
	dir, r := newRepo(t)
	other, _ := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_INDEX_FILE")
	if want := tgit(t, dir, "rev-parse", "HEAD"); head != want {
		t.Errorf("Head = %s, want %s (of the repository asked for)", head, want)
	}
}

// TestRemoveAfterTheAgentSwitchedBranch: an agent may check out a branch
// of its own in the worktree; Remove still saves and removes it.
func TestRemoveAfterTheAgentSwitchedBranch(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	tgit(t, w.Path, "switch", "-q", "-c", "agent-branch")
	write(t, w.Path, "wip.txt", "wip\n")
	if _, _, err := w.Commit(ctx, "x"); !errors.Is(err, ErrNotWorktree) {
		t.Errorf("Commit on another branch = %v, want ErrNotWorktree", err)
	}
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(w.Path, "") {
		t.Error("the worktree is still there")
	}
	if got := tgit(t, dir, "show", "refs/jlgcli/t1/final:wip.txt"); got != "wip" {
		t.Errorf("final snapshot holds %q", got)
	}
}

// TestStateDirIsNeverAChange: jlgcli's .jlgcli directory, even where no
// ignore rule hides it, is not a change: not dirty, never captured.
func TestStateDirIsNeverAChange(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	write(t, dir, ".jlgcli/runs/r1/events.jsonl", "{}\n")
	if d, err := r.Dirty(ctx); d || err != nil {
		t.Errorf("Dirty with only .jlgcli = %v, %v", d, err)
	}
	write(t, dir, "x.txt", "x")
	w, err := r.NewWorktree(ctx, "t1", "x", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "ls-tree", "-r", "--name-only", w.Base); strings.Contains(got, ".jlgcli") || !strings.Contains(got, "x.txt") {
		t.Errorf("included tree:\n%s", got)
	}
	write(t, w.Path, ".jlgcli/runs/r2/checkpoint.json", "{}")
	if c, err := w.Diff(ctx); err != nil || !c.Empty {
		t.Errorf("Diff with only .jlgcli = %+v, %v", c.Files, err)
	}
	if _, ok, err := w.Commit(ctx, "feat: x"); ok || err != nil {
		t.Errorf("Commit with only .jlgcli = %v, %v; want a no-op", ok, err)
	}
	if err := w.ResetToBase(ctx); err != nil || !exists(w.Path, ".jlgcli/runs/r2/checkpoint.json") {
		t.Errorf("ResetToBase = %v; the state directory must stay", err)
	}
}

func TestReopenAfterRemove(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "done.go", "package main\n")
	if _, _, err := w.Commit(ctx, "feat: done"); err != nil {
		t.Fatal(err)
	}
	if err := w.Reopen(ctx); err != nil {
		t.Fatalf("Reopen of a live worktree = %v", err)
	}
	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Reopen(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(t, w.Path, "done.go"); got != "package main\n" {
		t.Errorf("reopened worktree holds %q", got)
	}
	if b := tgit(t, w.Path, "rev-parse", "--abbrev-ref", "HEAD"); b != w.Branch {
		t.Errorf("reopened on %s, want %s", b, w.Branch)
	}
	if s := tgit(t, dir, "status", "--porcelain", "--untracked-files=all"); s != "" {
		t.Errorf("user status after Reopen:\n%s", s)
	}
}

// Once .jlgcli is ignored (the run store excludes it; users add it to their
// .gitignore), capturing and committing still work: git add refuses a
// pathspec naming an ignored path, even an excluding one.
func TestIgnoredStateDirectory(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	write(t, dir, ".jlgcli/runs/x/meta.json", "{}\n")
	excl := filepath.Join(dir, ".git", "info", "exclude")
	if err := os.MkdirAll(filepath.Dir(excl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(excl, []byte("/.jlgcli/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirtyUserTree(t, dir)
	w, err := r.NewWorktree(ctx, "t1", "task", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if !w.DirtyIncluded {
		t.Fatal("the changes were not included")
	}
	if got := tgit(t, dir, "show", w.Base+":notes/untracked.txt"); got != "untracked" {
		t.Errorf("included commit holds %q", got)
	}
	if out, _ := tgitErr(dir, "show", w.Base+":.jlgcli/runs/x/meta.json"); out != "" {
		t.Error("the state directory was included")
	}
	write(t, w.Path, ".gitignore", ".jlgcli/\n")
	write(t, w.Path, ".jlgcli/junk", "x")
	write(t, w.Path, "new.txt", "new\n")
	if _, ok, err := w.Commit(ctx, "feat: x"); err != nil || !ok {
		t.Fatalf("Commit = %v, %v", ok, err)
	}
	if c, err := w.Diff(ctx); err != nil || len(c.Files) != 2 {
		t.Errorf("Diff = %+v, %v", c.Files, err)
	}
}

// What a kill leaves while Create runs (nothing yet, the branch alone, a
// worktree git still holds locked and half checked out, a whole worktree
// without its base ref) is made whole by Reopen: one worktree of the
// branch at Base, the base ref, nothing else left.
func TestReopenAfterACutCreate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cut  func(t *testing.T, dir string, w *Worktree)
	}{
		{"nothing made", func(t *testing.T, dir string, w *Worktree) {}},
		{"branch only", func(t *testing.T, dir string, w *Worktree) {
			tgit(t, dir, "branch", w.Branch, w.Base)
		}},
		{"locked and half checked out", func(t *testing.T, dir string, w *Worktree) {
			tgit(t, dir, "worktree", "add", "-q", "-b", w.Branch, w.Path, w.Base)
			tgit(t, dir, "worktree", "lock", "--reason", "initializing", w.Path)
			for _, f := range []string{".git", "main.go", "README.md"} {
				if err := os.Remove(filepath.Join(w.Path, f)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"locked, checkout cut", func(t *testing.T, dir string, w *Worktree) {
			tgit(t, dir, "worktree", "add", "-q", "-b", w.Branch, w.Path, w.Base)
			tgit(t, dir, "worktree", "lock", "--reason", "initializing", w.Path)
			if err := os.Remove(filepath.Join(w.Path, "main.go")); err != nil {
				t.Fatal(err)
			}
		}},
		{"no base ref", func(t *testing.T, dir string, w *Worktree) {
			tgit(t, dir, "worktree", "add", "-q", "-b", w.Branch, w.Path, w.Base)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, r := newRepo(t)
			w, err := r.PlanWorktree(ctx, "t1", "Add a greeting", "", false)
			if err != nil {
				t.Fatal(err)
			}
			tc.cut(t, dir, w)
			if err := w.Reopen(ctx); err != nil {
				t.Fatalf("Reopen = %v", err)
			}
			if err := w.check(ctx); err != nil {
				t.Fatal(err)
			}
			if got := tgit(t, dir, "rev-parse", "refs/jlgcli/t1/base"); got != w.Base {
				t.Errorf("base ref at %s, want %s", got, w.Base)
			}
			if got := read(t, w.Path, "main.go"); got != "package main\n\nfunc main() {}\n" {
				t.Errorf("main.go holds %q", got)
			}
			if d, err := w.Dirty(ctx); d || err != nil {
				t.Errorf("Dirty = %v, %v", d, err)
			}
			list := tgit(t, dir, "worktree", "list", "--porcelain")
			if n := strings.Count(list, "worktree "); n != 2 || strings.Contains(list, "\nlocked") {
				t.Errorf("git worktree list:\n%s", list)
			}
			if b := tgit(t, dir, "branch", "--list", "jlgcli/*"); strings.TrimSpace(strings.TrimLeft(b, "+* ")) != w.Branch {
				t.Errorf("task branches: %q", b)
			}
		})
	}
}

// A task that made nothing leaves nothing (Discard); one whose branch
// moved or whose worktree holds a change keeps all. Reopen makes a
// discarded worktree again.
func TestDiscard(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	if _, err := w.Snapshot(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.Discard(ctx); !ok || err != nil {
		t.Fatalf("Discard = %v, %v", ok, err)
	}
	if exists(w.Path, "") {
		t.Errorf("%s still exists", w.Path)
	}
	if b := tgit(t, dir, "branch", "--list", "jlgcli/*"); b != "" {
		t.Errorf("branches left: %q", b)
	}
	if refs := tgit(t, dir, "for-each-ref", "refs/jlgcli/"); refs != "" {
		t.Errorf("refs left: %q", refs)
	}
	if n := strings.Count(tgit(t, dir, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("%d worktrees", n)
	}
	if err := w.Reopen(ctx); err != nil {
		t.Fatalf("Reopen after Discard = %v", err)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch, "refs/jlgcli/t1/base"); got != w.Base+"\n"+w.Base {
		t.Errorf("reopened: %q", got)
	}

	write(t, w.Path, "wip.txt", "work\n")
	if ok, err := w.Discard(ctx); ok || err != nil {
		t.Errorf("Discard of a worktree with a change = %v, %v", ok, err)
	}
	if got := read(t, w.Path, "wip.txt"); got != "work\n" {
		t.Errorf("wip.txt holds %q", got)
	}
	sha, _, err := w.Commit(ctx, "feat: wip")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := w.Discard(ctx); ok || err != nil {
		t.Errorf("Discard of a branch with a commit = %v, %v", ok, err)
	}
	if got := tgit(t, dir, "rev-parse", w.Branch); got != sha {
		t.Errorf("branch at %s, want %s", got, sha)
	}
}

// Measure reads the worktree once and gives what Diff, DiffFrom of each
// commit and Snapshot give, one after the other, changing nothing; a change
// from a commit of the same tree as another's is the same change, with its
// own Base.
func TestMeasureIsDiffDiffFromAndSnapshot(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	start, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.Path, "greet/greet.go", "package greet\n")
	os.Remove(filepath.Join(w.Path, "main_test.go"))
	write(t, w.Path, "cache.log", "ignored\n")
	// A commit of the base's tree, another than the base.
	same := tgit(t, dir, "commit-tree", "-m", "the base's tree again", w.Base+"^{tree}")
	before := files(t, w.Path, false)
	index := tgit(t, w.Path, "ls-files", "--stage")

	change, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	own, err := w.DiffFrom(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.DiffFrom(ctx, same)
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Measure(ctx, "1-result", start, same)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(change, m.Change); diff != "" {
		t.Errorf("change against the base (-Diff +Measure):\n%s", diff)
	}
	if diff := cmp.Diff([]Change{own, again}, m.From); diff != "" {
		t.Errorf("changes since the commits (-DiffFrom +Measure):\n%s", diff)
	}
	if change.Empty || len(change.DeletedTests) != 1 || m.From[1].Base != same || m.From[1].Hash != change.Hash {
		t.Errorf("measured %+v", m)
	}
	if got := tgit(t, dir, "rev-parse", "refs/jlgcli/t1/1-result"); got != m.Snapshot {
		t.Errorf("snapshot ref = %s, want %s", got, m.Snapshot)
	}
	if got := tgit(t, dir, "rev-parse", m.Snapshot+"^{tree}"); got != change.Tree {
		t.Errorf("snapshot tree %s, measured %s", got, change.Tree)
	}
	if got := tgit(t, dir, "rev-parse", m.Snapshot+"^"); got != w.Base {
		t.Errorf("snapshot parent %s, want the branch's commit %s", got, w.Base)
	}
	if got := files(t, w.Path, false); dump(got) != dump(before) {
		t.Errorf("Measure changed files:\n%s", dump(got))
	}
	if got := tgit(t, w.Path, "ls-files", "--stage"); got != index {
		t.Errorf("Measure changed the index")
	}
	if _, err := w.Measure(ctx, BaseName); err == nil {
		t.Error("Measure saved a snapshot under the reserved name")
	}
}

// The tree of an object id is known without asking git again once jlgcli
// made the commit or asked for it, in that repository only; names that
// move are always asked.
func TestTreesOfObjectIDs(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "x.txt", "x\n")
	snap, err := w.Snapshot(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	g := w.tree(ctx)
	if tree, ok := trees.get(g, snap); !ok || tree != tgit(t, dir, "rev-parse", snap+"^{tree}") {
		t.Errorf("tree of the snapshot jlgcli made: %q, %v", tree, ok)
	}
	head := tgit(t, dir, "rev-parse", "HEAD")
	if _, err := revTree(ctx, g, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, ok := trees.get(g, "HEAD"); ok {
		t.Error("the tree of HEAD, which moves, is kept")
	}
	if _, err := revTree(ctx, g, head); err != nil {
		t.Fatal(err)
	}
	if tree, ok := trees.get(g, head); !ok || tree != tgit(t, dir, "rev-parse", "HEAD^{tree}") {
		t.Errorf("tree of a commit asked once: %q, %v", tree, ok)
	}
	_, other := newRepo(t)
	if _, ok := trees.get(other.git(), snap); ok {
		t.Error("the tree of a commit of one repository is known in another")
	}
	for s, want := range map[string]bool{head: true, strings.ToUpper(head): false, head[:12]: false, strings.Repeat("a", 64): true, "HEAD": false} {
		if isObjectID(s) != want {
			t.Errorf("isObjectID(%q) = %v", s, !want)
		}
	}
}
