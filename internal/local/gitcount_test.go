package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// countGit puts on PATH a git that notes each of its runs in a file before
// it runs the real one, for the rest of the test; the function it returns
// reads how many ran since, by subcommand.
func countGit(t *testing.T) func() map[string]int {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "runs")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexec '%s' \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() map[string]int {
		data, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n := map[string]int{}
		for line := range strings.Lines(string(data)) {
			n[subcommand(strings.Fields(line))]++
		}
		return n
	}
}

// subcommand is git's subcommand in args, its own options (-c k=v,
// --git-dir=…) skipped.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "?"
}

func total(n map[string]int) int {
	sum := 0
	for _, k := range n {
		sum += k
	}
	return sum
}

// breakdown is n as "total (sub count, …)", the most run first.
func breakdown(n map[string]int) string {
	subs := make([]string, 0, len(n))
	for s := range n {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, s := range subs {
		parts = append(parts, fmt.Sprintf("%s %d", s, n[s]))
	}
	return fmt.Sprintf("%d (%s)", total(n), strings.Join(parts, ", "))
}

// maxGitPerBatchTask is how many git processes a batch task may run: a
// trivial task (one attempt that passes, its commit, its landing), with
// the batch's own calls shared among its tasks. It was measured (95 before
// issue 30, 200 for the 3 tasks of TestBatchTaskGitProcesses since), and
// holds the bookkeeping to what a task needs: a change that makes it run
// more fails here, not only in a benchmark.
const maxGitPerBatchTask = 67

// A batch's task runs no more git processes than it needs. Run with -v for
// the count by subcommand.
func TestBatchTaskGitProcesses(t *testing.T) {
	const n = 3
	repo := gitRepo(t)
	spec := BatchSpec{Repo: repo, Jobs: 1}
	for k := range n {
		id := fmt.Sprintf("t%d", k)
		spec.Tasks = append(spec.Tasks, BatchTask{ID: id, File: id + ".md", Title: id, Depends: []string{}, Prompt: "# " + id,
			Spec: TaskSpec{Tiers: []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
				Commands:  map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo x > " + id + ".txt"}}},
				TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: "none",
				Checks: []gate.Check{{Name: "true", Shell: "true"}}, Sandbox: sandbox.Config{Mode: sandbox.Off}}})
	}
	// The repository is opened by the caller, once per command (runs), as
	// the batch's own git calls are counted from here.
	opened, err := OpenRepo(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	count := countGit(t)
	res, err := StartBatch(context.Background(), opened, spec, t.TempDir(), BatchParts{})
	if err != nil || res.Status != "done" {
		t.Fatalf("%v: %s %s", err, res.Status, res.Details)
	}
	ran := count()
	t.Logf("%d tasks: %s git processes", n, breakdown(ran))
	if got := total(ran); got > n*maxGitPerBatchTask {
		t.Errorf("a batch of %d tasks ran %d git processes, more than %d a task: %s", n, got, maxGitPerBatchTask, breakdown(ran))
	}
}
