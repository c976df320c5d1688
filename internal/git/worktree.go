package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WorktreesDir is where task worktrees live, relative to the top level of
// the user's working tree: <top>/.jlgcli/worktrees/<id>.
const WorktreesDir = ".jlgcli/worktrees"

// Reserved snapshot names: the task's starting commit and the state saved
// by Remove.
const (
	BaseName  = "base"
	FinalName = "final"
)

// Worktree is a task's linked worktree on its own branch. It is plain data
// (JSON for a checkpoint): a value read back works as the one NewWorktree
// returned.
type Worktree struct {
	// ID is the task's id (the run id): it names the directory and the
	// refs under refs/jlgcli/<id>/.
	ID string `json:"id"`
	// RepoDir is the top level of the user's working tree.
	RepoDir string `json:"repoDir"`
	// Path is the worktree's directory, RepoDir/.jlgcli/worktrees/<id>.
	Path string `json:"path"`
	// Branch is the task branch, jlgcli/<slug>-<shortid>.
	Branch string `json:"branch"`
	// Base is the commit the task starts from and its changes are measured
	// against: the base commit, or the commit of the included uncommitted
	// changes on top of it. refs/jlgcli/<id>/base keeps it.
	Base string `json:"base"`
	// BaseBranch is the branch the task was started from, to merge into;
	// empty when it started from a detached HEAD or from a commit.
	BaseBranch string `json:"baseBranch,omitempty"`
	// DirtyIncluded is true when the user's uncommitted changes were
	// brought in as the branch's first commit (which is then Base).
	DirtyIncluded bool `json:"dirtyIncluded,omitempty"`
	// GitDir is the worktree's git directory in the repository,
	// <common>/worktrees/<name>, recorded when the worktree is planned,
	// before any agent runs in it: every git call in the worktree names it,
	// never the worktree's .git file, which the agent can rewrite. A value
	// read back without it (a run of an older jlgcli) derives it from the
	// repository's own list of its worktrees (see worktreeGitDir).
	GitDir string `json:"gitDir,omitempty"`
	// Timeout bounds each git call; zero means DefaultTimeout.
	Timeout time.Duration `json:"-"`
}

// repo is the runner of the calls on the worktree's repository (its
// worktrees, branches and refs), pinned to the common directory: the
// recorded GitDir's, else the one the user's checkout RepoDir has.
func (w *Worktree) repo() runner {
	if w.GitDir != "" {
		common := filepath.Dir(filepath.Dir(w.GitDir))
		return runner{timeout: w.Timeout, pin: pin{common, common, w.RepoDir}}
	}
	r, err := locate(context.Background(), w.RepoDir)
	if err != nil {
		return runner{timeout: w.Timeout, cwd: w.RepoDir, err: err}
	}
	return runner{timeout: w.Timeout, pin: pin{r.commonDir, r.commonDir, w.RepoDir}}
}

// tree is the runner of the calls in the worktree, pinned to its git
// directory (GitDir, derived once when the record has none).
func (w *Worktree) tree(ctx context.Context) runner {
	g := w.repo()
	if g.err != nil {
		return g
	}
	if w.GitDir == "" {
		gitDir, err := worktreeGitDir(ctx, g, w.Path)
		if err != nil {
			return runner{timeout: w.Timeout, cwd: w.Path, err: err}
		}
		w.GitDir = gitDir
	}
	return runner{timeout: w.Timeout, pin: pin{w.GitDir, g.commonDir, w.Path}}
}

// worktreeGitDir is the git directory of the linked worktree at path of
// the repository g is pinned to, as the repository records it: `git
// worktree list --porcelain` lists path, and the entry of <common>/worktrees
// whose gitdir file names path/.git is its git directory. The worktree's own
// .git file is never read.
func worktreeGitDir(ctx context.Context, g runner, path string) (string, error) {
	want := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		want = real
	}
	out, err := g.line(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	listed := false
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && sameDir(p, want) {
			listed = true
		}
	}
	if !listed {
		return "", fmt.Errorf("%w: %s is not a worktree of %s", ErrNotWorktree, path, g.commonDir)
	}
	dirs, err := os.ReadDir(filepath.Join(g.commonDir, "worktrees"))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotWorktree, err)
	}
	// Its name is the directory's base name unless git had to number it.
	slices.SortStableFunc(dirs, func(a, b os.DirEntry) int {
		return cmpBool(a.Name() != filepath.Base(path), b.Name() != filepath.Base(path))
	})
	for _, d := range dirs {
		gitDir := filepath.Join(g.commonDir, "worktrees", d.Name())
		if recordedAt(gitDir) == want {
			return gitDir, nil
		}
	}
	return "", fmt.Errorf("%w: no entry of %s names %s", ErrNotWorktree, filepath.Join(g.commonDir, "worktrees"), path)
}

// recordedAt is the working tree the linked worktree's git directory
// gitDir belongs to, as its gitdir file records it (symlinks resolved);
// "" when it records none.
func recordedAt(gitDir string) string {
	data, err := os.ReadFile(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return ""
	}
	dotGit := strings.TrimSpace(string(data))
	if filepath.Base(dotGit) != ".git" {
		return ""
	}
	at := filepath.Dir(dotGit)
	if real, err := filepath.EvalSymlinks(at); err == nil {
		at = real
	}
	return filepath.Clean(at)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// NewWorktree creates the worktree of task id: a new branch BranchName(id,
// task) made from baseRef ("" or "HEAD": the current HEAD), checked out in
// <top>/.jlgcli/worktrees/<id>. It is PlanWorktree then Create.
func (r *Repo) NewWorktree(ctx context.Context, id, task, baseRef string, includeDirty bool) (*Worktree, error) {
	w, err := r.PlanWorktree(ctx, id, task, baseRef, includeDirty)
	if err != nil {
		return nil, err
	}
	if err := w.Create(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// PlanWorktree is the worktree NewWorktree makes for task id, not made
// yet: its path, its branch BranchName(id, task), its base commit resolved
// from baseRef ("" or "HEAD": the current HEAD). A task records it before
// Create, so that whatever a kill leaves belongs to a run that resumes it
// (Reopen). The directory .jlgcli/worktrees gets a .gitignore of "*", so
// that the worktrees never show in the user's status.
//
// The user's uncommitted changes (see Dirty) are left out unless
// includeDirty is set: then the tracked changes and the untracked files
// that are not ignored become a commit (the branch's first once created),
// made through a temporary index, and the user's working tree and index are
// not touched; that commit is all PlanWorktree writes. includeDirty needs
// baseRef to be HEAD (the changes are relative to it).
func (r *Repo) PlanWorktree(ctx context.Context, id, task, baseRef string, includeDirty bool) (*Worktree, error) {
	if err := checkName("task id", id); err != nil {
		return nil, err
	}
	g := r.git()
	if baseRef == "" {
		baseRef = "HEAD"
	}
	base, err := revCommit(ctx, g, baseRef)
	if err != nil {
		return nil, err
	}
	w := &Worktree{
		ID:      id,
		RepoDir: r.Dir,
		Path:    filepath.Join(r.Dir, filepath.FromSlash(WorktreesDir), id),
		Branch:  BranchName(id, task),
		Base:    base,
		GitDir:  filepath.Join(g.commonDir, "worktrees", id),
		Timeout: r.Timeout,
	}
	if baseRef == "HEAD" {
		if w.BaseBranch, err = r.CurrentBranch(ctx); err != nil {
			return nil, err
		}
	} else if full, _, err := g.run(ctx, call{args: []string{"rev-parse", "-q", "--verify", "--symbolic-full-name", "--end-of-options", baseRef}, ok: []int{1}}); err != nil {
		return nil, err
	} else if b, ok := strings.CutPrefix(strings.TrimSpace(full), "refs/heads/"); ok {
		w.BaseBranch = b
	}
	if _, err := os.Lstat(w.Path); err == nil {
		return nil, fmt.Errorf("worktree %s already exists", w.Path)
	}
	if _, err := os.Lstat(w.GitDir); err == nil {
		return nil, fmt.Errorf("the repository already has a worktree named %s (%s)", id, w.GitDir)
	}
	if made, err := refExists(ctx, g, w.baseRef()); err != nil {
		return nil, err
	} else if made {
		return nil, fmt.Errorf("task %s already has refs (%s)", id, w.baseRef())
	}

	if includeDirty {
		head, err := r.Head(ctx)
		if err != nil {
			return nil, err
		}
		if head != base {
			return nil, fmt.Errorf("including uncommitted changes needs the task to start from HEAD, not %s", baseRef)
		}
		d, err := r.Dirty(ctx)
		if err != nil {
			return nil, err
		}
		if d {
			tree, err := captureTree(ctx, g)
			if err != nil {
				return nil, fmt.Errorf("capture uncommitted changes: %w", err)
			}
			baseTree, err := revTree(ctx, g, base)
			if err != nil {
				return nil, err
			}
			if tree != baseTree { // not only changes git cannot carry (inside submodules)
				msg := "WIP: uncommitted changes brought into the task\n\nCaptured by jlgcli (--include-dirty) from the working tree for task " + id + ".\n"
				c, err := commitTree(ctx, g, tree, msg, true, base)
				if err != nil {
					return nil, fmt.Errorf("commit uncommitted changes: %w", err)
				}
				w.Base, w.DirtyIncluded = c, true
			}
		}
	}
	return w, nil
}

// Create makes the worktree w plans (PlanWorktree): its branch at Base,
// checked out at Path with its git directory at GitDir, then
// refs/jlgcli/<id>/base, which keeps Base. That ref is written last:
// without it, Reopen knows that Create was cut short.
func (w *Worktree) Create(ctx context.Context) error {
	g := w.repo()
	if err := ignoreWorktrees(filepath.Dir(w.Path)); err != nil {
		return err
	}
	if _, _, err := g.run(ctx, call{args: []string{"worktree", "add", "--quiet", "-b", w.Branch, "--", w.Path, w.Base}}); err != nil {
		return fmt.Errorf("create worktree: %w", err)
	}
	err := w.checkLinked(ctx)
	if err == nil {
		_, _, err = g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: task base", w.baseRef(), w.Base, ""}})
	}
	if err != nil {
		// Undo: the worktree and the branch hold nothing yet.
		_, _ = w.removeDir(context.WithoutCancel(ctx))
		_, _, _ = g.run(context.WithoutCancel(ctx), call{args: []string{"branch", "-D", "--", w.Branch}})
		return err
	}
	return nil
}

// baseRef is the ref that keeps the task's base: refs/jlgcli/<id>/base.
func (w *Worktree) baseRef() string { return RefPrefix + w.ID + "/" + BaseName }

// refExists reports whether ref exists in g's repository.
func refExists(ctx context.Context, g runner, ref string) (bool, error) {
	_, code, err := g.run(ctx, call{args: []string{"rev-parse", "-q", "--verify", ref}, ok: []int{1}})
	return err == nil && code == 0, err
}

// Reopen makes w usable again, as Create left it: a worktree that is there
// is left as it is; after its directory was removed (Remove, or by hand)
// the task branch is checked out again at w.Path, and made again at Base
// when it is gone (Discard). When Create was cut short (a kill while git
// made the worktree: no base ref yet), what it left at w.Path is taken
// away first (no attempt can have run there; changes found are kept as the
// snapshot refs/jlgcli/<id>/final) and the worktree is made again.
func (w *Worktree) Reopen(ctx context.Context) error {
	g := w.repo()
	made, err := refExists(ctx, g, w.baseRef())
	if err != nil {
		return err
	}
	if !made {
		if err := w.clear(ctx); err != nil {
			return fmt.Errorf("take away the worktree %s whose creation was cut short: %w", w.Path, err)
		}
	} else if w.check(ctx) == nil {
		return nil
	}
	if _, err := os.Lstat(w.Path); err == nil {
		return fmt.Errorf("%w: %s exists but is not the worktree of %s", ErrNotWorktree, w.Path, w.Branch)
	}
	if _, _, err := g.run(ctx, call{args: []string{"worktree", "prune"}}); err != nil {
		return err
	}
	if err := ignoreWorktrees(filepath.Dir(w.Path)); err != nil {
		return err
	}
	add := []string{"worktree", "add", "--quiet", "--", w.Path, w.Branch}
	if ok, err := refExists(ctx, g, "refs/heads/"+w.Branch); err != nil {
		return err
	} else if !ok {
		add = []string{"worktree", "add", "--quiet", "-b", w.Branch, "--", w.Path, w.Base}
	}
	if _, _, err := g.run(ctx, call{args: add}); err != nil {
		return fmt.Errorf("reopen worktree: %w", err)
	}
	// Made again under the name it had (its directory's), or numbered by
	// git when that name is still taken.
	gitDir, err := worktreeGitDir(ctx, g, w.Path)
	if err != nil {
		return fmt.Errorf("reopen worktree: %w", err)
	}
	w.GitDir = gitDir
	if !made {
		if _, _, err := g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: task base", w.baseRef(), w.Base, ""}}); err != nil {
			return err
		}
	}
	return nil
}

// clear takes away what a cut Create left at w.Path: git's record of the
// worktree (unlocked first: git locks a worktree while it makes it) and
// its directory. A whole linked worktree is removed as Remove does.
func (w *Worktree) clear(ctx context.Context) error {
	if _, err := os.Lstat(w.Path); err != nil {
		return nil
	}
	g := w.repo()
	_, _, _ = g.run(ctx, call{args: []string{"worktree", "unlock", "--", w.Path}, ok: []int{128}})
	if w.checkLinked(ctx) == nil {
		return w.Remove(ctx)
	}
	if err := os.RemoveAll(w.Path); err != nil {
		return err
	}
	_, _, err := g.run(ctx, call{args: []string{"worktree", "prune"}})
	return err
}

// ignoreWorktrees makes dir and a .gitignore of "*" in it, which hides it
// (and itself) from git status in the enclosing working tree.
func ignoreWorktrees(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString("# jlgcli task worktrees: never part of the repository\n*\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// check verifies that w.Path is a linked worktree with w.Branch checked
// out, before anything that resets, commits or deletes files there.
func (w *Worktree) check(ctx context.Context) error {
	if err := w.checkLinked(ctx); err != nil {
		return err
	}
	b, err := currentBranch(ctx, w.tree(ctx))
	if err != nil {
		return err
	}
	if b != w.Branch {
		return fmt.Errorf("%w: %s has %q checked out, not %s", ErrNotWorktree, w.Path, b, w.Branch)
	}
	return nil
}

// checkLinked verifies that w.Path is the directory of a linked worktree
// of the repository, the one its git directory belongs to, as the
// repository records it (the gitdir file of GitDir, in the common
// directory), not as the worktree's own .git file says.
func (w *Worktree) checkLinked(ctx context.Context) error {
	if w.Path == "" || w.Branch == "" {
		return fmt.Errorf("%w: empty path or branch", ErrNotWorktree)
	}
	fi, err := os.Lstat(w.Path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotWorktree, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrNotWorktree, w.Path)
	}
	g := w.tree(ctx)
	if g.err != nil {
		return fmt.Errorf("%w: %v", ErrNotWorktree, g.err)
	}
	if filepath.Base(filepath.Dir(w.GitDir)) != "worktrees" {
		return fmt.Errorf("%w: %s is not the git directory of a linked worktree", ErrNotWorktree, w.GitDir)
	}
	want, err := filepath.EvalSymlinks(w.Path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotWorktree, err)
	}
	if at := recordedAt(w.GitDir); at != want {
		return fmt.Errorf("%w: the repository's worktree %s is at %q, not %s", ErrNotWorktree, w.GitDir, at, w.Path)
	}
	return nil
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// Dirty reports whether the worktree differs from its branch's last commit
// (untracked files that are not ignored included).
func (w *Worktree) Dirty(ctx context.Context) (bool, error) {
	return dirty(ctx, w.tree(ctx), true)
}

// Head returns the commit the task branch points to.
func (w *Worktree) Head(ctx context.Context) (string, error) {
	return revCommit(ctx, w.tree(ctx), "HEAD")
}

// Snapshot saves the worktree's whole state (tracked changes and untracked
// files that are not ignored) as a commit whose parent is the branch's
// current commit, stores it under refs/jlgcli/<id>/<name> (replacing a
// snapshot of that name), and returns it. The branch, HEAD, the index and
// the files are not touched. name is one ref component, e.g. the attempt
// number; "base" is reserved.
func (w *Worktree) Snapshot(ctx context.Context, name string) (string, error) {
	if err := checkName("snapshot name", name); err != nil {
		return "", err
	}
	if name == BaseName {
		return "", fmt.Errorf("snapshot name %q is reserved", name)
	}
	return w.snapshot(ctx, name)
}

func (w *Worktree) snapshot(ctx context.Context, name string) (string, error) {
	g := w.tree(ctx)
	tree, err := captureTree(ctx, g)
	if err != nil {
		return "", err
	}
	return w.save(ctx, g, name, tree)
}

// save stores tree, a state of the worktree, as the snapshot name: a commit
// whose parent is the branch's current commit (HEAD, which git resolves as
// it makes the commit), under refs/jlgcli/<id>/<name>.
func (w *Worktree) save(ctx context.Context, g runner, name, tree string) (string, error) {
	c, err := commitTree(ctx, g, tree, "jlgcli snapshot "+w.ID+"/"+name, false, "HEAD")
	if err != nil {
		return "", err
	}
	if _, _, err := g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: snapshot", w.SnapshotRef(name), c}}); err != nil {
		return "", err
	}
	return c, nil
}

// SnapshotRef is the ref of snapshot name: refs/jlgcli/<id>/<name>.
func (w *Worktree) SnapshotRef(name string) string { return RefPrefix + w.ID + "/" + name }

// Restore makes the worktree's files those of commit (a snapshot, or any
// commit): files are rewritten, files not in it are removed, ignored files
// are kept. The branch and HEAD do not move; the index is reset to HEAD, so
// the restored state shows as changes (untracked files as untracked).
func (w *Worktree) Restore(ctx context.Context, commit string) error {
	if err := w.check(ctx); err != nil {
		return err
	}
	g := w.tree(ctx)
	tree, err := revTree(ctx, g, commit)
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"read-tree", "--reset", "-u", tree},
		{"clean", "-f", "-f", "-d", "-q", "-e", "/.jlgcli/"},
		{"reset", "-q", "--no-recurse-submodules"},
	} {
		if _, _, err := g.run(ctx, call{args: args}); err != nil {
			return fmt.Errorf("restore %s: %w", commit, err)
		}
	}
	return nil
}

// ResetToBase moves the task branch back to Base and makes the worktree's
// files those of Base (untracked files removed, ignored files kept): the
// next attempt starts where the task started. Snapshots and the reflog keep
// what was there.
func (w *Worktree) ResetToBase(ctx context.Context) error {
	if err := w.check(ctx); err != nil {
		return err
	}
	g := w.tree(ctx)
	for _, args := range [][]string{
		{"reset", "-q", "--hard", "--no-recurse-submodules", w.Base},
		{"clean", "-f", "-f", "-d", "-q", "-e", "/.jlgcli/"},
	} {
		if _, _, err := g.run(ctx, call{args: args}); err != nil {
			return fmt.Errorf("reset to base: %w", err)
		}
	}
	return nil
}

// Commit commits everything in the worktree (tracked changes, untracked
// files that are not ignored) on the task branch with message, verbatim,
// and returns the new commit. When there is nothing to commit it returns
// "", false and no error. No commit hook runs.
func (w *Worktree) Commit(ctx context.Context, message string) (sha string, committed bool, err error) {
	if strings.TrimSpace(message) == "" {
		return "", false, errors.New("empty commit message")
	}
	if err := w.check(ctx); err != nil {
		return "", false, err
	}
	g := w.tree(ctx)
	head, err := revCommit(ctx, g, "HEAD")
	if err != nil {
		return "", false, err
	}
	if err := addAll(ctx, g, call{}); err != nil {
		return "", false, err
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil {
		return "", false, err
	}
	headTree, err := revTree(ctx, g, head)
	if err != nil {
		return "", false, err
	}
	if tree == headTree {
		return "", false, nil
	}
	c, err := commitTree(ctx, g, tree, message, true, head)
	if err != nil {
		return "", false, err
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	if _, _, err := g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: commit: " + subject, "refs/heads/" + w.Branch, c, head}}); err != nil {
		return "", false, err
	}
	return c, true, nil
}

// Remove deletes the worktree's directory (ignored files too) and its git
// directory, which is git's record of it (git worktree prune takes that
// record away when the git directory is not known); the branch and
// refs/jlgcli/<id>/ stay. When the worktree holds changes not on the
// branch, they are first saved as the snapshot refs/jlgcli/<id>/final, so
// that nothing is lost. Removing a worktree that is already gone only
// prunes. The worktree may have another branch checked out (an agent may
// switch); it must be a linked worktree.
func (w *Worktree) Remove(ctx context.Context) error {
	if _, err := os.Lstat(w.Path); err == nil {
		// Whatever branch an agent left checked out there.
		if err := w.checkLinked(ctx); err != nil {
			return err
		}
		d, err := w.Dirty(ctx)
		if err != nil {
			return err
		}
		if d {
			if _, err := w.snapshot(ctx, FinalName); err != nil {
				return fmt.Errorf("save the worktree before removing it: %w", err)
			}
		}
		if gone, err := w.removeDir(ctx); err != nil || gone {
			return err
		}
	}
	_, _, err := w.repo().run(ctx, call{args: []string{"worktree", "prune"}})
	return err
}

// removeDir deletes the worktree's directory and its git directory, as git
// worktree remove does, without git: git would read the worktree's .git
// file to check it, and refuse a worktree holding submodules. gone says
// that the repository's record of the worktree went with its git
// directory; when it did not, git worktree prune takes it away.
func (w *Worktree) removeDir(ctx context.Context) (gone bool, err error) {
	if err := os.RemoveAll(w.Path); err != nil {
		return false, fmt.Errorf("remove the worktree %s: %w", w.Path, err)
	}
	g := w.tree(ctx)
	if g.err != nil || filepath.Base(filepath.Dir(w.GitDir)) != "worktrees" {
		return false, nil
	}
	defer g.lockWorktrees()()
	if err := os.RemoveAll(w.GitDir); err != nil {
		return false, err
	}
	return true, nil
}

// Discard takes away everything of a task that made nothing: its worktree,
// its branch and its refs under refs/jlgcli/<id>/, and reports true. It
// keeps them all, and reports false, when there is something to keep: the
// branch has moved from Base, or the worktree holds changes. Reopen makes
// the worktree again from the plan, should the task go on.
func (w *Worktree) Discard(ctx context.Context) (bool, error) {
	g := w.repo()
	if _, err := os.Lstat(w.Path); err == nil {
		if err := w.checkLinked(ctx); err != nil {
			return false, err
		}
		if d, err := w.Dirty(ctx); err != nil || d {
			return false, err
		}
	}
	if ok, err := refExists(ctx, g, "refs/heads/"+w.Branch); err != nil {
		return false, err
	} else if ok {
		tip, err := revCommit(ctx, g, "refs/heads/"+w.Branch)
		if err != nil || tip != w.Base {
			return false, err
		}
	}
	if err := w.Remove(ctx); err != nil {
		return false, err
	}
	if _, _, err := g.run(ctx, call{args: []string{"branch", "-D", "--", w.Branch}, ok: []int{1}}); err != nil {
		return false, err
	}
	refs, err := g.line(ctx, "for-each-ref", "--format=%(refname)", RefPrefix+w.ID+"/")
	if err != nil {
		return false, err
	}
	var del strings.Builder
	for _, ref := range strings.Fields(refs) {
		fmt.Fprintf(&del, "delete %s\n", ref)
	}
	if del.Len() > 0 {
		if _, _, err := g.run(ctx, call{args: []string{"update-ref", "--stdin"}, stdin: strings.NewReader(del.String())}); err != nil {
			return false, err
		}
	}
	return true, nil
}
