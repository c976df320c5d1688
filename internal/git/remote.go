package git

import (
	"context"
	"fmt"
	"strings"
)

// FetchBranch fetches branch of remote into refs/remotes/REMOTE/BRANCH
// and returns the commit it is at: the head of a pull request, as the
// forge's git has it now.
func (r *Repo) FetchBranch(ctx context.Context, remote, branch string) (string, error) {
	if err := checkRefName(branch); err != nil {
		return "", err
	}
	g := r.git()
	tracking := "refs/remotes/" + remote + "/" + branch
	if _, _, err := g.run(ctx, call{args: []string{"fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--", remote, "+refs/heads/" + branch + ":" + tracking}, remote: true}); err != nil {
		return "", fmt.Errorf("fetch %s from %s: %w", branch, remote, err)
	}
	return revCommit(ctx, g, tracking)
}

// PushLeased pushes commit sha to branch of remote only while that branch
// is still at lease (git push --force-with-lease=BRANCH:LEASE): a push of
// someone else's that came meanwhile is never overwritten; the push is
// then refused (ErrPushRejected) and the caller fetches it and builds on
// it.
func (r *Repo) PushLeased(ctx context.Context, sha, remote, branch, lease string) error {
	return pushLeased(ctx, r.git(), sha, remote, branch, lease)
}

// PushLeased pushes commit sha to branch of the clone's remote only while
// that branch is still at lease, as Repo.PushLeased does: a worker pushes a
// round of the pull-request loop so.
func (c *Clone) PushLeased(ctx context.Context, sha, branch, lease string) error {
	return pushLeased(ctx, c.git(), sha, "origin", branch, lease)
}

func pushLeased(ctx context.Context, g runner, sha, remote, branch, lease string) error {
	if err := checkRefName(branch); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	_, _, err := g.run(ctx, call{args: []string{"push", "--quiet", "--no-recurse-submodules",
		"--force-with-lease=" + ref + ":" + lease, "--", remote, sha + ":" + ref}, remote: true})
	return pushError(fmt.Sprintf("push %s to %s", ShortSHA(sha), branch), err)
}

// MergeBase merges base into head without touching any working tree (git
// merge-tree): a merge commit of both made when they merge cleanly
// (conflicts nil); else a commit of the merge with its conflict markers
// in the files that conflict (named in conflicts), for an agent to resolve
// (MergeOf then makes the merge of what it left).
func (r *Repo) MergeBase(ctx context.Context, head, base, message string) (commit string, conflicts []string, err error) {
	g := r.git()
	tree, conflicts, err := mergeTree(ctx, g, head, base)
	if err != nil {
		return "", nil, fmt.Errorf("merge %s into %s: %w", ShortSHA(base), ShortSHA(head), err)
	}
	commit, err = commitTree(ctx, g, tree, message, false, head, base)
	return commit, conflicts, err
}

// Conflicts are the files that conflict when base is merged into head
// (git merge-tree, no working tree touched); none when they merge
// cleanly.
func (r *Repo) Conflicts(ctx context.Context, head, base string) ([]string, error) {
	_, conflicts, err := mergeTree(ctx, r.git(), head, base)
	return conflicts, err
}

// TestsWeakened measures what the change from the merge base of base and
// head to head does to the tests of base: the test files it deletes and
// those it removes or alters lines of (as a task's gate reads them): a
// pull request's whole change, whoever made it.
func (r *Repo) TestsWeakened(ctx context.Context, base, head string) (Change, error) {
	return testsWeakened(ctx, r.git(), base, head)
}

// TestsWeakened is Repo.TestsWeakened in a worker's clone.
func (c *Clone) TestsWeakened(ctx context.Context, base, head string) (Change, error) {
	return testsWeakened(ctx, c.git(), base, head)
}

func testsWeakened(ctx context.Context, g runner, base, head string) (Change, error) {
	mb, err := g.line(ctx, "merge-base", "--end-of-options", base, head)
	if err != nil {
		return Change{}, fmt.Errorf("the merge base of %s and %s: %w", ShortSHA(base), ShortSHA(head), err)
	}
	tree, err := revTree(ctx, g, head)
	if err != nil {
		return Change{}, err
	}
	return diffTrees(ctx, g, strings.TrimSpace(mb), tree)
}

// MergeOf is a merge commit of head and base whose tree is tip's: the
// resolution an agent made of a merge MergeBase left with conflicts,
// recorded as the merge itself.
func (r *Repo) MergeOf(ctx context.Context, tip, head, base, message string) (string, error) {
	g := r.git()
	tree, err := g.line(ctx, "rev-parse", "--verify", "--end-of-options", tip+"^{tree}")
	if err != nil {
		return "", err
	}
	return commitTree(ctx, g, tree, message, false, head, base)
}

// checkRefName refuses a branch name a forge could hand over that git
// would read as an option or a pattern.
func checkRefName(branch string) error {
	if branch == "" || strings.HasPrefix(branch, "-") || strings.ContainsAny(branch, " ~^:?*[\\\x7f") || strings.Contains(branch, "..") {
		return fmt.Errorf("branch name %q is not one jlgcli pushes to", branch)
	}
	return nil
}

// ShortSHA is a commit's id cut to its first 10 hex digits, as jlgcli
// prints one.
func ShortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
