package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// said records what a run reported.
type said struct {
	mu    sync.Mutex
	lines []string
}

func (s *said) Progress(msg string) { s.add("progress: " + msg) }
func (s *said) Notice(msg string)   { s.add("notice: " + msg) }
func (s *said) Warn(msg string)     { s.add("warning: " + msg) }
func (s *said) add(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, l)
}

func gitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "answer.txt"), []byte("41\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// A task runs end to end from a spec and parts, with no command line: its
// worktree, attempt, gate, squash merge and reports.
func TestStartTaskFromASpec(t *testing.T) {
	repo := gitRepo(t)
	state := t.TempDir()
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 2}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo 42 > answer.txt; echo done"}}},
		Repo:     repo, TimeoutMs: 60000, BudgetUSD: 1, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: "squash",
		Checks: []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
	}
	var s said
	res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", Spec: spec, StateDir: state}, Parts{Say: &s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusDone || res.Git == nil || res.Git.Merge == nil || res.Git.Merge.Status != "merged" {
		t.Fatalf("%s: %s (git %+v)", res.Status, res.Details, res.Git)
	}
	data, err := os.ReadFile(filepath.Join(repo, "answer.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "42" {
		t.Errorf("answer.txt on main: %q (%v)", data, err)
	}
	run, err := store.Open(state, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var saved taskengine.Result
	if found, err := run.ReadReport(&saved); !found || err != nil || saved.Status != engine.StatusDone {
		t.Errorf("report.json: found %v, %v, status %s", found, err, saved.Status)
	}
	if _, err := os.Stat(run.MarkdownReportPath()); err != nil {
		t.Errorf("report.md: %v", err)
	}
	if len(s.lines) == 0 || !strings.HasPrefix(s.lines[0], "progress: task "+res.RunID+" on branch ") {
		t.Errorf("messages: %q", s.lines)
	}
}

// A task that cannot start as asked is a UsageError with a hint, and
// nothing is created.
func TestStartTaskRefusesWithoutChecks(t *testing.T) {
	repo := gitRepo(t)
	state := t.TempDir()
	spec := TaskSpec{Tiers: []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"true"}}}, Repo: repo}
	_, err := StartTask(context.Background(), NewTask{Prompt: "x", Spec: spec, StateDir: state}, Parts{})
	var u *exit.UsageError
	if !exit.IsUsage(err) || !strings.Contains(err.Error(), "no checks to judge the work with") {
		t.Fatalf("error %v", err)
	}
	if u, _ = err.(*exit.UsageError); u == nil || !strings.Contains(u.Hint, "--check") {
		t.Errorf("hint: %+v", u)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("state dir not empty: %v", entries)
	}
}

// startAside runs a task that writes file and leaves its branch unmerged.
func startAside(t *testing.T, repo, state, file, content, check string) taskengine.Result {
	t.Helper()
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo " + content + " > " + file}}},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: "none",
		Checks:  []gate.Check{{Name: "check", Shell: check}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	res, err := StartTask(context.Background(), NewTask{Prompt: "write " + file, Spec: spec, StateDir: state}, Parts{})
	if err != nil || res.Status != engine.StatusDone || res.Git.Merge.Status != "skipped" {
		t.Fatalf("task %s: %v %s %s", file, err, res.Status, res.Details)
	}
	return res
}

// Land: a branch whose base has not moved lands as it is; on a moved base
// its change is laid on the new head and gated there, and lands only if the
// checks pass on exactly that tree; a conflicting change does not land.
func TestLand(t *testing.T) {
	repo := gitRepo(t)
	state := t.TempDir()
	// At most two files: each task alone passes, both together do not.
	const fewFiles = `[ "$(ls | wc -l)" -le 2 ]`
	a := startAside(t, repo, state, "a.txt", "a", fewFiles)
	b := startAside(t, repo, state, "b.txt", "b", fewFiles)

	la, err := Land(context.Background(), state, a, "main", Parts{})
	if err != nil || la.Status != "merged" || la.Regated || la.Commit == "" {
		t.Fatalf("a: %+v, %v", la, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "a.txt")); err != nil {
		t.Errorf("a.txt is not in the checked-out main: %v", err)
	}
	head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	lb, err := Land(context.Background(), state, b, "main", Parts{})
	if err != nil || lb.Status != "gate-failed" || !lb.Regated || lb.Gate == nil || !strings.Contains(lb.Details, "the checks fail") {
		t.Fatalf("b: %+v, %v", lb, err)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != head {
		t.Errorf("main moved to %s after a failed gate", now)
	}

	c := startAside(t, repo, state, "answer.txt", "43", "true")
	d := startAside(t, repo, state, "answer.txt", "44", "true")
	if l, err := Land(context.Background(), state, c, "main", Parts{}); err != nil || l.Status != "merged" {
		t.Fatalf("c: %+v, %v", l, err)
	}
	if l, err := Land(context.Background(), state, d, "main", Parts{}); err != nil || l.Status != "conflict" || !strings.Contains(l.Details, "answer.txt") {
		t.Fatalf("d: %+v, %v", l, err)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// A task that a batch started is continued by resuming the batch: its
// stop notice names the batch, not the task's own run.
func TestStoppedTaskNamesItsBatch(t *testing.T) {
	for _, c := range []struct{ parent, want string }{
		{"", "task T stopped (interrupted); continue it with: jlgcli resume T"},
		{"B", "task T stopped (interrupted); continue it with its batch: jlgcli resume B"},
	} {
		if got := StoppedTask("T", c.parent, engine.StatusInterrupted); got != c.want {
			t.Errorf("StoppedTask(parent %q) = %q, want %q", c.parent, got, c.want)
		}
	}
}
