package git

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLayFiles: the base's version of the files asked for, none where the
// base has none; HEAD and the index untouched; Restore puts the change
// back, and a file written meanwhile (by the checks) goes.
func TestLayFiles(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "lay")
	write(t, w.Path, "main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) { return }\n")
	write(t, w.Path, "more_test.go", "package main\n")
	os.Remove(filepath.Join(w.Path, "README.md"))
	c, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	index := tgit(t, w.Path, "ls-files", "--stage")
	if err := w.LayFiles(ctx, w.Base, []string{"main_test.go", "more_test.go", "README.md"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, w.Path, "main_test.go"); got != "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n" {
		t.Errorf("main_test.go = %q", got)
	}
	if got := read(t, w.Path, "README.md"); got != "# demo\n" {
		t.Errorf("README.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "more_test.go")); !os.IsNotExist(err) {
		t.Errorf("more_test.go is still there: %v", err)
	}
	if got := tgit(t, w.Path, "ls-files", "--stage"); got != index {
		t.Errorf("the index changed:\n%s", got)
	}
	write(t, w.Path, "__pycache__/x.pyc", "written by a check")
	if err := w.Restore(ctx, c.Tree); err != nil {
		t.Fatal(err)
	}
	after, err := w.Diff(ctx)
	if err != nil || after.Tree != c.Tree {
		t.Errorf("restored tree %s, want %s (%v)", after.Tree, c.Tree, err)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "__pycache__")); !os.IsNotExist(err) {
		t.Errorf("what the checks wrote is still there: %v", err)
	}
}

// TestLayFilesNoLinks: a path through a symbolic link is refused, and
// nothing outside the worktree is removed.
func TestLayFilesNoLinks(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	w := newTask(t, r, "links")
	outside := t.TempDir()
	write(t, outside, "x_test.go", "keep me\n")
	if err := os.Symlink(outside, filepath.Join(w.Path, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := w.LayFiles(ctx, w.Base, []string{"sub/x_test.go"}); err == nil {
		t.Error("a path through a link was followed")
	}
	if got := read(t, outside, "x_test.go"); got != "keep me\n" {
		t.Errorf("outside: %q", got)
	}
}
