package git

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A pull request's branch is fetched as the forge has it, and a push made
// on a lease goes through only while the branch is where the lease says:
// someone else's push that came meanwhile is refused, never overwritten.
func TestFetchBranchAndPushLeased(t *testing.T) {
	ctx := context.Background()
	dir, repo := newRepo(t)
	bare := newRemote(t, dir)
	tgit(t, dir, "push", "-q", "origin", "main:refs/heads/feature")
	base := strings.TrimSpace(tgit(t, dir, "rev-parse", "main"))

	got, err := repo.FetchBranch(ctx, "origin", "feature")
	if err != nil || got != base {
		t.Fatalf("FetchBranch: %s, %v; want %s", got, err, base)
	}
	// Two commits on it: ours, and another's pushed behind our back.
	write(t, dir, "ours.txt", "ours\n")
	tgit(t, dir, "add", "ours.txt")
	tgit(t, dir, "commit", "-q", "-m", "ours")
	ours := strings.TrimSpace(tgit(t, dir, "rev-parse", "HEAD"))
	if err := repo.PushLeased(ctx, ours, "origin", "feature", base); err != nil {
		t.Fatalf("a push on the right lease: %v", err)
	}
	if at := strings.TrimSpace(tgit(t, bare, "rev-parse", "refs/heads/feature")); at != ours {
		t.Fatalf("feature at %s, want %s", at, ours)
	}
	tgit(t, dir, "reset", "-q", "--hard", base)
	write(t, dir, "theirs.txt", "theirs\n")
	tgit(t, dir, "add", "theirs.txt")
	tgit(t, dir, "commit", "-q", "-m", "theirs")
	theirs := strings.TrimSpace(tgit(t, dir, "rev-parse", "HEAD"))
	// A stale lease (base) is refused though the push would be forced.
	err = repo.PushLeased(ctx, theirs, "origin", "feature", base)
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("a push on a stale lease: %v, want ErrPushRejected", err)
	}
	if at := strings.TrimSpace(tgit(t, bare, "rev-parse", "refs/heads/feature")); at != ours {
		t.Fatalf("the refused push moved feature to %s", at)
	}
	if err := repo.PushLeased(ctx, ours, "origin", "--upload-pack=x", base); err == nil {
		t.Fatal("a branch named like an option was pushed to")
	}
}
