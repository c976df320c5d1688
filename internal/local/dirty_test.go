package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// A task started with --include-dirty works on the user's uncommitted
// change (its branch's first commit), and once done lands on main with
// that change and its own, the user's tree clean; without it the task
// starts from HEAD, says the change was left out, and its result records
// that.
func TestTaskWithTheUsersUncommittedChange(t *testing.T) {
	for _, include := range []bool{true, false} {
		t.Run(map[bool]string{true: "included", false: "left out"}[include], func(t *testing.T) {
			repo := gitRepo(t)
			if err := os.WriteFile(filepath.Join(repo, "answer.txt"), []byte("42\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := TaskSpec{
				Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
				Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo yes > checked.txt"}}},
				Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: git.MergeSquash,
				Checks:  []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
				Sandbox: sandbox.Config{Mode: sandbox.Off},
			}
			var s said
			res, err := StartTask(context.Background(), NewTask{Prompt: "Check the answer", Spec: spec, StateDir: t.TempDir(), IncludeDirty: include}, Parts{Say: &s})
			if err != nil {
				t.Fatal(err)
			}
			if res.Git == nil {
				t.Fatalf("%s: %s", res.Status, res.Details)
			}
			said := strings.Join(s.lines, "\n")
			if !include {
				if res.Status == engine.StatusDone || !res.Git.DirtyLeftOut || res.Git.DirtyIncluded ||
					!strings.Contains(said, "your working tree has uncommitted changes; the task starts from ") {
					t.Errorf("%s, left out %v, included %v; said:\n%s", res.Status, res.Git.DirtyLeftOut, res.Git.DirtyIncluded, said)
				}
				if data, _ := os.ReadFile(filepath.Join(repo, "answer.txt")); string(data) != "42\n" {
					t.Errorf("the user's change: %q", data)
				}
				return
			}
			if res.Status != engine.StatusDone || !res.Git.DirtyIncluded || res.Git.DirtyLeftOut || res.Git.Merge == nil || res.Git.Merge.Status != git.MergeMerged {
				t.Fatalf("%s: %s; git %+v, merge %+v", res.Status, res.Details, res.Git, res.Git.Merge)
			}
			for file, want := range map[string]string{"answer.txt": "42", "checked.txt": "yes"} {
				if got := strings.TrimSpace(gitOut(t, repo, "show", "main:"+file)); got != want {
					t.Errorf("%s on main: %q, want %q", file, got, want)
				}
			}
			if status := gitOut(t, repo, "status", "--porcelain"); status != "" {
				t.Errorf("the user's tree after the merge:\n%s", status)
			}
		})
	}
}

// A task stopped before any attempt ran (here: its time limit, reached
// while it set up) leaves nothing behind: its branch, its refs and its
// worktree are removed, and no WIP commit is made.
func TestTaskWithoutAttemptLeavesNoBranch(t *testing.T) {
	repo := gitRepo(t)
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo 42 > answer.txt"}}},
		Repo:     repo, TimeoutMs: 1, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: git.MergeSquash,
		Checks:  []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", Spec: spec, StateDir: t.TempDir()}, Parts{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Git
	if res.Status != engine.StatusTimeout || len(res.Attempts) != 0 || g == nil {
		t.Fatalf("%s after %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	if !g.Discarded || !g.Removed || g.WIP != "" || g.Merge != nil {
		t.Errorf("git %+v", g)
	}
	if branchExists(t, repo, g.Branch) {
		t.Errorf("branch %s kept", g.Branch)
	}
	if _, err := os.Stat(g.Worktree); !os.IsNotExist(err) {
		t.Errorf("worktree %s: %v", g.Worktree, err)
	}
	if refs := gitOut(t, repo, "for-each-ref", g.Refs); refs != "" {
		t.Errorf("refs left:\n%s", refs)
	}
}
