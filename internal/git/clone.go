package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Clone is a worker's own clone of a remote repository, kept in its state
// directory and reused from task to task. Tasks run in linked worktrees of
// it (WorktreesDir), on task branches that go back and forth through the
// remote: a clone is only a cache, the remote holds the work.
type Clone struct {
	// Dir is the clone's top level; URL the remote it was made from,
	// "origin".
	Dir string
	URL string
	// Timeout bounds each git call; zero means DefaultTimeout.
	Timeout time.Duration
}

// git is the runner of the clone's calls, pinned to the git directory
// jlgcli made in it (Dir/.git).
func (c *Clone) git() runner {
	gitDir := filepath.Join(c.Dir, ".git")
	return runner{timeout: c.Timeout, pin: pin{gitDir, gitDir, c.Dir}}
}

// OpenClone opens the clone of url in dir, making it when dir does not
// exist (a clone without a checkout: its own working tree is never used).
// A failure carries git's message. Its git directory is dir/.git, which
// must be a directory.
func OpenClone(ctx context.Context, dir, url string) (*Clone, error) {
	c := &Clone{Dir: dir, URL: url}
	g := c.git()
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		tmp := dir + ".new"
		_ = os.RemoveAll(tmp)
		clone := runner{timeout: c.Timeout, cwd: filepath.Dir(dir)}
		if _, _, err := clone.run(ctx, call{args: []string{"clone", "--quiet", "--no-checkout", "--", url, tmp}, remote: true}); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("clone %s: %w", url, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
		return c, nil
	} else if err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: the clone's .git is not a directory", dir)
	}
	if _, _, err := g.run(ctx, call{args: []string{"remote", "set-url", "origin", url}}); err != nil {
		return nil, err
	}
	return c, nil
}

// Fetch fetches refspecs from the remote; a failure carries git's message.
func (c *Clone) Fetch(ctx context.Context, refspecs ...string) error {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin"}, refspecs...)
	if _, _, err := c.git().run(ctx, call{args: args, remote: true}); err != nil {
		return fmt.Errorf("fetch from %s: %w", c.URL, err)
	}
	return nil
}

// Push pushes refspecs to the remote in one atomic push: all of them land
// or none does.
func (c *Clone) Push(ctx context.Context, refspecs ...string) error {
	args := append([]string{"push", "--quiet", "--atomic", "origin"}, refspecs...)
	_, _, err := c.git().run(ctx, call{args: args, remote: true})
	return pushError("push to "+c.URL, err)
}

// RemoteRef is the commit ref points to on the remote; false when the
// remote has no such ref.
func (c *Clone) RemoteRef(ctx context.Context, ref string) (string, bool, error) {
	out, _, err := c.git().run(ctx, call{args: []string{"ls-remote", "--", "origin", ref}, remote: true})
	if err != nil {
		return "", false, fmt.Errorf("ls-remote %s: %w", c.URL, err)
	}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if ok && name == ref {
			return sha, true, nil
		}
	}
	return "", false, nil
}

// Rev is the commit rev names in the clone.
func (c *Clone) Rev(ctx context.Context, rev string) (string, error) {
	return revCommit(ctx, c.git(), rev)
}

// UpdateRef points ref at commit in the clone.
func (c *Clone) UpdateRef(ctx context.Context, ref, commit string) error {
	_, _, err := c.git().run(ctx, call{args: []string{"update-ref", "-m", "jlgcli", ref, commit}})
	return err
}

// Checkout makes the worktree of task id in the clone, on branch (made or
// moved to at), measuring changes against base; a worktree left there by a
// task before (a worker killed) is removed first, whatever it held: the
// remote has what counts.
func (c *Clone) Checkout(ctx context.Context, id, branch, at, base string) (*Worktree, error) {
	if err := checkName("task id", id); err != nil {
		return nil, err
	}
	g := c.git()
	w := &Worktree{ID: id, RepoDir: c.Dir, Path: filepath.Join(c.Dir, filepath.FromSlash(WorktreesDir), id), Branch: branch,
		Base: base, Timeout: c.Timeout}
	if _, err := os.Lstat(w.Path); err == nil {
		// Removed by hand: git would read the .git file a task left there.
		if err := os.RemoveAll(w.Path); err != nil {
			return nil, err
		}
	}
	if _, _, err := g.run(ctx, call{args: []string{"worktree", "prune"}}); err != nil {
		return nil, err
	}
	if err := ignoreWorktrees(filepath.Dir(w.Path)); err != nil {
		return nil, err
	}
	if _, _, err := g.run(ctx, call{args: []string{"worktree", "add", "--quiet", "--force", "-B", branch, "--", w.Path, at}}); err != nil {
		return nil, fmt.Errorf("check out %s: %w", branch, err)
	}
	gitDir, err := worktreeGitDir(ctx, g, w.Path)
	if err != nil {
		return nil, fmt.Errorf("check out %s: %w", branch, err)
	}
	w.GitDir = gitDir
	return w, nil
}

// CommitTree makes a commit of the tree of rev with parents and message,
// signed as the user's commits are.
func (c *Clone) CommitTree(ctx context.Context, rev, message string, parents ...string) (string, error) {
	g := c.git()
	tree, err := revTree(ctx, g, rev)
	if err != nil {
		return "", err
	}
	return commitTree(ctx, g, tree, message, true, parents...)
}

// WriteFile makes a commit holding one file, name, with data, and no
// parent: how a worker leaves a record on the remote under a ref.
func (c *Clone) WriteFile(ctx context.Context, name string, data []byte, message string) (string, error) {
	g := c.git()
	blob, _, err := g.run(ctx, call{args: []string{"hash-object", "-w", "--stdin"}, stdin: strings.NewReader(string(data))})
	if err != nil {
		return "", err
	}
	entry := fmt.Sprintf("100644 blob %s\t%s\n", strings.TrimSpace(blob), name)
	tree, _, err := g.run(ctx, call{args: []string{"mktree"}, stdin: strings.NewReader(entry)})
	if err != nil {
		return "", err
	}
	return commitTree(ctx, g, strings.TrimSpace(tree), message, false)
}

// ReadFile is the content of name in the tree of rev.
func (c *Clone) ReadFile(ctx context.Context, rev, name string) ([]byte, error) {
	out, _, err := c.git().run(ctx, call{args: []string{"cat-file", "blob", rev + ":" + name}})
	return []byte(out), err
}

// MergeTree merges theirs into ours without a working tree (git
// merge-tree --write-tree, their merge base found by git) and returns the
// merged tree, or the conflicting files.
func (c *Clone) MergeTree(ctx context.Context, ours, theirs string) (tree string, conflicts []string, err error) {
	tree, conflicts, err = mergeTree(ctx, c.git(), ours, theirs)
	if len(conflicts) > 0 {
		tree = ""
	}
	return tree, conflicts, err
}

// mergeTree merges theirs into ours without a working tree (git
// merge-tree --write-tree) and returns the merged tree and the files that
// conflict: with conflicts, the tree holds them with their markers.
func mergeTree(ctx context.Context, g runner, ours, theirs string) (tree string, conflicts []string, err error) {
	out, code, err := g.run(ctx, call{args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs}, ok: []int{1}})
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code == 1 {
		return lines[0], lines[1:], nil
	}
	return lines[0], nil, nil
}

// CommitOfTree makes a commit of tree with parents and message.
func (c *Clone) CommitOfTree(ctx context.Context, tree, message string, parents ...string) (string, error) {
	return commitTree(ctx, c.git(), tree, message, true, parents...)
}

// Message is the message of commit.
func (c *Clone) Message(ctx context.Context, commit string) (string, error) {
	return c.git().line(ctx, "log", "-1", "--no-ext-diff", "--no-textconv", "--format=%B", commit)
}
