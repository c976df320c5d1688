package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LayFiles makes the worktree's files at paths (slash-separated, relative
// to its top) those of commit: its version of each, and none where commit
// has none. It is how the gate runs the tests as they stood at the task's
// base over a change; HEAD and the index are not touched, and Restore puts
// the worktree back. A path is never followed through a symbolic link.
func (w *Worktree) LayFiles(ctx context.Context, commit string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := w.check(ctx); err != nil {
		return err
	}
	g := w.tree(ctx)
	args := append([]string{"ls-tree", "-r", "-z", "--name-only", commit, "--"}, literal(paths)...)
	out, _, err := g.run(ctx, call{args: args})
	if err != nil {
		return err
	}
	in := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			in[p] = true
		}
	}
	var present []string
	for _, p := range paths {
		if in[p] {
			present = append(present, p)
			continue
		}
		if err := removeInside(w.Path, p); err != nil {
			return err
		}
	}
	if len(present) == 0 {
		return nil
	}
	for _, p := range present {
		// A directory of the change where the base has a file: git would
		// not write over it.
		if err := pathWithoutLinks(w.Path, p); err != nil {
			return err
		}
		if fi, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			if err := os.RemoveAll(filepath.Join(w.Path, filepath.FromSlash(p))); err != nil {
				return err
			}
		}
	}
	args = append([]string{"restore", "--source=" + commit, "--worktree", "--"}, literal(present)...)
	_, _, err = g.run(ctx, call{args: args})
	return err
}

// pathWithoutLinks checks that no directory on the way from top to rel is a symbolic
// link.
func pathWithoutLinks(top, rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	cur := top
	for _, c := range strings.Split(dir, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%q: not a path inside the worktree", rel)
		}
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%q: %s is a symbolic link", rel, strings.TrimPrefix(cur, top+string(filepath.Separator)))
		}
	}
	return nil
}

// removeInside removes the file rel of the worktree at top, if there is one.
func removeInside(top, rel string) error {
	if err := pathWithoutLinks(top, rel); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(top, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
