package git

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Two tasks from the same base: the first lands; the second is laid on the
// moved base (merged, Moved), checked out detached exactly as it would land,
// and lands on a branch that is not checked out by moving its ref alone.
func TestPrepareSquashOnAMovedBaseAndLand(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	tgit(t, dir, "branch", "trunk")
	one := newTask(t, r, "one")
	write(t, one.Path, "one.txt", "one\n")
	if _, _, err := one.Commit(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	two := newTask(t, r, "two")
	write(t, two.Path, "two.txt", "two\n")
	if _, _, err := two.Commit(ctx, "two"); err != nil {
		t.Fatal(err)
	}

	// trunk is not checked out: Land moves its ref, the user's tree stays.
	before := stateOf(t, dir)
	s1, err := r.PrepareSquash(ctx, "trunk", one.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if s1.Moved || s1.CheckedOut {
		t.Errorf("first squash %+v: trunk did not move and is not checked out", s1)
	}
	c1, err := r.Land(ctx, s1, "feat: one")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", "trunk"); got != c1 {
		t.Errorf("trunk at %s, want %s", got, c1)
	}
	sameState(t, "the user's tree", before, stateOf(t, dir))

	s2, err := r.PrepareSquash(ctx, "trunk", two.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if !s2.Moved || s2.Head != c1 {
		t.Fatalf("second squash %+v: trunk moved to %s", s2, c1)
	}
	path := filepath.Join(t.TempDir(), "gate")
	remove, err := r.CheckoutSquash(ctx, s2, path)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, path, "one.txt") != "one\n" || read(t, path, "two.txt") != "two\n" {
		t.Errorf("the checked-out squash lacks one of the two changes")
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if exists(path, "two.txt") {
		t.Error("the gate's worktree is still there")
	}
	c2, err := r.Land(ctx, s2, "feat: two")
	if err != nil {
		t.Fatal(err)
	}
	if got := tgit(t, dir, "rev-parse", c2+"^{tree}"); got != s2.Tree {
		t.Errorf("landed tree %s, want the prepared %s", got, s2.Tree)
	}

	// A squash prepared before the base moved again is refused, not landed.
	three := newTask(t, r, "three")
	write(t, three.Path, "three.txt", "3\n")
	if _, _, err := three.Commit(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	s3, err := r.PrepareSquash(ctx, "trunk", three.Branch, false, "")
	if err != nil {
		t.Fatal(err)
	}
	tgit(t, dir, "update-ref", "refs/heads/trunk", c1)
	var refused *MergeRefusedError
	_, err = r.Land(ctx, s3, "feat: three")
	if !errors.As(err, &refused) || refused.Reason != RefusedBaseMoved {
		t.Fatalf("landing on a base that moved: %v", err)
	}
	// The race lost, the refusal gives the command that merges by hand.
	if want := "git merge --squash " + three.Branch + " && git commit -m 'feat: three'"; !strings.HasSuffix(refused.Command, want) ||
		!strings.HasSuffix(err.Error(), "; to merge by hand: "+refused.Command) {
		t.Errorf("lost race: command %q in %q, want %q", refused.Command, err, want)
	}
}

// A refusal with no command to give says so instead of an empty one.
func TestMergeRefusedWithoutCommand(t *testing.T) {
	err := &MergeRefusedError{Reason: RefusedNoBaseBranch, Branch: "b", Detail: "the task did not start from a branch"}
	if got := err.Error(); strings.Contains(got, "to merge by hand") || strings.HasSuffix(got, ": ") {
		t.Errorf("Error() = %q", got)
	}
}

// Changes to the same line conflict on a moved base: a refusal that names
// the file.
func TestPrepareSquashConflict(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	a := newTask(t, r, "a")
	write(t, a.Path, "README.md", "# A\n")
	if _, _, err := a.Commit(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	b := newTask(t, r, "b")
	write(t, b.Path, "README.md", "# B\n")
	if _, _, err := b.Commit(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SquashMerge(ctx, "main", a.Branch, "feat: a", ""); err != nil {
		t.Fatal(err)
	}
	_, err := r.PrepareSquash(ctx, "main", b.Branch, true, "")
	var refused *MergeRefusedError
	if !errors.As(err, &refused) || refused.Reason != RefusedConflict || refused.Detail != "main has moved since the task started and conflicts with it in README.md" {
		t.Fatalf("%v", err)
	}
}
