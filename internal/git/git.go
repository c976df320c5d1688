// Package git is jlgcli's interface to git: the worktree and branch of a
// task, the measure of an attempt's change (diff text, hash, files), snapshots
// of a worktree kept under refs/jlgcli/, commits on the task branch, the
// squash merge into the base branch and the push of the task branch; and the
// files that decide what git executes in a repository (ControlPaths), which
// jlgcli checks after every agent call (SnapshotControl).
//
// Everything shells out to the git binary, each call its own process (run by
// proc.Run: no shell, its own process group, a timeout, stderr kept for the
// error), with LC_ALL=C, GIT_OPTIONAL_LOCKS=0 (so that a status never
// rewrites the user's index) and GIT_TERMINAL_PROMPT=0. Repository-selecting
// variables inherited from the environment (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, ...) are dropped, so that jlgcli started from a git hook
// still works on the repository it was pointed at.
//
// Git never finds the repository itself: an agent writes in a task's
// worktree (and in a loop's directory), and a `.git` file or directory there
// would choose which repository, configuration and hooks git uses. Every
// call names its git directory, common directory and working tree
// (--git-dir, GIT_COMMON_DIR, --work-tree), taken from jlgcli's own record:
// a Repo's, resolved once by Open from the user's checkout; a Worktree's,
// recorded when it is planned, before any agent runs, or derived from the
// repository's own list of its worktrees (never from the worktree's `.git`
// file); a Clone's, the one jlgcli made. Every call also runs with no hook
// of any kind (core.hooksPath=/dev/null: not post-checkout when a worktree
// is made, not post-merge on a fast-forward, not pre-push on a push),
// without fsmonitor (core.fsmonitor=false), without recursing into
// submodules or nested repositories (submodule.recurse=false,
// status.submoduleSummary=false, statuses that ignore submodules' contents,
// and submodules' entries taken out of the index before `git add` so that
// git never runs a status inside one, where the nested repository's own
// configuration would run its filters), without the ext:: transport
// (protocol.ext.allow=never), with diffs that run no external diff or
// textconv (--no-ext-diff --no-textconv), and without credential helpers,
// except for the calls that talk to a remote (push, fetch, clone,
// ls-remote), which keep the user's. These -c options reach the gits that
// git itself starts (GIT_CONFIG_PARAMETERS), where they win over the
// configuration of any repository those open.
//
// The user's working tree, index and git config are never changed, except by
// SquashMerge and Land (which update the checked-out base branch, as a merge
// does, and keep the record of the landing, jlgcli-landing.json, in the git
// directory so that a landing cut short is ended by the next one).
// States of a working tree are captured through a temporary index
// (GIT_INDEX_FILE) seeded from the real one: `git add -A` then `write-tree`
// give a tree holding the tracked changes and the untracked files that are
// not ignored.
//
// Commits are made with plumbing (commit-tree, update-ref): the message is
// kept verbatim, and commit.gpgSign is honoured except for snapshots. When
// the user has no identity configured (user.name, user.email, author.*,
// committer.*, the GIT_AUTHOR_*/GIT_COMMITTER_*/EMAIL variables), the commit
// gets the fallback identity jlgcli <jlgcli@localhost> through `-c` options;
// the git config itself is never written.
//
// Submodules are not initialised in task worktrees. Squash-merging after the
// base branch has moved needs git 2.38 (merge-tree --write-tree); everything
// else works with older versions.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// DefaultTimeout bounds each git call when no other timeout is set.
const DefaultTimeout = 5 * time.Minute

// Fallback identity for commits when the user has none configured.
const (
	FallbackName  = "jlgcli"
	FallbackEmail = "jlgcli@localhost"
)

// stderrLimit is how much of a git call's stderr is kept for its error.
const stderrLimit = 16 << 10

// Errors of the package, to be tested with errors.Is.
var (
	// ErrGitNotFound: the git executable is not in PATH.
	ErrGitNotFound = errors.New("git is not installed (not found in PATH)")
	// ErrNotRepository: the directory is not inside a git working tree.
	ErrNotRepository = errors.New("not a git repository")
	// ErrNoCommits: the repository has no commit yet (HEAD is unborn).
	ErrNoCommits = errors.New("the repository has no commit yet")
	// ErrNotCommit: a revision names no commit of the repository.
	ErrNotCommit = errors.New("not a commit")
	// ErrNothingToMerge: the task branch holds no change for the base branch.
	ErrNothingToMerge = errors.New("nothing to merge")
	// ErrPushRejected: the remote refused the push (e.g. not a fast-forward).
	ErrPushRejected = errors.New("push rejected by the remote")
	// ErrTransient: a git call that failed for a while only and may pass
	// when made again: a lock file that another git holds (index.lock, a
	// ref's lock), a ref moved meanwhile by another git, a remote that
	// cannot be reached or hung up, a timeout. A failure that says what is
	// wrong (a bad ref, a conflict, refused credentials, no repository) is
	// not one.
	ErrTransient = errors.New("transient git failure")
	// ErrNoRemote: no remote to push to could be chosen.
	ErrNoRemote = errors.New("no remote to push to")
	// ErrNotTaskBranch: an operation reserved to task branches (jlgcli/...)
	// was asked for another branch.
	ErrNotTaskBranch = errors.New("not a jlgcli task branch")
	// ErrNotWorktree: a Worktree's Path is not the linked worktree of its
	// branch (it was removed, or the value is wrong); destructive operations
	// refuse to run there.
	ErrNotWorktree = errors.New("not the task's worktree")
)

// Error is a git call that failed: it names the command, the directory, the
// exit status and what git printed on stderr.
type Error struct {
	Args     []string // git's arguments (without the -c options jlgcli adds)
	Dir      string
	ExitCode int
	Stderr   string
	TimedOut bool // the call's timeout ended it
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "git %s", strings.Join(e.Args, " "))
	switch {
	case e.TimedOut:
		b.WriteString(": timed out")
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	default:
		fmt.Fprintf(&b, ": exit status %d", e.ExitCode)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		b.WriteString(": ")
		b.WriteString(s)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is classifies e by what git printed: ErrPushRejected for a push the
// remote refused, ErrTransient for a failure that may pass when made
// again. It is the one classification of git's failures.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrPushRejected:
		return e.Err == nil && (containsAny(e.Stderr, "[rejected]", "non-fast-forward", "fetch first") || remoteRefMoved(e.Stderr))
	case ErrTransient:
		if e.TimedOut {
			return true
		}
		if containsAny(e.Stderr, finalFailures...) || remoteRefMoved(e.Stderr) {
			return false
		}
		return containsAny(e.Stderr, transientFailures...) ||
			strings.Contains(e.Stderr, "cannot lock ref") && containsAny(e.Stderr, "File exists", "but expected")
	}
	return false
}

// remoteRefMoved tells a push the remote refused because the ref moved
// between the push's check and its update (another push landed meanwhile:
// "cannot lock ref 'refs/heads/x': is at A but expected B", "[remote
// rejected] (failed to update ref)"): refused as a push that is not a
// fast-forward or has lost its lease is, never better when made again.
func remoteRefMoved(stderr string) bool {
	return strings.Contains(stderr, "[remote rejected]") && strings.Contains(stderr, "but expected")
}

// transientFailures are what git prints for a failure that may pass when
// made again: a lock file held (index.lock, config, packed-refs or a ref's
// lock), a remote that cannot be reached or answered badly for a while.
var transientFailures = []string{
	".lock': File exists", "could not lock config file",
	"Connection refused", "Couldn't connect to server", "Could not connect to server", "Failed to connect to",
	"Could not resolve host", "Could not resolve hostname", "Temporary failure in name resolution",
	"the remote end hung up unexpectedly", "early EOF", "Connection reset by peer", "Connection timed out",
	"Operation timed out", "RPC failed", "The requested URL returned error: 5", "index-pack failed",
}

// finalFailures are what git prints for a failure that another try would
// meet again, even when it also prints one of transientFailures (an ssh
// remote that refuses the key hangs up).
var finalFailures = []string{
	"Permission denied", "Authentication failed", "could not read Username", "could not read Password",
	"Repository not found", "does not appear to be a git repository", "The requested URL returned error: 4",
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// droppedEnv are the variables that select another repository, index or
// work tree than the one a call names (git rev-parse --local-env-vars).
var droppedEnv = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_COMMON_DIR": true, "GIT_PREFIX": true, "GIT_IMPLICIT_WORK_TREE": true,
	"GIT_GRAFT_FILE": true, "GIT_SHALLOW_FILE": true, "GIT_NAMESPACE": true,
	"GIT_INTERNAL_SUPER_PREFIX": true, "GIT_NO_REPLACE_OBJECTS": true,
	"GIT_REPLACE_REF_BASE": true, "GIT_CEILING_DIRECTORIES": true,
	"LC_ALL": true, "GIT_OPTIONAL_LOCKS": true, "GIT_TERMINAL_PROMPT": true,
}

// call is one git invocation.
type call struct {
	args   []string
	config []string  // extra -c options (key=value)
	env    []string  // extra environment entries
	stdin  io.Reader // nil: /dev/null
	stdout io.Writer // nil: captured and returned
	// ok lists exit codes other than 0 that are not failures (their code
	// is returned with a nil error).
	ok []int
	// remote: the call talks to a remote (push, fetch, clone, ls-remote)
	// and keeps the user's credential helpers.
	remote bool
}

// pin is where a git call works, from jlgcli's own record: the git
// directory, the common directory (the same for a main working tree) and
// the working tree (the call's working directory too).
type pin struct{ gitDir, commonDir, workTree string }

// runner runs git with a timeout per call, pinned to one repository and
// working tree. A runner without a git directory runs only what opens no
// repository (clone, with an explicit cwd) or what finds one for Open.
type runner struct {
	timeout time.Duration
	pin
	// find lets git find the repository from cwd: Open's call only, in the
	// user's checkout, before any agent ran.
	find bool
	cwd  string
	// err, when set, is why no repository could be pinned: every call
	// fails with it.
	err error
	// scratch, when set, is where the objects git writes go (the
	// repository's own are read through it): a measurement that leaves
	// no trace (Worktree.Peek).
	scratch string
}

// safety are the -c options of every call: no hook of any kind, no
// fsmonitor, no recursion into submodules, no ext:: transport. They reach
// the gits that git starts through GIT_CONFIG_PARAMETERS, above any
// repository's own configuration.
var safety = []string{
	"core.quotepath=off",
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"submodule.recurse=false",
	"status.submoduleSummary=false",
	"protocol.ext.allow=never",
}

// noCredentials empties the list of credential helpers, for the calls that
// do not talk to a remote.
const noCredentials = "credential.helper="

func (g runner) environ(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if droppedEnv[k] {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	if g.commonDir != "" {
		env = append(env, "GIT_COMMON_DIR="+g.commonDir)
	}
	if g.scratch != "" && g.commonDir != "" {
		env = append(env, "GIT_OBJECT_DIRECTORY="+g.scratch, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(g.commonDir, "objects"))
	}
	return append(env, extra...)
}

// argv is the command line of c: git, the pinned repository, the safety
// options, c's own options and arguments.
func (g runner) argv(c call) []string {
	argv := []string{"git"}
	if g.gitDir != "" {
		argv = append(argv, "--git-dir="+g.gitDir, "--work-tree="+g.workTree)
	}
	for _, kv := range safety {
		argv = append(argv, "-c", kv)
	}
	if !c.remote {
		argv = append(argv, "-c", noCredentials)
	}
	for _, kv := range c.config {
		argv = append(argv, "-c", kv)
	}
	return append(argv, c.args...)
}

// dir is where g's calls run.
func (g runner) dir() string {
	if g.cwd != "" {
		return g.cwd
	}
	return g.workTree
}

// worktreeLocks serializes the git worktree commands of one repository
// (by common directory) in this process: git worktree add, remove and
// prune read and write the list of worktrees without a lock of their own,
// and a batch's tasks make and remove their worktrees at the same time.
var worktreeLocks sync.Map // string → *sync.Mutex

// lockWorktrees takes the lock of the worktree commands of g's repository.
func (g runner) lockWorktrees() func() {
	m, _ := worktreeLocks.LoadOrStore(filepath.Clean(g.commonDir), &sync.Mutex{})
	m.(*sync.Mutex).Lock()
	return m.(*sync.Mutex).Unlock
}

// uninterruptible are the git commands that write one ref, the index or
// objects: short, and stopped in their middle they leave a lock file
// (refs/…/NAME.lock, index.lock) that makes every later write of it fail,
// the run's resume included. Ctrl-C lets them end (their timeout still
// holds); the caller sees its context done right after.
var uninterruptible = map[string]bool{"update-ref": true, "commit-tree": true, "write-tree": true, "read-tree": true,
	"mktree": true, "hash-object": true, "reset": true, "update-index": true}

// run runs c and returns its stdout (when c.stdout is nil) and exit code.
func (g runner) run(ctx context.Context, c call) (string, int, error) {
	dir := g.dir()
	if g.err != nil {
		return "", -1, &Error{Args: c.args, Dir: dir, ExitCode: -1, Err: g.err}
	}
	if g.gitDir == "" && !g.find && (len(c.args) == 0 || c.args[0] != "clone") {
		return "", -1, &Error{Args: c.args, Dir: dir, ExitCode: -1, Err: errors.New("no repository pinned for this git call")}
	}
	if len(c.args) > 0 && c.args[0] == "worktree" {
		defer g.lockWorktrees()()
	}
	landCall(ctx, c)
	if len(c.args) > 0 && uninterruptible[c.args[0]] {
		ctx = context.WithoutCancel(ctx)
	}
	timeout := g.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return "", -1, &Error{Args: c.args, Dir: dir, ExitCode: -1, TimedOut: err == context.DeadlineExceeded, Err: err}
	}

	var out bytes.Buffer
	stdout := c.stdout
	if stdout == nil {
		stdout = &out
	}
	stderr := proc.NewTail(stderrLimit)
	res, err := proc.Run(ctx, proc.Cmd{
		Argv:   g.argv(c),
		Dir:    dir,
		Env:    g.environ(c.env),
		Stdin:  c.stdin,
		Stdout: stdout,
		Stderr: stderr,
		Grace:  time.Second,
	})
	gerr := &Error{Args: c.args, Dir: dir, Stderr: stderr.String()}
	if err != nil {
		if errors.Is(err, proc.ErrNotFound) {
			err = ErrGitNotFound
		}
		gerr.Err = err
		return "", -1, gerr
	}
	gerr.ExitCode = res.ExitCode
	if res.Stopped {
		if ctx.Err() == context.DeadlineExceeded {
			gerr.TimedOut = true
			gerr.Err = context.DeadlineExceeded
		} else {
			gerr.Err = ctx.Err()
		}
		return out.String(), res.ExitCode, gerr
	}
	if res.ExitCode != 0 {
		for _, code := range c.ok {
			if code == res.ExitCode {
				return out.String(), res.ExitCode, nil
			}
		}
		return out.String(), res.ExitCode, gerr
	}
	return out.String(), 0, nil
}

// line runs args and returns its stdout without the trailing newline.
func (g runner) line(ctx context.Context, args ...string) (string, error) {
	out, _, err := g.run(ctx, call{args: args})
	return strings.TrimRight(out, "\n"), err
}

// Repo is a git working tree: the user's, where tasks start from and are
// merged back into.
type Repo struct {
	// Dir is the top level of the working tree (git rev-parse
	// --show-toplevel: absolute, symlinks resolved).
	Dir string
	// Timeout bounds each git call; zero means DefaultTimeout.
	Timeout time.Duration
	// gitDir and commonDir are Dir's git directory and common directory,
	// resolved by Open.
	gitDir, commonDir string
}

// git is the runner of r's calls: pinned to the git directories Open
// resolved; a Repo made without Open (a literal) resolves them from Dir at
// each call.
func (r *Repo) git() runner {
	if r.gitDir != "" {
		return runner{timeout: r.Timeout, pin: pin{r.gitDir, r.commonDir, r.Dir}}
	}
	o, err := locate(context.Background(), r.Dir)
	if err == nil && o.Dir != filepath.Clean(r.Dir) {
		err = fmt.Errorf("%s is not the top of a working tree (%s is)", r.Dir, o.Dir)
	}
	if err != nil {
		return runner{timeout: r.Timeout, cwd: r.Dir, err: err}
	}
	return runner{timeout: r.Timeout, pin: pin{o.gitDir, o.commonDir, r.Dir}}
}

// GitDir is the repository's git directory (a linked worktree's own, under
// the common directory's worktrees/), as Open resolved it.
func (r *Repo) GitDir() string { return r.git().gitDir }

// CommonDir is the repository's common directory: its config, hooks, refs
// and objects (the git directory of its main working tree).
func (r *Repo) CommonDir() string { return r.git().commonDir }

// Open returns the repository whose working tree holds dir, with its git
// directory and common directory resolved once, here: every later call
// names them. The error wraps ErrNotRepository when dir is not in a working
// tree (a bare repository has none), ErrGitNotFound when git is missing.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", abs)
	}
	return locate(ctx, abs)
}

// locate finds the repository of the directory abs: the one call where git
// finds a repository itself, in the user's checkout.
func locate(ctx context.Context, abs string) (*Repo, error) {
	g := runner{find: true, cwd: abs}
	out, err := g.line(ctx, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.Err == nil {
			return nil, fmt.Errorf("%s: %w (%s)", abs, ErrNotRepository, strings.TrimSpace(gerr.Stderr))
		}
		return nil, err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[0] == "" || lines[0] == "--show-toplevel" {
		return nil, fmt.Errorf("%s: %w (no working tree)", abs, ErrNotRepository)
	}
	common := lines[2]
	if !filepath.IsAbs(common) {
		common = filepath.Join(abs, common)
	}
	return &Repo{Dir: lines[0], gitDir: lines[1], commonDir: filepath.Clean(common)}, nil
}

// Head returns the commit HEAD points to; the error wraps ErrNoCommits when
// the repository has none.
func (r *Repo) Head(ctx context.Context) (string, error) {
	return revCommit(ctx, r.git(), "HEAD")
}

// CurrentBranch returns the short name of the branch checked out in the
// working tree ("main"), or "" when HEAD is detached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	return currentBranch(ctx, r.git())
}

// Dirty reports whether the working tree has changes that are not
// committed: staged or unstaged changes of tracked files, or untracked files
// that are not ignored. A task started from such a tree starts from HEAD
// without them unless they are included (NewWorktree's includeDirty).
func (r *Repo) Dirty(ctx context.Context) (bool, error) {
	return dirty(ctx, r.git(), true)
}

// Changed reports whether tracked files have changes, staged or not;
// untracked files do not count. A merge into the checked-out branch refuses
// such a tree (SquashMerge, FastForward); an untracked file only stops it
// when the merge would write at its path.
func (r *Repo) Changed(ctx context.Context) (bool, error) {
	return dirty(ctx, r.git(), false)
}

func currentBranch(ctx context.Context, g runner) (string, error) {
	out, code, err := g.run(ctx, call{args: []string{"symbolic-ref", "-q", "HEAD"}, ok: []int{1}})
	if err != nil {
		return "", err
	}
	if code == 1 {
		return "", nil
	}
	return strings.TrimPrefix(strings.TrimSpace(out), "refs/heads/"), nil
}

// dirty reports whether `git status` lists anything in g's working tree
// (untracked files count when untracked is set). A submodule counts when
// its commit changed, not for what its own working tree holds: git would
// run a status inside it, with its own configuration.
func dirty(ctx context.Context, g runner, untracked bool) (bool, error) {
	u := "--untracked-files=no"
	if untracked {
		u = "--untracked-files=normal"
	}
	out, _, err := g.run(ctx, call{args: []string{"status", "--porcelain", "-z", u, "--ignore-submodules=dirty", "--", ".", notState}})
	if err != nil {
		return false, err
	}
	return out != "", nil
}

// revCommit resolves rev to a commit id.
func revCommit(ctx context.Context, g runner, rev string) (string, error) {
	out, code, err := g.run(ctx, call{args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"}, ok: []int{1}})
	if err != nil {
		return "", err
	}
	if code == 1 || strings.TrimSpace(out) == "" {
		if rev == "HEAD" {
			return "", ErrNoCommits
		}
		return "", fmt.Errorf("%q: %w", rev, ErrNotCommit)
	}
	return strings.TrimSpace(out), nil
}

// ResolveCommit is the commit rev names; ErrNotCommit when it names none.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (string, error) {
	return revCommit(ctx, r.git(), rev)
}

// revTree resolves rev to a tree id. The tree of an object id is asked of
// git once (trees).
func revTree(ctx context.Context, g runner, rev string) (string, error) {
	if tree, ok := trees.get(g, rev); ok {
		return tree, nil
	}
	out, code, err := g.run(ctx, call{args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{tree}"}, ok: []int{1}})
	if err != nil {
		return "", err
	}
	if code == 1 || strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("%q: not a commit or tree", rev)
	}
	tree := strings.TrimSpace(out)
	trees.put(g, rev, tree)
	return tree, nil
}

// trees is the tree of each commit (and tree) id that jlgcli made or asked
// git about, by repository: an object's id names its content, which never
// changes, so the tree of a commit id is asked of git once, and never for a
// commit jlgcli made itself. Names that can move (HEAD, branches) are
// always asked.
var trees = treeCache{m: map[string]string{}}

// maxTrees bounds the cache of a long-lived process (a worker, the board):
// it starts again empty when full.
const maxTrees = 4096

type treeCache struct {
	sync.Mutex
	m map[string]string
}

// key is the key of object id in g's repository; "" when id is not a whole
// object id or g is pinned to no repository.
func (c *treeCache) key(g runner, id string) string {
	if g.commonDir == "" || g.scratch != "" || !isObjectID(id) { // a scratch store's objects are gone after
		return ""
	}
	return g.commonDir + "\x00" + id
}

func (c *treeCache) get(g runner, id string) (string, bool) {
	k := c.key(g, id)
	if k == "" {
		return "", false
	}
	c.Lock()
	defer c.Unlock()
	tree, ok := c.m[k]
	return tree, ok
}

// put notes that id (a commit or a tree) has tree tree.
func (c *treeCache) put(g runner, id, tree string) {
	k := c.key(g, id)
	if k == "" || !isObjectID(tree) {
		return
	}
	c.Lock()
	defer c.Unlock()
	if len(c.m) >= maxTrees {
		clear(c.m)
	}
	c.m[k] = tree
}

// isObjectID tells whether s is a whole object id: 40 (SHA-1) or 64
// (SHA-256) lower-case hexadecimal digits, as git prints them.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// identity returns the -c options that give a commit the fallback identity
// for the parts (name, email) the user has not configured.
func identity(ctx context.Context, g runner) ([]string, error) {
	out, _, err := g.run(ctx, call{args: []string{"config", "--get-regexp", `^(user|author|committer)\.(name|email)$`}, ok: []int{1}})
	if err != nil {
		return nil, err
	}
	conf := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(l, " ")
		if strings.TrimSpace(v) != "" {
			conf[strings.ToLower(k)] = true
		}
	}
	env := func(k string) bool { return os.Getenv(k) != "" }
	// Each of the four fields is resolved by git as GIT_<ROLE>_<FIELD>,
	// then <role>.<field>, then user.<field> (then EMAIL for the emails),
	// then a guess from the system, which often fails or is wrong. The -c
	// user.<field> fallback only fills the fields resolved by none of them.
	has := func(role, field string) bool {
		return env("GIT_"+strings.ToUpper(role)+"_"+strings.ToUpper(field)) ||
			conf[role+"."+field] || conf["user."+field] || field == "email" && env("EMAIL")
	}
	name := has("author", "name") && has("committer", "name")
	email := has("author", "email") && has("committer", "email")
	var c []string
	if !name {
		c = append(c, "user.name="+FallbackName)
	}
	if !email {
		c = append(c, "user.email="+FallbackEmail)
	}
	return c, nil
}

// commitTree makes a commit of tree with parents and message, with the
// fallback identity where needed. sign=false passes --no-gpg-sign; true
// leaves commit.gpgSign to the user's config.
func commitTree(ctx context.Context, g runner, tree, message string, sign bool, parents ...string) (string, error) {
	id, err := identity(ctx, g)
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree"}
	if !sign {
		args = append(args, "--no-gpg-sign")
	}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	args = append(args, "-F", "-", tree)
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	out, _, err := g.run(ctx, call{args: args, config: id, stdin: strings.NewReader(message)})
	if err != nil {
		return "", err
	}
	c := strings.TrimSpace(out)
	trees.put(g, c, tree)
	return c, nil
}

// notState is a pathspec that leaves out jlgcli's own state directory at
// the top of a working tree (runs, worktrees): it is never a change of the
// user's or of a task's, even where no ignore rule hides it yet.
const notState = ":(top,exclude).jlgcli"

// addAll stages everything in g's working tree but jlgcli's own state
// directory, in the index c names (its environment: the real index, or a
// temporary one). git add refuses a pathspec, even an excluding one, that
// names an ignored path: once .jlgcli is ignored (the store adds it to
// .git/info/exclude; users add it to .gitignore), it is left out without
// being named.
//
// git add runs a `git status` inside every checked-out submodule it has in
// the index (to see whether its files changed), and that git reads the
// nested repository's own configuration, which an agent writes: its filter
// drivers would run. So the index's submodules whose directory holds a
// repository are taken out of it first; git add puts them back as it adds
// any nested repository, at the commit their HEAD names, without running
// anything inside them.
func addAll(ctx context.Context, g runner, c call) error {
	_, code, err := g.run(ctx, call{args: []string{"check-ignore", "-q", "--no-index", "--", ".jlgcli"}, ok: []int{1}})
	if err != nil {
		return err
	}
	out, _, err := g.run(ctx, call{args: []string{"ls-files", "-s", "-z"}, env: c.env, config: c.config})
	if err != nil {
		return err
	}
	var nested strings.Builder
	for _, e := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(g.workTree, filepath.FromSlash(p), ".git")); err == nil {
			nested.WriteString(p)
			nested.WriteByte(0)
		}
	}
	if nested.Len() > 0 {
		rm := c
		rm.args, rm.stdin = []string{"update-index", "--force-remove", "-z", "--stdin"}, strings.NewReader(nested.String())
		if _, _, err := g.run(ctx, rm); err != nil {
			return err
		}
	}
	add := c
	add.config = append(slices.Clip(c.config), "advice.addEmbeddedRepo=false")
	add.args = []string{"add", "-A", "--", "."}
	if code != 0 {
		add.args = append(add.args, notState)
	}
	_, _, err = g.run(ctx, add)
	return err
}

// captureTree writes the state of g's working tree (tracked changes and
// untracked files that are not ignored) as a tree and returns its id. It
// uses a temporary index seeded with a copy of the working tree's index
// (for its stat cache and its skip-worktree bits): the real index is only
// read. The .jlgcli directory at the top is left out.
func captureTree(ctx context.Context, g runner) (string, error) {
	tmp, err := os.MkdirTemp("", "jlgcli-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tmpIndex := filepath.Join(tmp, "index")
	if err := copyFile(filepath.Join(g.gitDir, "index"), tmpIndex); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	c := call{env: []string{"GIT_INDEX_FILE=" + tmpIndex}, config: []string{"core.splitIndex=false"}}
	if err := addAll(ctx, g, c); err != nil {
		return "", err
	}
	c.args = []string{"write-tree"}
	out, _, err := g.run(ctx, c)
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(out)
	trees.put(g, tree, tree)
	return tree, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	// The copy keeps the time of the index: git trusts an entry's cached
	// stat only when the file is older than the index that cached it
	// (racy git), and a copy made now would make a file written since the
	// index look unchanged.
	if fi, err := in.Stat(); err == nil {
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
