package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// CommitMode is where a task's commits go.
type CommitMode string

// The commit modes.
const (
	// CommitBranch commits the work on a task branch, merged on success.
	CommitBranch CommitMode = "branch"
	// CommitDirect lands the task branch's commits on the current branch
	// by fast-forward.
	CommitDirect CommitMode = "direct"
)

// CommitModes are the values of CommitMode.
var CommitModes = []CommitMode{CommitBranch, CommitDirect}

// MergeMode is what becomes of a task branch whose task is done.
type MergeMode string

// The merge modes.
const (
	// MergeSquash squash-merges it into its base branch as one commit.
	MergeSquash MergeMode = "squash"
	// MergeNone leaves it as it is, with the command that merges it.
	MergeNone MergeMode = "none"
	// MergePush, for a task run by Temporal workers: the base branch on the
	// remote is fast-forwarded to the task's squash commit, never forced.
	MergePush MergeMode = "push"
)

// MergeModes are the values of MergeMode.
var MergeModes = []MergeMode{MergeSquash, MergeNone, MergePush}

// MergeStatus is what became of a task branch at the end of its task: the
// one set of these values that every writer and reader of them uses.
type MergeStatus string

// The merge statuses.
const (
	// MergeMerged: squash-merged into the base branch as one commit.
	MergeMerged MergeStatus = "merged"
	// MergeFastForwarded: the base branch was moved to the task branch
	// (--commit direct).
	MergeFastForwarded MergeStatus = "fast-forwarded"
	// MergeSkipped: not merged because the user said so (--merge none).
	MergeSkipped MergeStatus = "skipped"
	// MergeNothing: the branch holds nothing new for the base branch.
	MergeNothing MergeStatus = "nothing"
	// MergeRefused: not merged; the reason says why, and the command merges
	// it by hand when there is one.
	MergeRefused MergeStatus = "refused"
)

// Landed reports whether the task's commits are in the base branch now
// (merged or fast-forwarded).
func (s MergeStatus) Landed() bool { return s == MergeMerged || s == MergeFastForwarded }

// MergeRefusal says why SquashMerge would not merge.
type MergeRefusal string

// The reasons SquashMerge refuses to merge.
const (
	// RefusedNoBaseBranch: the task has no base branch (it started from a
	// detached HEAD or a commit).
	RefusedNoBaseBranch MergeRefusal = "no-base-branch"
	// RefusedNotCheckedOut: the base branch is not the branch checked out
	// in the user's working tree.
	RefusedNotCheckedOut MergeRefusal = "not-checked-out"
	// RefusedDirty: the user's working tree or index has changes to
	// tracked files.
	RefusedDirty MergeRefusal = "dirty"
	// RefusedConflict: the base branch moved and its changes conflict with
	// the task's.
	RefusedConflict MergeRefusal = "conflict"
	// RefusedWouldOverwrite: files in the user's working tree (untracked
	// or ignored) would be overwritten.
	RefusedWouldOverwrite MergeRefusal = "would-overwrite"
	// RefusedBaseMoved: the base branch moved and this git cannot merge
	// without touching the working tree (git merge-tree --write-tree needs
	// git 2.38).
	RefusedBaseMoved MergeRefusal = "base-moved"
	// RefusedInterrupted: a landing in the user's working tree was cut
	// short (the process was killed) and the user changed the checkout
	// since, so that it could not be finished: what it had staged or
	// written was put back, the user's changes left as they are (settle).
	RefusedInterrupted MergeRefusal = "interrupted"
	// RefusedReview: the change adds, modifies or deletes files that decide
	// what runs on the user's machine (ReviewFiles): it is merged by the
	// user, after review, never by jlgcli.
	RefusedReview MergeRefusal = "review"
)

// MergeRefusedError is SquashMerge declining to merge, with why and the
// command the user can run at the top of the working tree to merge by hand.
type MergeRefusedError struct {
	Reason  MergeRefusal
	Branch  string // the task branch
	Into    string // the base branch ("" for RefusedNoBaseBranch)
	Detail  string // what was found, in words
	Command string // a shell command line that does the merge
}

func (e *MergeRefusedError) Error() string {
	into := e.Into
	if into == "" {
		into = "the base branch"
	}
	msg := fmt.Sprintf("cannot merge %s into %s: %s", e.Branch, into, e.Detail)
	if e.Command != "" {
		msg += "; to merge by hand: " + e.Command
	}
	return msg
}

// mergeCommand is the command line that squash-merges branch into into by
// hand (checking into out first when checkout is set).
func mergeCommand(into, branch, message string, checkout bool) string {
	cmd := "git merge --squash " + shellQuote(branch) + " && git commit -m " + shellQuote(message)
	if checkout && into != "" {
		cmd = "git switch " + shellQuote(into) + " && " + cmd
	}
	return cmd
}

// SquashMerge adds the changes of branch to the branch into as one new
// commit with message, and returns it; branch keeps its own commits. It
// merges only when into is checked out in the user's working tree (Dir) and
// that tree has no change to tracked files, or holds exactly the changes
// the task took in (included: see PrepareSquash); otherwise, and when the
// base has moved and conflicts, it returns a *MergeRefusedError with the
// command to merge by hand, and touches nothing. When branch holds nothing
// new for into, the error is ErrNothingToMerge.
//
// The commit is made first (from branch's tree, or from git merge-tree
// --write-tree when into has moved), then the working tree and index are
// brought to it the way a fast-forward does (files in the way are never
// overwritten), and into is moved to it (see Land). No commit hook runs.
func (r *Repo) SquashMerge(ctx context.Context, into, branch, message, included string) (string, error) {
	if strings.TrimSpace(message) == "" {
		return "", errors.New("empty commit message")
	}
	s, err := r.PrepareSquash(ctx, into, branch, true, included)
	if err != nil {
		return "", withCommand(err, mergeCommand(into, branch, message, false), mergeCommand(into, branch, message, true))
	}
	c, err := r.Land(ctx, s, message)
	return c, withCommand(err, mergeCommand(into, branch, message, false), mergeCommand(into, branch, message, true))
}

// withCommand gives a refusal the command that merges by hand: checkout
// when into must be checked out first, else plain.
func withCommand(err error, plain, checkout string) error {
	var refused *MergeRefusedError
	if errors.As(err, &refused) && refused.Reason != RefusedInterrupted {
		refused.Command = plain
		if refused.Reason == RefusedNotCheckedOut {
			refused.Command = checkout
		}
	}
	return err
}

// Squash is a branch's change laid on the head of the branch it merges
// into, not committed there yet: PrepareSquash makes it, Land commits it.
type Squash struct {
	Into, Branch string
	// Head is into's head when the squash was prepared; Tree is Head's tree
	// with the branch's change.
	Head, Tree string
	// Moved: into has moved since branch forked from it; Tree was merged
	// (git merge-tree), it is not the tree the branch's checks passed on.
	Moved bool
	// CheckedOut: into is checked out in the user's working tree, whose
	// files Land brings along.
	CheckedOut bool
	// From, when set, is the commit of the uncommitted changes the task
	// took in (its branch's first commit, on Head): the user's working
	// tree holds exactly its tree, and Land brings the tree from there.
	From string
	// Landed, when set, is the commit this branch landed at already (a
	// landing cut short and ended since, or one whose caller was stopped
	// before it heard of it): Land returns it and does nothing.
	Landed string
}

// PrepareSquash lays branch's change on into's head, touching nothing in
// the user's working tree. With checkedOut, into must be the branch checked
// out in the user's working tree; without, a branch that is not checked out
// is moved by Land alone. When into is checked out, the user's working tree
// must have no change to tracked files, unless included is the commit of
// the uncommitted changes the task took in (the branch's first commit, on
// into's head) and the tree holds exactly those (tracked changes and
// untracked files that are not ignored): Land then brings the tree from
// there. Refusals are *MergeRefusedError; ErrNothingToMerge when branch
// holds nothing new for into.
//
// A landing cut short in the user's working tree (see Land) is ended, or
// dropped, first; when it was this branch's, the Squash says where it
// landed (Landed).
func (r *Repo) PrepareSquash(ctx context.Context, into, branch string, checkedOut bool, included string) (*Squash, error) {
	ctx = inLanding(ctx)
	g := r.git()
	refuse := func(reason MergeRefusal, detail string) error {
		return &MergeRefusedError{Reason: reason, Branch: branch, Into: into, Detail: detail}
	}
	tip, err := revCommit(ctx, g, "refs/heads/"+branch)
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", branch, err)
	}
	if into == "" {
		return nil, refuse(RefusedNoBaseBranch, "the task did not start from a branch")
	}
	last, err := r.settleLanding(ctx)
	if err != nil {
		return nil, err
	}
	if last != nil && last.Done && last.Branch == branch && last.Into == into {
		if at, err := revCommit(ctx, g, "refs/heads/"+into); err == nil && (at == last.Commit || isAncestor(ctx, g, last.Commit, at)) {
			return &Squash{Into: into, Branch: branch, Head: last.Head, CheckedOut: last.CheckedOut, Landed: last.Commit}, nil
		}
	}
	cur, err := r.CurrentBranch(ctx)
	if err != nil {
		return nil, err
	}
	s := &Squash{Into: into, Branch: branch, CheckedOut: cur == into}
	if checkedOut && !s.CheckedOut {
		at := "a detached HEAD"
		if cur != "" {
			at = cur
		}
		return nil, refuse(RefusedNotCheckedOut, fmt.Sprintf("%s is not checked out in %s (%s is)", into, r.Dir, at))
	}
	if s.Head, err = revCommit(ctx, g, "refs/heads/"+into); err != nil {
		return nil, err
	}
	if s.CheckedOut {
		if s.From, err = r.includedHere(ctx, s.Head, included); err != nil {
			return nil, err
		}
		if d, err := dirty(ctx, g, false); err != nil {
			return nil, err
		} else if d && s.From == "" && included != "" {
			return nil, refuse(RefusedDirty, fmt.Sprintf("%s has uncommitted changes that are not the ones the task took in (commit %s): "+
				"your changes and the branch are kept; stash yours (git stash -u), merge by hand, then git stash pop", r.Dir, abbrev(included)))
		} else if d && s.From == "" {
			return nil, refuse(RefusedDirty, r.Dir+" has uncommitted changes: commit or stash them first")
		}
	}
	headTree, err := revTree(ctx, g, s.Head)
	if err != nil {
		return nil, err
	}
	if isAncestor(ctx, g, s.Head, tip) {
		if s.Tree, err = revTree(ctx, g, tip); err != nil {
			return nil, err
		}
	} else {
		s.Moved = true
		out, code, err := g.run(ctx, call{args: []string{"merge-tree", "--write-tree", "--no-messages", s.Head, tip}, ok: []int{1}})
		var gerr *Error
		switch {
		case errors.As(err, &gerr) && gerr.Err == nil && (gerr.ExitCode == 129 || strings.Contains(gerr.Stderr, "usage")):
			return nil, refuse(RefusedBaseMoved, into+" has moved since the task started and this git is too old to merge it aside (git 2.38 or later)")
		case err != nil:
			return nil, err
		case code == 1:
			detail := into + " has moved since the task started and conflicts with it"
			if files := conflicted(out); len(files) > 0 {
				detail += " in " + strings.Join(files, ", ")
			}
			return nil, refuse(RefusedConflict, detail)
		}
		s.Tree, _, _ = strings.Cut(strings.TrimSpace(out), "\n")
	}
	if s.Tree == headTree {
		return nil, fmt.Errorf("%s into %s: %w", branch, into, ErrNothingToMerge)
	}
	if held, err := r.ReviewFiles(ctx, headTree, s.Tree); err != nil {
		return nil, err
	} else if len(held) > 0 {
		return nil, refuse(RefusedReview, reviewDetail(into, branch, held))
	}
	return s, nil
}

// projectFile is jlgcli's project configuration file (config.ProjectFile;
// the config package imports this one).
const projectFile = "jlgcli.toml"

// ReviewFiles lists the paths that the change from from to to (commits or
// trees) adds, modifies or deletes and that decide what runs on the user's
// machine: a jlgcli.toml at any depth (its hooks run, its settings confine
// agents), the repository's own hooks (the directory core.hooksPath names
// in the working tree, .githooks) and the hook managers' files at the top
// (HookManagerFiles). A landing that would bring such a change is refused
// (RefusedReview): the user merges it after review.
func (r *Repo) ReviewFiles(ctx context.Context, from, to string) ([]string, error) {
	g := r.git()
	hooks, err := trackedHooksDir(ctx, g)
	if err != nil {
		return nil, err
	}
	rel, _ := within(g.workTree, hooks)
	return reviewFiles(ctx, g, rel, from, to)
}

// HoldForReview is a *MergeRefusedError (RefusedReview) when the change
// from from to to, of branch into into, touches files that decide what runs
// on the machines of those who merge it (as Repo.ReviewFiles lists them;
// the clone's own core.hooksPath is not the users': .githooks stands for
// it); nil when it touches none.
func (c *Clone) HoldForReview(ctx context.Context, into, branch, from, to string) error {
	held, err := reviewFiles(ctx, c.git(), "", from, to)
	if err != nil || len(held) == 0 {
		return err
	}
	return &MergeRefusedError{Reason: RefusedReview, Branch: branch, Into: into, Detail: reviewDetail(into, branch, held)}
}

// reviewFiles lists the paths of the change from from to to that need a
// review (Repo.ReviewFiles); hooks is the tracked hooks directory relative
// to the top ("": none but .githooks).
func reviewFiles(ctx context.Context, g runner, hooks, from, to string) ([]string, error) {
	args := append([]string{"diff-tree"}, diffOptions...)
	out, _, err := g.run(ctx, call{args: append(args, "-z", "--name-only", from, to)})
	if err != nil {
		return nil, err
	}
	under := func(p, dir string) bool {
		return dir != "" && dir != "." && (p == dir || strings.HasPrefix(p, dir+"/"))
	}
	var held []string
	for _, p := range strings.Split(out, "\x00") {
		switch {
		case p == "":
		case path.Base(p) == projectFile, under(p, hooks), under(p, ".githooks"), slices.ContainsFunc(HookManagerFiles, func(f string) bool { return under(p, f) }):
			held = append(held, p)
		}
	}
	return held, nil
}

// reviewDetail says why a change that touches held files is not merged.
func reviewDetail(into, branch string, held []string) string {
	return fmt.Sprintf("the change touches files that decide what runs on your machine, which jlgcli never merges for you: %s; "+
		"review them (git diff %s...%s -- %s), then merge it yourself", strings.Join(held, ", "), shellQuote(into), shellQuote(branch),
		strings.Join(quoteAll(held), " "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellQuote(s)
	}
	return out
}

// Land commits s.Tree on s.Head with message and moves s.Into to it, only
// if it is still at s.Head (else RefusedBaseMoved). When s.Into is checked
// out, the user's index and files are brought from s.Head (or s.From) to
// the commit the way a fast-forward does: nothing in the way is
// overwritten. No commit hook runs.
//
// The landing is written first in a record of the checkout's git directory
// (synced), with the trees of the user's index and files, and marked done
// at its end; a process killed in between leaves it for the next jlgcli
// command in that checkout (SettleLanding), or the next landing there
// (PrepareSquash), to finish, or to take back out when the user changed the
// checkout since (see settle), so that the user's checkout is never left
// half landed. One landing at a time runs in a checkout, across processes.
func (r *Repo) Land(ctx context.Context, s *Squash, message string) (string, error) {
	if s.Landed != "" {
		return s.Landed, nil
	}
	g := r.git()
	ctx = inLanding(context.WithoutCancel(ctx)) // never left half done
	refuse := func(reason MergeRefusal, detail string) error {
		return &MergeRefusedError{Reason: reason, Branch: s.Branch, Into: s.Into, Detail: detail,
			Command: mergeCommand(s.Into, s.Branch, message, !s.CheckedOut)}
	}
	if strings.TrimSpace(message) == "" {
		return "", errors.New("empty commit message")
	}
	path, _, err := r.landFiles(ctx)
	if err != nil {
		return "", err
	}
	unlock, err := r.lockLanding(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, _, err := r.settle(ctx, path); err != nil {
		return "", err
	}
	if at, err := revCommit(ctx, g, "refs/heads/"+s.Into); err != nil {
		return "", err
	} else if at != s.Head {
		return "", refuse(RefusedBaseMoved, s.Into+" moved meanwhile")
	}
	cur, err := r.CurrentBranch(ctx)
	if err != nil {
		return "", err
	}
	if cur == s.Into && !s.CheckedOut {
		return "", refuse(RefusedBaseMoved, s.Into+" was checked out meanwhile")
	} else if cur != s.Into && s.CheckedOut {
		return "", refuse(RefusedNotCheckedOut, s.Into+" is no longer checked out in "+r.Dir)
	}
	c, err := commitTree(ctx, g, s.Tree, message, true, s.Head)
	if err != nil {
		return "", err
	}
	rec := landRecord{Into: s.Into, Branch: s.Branch, Head: s.Head, Commit: c, CheckedOut: s.CheckedOut, From: s.From}
	if s.CheckedOut {
		// The trees of the user's index and files, to tell what the
		// landing wrote from what the user did if it is cut short.
		if rec.Index, err = indexTree(ctx, g); err != nil {
			return "", refuse(RefusedDirty, "the index of "+r.Dir+" cannot be read as a tree: "+oneLine(err.Error()))
		}
		if rec.Files, err = captureTree(ctx, g); err != nil {
			return "", err
		}
	}
	landStep("record")
	if err := writeLanding(path, rec); err != nil {
		return "", err
	}
	landStep("recorded")
	if !s.CheckedOut {
		subject, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
		if _, _, err := g.run(ctx, call{args: []string{"update-ref", "-m", "jlgcli: squash-merge " + s.Branch + ": " + subject, "refs/heads/" + s.Into, c, s.Head}}); err != nil {
			_ = dropLanding(path)
			return "", refuse(RefusedBaseMoved, s.Into+" moved meanwhile: "+oneLine(err.Error()))
		}
		landStep("moved")
		return c, r.landed(path, rec)
	}
	if err := r.checkOut(ctx, g, path, rec, false, message); err != nil {
		var way *inTheWay
		if errors.As(err, &way) {
			return "", refuse(RefusedWouldOverwrite, "files in "+r.Dir+" are in the way: "+way.msg)
		}
		return "", err
	}
	return c, r.landed(path, rec)
}

// inTheWay is git read-tree -u refusing to overwrite files.
type inTheWay struct{ msg string }

func (e *inTheWay) Error() string { return "files in the way: " + e.msg }

// checkOut makes the writes of the landing rec in the checkout: its index
// and files brought from where they are (Head, or From, whose tree the
// index holds already when staged) to the commit the way a fast-forward
// does (nothing in the way is overwritten: an *inTheWay), then its branch
// moved. The refresh first (as merge and checkout do) keeps a file touched
// but unchanged from counting as a change. A failure puts the index and
// files back as they were and drops the record at path. message is the
// commit's; "" for a landing that a stopped process left, whose record is
// kept when it fails for another reason than files in the way, so that
// the next command settles it again.
func (r *Repo) checkOut(ctx context.Context, g runner, path string, rec landRecord, staged bool, message string) error {
	from, c := rec.Head, rec.Commit
	undo := func(err error) error {
		if rec.From != "" {
			_, _, _ = g.run(ctx, call{args: []string{"read-tree", rec.Index}})
		}
		var way *inTheWay
		if message != "" || errors.As(err, &way) {
			_ = dropLanding(path)
		}
		return err
	}
	if rec.From != "" {
		// The user's files are the included changes' tree: the index
		// holds it too (their untracked files then count as tracked, as
		// they are in c), and the files move from there.
		if !staged {
			if _, _, err := g.run(ctx, call{args: []string{"read-tree", rec.From}}); err != nil {
				return undo(err)
			}
			landStep("staged")
		}
		from = rec.From
	}
	if _, _, err := g.run(ctx, call{args: []string{"update-index", "-q", "--refresh"}, ok: []int{1}}); err != nil {
		return undo(err)
	}
	if _, _, err := g.run(ctx, call{args: []string{"read-tree", "-m", "-u", from, c}}); err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.Err == nil && !errors.Is(err, ErrTransient) {
			return undo(&inTheWay{strings.TrimSpace(gerr.Stderr)})
		}
		return undo(err)
	}
	landStep("checked-out")
	update := r.moveBranch(rec)
	if message != "" {
		subject, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
		update[2] = "jlgcli: squash-merge " + rec.Branch + ": " + subject
	}
	if _, _, err := g.run(ctx, call{args: update}); err != nil {
		// into moved under us: put the files back as they were.
		_, _, _ = g.run(ctx, call{args: []string{"read-tree", "-m", "-u", c, from}})
		return undo(err)
	}
	landStep("moved")
	return nil
}

// landed marks the landing rec done.
func (r *Repo) landed(path string, rec landRecord) error {
	rec.Done = true
	if err := writeLanding(path, rec); err != nil {
		return err
	}
	landStep("landed")
	return nil
}

// settleLanding settles the landing a killed process left in the user's
// checkout (see settle), under the landing lock, and returns the record of
// the last landing there.
func (r *Repo) settleLanding(ctx context.Context) (*landRecord, error) {
	ctx = inLanding(context.WithoutCancel(ctx))
	path, _, err := r.landFiles(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	unlock, err := r.lockLanding(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, _, err := r.settle(ctx, path)
	return rec, err
}

// includedHere is included (the commit of the uncommitted changes a task
// took in, on head) when the user's working tree holds exactly its tree
// and it is not head's; "" otherwise.
func (r *Repo) includedHere(ctx context.Context, head, included string) (string, error) {
	if included == "" {
		return "", nil
	}
	g := r.git()
	if parent, err := revCommit(ctx, g, included+"^"); err != nil || parent != head {
		return "", nil
	}
	tree, err := captureTree(ctx, g)
	if err != nil {
		return "", err
	}
	want, err := revTree(ctx, g, included)
	if err != nil {
		return "", err
	}
	headTree, err := revTree(ctx, g, head)
	if err != nil {
		return "", err
	}
	if tree != want || tree == headTree {
		return "", nil
	}
	return included, nil
}

func abbrev(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// CheckoutSquash checks the tree of s out, detached, in a new worktree at
// path (a commit of it on s.Head, reachable from no branch), so that the
// checks can judge exactly what Land would commit. remove takes the
// worktree away.
func (r *Repo) CheckoutSquash(ctx context.Context, s *Squash, path string) (remove func() error, err error) {
	g := r.git()
	c, err := commitTree(ctx, g, s.Tree, "jlgcli: "+s.Branch+" on "+s.Into, false, s.Head)
	if err != nil {
		return nil, err
	}
	if _, _, err := g.run(ctx, call{args: []string{"worktree", "add", "--quiet", "--detach", "--", path, c}}); err != nil {
		return nil, err
	}
	// The checks run there: it is taken away as a task's worktree is,
	// from the repository's record, whatever they left in it.
	w := &Worktree{RepoDir: r.Dir, Path: path, Timeout: r.Timeout}
	remove = func() error {
		ctx := context.WithoutCancel(ctx)
		if gone, err := w.removeDir(ctx); err != nil || gone {
			return err
		}
		_, _, err := w.repo().run(ctx, call{args: []string{"worktree", "prune"}})
		return err
	}
	if w.GitDir, err = worktreeGitDir(ctx, g, path); err != nil {
		return nil, errors.Join(err, remove())
	}
	return remove, nil
}

// conflicted lists the conflicted paths from git merge-tree's output (the
// tree line, then "mode sha stage\tpath" lines).
func conflicted(out string) []string {
	var files []string
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n")[1:] {
		_, p, ok := strings.Cut(l, "\t")
		if ok && !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	return files
}

// isAncestor reports whether a is an ancestor of (or is) b.
func isAncestor(ctx context.Context, g runner, a, b string) bool {
	_, code, err := g.run(ctx, call{args: []string{"merge-base", "--is-ancestor", a, b}, ok: []int{1}})
	return err == nil && code == 0
}

// Push pushes the task branch to its remote under the same name, without
// force: a remote branch that has diverged is not overwritten (the error
// then wraps ErrPushRejected). Only task branches (BranchPrefix) are pushed,
// so the base branch never is. The remote is branch.<b>.pushRemote,
// remote.pushDefault, branch.<b>.remote, "origin", or the only remote, in
// that order. No upstream is recorded (the git config is not written).
func (r *Repo) Push(ctx context.Context, branch string) error {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return fmt.Errorf("push %s: %w", branch, ErrNotTaskBranch)
	}
	g := r.git()
	if _, err := revCommit(ctx, g, "refs/heads/"+branch); err != nil {
		return fmt.Errorf("push %s: %w", branch, err)
	}
	remote, err := r.pushRemote(ctx, branch)
	if err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	_, _, err = g.run(ctx, call{args: []string{"push", "--quiet", "--no-force-with-lease", "--no-recurse-submodules", remote, ref + ":" + ref}, remote: true})
	return pushError(fmt.Sprintf("push %s to %s", branch, remote), err)
}

// pushError is err of a git push, what says which: nil for none; saying
// ErrPushRejected when the remote refused it (not a fast-forward, a ref
// that moved), as Error.Is classifies it.
func pushError(what string, err error) error {
	if errors.Is(err, ErrPushRejected) {
		return fmt.Errorf("%s: %w: %w", what, ErrPushRejected, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (r *Repo) pushRemote(ctx context.Context, branch string) (string, error) {
	g := r.git()
	for _, key := range []string{"branch." + branch + ".pushRemote", "remote.pushDefault", "branch." + branch + ".remote"} {
		out, _, err := g.run(ctx, call{args: []string{"config", "--get", key}, ok: []int{1}})
		if err != nil {
			return "", err
		}
		if v := strings.TrimSpace(out); v != "" && v != "." {
			return v, nil
		}
	}
	out, err := g.line(ctx, "remote")
	if err != nil {
		return "", err
	}
	remotes := strings.Fields(out)
	for _, rm := range remotes {
		if rm == "origin" {
			return rm, nil
		}
	}
	if len(remotes) == 1 {
		return remotes[0], nil
	}
	if len(remotes) == 0 {
		return "", fmt.Errorf("push %s: %w: the repository has no remote", branch, ErrNoRemote)
	}
	return "", fmt.Errorf("push %s: %w: several remotes (%s) and none is origin or remote.pushDefault", branch, ErrNoRemote, strings.Join(remotes, ", "))
}

// FastForward moves the branch into, checked out in the user's working tree
// (Dir) with no change to tracked files, to the tip of branch, which must
// descend from it, and brings the files along as `git merge --ff-only` does
// (files in the way are never overwritten): the commits of branch land on
// into as they are. Otherwise it returns a *MergeRefusedError with the
// command to run by hand, and touches nothing. It returns into's new tip.
func (r *Repo) FastForward(ctx context.Context, into, branch string) (string, error) {
	g := r.git()
	command := "git checkout " + shellQuote(into) + " && git merge --ff-only " + shellQuote(branch)
	refuse := func(reason MergeRefusal, detail string) error {
		return &MergeRefusedError{Reason: reason, Branch: branch, Into: into, Detail: detail, Command: command}
	}
	tip, err := revCommit(ctx, g, "refs/heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("branch %s: %w", branch, err)
	}
	if into == "" {
		return "", refuse(RefusedNoBaseBranch, "the task did not start from a branch")
	}
	cur, err := r.CurrentBranch(ctx)
	if err != nil {
		return "", err
	}
	if cur != into {
		return "", refuse(RefusedNotCheckedOut, fmt.Sprintf("%s is not checked out in %s", into, r.Dir))
	}
	if d, err := dirty(ctx, g, false); err != nil {
		return "", err
	} else if d {
		return "", refuse(RefusedDirty, r.Dir+" has uncommitted changes: commit or stash them first")
	}
	head, err := revCommit(ctx, g, "refs/heads/"+into)
	if err != nil {
		return "", err
	}
	if head == tip {
		return "", ErrNothingToMerge
	}
	if !isAncestor(ctx, g, head, tip) {
		return "", refuse(RefusedBaseMoved, into+" has moved since the task started")
	}
	if held, err := r.ReviewFiles(ctx, head, tip); err != nil {
		return "", err
	} else if len(held) > 0 {
		return "", refuse(RefusedReview, reviewDetail(into, branch, held))
	}
	if _, _, err := g.run(ctx, call{args: []string{"merge", "--ff-only", "--quiet", tip}}); err != nil {
		return "", refuse(RefusedWouldOverwrite, "git merge --ff-only failed: "+oneLine(err.Error()))
	}
	return tip, nil
}

// Remote is the remote Push would push branch to.
func (r *Repo) Remote(ctx context.Context, branch string) (string, error) {
	return r.pushRemote(ctx, branch)
}

// RemoteURL is the URL of remote name.
func (r *Repo) RemoteURL(ctx context.Context, name string) (string, error) {
	return r.git().line(ctx, "remote", "get-url", "--", name)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
