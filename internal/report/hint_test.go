package report

import (
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
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

	task := taskengine.Result{Status: engine.StatusBackendMissing, Backend: "codex",
		Attempts: []taskengine.Attempt{{Failure: &agent.Failure{Hint: "log in"}}, {}}}
	if got := TaskHint(task); got != "log in" {
		t.Errorf("TaskHint of an attempt's failure = %q, want %q", got, "log in")
	}
	task.Attempts = nil
	if got, want := TaskHint(task), Hint(engine.Result{Status: task.Status, Backend: "codex"}); got != want {
		t.Errorf("TaskHint without attempts = %q, want the status's %q", got, want)
	}
}

// A task that stopped is told what a task can do: resume it (which gives
// its tier another turn, or takes a new budget or time limit), or run it
// again with more attempts or another tier; never a loop's
// --max-iterations or marker line, which task does not have.
func TestTaskHint(t *testing.T) {
	tiers := []taskengine.TierSummary{{Name: "fast", Attempts: 3}, {Name: "smart", Attempts: 2}}
	for _, c := range []struct {
		name string
		res  taskengine.Result
		want []string
	}{
		{"attempts spent", taskengine.Result{Status: engine.StatusMaxIterations, RunID: "r1", Tiers: tiers},
			[]string{"the 2 tiers spent 5 attempts without passing the checks", "jlgcli report r1", "jlgcli resume r1 gives the last tier another turn", "--attempts", "--tier"}},
		{"one tier", taskengine.Result{Status: engine.StatusMaxIterations, RunID: "r1", Tiers: tiers[:1]},
			[]string{"tier fast spent 3 attempts"}},
		{"loop", taskengine.Result{Status: engine.StatusNoProgress, RunID: "r2"},
			[]string{"went round in circles", "jlgcli resume r2 gives it another turn", "--tier"}},
		{"budget", taskengine.Result{Status: engine.StatusBudgetExceeded, RunID: "r3", CostUSD: 1.02, CostKnown: true, BudgetUSD: 1},
			[]string{"spent $1.0200 of its $1.00 budget", "jlgcli resume r3 --budget USD"}},
		{"time", taskengine.Result{Status: engine.StatusTimeout, RunID: "r4"}, []string{"jlgcli resume r4 --timeout D"}},
		{"rate limit", taskengine.Result{Status: engine.StatusRateLimited, RunID: "r5"}, []string{"jlgcli resume r5", "--max-wait"}},
		{"backend", taskengine.Result{Status: engine.StatusBackendUnauthenticated}, []string{"log in"}},
	} {
		got := TaskHint(c.res)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: TaskHint = %q, want it to hold %q", c.name, got, w)
			}
		}
		for _, bad := range []string{"--max-iterations", "marker line"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: TaskHint = %q, a loop's hint", c.name, got)
			}
		}
	}
	if got := TaskHint(taskengine.Result{Status: engine.StatusInvalidJSON}); got != "" {
		t.Errorf("TaskHint of invalid-json = %q, want none (a loop's status)", got)
	}
}
