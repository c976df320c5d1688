package local

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// A task one of whose agents cannot run (a tier's, the planner's or the
// reviewer's backend unknown; a command backend not installed) is a result
// that says which, with its exit code, and nothing is created: no run, no
// branch.
func TestTaskWhoseAgentCannotRunCreatesNothing(t *testing.T) {
	ok := TierSpec{Name: "fake", Backend: "fake", Attempts: 1}
	for _, c := range []struct {
		name    string
		edit    func(s *TaskSpec)
		status  engine.Status
		code    int
		details string
	}{
		{name: "tier", edit: func(s *TaskSpec) { s.Tiers = append(s.Tiers, TierSpec{Name: "big", Backend: "nope", Attempts: 1}) },
			status: engine.StatusBackendUnknown, code: exit.Usage, details: "tier big: "},
		{name: "planner", edit: func(s *TaskSpec) { s.Planner = &TierSpec{Name: "planner", Backend: "nope", Attempts: 1} },
			status: engine.StatusBackendUnknown, code: exit.Usage, details: "tier planner: "},
		{name: "reviewer", edit: func(s *TaskSpec) { s.Reviewer = &TierSpec{Name: "review", Backend: "nope", Attempts: 1} },
			status: engine.StatusBackendUnknown, code: exit.Usage, details: "tier review: "},
		{name: "not installed", edit: func(s *TaskSpec) {
			s.Commands["fake"] = agent.CommandSpec{Command: []string{"/nonexistent/jlgcli-test-agent"}}
		}, status: engine.StatusBackendMissing, code: exit.OfStatus(string(engine.StatusBackendMissing)), details: "jlgcli-test-agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := gitRepo(t)
			state := t.TempDir()
			spec := TaskSpec{Tiers: []TierSpec{ok}, Repo: repo, TimeoutMs: 60000, Commit: "branch", Merge: "squash",
				Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"true"}}},
				Checks:   []gate.Check{{Name: "true", Shell: "true"}}, Sandbox: sandbox.Config{Mode: sandbox.Off}}
			c.edit(&spec)
			res, err := StartTask(context.Background(), NewTask{Prompt: "x", Spec: spec, StateDir: state}, Parts{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status || res.ExitCode != c.code || res.ExitCode == 0 || !strings.Contains(res.Details, c.details) {
				t.Errorf("%s (exit %d): %s; want %s (exit %d) saying %q", res.Status, res.ExitCode, res.Details, c.status, c.code, c.details)
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
