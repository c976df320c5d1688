package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Git's control files: the paths that decide what git executes in a
// working tree, jlgcli's own git and the user's next one alike. An agent
// that writes one (a core.fsmonitor, a hook, an alias, a .git file pointing
// elsewhere) runs code outside its sandbox the next time anyone runs git
// there. They are listed by ControlPaths, for the sandbox to keep them
// read-only, and checked after every agent call all the same: a snapshot of
// their content before the call (SnapshotControl), compared after it and
// put back as it was (ControlSnapshot.Undo).

// HookManagerFiles are the files, at the top of a working tree, of the
// hook managers that install and run the repository's own hooks: husky's
// directory, pre-commit's and lefthook's configurations.
var HookManagerFiles = []string{".husky", ".pre-commit-config.yaml",
	"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
	"lefthook-local.yml", ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml"}

// ControlPaths lists the paths that decide what git executes for the
// working tree holding dir (a loop's directory, in a repository): the .git
// entry at the top of the working tree (a pointer file; when it is the git
// directory itself, its parts below stand for it), dir's own .git when dir
// is below the top (where git would find a repository an agent made), the
// config and config.worktree of the git directory and of the common
// directory and their hooks directories, a linked worktree's commondir and
// gitdir files, the config and hooks of every submodule's git directory
// (modules/**), the directory core.hooksPath names when it lies in the
// working tree (tracked hooks, such as .githooks), and the hook managers'
// files at the top of the working tree (HookManagerFiles). Paths are
// absolute and may not exist: one that appears is as much a change as one
// that is rewritten. Directories stand for everything below them, but for
// a .git directory (the git directory itself), which is listed for its
// entry alone (that it stays a directory): its parts that matter are listed
// on their own, and the rest of it (objects, refs, the index) is not a
// control file. A sandbox that keeps these read-only binds a .git directory's
// listed parts, not the directory, and creates nothing for a path that does
// not exist.
//
// It finds the repository from dir (Open): call it before any agent ran
// there, and keep the list.
func ControlPaths(ctx context.Context, dir string) ([]string, error) {
	r, err := Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	paths, err := controlPaths(ctx, r.git(), true)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	if real != r.Dir {
		paths = append(paths, filepath.Join(real, ".git"))
	}
	return append(paths, nestedControls(real, r.Dir)...), nil
}

// nestedMax bounds the walk of a loop's directory for nested repositories.
const nestedMax = 200000

// nestedControls are the control paths of the repositories below dir (a
// vendored clone, a directory of projects, a submodule's checkout): their
// .git entry, and the config and hooks a .git directory holds, which the
// user's git opens when they work there. The top's own .git (of top),
// node_modules and jlgcli's state are not walked; past nestedMax entries
// the walk stops.
func nestedControls(dir, top string) []string {
	var out []string
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > nestedMax {
			return filepath.SkipAll
		}
		if !d.IsDir() && d.Name() != ".git" {
			return nil
		}
		switch d.Name() {
		case "node_modules", ".jlgcli":
			return filepath.SkipDir
		case ".git":
			if filepath.Dir(p) == top {
				return filepath.SkipDir
			}
			out = append(out, p)
			if d.IsDir() {
				out = append(out, filepath.Join(p, "config"), filepath.Join(p, "config.worktree"), filepath.Join(p, "hooks"))
				if m, err := moduleControls(filepath.Join(p, "modules")); err == nil {
					out = append(out, m...)
				}
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}

// ControlPaths lists the control paths of the task's worktree, as
// ControlPaths does for a directory, from the worktree's record (its git
// directory and the repository's common directory; nothing is read from
// the worktree's .git file), with the .git entry of the user's checkout
// (RepoDir). It leaves out the worktree's own tracked files (a tracked
// hooks directory, the hook managers' files): those are the task's work,
// which jlgcli's git calls never run, and which its landing holds for
// review when the change touches them (ReviewFiles, RefusedReview).
func (w *Worktree) ControlPaths(ctx context.Context) ([]string, error) {
	g := w.tree(ctx)
	if g.err != nil {
		return nil, g.err
	}
	paths, err := controlPaths(ctx, g, false)
	if err != nil {
		return nil, err
	}
	return append(paths, filepath.Join(w.RepoDir, ".git")), nil
}

// controlPaths lists the control paths of g's repository and working tree,
// with the working tree's own files (a tracked hooks directory, hook
// managers') when tree is set.
func controlPaths(ctx context.Context, g runner, tree bool) ([]string, error) {
	paths := []string{filepath.Join(g.workTree, ".git")}
	dirs := []string{g.gitDir}
	if !sameDir(g.gitDir, g.commonDir) {
		dirs = append(dirs, g.commonDir)
		// Which common directory a linked worktree's git opens, and where
		// the repository thinks the worktree is.
		paths = append(paths, filepath.Join(g.gitDir, "commondir"), filepath.Join(g.gitDir, "gitdir"))
	}
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"), filepath.Join(d, "hooks"))
	}
	modules, err := moduleControls(filepath.Join(g.commonDir, "modules"))
	if err != nil {
		return nil, err
	}
	paths = append(paths, modules...)
	if !tree {
		return paths, nil
	}
	if hooks, err := trackedHooksDir(ctx, g); err != nil {
		return nil, err
	} else if hooks != "" {
		paths = append(paths, hooks)
	}
	for _, f := range HookManagerFiles {
		paths = append(paths, filepath.Join(g.workTree, f))
	}
	return paths, nil
}

// moduleControls lists the config and hooks of the submodules' git
// directories under modules (nested ones included).
func moduleControls(modules string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(modules, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case d.Name() == "hooks" && d.IsDir():
			out = append(out, p)
			return filepath.SkipDir
		case d.IsDir() && (d.Name() == "objects" || d.Name() == "refs" || d.Name() == "logs"):
			return filepath.SkipDir
		case d.Name() == "config" || d.Name() == "config.worktree":
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// trackedHooksDir is the directory core.hooksPath names when it lies in
// g's working tree (hooks kept with the project, such as .githooks); "".
func trackedHooksDir(ctx context.Context, g runner) (string, error) {
	// The configuration's own value: jlgcli's -c one is not the user's.
	out, _, err := g.run(ctx, call{args: []string{"config", "-z", "--show-origin", "--type=path", "--get-all", "core.hooksPath"}, ok: []int{1}})
	if err != nil {
		return "", err
	}
	p := ""
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] != "command line:" {
			p = fields[i+1]
		}
	}
	if p == "" {
		return "", nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.workTree, p)
	}
	if _, inside := within(g.workTree, p); !inside {
		return "", nil
	}
	return filepath.Clean(p), nil
}

// within is p relative to dir, and whether p is dir or below it.
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// ControlSnapshot is the content of control paths at one time: every
// file's bytes and mode, every directory below them, every symbolic link's
// target, and which paths did not exist. A .git directory stands for its
// entry only (its parts are listed on their own).
type ControlSnapshot struct {
	roots []string
	nodes map[string]node
}

// node is one path of a snapshot.
type node struct {
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for a file, others
	perm fs.FileMode // permission bits and setuid/setgid/sticky
	data []byte      // a file's content, a link's target
	// unread: a file scanned against a snapshot whose size differs from
	// the recorded one (its content is not read).
	unread bool
	// links is how many names the file has: a control file linked
	// elsewhere can be written from there.
	links uint64
}

// ControlChange is a change to a control path: created, deleted, modified
// (its content or a link's target), mode, replaced (another kind of file in
// its place) or linked (a file given another name, from where it can be
// written).
type ControlChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
}

func (c ControlChange) String() string { return c.Change + " " + c.Path }

// SnapshotControl records the content of paths (ControlPaths).
func SnapshotControl(paths []string) (*ControlSnapshot, error) {
	s := &ControlSnapshot{roots: slices.Clone(paths), nodes: map[string]node{}}
	for _, root := range s.roots {
		if err := scan(root, s.nodes, nil); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Paths are the control paths the snapshot was taken of.
func (s *ControlSnapshot) Paths() []string { return slices.Clone(s.roots) }

// scan records root and, for a directory other than a .git, everything
// below it, into nodes. With like (a snapshot to compare with), a file's
// content is read only when its size matches like's: what is compared is
// never read past what was recorded.
func scan(root string, nodes map[string]node, like map[string]node) error {
	return walk(root, func(p string, fi fs.FileInfo) error {
		n := node{typ: fi.Mode().Type(), perm: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n.links = uint64(st.Nlink)
		}
		switch n.typ {
		case 0:
			if old, ok := like[p]; like != nil && (!ok || old.typ != 0 || int64(len(old.data)) != fi.Size()) {
				n.unread = true // differs anyway
				break
			}
			data, err := readFile(p, fi.Size())
			if err != nil {
				return err
			}
			n.data = data
		case fs.ModeSymlink:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			n.data = []byte(t)
		}
		nodes[p] = n
		return nil
	})
}

// walk calls fn for root (nothing when it does not exist) and everything
// below it unless root is a .git directory, never following a symbolic
// link.
func walk(root string, fn func(p string, fi fs.FileInfo) error) error {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := fn(root, fi); err != nil {
		return err
	}
	if !fi.IsDir() || filepath.Base(root) == ".git" {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == root {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(p, fi)
	})
}

// readFile reads at most size+1 bytes of p.
func readFile(p string, size int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, size+1))
}

// Undo compares the control paths with the snapshot and puts back every
// change, byte for byte: a path created since is removed, one deleted is
// made again, content, kind and mode are restored, a file given another
// name (a hard link) is written anew.
// It returns the changes it found (none: nothing was touched), and an error
// when one could not be undone.
func (s *ControlSnapshot) Undo() ([]ControlChange, error) {
	now := map[string]node{}
	for _, root := range s.roots {
		if err := scan(root, now, s.nodes); err != nil {
			return nil, fmt.Errorf("read the control files: %w", err)
		}
	}
	changes := s.diff(now)
	if len(changes) == 0 {
		return nil, nil
	}
	var errs []error
	// What is not as recorded goes first: created paths, paths of another
	// kind (deepest first, so that a created directory goes whole).
	var gone []string
	for p, n := range now {
		if old, ok := s.nodes[p]; !ok || old.typ != n.typ {
			gone = append(gone, p)
		}
	}
	slices.Sort(gone)
	for _, p := range gone {
		if parentIn(p, gone) {
			continue // removed with its parent
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	// Then what was recorded is made again, parents first; directories
	// get their modes last, children first (a directory made read-only
	// would refuse its children).
	var paths []string
	for p := range s.nodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var dirs []string
	for _, p := range paths {
		old := s.nodes[p]
		cur, ok := now[p]
		if ok && cur.typ != old.typ {
			ok = false // removed above
		}
		switch old.typ {
		case fs.ModeDir:
			if !ok {
				if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
					errs = append(errs, err)
				}
			}
			dirs = append(dirs, p)
		case fs.ModeSymlink:
			if !ok || !bytes.Equal(cur.data, old.data) {
				_ = os.Remove(p)
				if err := os.Symlink(string(old.data), p); err != nil {
					errs = append(errs, err)
				}
			}
		case 0:
			if !ok || cur.unread || cur.perm != old.perm || cur.links != old.links || !bytes.Equal(cur.data, old.data) {
				if err := rewrite(p, old); err != nil {
					errs = append(errs, err)
				}
			}
		default:
			if !ok {
				errs = append(errs, fmt.Errorf("%s: cannot make a %v again", p, old.typ))
			}
		}
	}
	for _, p := range slices.Backward(dirs) {
		if err := os.Chmod(p, s.nodes[p].perm); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return changes, fmt.Errorf("undo the changes to git's control files: %w", err)
	}
	// What is there now must be what was recorded.
	again := map[string]node{}
	for _, root := range s.roots {
		if err := scan(root, again, s.nodes); err != nil {
			return changes, fmt.Errorf("read the control files: %w", err)
		}
	}
	if left := s.diff(again); len(left) > 0 {
		return changes, fmt.Errorf("undo the changes to git's control files: %s is still %s", left[0].Path, left[0].Change)
	}
	return changes, nil
}

// rewrite writes the recorded file n at p, through a new file renamed over
// it: a hard link or an open file of the agent's keeps its own copy.
func rewrite(p string, n node) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".jlgcli-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(n.data)
	if err == nil {
		err = tmp.Chmod(n.perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.RemoveAll(p) // a directory in its place
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// diff lists the changes from the snapshot to now, a created or deleted
// directory once (not what it holds).
func (s *ControlSnapshot) diff(now map[string]node) []ControlChange {
	var out []ControlChange
	var created, deleted []string
	for p, n := range now {
		old, ok := s.nodes[p]
		switch {
		case !ok:
			created = append(created, p)
		case old.typ != n.typ:
			out = append(out, ControlChange{p, "replaced"})
		case n.typ == 0 && (n.unread || !bytes.Equal(n.data, old.data)):
			out = append(out, ControlChange{p, "modified"})
		case n.typ == fs.ModeSymlink && !bytes.Equal(n.data, old.data):
			out = append(out, ControlChange{p, "modified"})
		case n.perm != old.perm:
			out = append(out, ControlChange{p, "mode"})
		case n.typ == 0 && n.links != old.links:
			out = append(out, ControlChange{p, "linked"})
		}
	}
	for p := range s.nodes {
		if _, ok := now[p]; !ok {
			deleted = append(deleted, p)
		}
	}
	for _, p := range created {
		if !parentIn(p, created) {
			out = append(out, ControlChange{p, "created"})
		}
	}
	for _, p := range deleted {
		if !parentIn(p, deleted) {
			out = append(out, ControlChange{p, "deleted"})
		}
	}
	slices.SortFunc(out, func(a, b ControlChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// parentIn reports whether a parent directory of p is in paths.
func parentIn(p string, paths []string) bool {
	for d := filepath.Dir(p); d != p && d != "/" && d != "."; p, d = d, filepath.Dir(d) {
		if slices.Contains(paths, d) {
			return true
		}
	}
	return false
}
