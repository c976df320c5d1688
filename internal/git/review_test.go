package git

import (
	"errors"
	"strings"
	"testing"
)

// TestLandingHeldForReview: a task's change that touches a jlgcli.toml (at
// any depth), the tracked hooks or a hook manager's file is not merged:
// the branch is kept, the base branch does not move, and the refusal names
// the files and the command to merge after review.
func TestLandingHeldForReview(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, file string }{
		{"tracked hook", ".githooks/pre-commit"},
		{"nested project file", "svc/jlgcli.toml"},
		{"project file", "jlgcli.toml"},
		{"husky", ".husky/pre-push"},
		{"pre-commit", ".pre-commit-config.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, r := newRepo(t)
			script, _ := payload(t)
			trackedHooks(t, dir, script)
			head := tgit(t, dir, "rev-parse", "main")
			w := newTask(t, r, "t1")
			write(t, w.Path, "ok.go", "package main\n")
			write(t, w.Path, c.file, "changed by the agent\n")
			if _, _, err := w.Commit(ctx, "feat: x"); err != nil {
				t.Fatal(err)
			}
			_, err := r.SquashMerge(ctx, "main", w.Branch, "feat: x", "")
			var refused *MergeRefusedError
			if !errors.As(err, &refused) || refused.Reason != RefusedReview {
				t.Fatalf("SquashMerge = %v, want a refusal for review", err)
			}
			if !strings.Contains(refused.Detail, c.file) || !strings.Contains(refused.Command, "git merge --squash "+w.Branch) || strings.Contains(refused.Detail, "ok.go") {
				t.Errorf("refusal = %v", refused)
			}
			if got := tgit(t, dir, "rev-parse", "main"); got != head {
				t.Error("main moved")
			}
			if tgit(t, dir, "rev-parse", "--verify", w.Branch) == "" {
				t.Error("the branch is gone")
			}
			if _, err := r.FastForward(ctx, "main", w.Branch); !errors.As(err, &refused) || refused.Reason != RefusedReview {
				t.Errorf("FastForward = %v, want a refusal for review", err)
			}
		})
	}
}

// TestLandingNotHeldForOtherFiles: a file merely named like a hook
// manager's below the top, or a hooks directory elsewhere, lands.
func TestLandingNotHeldForOtherFiles(t *testing.T) {
	t.Parallel()
	dir, r := newRepo(t)
	w := newTask(t, r, "t1")
	write(t, w.Path, "docs/.pre-commit-config.yaml", "example\n")
	write(t, w.Path, "tools/githooks/x", "example\n")
	if _, _, err := w.Commit(ctx, "feat: docs"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SquashMerge(ctx, "main", w.Branch, "feat: docs", ""); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "docs/.pre-commit-config.yaml") != "example\n" {
		t.Error("not merged")
	}
}
