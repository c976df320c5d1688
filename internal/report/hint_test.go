package report

import (
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// A run that stopped for a reason the user can fix says what to do: the
// agent's own hint first, else the status's; a task the same from its
// attempts.
func TestHint(t *testing.T) {
	failed := func(hint string) []engine.Entry {
		return []engine.Entry{{Failure: &agent.Failure{Hint: hint}}, {}}
	}
	for _, c := range []struct {
		name string
		res  engine.Result
		want string // a part of the hint; "" for none
	}{
		{"done", engine.Result{Status: engine.StatusDone}, ""},
		{"agent's hint", engine.Result{Status: engine.StatusMaxIterations, Transcript: failed("run claude login")}, "run claude login"},
		{"no backend named", engine.Result{Status: engine.StatusBackendMissing}, "e.g. Claude Code: " + agent.InstallCommand(agent.Builtins[0])},
		{"built-in missing", engine.Result{Status: engine.StatusBackendMissing, Backend: "codex"}, "install it with: " + agent.InstallCommand("codex")},
		{"other missing", engine.Result{Status: engine.StatusBackendMissing, Backend: "mine"}, "install the agent CLI, or choose another backend with -b"},
		{"unknown", engine.Result{Status: engine.StatusBackendUnknown, Backend: "mine"}, "[backends.mine]"},
		{"refused done", engine.Result{Status: engine.StatusMaxIterations, GateFailed: true}, "a guard refused it"},
		{"no marker", engine.Result{Status: engine.StatusMaxIterations}, "raise --max-iterations"},
	} {
		got := Hint(c.res)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: Hint = %q, want it to hold %q", c.name, got, c.want)
		}
	}

	task := engine.TaskResult{Status: engine.StatusBackendMissing, Backend: "codex",
		Attempts: []engine.Attempt{{Failure: &agent.Failure{Hint: "log in"}}, {}}}
	if got := TaskHint(task); got != "log in" {
		t.Errorf("TaskHint of an attempt's failure = %q, want %q", got, "log in")
	}
	task.Attempts = nil
	if got, want := TaskHint(task), Hint(engine.Result{Status: task.Status, Backend: "codex"}); got != want {
		t.Errorf("TaskHint without attempts = %q, want the status's %q", got, want)
	}
}
