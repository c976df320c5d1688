package git

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is every path below (and at) the roots: its kind, mode and content.
func tree(t *testing.T, roots ...string) string {
	t.Helper()
	var b strings.Builder
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if os.IsNotExist(err) {
				b.WriteString(p + " absent\n")
				return nil
			}
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			b.WriteString(p + " " + fi.Mode().String())
			switch {
			case fi.Mode().Type() == fs.ModeSymlink:
				l, _ := os.Readlink(p)
				b.WriteString(" -> " + l)
			case fi.Mode().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				b.WriteString(" " + strings.ReplaceAll(string(data), "\n", `\n`))
			}
			b.WriteString("\n")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func changed(changes []ControlChange) string {
	var s []string
	for _, c := range changes {
		s = append(s, c.String())
	}
	return strings.Join(s, "\n")
}

// TestControlPathsOfALoop: what decides what git runs in a working tree, a
// loop's directory in it, listed.
func TestControlPathsOfALoop(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	script, _ := payload(t)
	trackedHooks(t, dir, script)
	write(t, dir, "pkg/x.go", "package pkg\n")
	paths, err := ControlPaths(ctx, filepath.Join(dir, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		filepath.Join(dir, ".git"), filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".git", "config.worktree"),
		filepath.Join(dir, ".git", "hooks"), filepath.Join(dir, ".githooks"), filepath.Join(dir, ".husky"),
		filepath.Join(dir, ".pre-commit-config.yaml"), filepath.Join(dir, "lefthook.yml"), filepath.Join(dir, "pkg", ".git"),
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("ControlPaths lacks %s:\n%s", want, strings.Join(paths, "\n"))
		}
	}
	if r.GitDir() != filepath.Join(dir, ".git") || r.CommonDir() != filepath.Join(dir, ".git") {
		t.Errorf("GitDir, CommonDir = %s, %s", r.GitDir(), r.CommonDir())
	}

	// A task's worktree: its record's git directory and the repository's,
	// not its tracked hooks (the task's work, held at landing).
	w := newTask(t, r, "t1")
	wp, err := w.ControlPaths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gd := filepath.Join(dir, ".git", "worktrees", "t1")
	for _, want := range []string{
		filepath.Join(w.Path, ".git"), filepath.Join(gd, "config.worktree"), filepath.Join(gd, "commondir"), filepath.Join(gd, "gitdir"),
		filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".git", "hooks"), filepath.Join(dir, ".git"),
	} {
		if !slices.Contains(wp, want) {
			t.Errorf("Worktree.ControlPaths lacks %s:\n%s", want, strings.Join(wp, "\n"))
		}
	}
	if slices.Contains(wp, filepath.Join(w.Path, ".githooks")) {
		t.Errorf("Worktree.ControlPaths holds the worktree's tracked hooks")
	}
}

// TestControlChangesUndone: an agent's changes to .git/config, a hook, a
// tracked hooks directory, a hook manager's file and a loop directory's
// .git are found and put back byte for byte.
func TestControlChangesUndone(t *testing.T) {
	t.Parallel()
	dir, _ := newRepo(t)
	script, _ := payload(t)
	trackedHooks(t, dir, script)
	write(t, dir, ".git/hooks/post-commit", "#!/bin/sh\necho user's own\n")
	if err := os.Chmod(filepath.Join(dir, ".git/hooks/post-commit"), 0o750); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".husky/pre-commit", "npm test\n")
	if err := os.Symlink("post-commit", filepath.Join(dir, ".git/hooks/post-rewrite")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "pkg/x.go", "package pkg\n")
	paths, err := ControlPaths(ctx, filepath.Join(dir, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, paths...)
	s, err := SnapshotControl(paths)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Undo(); err != nil || len(got) != 0 {
		t.Fatalf("Undo with no change = %v, %v", got, err)
	}

	// The agent's changes.
	tgit(t, dir, "config", "core.fsmonitor", script)
	write(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\nevil\n")
	if err := os.Chmod(filepath.Join(dir, ".git/hooks/post-commit"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".githooks/pre-push")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".githooks/post-merge", "#!/bin/sh\nevil\n")
	write(t, dir, ".githooks/new/deep/hook", "evil\n")
	if err := os.RemoveAll(filepath.Join(dir, ".husky")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".husky", "now a file\n")
	if err := os.Remove(filepath.Join(dir, ".git/hooks/post-rewrite")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(script, filepath.Join(dir, ".git/hooks/post-rewrite")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "lefthook.yml", "pre-commit:\n  commands:\n    x:\n      run: evil\n")
	tgit(t, filepath.Join(dir, "pkg"), "init", "-q")

	changes, err := s.Undo()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"modified " + filepath.Join(dir, ".git/config"),
		"created " + filepath.Join(dir, ".git/hooks/pre-commit"),
		"mode " + filepath.Join(dir, ".git/hooks/post-commit"),
		"modified " + filepath.Join(dir, ".git/hooks/post-rewrite"),
		"deleted " + filepath.Join(dir, ".githooks/pre-push"),
		"modified " + filepath.Join(dir, ".githooks/post-merge"),
		"created " + filepath.Join(dir, ".githooks/new"),
		"replaced " + filepath.Join(dir, ".husky"),
		"created " + filepath.Join(dir, "lefthook.yml"),
		"created " + filepath.Join(dir, "pkg/.git"),
	}
	got := changed(changes)
	for _, w := range want {
		if !strings.Contains(got+"\n", w+"\n") {
			t.Errorf("changes lack %q:\n%s", w, got)
		}
	}
	if after := tree(t, paths...); after != before {
		t.Errorf("not put back byte for byte:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if again, err := s.Undo(); err != nil || len(again) != 0 {
		t.Errorf("Undo once undone = %v, %v", again, err)
	}
}

// TestWorktreeControlUndone: a task's agent rewrites its worktree's .git
// file, its git directory's config.worktree and the repository's config:
// found and put back from the worktree's record.
func TestWorktreeControlUndone(t *testing.T) {
	t.Parallel()
	_, r := newRepo(t)
	script, marker := payload(t)
	w := newTask(t, r, "t1")
	paths, err := w.ControlPaths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, paths...)
	s, err := SnapshotControl(paths)
	if err != nil {
		t.Fatal(err)
	}
	hijackPointer(t, r, w, script)
	write(t, w.GitDir, "config.worktree", "[core]\n\tfsmonitor = "+script+"\n")
	write(t, r.CommonDir(), "hooks/post-checkout", "#!/bin/sh\nevil\n")
	changes, err := s.Undo()
	if err != nil {
		t.Fatal(err)
	}
	got := changed(changes)
	for _, want := range []string{"modified " + filepath.Join(w.Path, ".git"), "created " + filepath.Join(w.GitDir, "config.worktree"),
		"created " + filepath.Join(r.CommonDir(), "hooks/post-checkout")} {
		if !strings.Contains(got+"\n", want+"\n") {
			t.Errorf("changes lack %q:\n%s", want, got)
		}
	}
	if after := tree(t, paths...); after != before {
		t.Errorf("not put back byte for byte:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Git finds the real repository again, and runs nothing.
	tgit(t, w.Path, "status", "--porcelain")
	noPayload(t, marker, "git status once undone")
}
