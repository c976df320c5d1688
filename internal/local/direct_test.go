package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// directSpec is a --commit direct task whose agent runs script.
func directSpec(repo, script, check string) TaskSpec {
	return TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; " + script}}},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: git.CommitDirect, Merge: git.MergeSquash,
		Checks:  []gate.Check{{Name: "check", Shell: check}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
}

// --commit direct refuses to start, creating nothing, on a tree with
// changes to tracked files, with --base or --include-dirty, and on a
// detached HEAD: each a usage error (exit 64) saying what to do.
func TestDirectTaskRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		setup   func(t *testing.T, repo string)
		task    NewTask
		message string
		hint    string
	}{
		{name: "changed tracked file", setup: func(t *testing.T, repo string) {
			if err := os.WriteFile(filepath.Join(repo, "answer.txt"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, message: "--commit direct refuses to start: ", hint: "commit or stash them first"},
		{name: "base", task: NewTask{Base: "main"}, message: "it takes neither --base nor --include-dirty"},
		{name: "include dirty", task: NewTask{IncludeDirty: true}, message: "it takes neither --base nor --include-dirty"},
		{name: "detached", setup: func(t *testing.T, repo string) { gitOut(t, repo, "checkout", "-q", "--detach") },
			message: "HEAD is detached", hint: "check out the branch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := gitRepo(t)
			if c.setup != nil {
				c.setup(t, repo)
			}
			state := t.TempDir()
			task := c.task
			task.Prompt, task.StateDir, task.Spec = "x", state, directSpec(repo, "true", "true")
			_, err := StartTask(context.Background(), task, Parts{})
			if !exit.IsUsage(err) || !strings.Contains(err.Error(), c.message) || !strings.Contains(exit.HintOf(err), c.hint) {
				t.Fatalf("error %v (hint %q); want a usage error %q, hint %q", err, exit.HintOf(err), c.message, c.hint)
			}
			if entries, _ := os.ReadDir(state); len(entries) != 0 {
				t.Errorf("state dir not empty: %v", entries)
			}
			if branches := gitOut(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads"); strings.TrimSpace(branches) != "main" {
				t.Errorf("branches: %q", branches)
			}
		})
	}
}

// --commit direct: a done task's commits land on the checked-out branch by
// fast-forward (no squash commit), and a failed task's WIP lands there too.
func TestDirectTaskLandsOnTheCurrentBranch(t *testing.T) {
	for _, c := range []struct {
		name, script string
		done         bool
	}{
		{"done", "echo 42 > answer.txt", true},
		{"failed", "echo 43 > answer.txt", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := gitRepo(t)
			res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", StateDir: t.TempDir(),
				Spec: directSpec(repo, c.script, "grep -qx 42 answer.txt")}, Parts{})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Status == engine.StatusDone) != c.done || res.Git == nil || res.Git.Mode != string(git.CommitDirect) {
				t.Fatalf("%s: %s; git %+v", res.Status, res.Details, res.Git)
			}
			m := res.Git.Merge
			head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
			if m == nil || m.Status != git.MergeFastForwarded || m.Commit != head || m.Into != "main" {
				t.Fatalf("merge %+v, main at %s", m, head)
			}
			if tip := strings.TrimSpace(gitOut(t, repo, "rev-parse", res.Git.Branch)); tip != head {
				t.Errorf("main at %s, the task's branch at %s: not a fast-forward", head, tip)
			}
			want := "43\n"
			if c.done {
				want = "42\n"
				if res.Attempts[0].Commit != head {
					t.Errorf("main at %s, the attempt's commit %s", head, res.Attempts[0].Commit)
				}
			} else if res.Git.WIP != head {
				t.Errorf("main at %s, WIP %s", head, res.Git.WIP)
			}
			if data, _ := os.ReadFile(filepath.Join(repo, "answer.txt")); string(data) != want {
				t.Errorf("answer.txt in the user's tree: %q, want %q", data, want)
			}
		})
	}
}
