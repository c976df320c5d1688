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

// A base that moved merges into a pull request's head without a working
// tree: cleanly into a merge commit of both; with conflicts into a commit
// whose files hold the markers, whose resolution MergeOf records as the
// merge itself.
func TestMergeBaseAndMergeOf(t *testing.T) {
	ctx := context.Background()
	dir, repo := newRepo(t)
	commit := func(file, content, msg string) string {
		write(t, dir, file, content)
		tgit(t, dir, "add", file)
		tgit(t, dir, "commit", "-q", "-m", msg)
		return strings.TrimSpace(tgit(t, dir, "rev-parse", "HEAD"))
	}
	tgit(t, dir, "checkout", "-q", "-b", "pr")
	head := commit("pr.txt", "pr\n", "pr")
	tgit(t, dir, "checkout", "-q", "main")
	moved := commit("main.txt", "main\n", "main moved")
	before := tgit(t, dir, "status", "--porcelain") + tgit(t, dir, "rev-parse", "HEAD")

	m, conflicts, err := repo.MergeBase(ctx, head, moved, "Merge main")
	if after := tgit(t, dir, "status", "--porcelain") + tgit(t, dir, "rev-parse", "HEAD"); after != before {
		t.Errorf("the merge touched the checkout: %q, was %q", after, before)
	}
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("clean merge: %v, conflicts %v", err, conflicts)
	}
	if parents := strings.Fields(tgit(t, dir, "log", "-1", "--format=%P", m)); len(parents) != 2 || parents[0] != head || parents[1] != moved {
		t.Errorf("merge parents %v, want %s %s", parents, head, moved)
	}
	for _, f := range []string{"pr.txt", "main.txt"} {
		if _, err := tgitErr(dir, "cat-file", "-e", m+":"+f); err != nil {
			t.Errorf("the merge lacks %s", f)
		}
	}

	// Both change one line: a conflict, its markers in the commit.
	tgit(t, dir, "checkout", "-q", "pr")
	head2 := commit("answer.txt", "ours\n", "ours")
	tgit(t, dir, "checkout", "-q", "main")
	moved2 := commit("answer.txt", "theirs\n", "theirs")
	c, conflicts, err := repo.MergeBase(ctx, head2, moved2, "Merge main (conflicts)")
	if err != nil || len(conflicts) != 1 || conflicts[0] != "answer.txt" {
		t.Fatalf("conflicting merge: %v, conflicts %v", err, conflicts)
	}
	if body := tgit(t, dir, "show", c+":answer.txt"); !strings.Contains(body, "<<<<<<<") || !strings.Contains(body, "theirs") {
		t.Errorf("the conflict's commit holds %q, want markers", body)
	}
	// An agent's resolution on top of it becomes the merge of both.
	tgit(t, dir, "checkout", "-q", "--detach", c)
	tip := commit("answer.txt", "both\n", "resolved")
	mm, err := repo.MergeOf(ctx, tip, head2, moved2, "Merge main")
	if err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(tgit(t, dir, "log", "-1", "--format=%P", mm)); len(parents) != 2 || parents[0] != head2 || parents[1] != moved2 {
		t.Errorf("resolved merge parents %v", parents)
	}
	if got := tgit(t, dir, "show", mm+":answer.txt"); strings.TrimSpace(got) != "both" {
		t.Errorf("resolved merge holds %q", got)
	}
}
