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
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// runScripted runs a task in repo whose one tier's agent is the shell
// script agent (run in the task's worktree, unconfined), judged by the
// shell check check, merged as merge asks; it returns the result, what the
// run said and its state directory.
func runScripted(t *testing.T, repo, prompt, script, check string, merge git.MergeMode) (taskengine.Result, *said, string) {
	t.Helper()
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; " + script}}},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: merge,
		Checks:  []gate.Check{{Name: "check", Shell: check}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	var s said
	state := t.TempDir()
	res, err := StartTask(context.Background(), NewTask{Prompt: prompt, Spec: spec, StateDir: state}, Parts{Say: &s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Git == nil {
		t.Fatalf("%s: %s: no git details", res.Status, res.Details)
	}
	return res, &s, state
}

// branchExists says whether repo has the branch.
func branchExists(t *testing.T, repo, branch string) bool {
	t.Helper()
	return strings.TrimSpace(gitOut(t, repo, "branch", "--list", branch)) != ""
}

// A done task is squash-merged into the checked-out base: one commit on
// main, whose subject names the task, with the change in the user's tree;
// the task's branch keeps its attempt's commit and its worktree is gone.
func TestFinishSquashMergesADoneTask(t *testing.T) {
	repo := gitRepo(t)
	before := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	res, _, _ := runScripted(t, repo, "Make the answer 42", "echo 42 > answer.txt", "grep -qx 42 answer.txt", git.MergeSquash)
	g := res.Git
	if res.Status != engine.StatusDone || res.ExitCode != 0 || g.Merge == nil || g.Merge.Status != git.MergeMerged || g.Merge.Into != "main" {
		t.Fatalf("%s (exit %d): %s; merge %+v", res.Status, res.ExitCode, res.Details, g.Merge)
	}
	head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	if g.Merge.Commit != head {
		t.Errorf("merge commit %s, main at %s", g.Merge.Commit, head)
	}
	if parent := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main^")); parent != before {
		t.Errorf("main^ is %s, want the base %s: more than one commit landed", parent, before)
	}
	if subject := strings.TrimSpace(gitOut(t, repo, "log", "-1", "--format=%s", "main")); subject != SquashSubject("Make the answer 42") {
		t.Errorf("squash subject %q", subject)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "answer.txt")); string(data) != "42\n" {
		t.Errorf("answer.txt in the user's tree: %q", data)
	}
	if status := gitOut(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("the user's tree after the merge:\n%s", status)
	}
	if !branchExists(t, repo, g.Branch) || g.WIP != "" {
		t.Errorf("branch %s kept: %v; WIP %q", g.Branch, branchExists(t, repo, g.Branch), g.WIP)
	}
	if _, err := os.Stat(g.Worktree); !os.IsNotExist(err) || !g.Removed {
		t.Errorf("worktree %s: removed %v, stat %v", g.Worktree, g.Removed, err)
	}
}

// A done task whose base has changes to tracked files when it ends is not
// merged: the user's change is left as it is, the branch is kept, and the
// result and a warning give the command that merges it by hand.
func TestFinishRefusesADirtyBase(t *testing.T) {
	repo := gitRepo(t)
	before := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	// The user edits a tracked file of their checkout while the task runs.
	script := "echo 42 > answer.txt; echo mine > " + filepath.Join(repo, "answer.txt")
	res, s, _ := runScripted(t, repo, "Make the answer 42", script, "grep -qx 42 answer.txt", git.MergeSquash)
	g := res.Git
	if res.Status != engine.StatusDone || g.Merge == nil || g.Merge.Status != git.MergeRefused {
		t.Fatalf("%s: %s; merge %+v", res.Status, res.Details, g.Merge)
	}
	if !strings.HasPrefix(g.Merge.Reason, string(git.RefusedDirty)+": ") || !strings.Contains(g.Merge.Command, "git merge --squash "+g.Branch) {
		t.Errorf("reason %q, command %q", g.Merge.Reason, g.Merge.Command)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != before {
		t.Errorf("main moved to %s", now)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "answer.txt")); string(data) != "mine\n" {
		t.Errorf("the user's change was touched: answer.txt %q", data)
	}
	if !branchExists(t, repo, g.Branch) {
		t.Errorf("branch %s removed", g.Branch)
	}
	if got := strings.TrimSpace(gitOut(t, repo, "show", g.Branch+":answer.txt")); got != "42" {
		t.Errorf("answer.txt on %s: %q", g.Branch, got)
	}
	warned := strings.Join(s.lines, "\n")
	if !strings.Contains(warned, "warning: "+g.Branch+" was not merged (") || !strings.Contains(warned, g.Merge.Command) || len(g.Warnings) == 0 {
		t.Errorf("warnings %q; said:\n%s", g.Warnings, warned)
	}
}

// --merge none: a done task is left on its branch, main untouched, with
// the command that squash-merges it by hand.
func TestFinishMergeNone(t *testing.T) {
	repo := gitRepo(t)
	before := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	res, _, _ := runScripted(t, repo, "Make the answer 42", "echo 42 > answer.txt", "grep -qx 42 answer.txt", git.MergeNone)
	g := res.Git
	if res.Status != engine.StatusDone || g.Merge == nil || g.Merge.Status != git.MergeSkipped || g.Merge.Commit != "" {
		t.Fatalf("%s: %s; merge %+v", res.Status, res.Details, g.Merge)
	}
	if want := squashByHand(g.Branch, "Make the answer 42"); g.Merge.Command != want {
		t.Errorf("command %q, want %q", g.Merge.Command, want)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != before {
		t.Errorf("main moved to %s", now)
	}
	if got := strings.TrimSpace(gitOut(t, repo, "show", g.Branch+":answer.txt")); got != "42" {
		t.Errorf("answer.txt on %s: %q", g.Branch, got)
	}
	if len(g.Warnings) != 0 {
		t.Errorf("warnings: %q", g.Warnings)
	}
}

// A failed task's work is committed on its branch as WIP, for review: the
// commit holds the uncommitted change, its message says why the task
// stopped; nothing is merged and the worktree is removed.
func TestFinishCommitsWIPOnFailure(t *testing.T) {
	repo := gitRepo(t)
	before := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	res, _, _ := runScripted(t, repo, "Make the answer 42", "echo 43 > answer.txt; echo draft > notes.txt", "grep -qx 42 answer.txt", git.MergeSquash)
	g := res.Git
	if res.Status == engine.StatusDone || res.ExitCode == 0 {
		t.Fatalf("a failing check ended %s, exit %d", res.Status, res.ExitCode)
	}
	if g.WIP == "" || g.Merge != nil {
		t.Fatalf("WIP %q, merge %+v", g.WIP, g.Merge)
	}
	if tip := strings.TrimSpace(gitOut(t, repo, "rev-parse", g.Branch)); tip != g.WIP {
		t.Errorf("branch %s at %s, WIP %s", g.Branch, tip, g.WIP)
	}
	msg := gitOut(t, repo, "log", "-1", "--format=%B", g.WIP)
	if !strings.HasPrefix(msg, "WIP: ") || !strings.Contains(msg, "(needs manual review)") || !strings.Contains(msg, "jlgcli task "+res.RunID+" stopped: "+string(res.Status)) {
		t.Errorf("WIP message:\n%s", msg)
	}
	if got := strings.TrimSpace(gitOut(t, repo, "show", g.WIP+":notes.txt")); got != "draft" {
		t.Errorf("notes.txt in the WIP commit: %q", got)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != before {
		t.Errorf("main moved to %s", now)
	}
	if _, err := os.Stat(g.Worktree); !os.IsNotExist(err) || !g.Removed {
		t.Errorf("worktree %s: removed %v, stat %v", g.Worktree, g.Removed, err)
	}
}

// A done task whose change touches jlgcli.toml (a file that decides what
// jlgcli runs) is not merged but held for the user's review: the result is
// incomplete, with its exit code, and says where the change is; main is
// untouched and the branch keeps the change.
func TestFinishHoldsAChangeToJlgcliTomlForReview(t *testing.T) {
	repo := gitRepo(t)
	before := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	res, s, _ := runScripted(t, repo, "Make the answer 42", "echo 42 > answer.txt; printf '[[checks]]\\nname = \"t\"\\nshell = \"true\"\\n' > jlgcli.toml",
		"grep -qx 42 answer.txt", git.MergeSquash)
	g := res.Git
	if res.Status != engine.StatusIncomplete || res.ExitCode != engine.StatusIncomplete.ExitCode() || res.ExitCode == 0 {
		t.Fatalf("%s (exit %d): %s", res.Status, res.ExitCode, res.Details)
	}
	if !g.Merge.HeldForReview() || !strings.Contains(res.Details, "not merged: kept on branch "+g.Branch+" for your review") ||
		!strings.Contains(g.Merge.Reason, "jlgcli.toml") {
		t.Errorf("details %q; merge %+v", res.Details, g.Merge)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != before {
		t.Errorf("main moved to %s", now)
	}
	if _, err := os.Stat(filepath.Join(repo, "jlgcli.toml")); !os.IsNotExist(err) {
		t.Errorf("jlgcli.toml in the user's tree: %v", err)
	}
	if got := gitOut(t, repo, "show", g.Branch+":jlgcli.toml"); !strings.Contains(got, "[[checks]]") {
		t.Errorf("jlgcli.toml on %s: %q", g.Branch, got)
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "warning: "+g.Branch+" was not merged (review: ") {
		t.Errorf("said:\n%s", strings.Join(s.lines, "\n"))
	}
}
