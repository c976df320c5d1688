package report

import (
	"fmt"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Hint says what to do about a run that stopped for a reason the user can
// fix: the hint of the last agent failure that has one
// (agent.Failure.Hint), else that of the status; "" when there is none.
// Every front end (the command line, the web board, hooks) shows the same
// words.
func Hint(res engine.Result) string {
	for i := len(res.Transcript) - 1; i >= 0; i-- {
		if f := res.Transcript[i].Failure; f != nil && f.Hint != "" {
			return f.Hint
		}
	}
	switch res.Status {
	case engine.StatusBackendMissing:
		return missingHint(res.Backend)
	case engine.StatusBackendUnauthenticated:
		return "log in with the agent CLI itself, or set its API key in the environment (see 'jlgcli backends')"
	case engine.StatusBackendUnknown:
		return "define it under [backends." + res.Backend + "] in jlgcli.toml, or pick a known backend"
	case engine.StatusMaxIterations:
		if res.GateFailed {
			return "the agent claimed done but a guard refused it (details above); fix that, or resume with a higher --max-iterations"
		}
		return "raise --max-iterations, or check that the agent ends its reply with the marker line"
	case engine.StatusInvalidJSON:
		return `in json mode the agent must end with a JSON object such as {"status":"done","summary":"..."}`
	}
	return ""
}

// TaskHint says what to do about a task that stopped for a reason the user
// can fix: the agent's own failure hint (agent.Failure.Hint) of the last
// attempt that had one, else the task's own for a status of tiers,
// attempts, budget and time (taskStatusHint), else the hint of the status
// (Hint) for what a task shares with a loop (a backend missing or not
// logged in). A loop's hints (--max-iterations, the marker line) are never
// a task's.
func TaskHint(res taskengine.Result) string {
	for i := len(res.Attempts) - 1; i >= 0; i-- {
		if f := res.Attempts[i].Failure; f != nil && f.Hint != "" {
			return f.Hint
		}
	}
	if h := taskStatusHint(res); h != "" {
		return h
	}
	switch res.Status {
	case engine.StatusMaxIterations, engine.StatusInvalidJSON:
		return ""
	}
	return Hint(engine.Result{Status: res.Status, Backend: res.Backend})
}

// taskStatusHint is what to do about a task stopped by its tiers, its
// budget or its time: what resume gives it, and what a task started again
// could change.
func taskStatusHint(res taskengine.Result) string {
	id := res.RunID
	if id == "" {
		id = "RUN"
	}
	resume := "jlgcli resume " + id
	switch res.Status {
	case engine.StatusMaxIterations:
		return fmt.Sprintf("%s spent %s without passing the checks: read what they still say (jlgcli report %s); "+
			"%s gives the last tier another turn, or run the task again with more --attempts or a stronger --tier",
			tiersText(res), plural.N(attemptsMade(res), "attempt"), id, resume)
	case engine.StatusNoProgress:
		return fmt.Sprintf("the last tier went round in circles: read what the checks still say (jlgcli report %s); "+
			"%s gives it another turn from where the step started, or run the task again with a stronger --tier or a more precise task", id, resume)
	case engine.StatusBudgetExceeded:
		return fmt.Sprintf("the task spent %s of its %s budget: %s --budget USD raises it (counting what was spent)",
			cost.Amount(res.CostUSD, res.CostKnown, res.CostEstimated), fmt.Sprintf("$%.2f", res.BudgetUSD), resume)
	case engine.StatusTimeout:
		return resume + " --timeout D raises the task's time limit (counting the time used), e.g. --timeout 1h"
	case engine.StatusRateLimited:
		return resume + " continues it once the agent's limit resets; --max-wait D lets it wait for the reset"
	}
	return ""
}

// tiersText names the tiers of a task: "tier fast", "the 2 tiers".
func tiersText(res taskengine.Result) string {
	switch n := len(res.Tiers); {
	case n == 1:
		return "tier " + res.Tiers[0].Name
	case n > 1:
		return fmt.Sprintf("the %d tiers", n)
	}
	return "the tiers"
}

// attemptsMade counts a task's attempts (the planner's call aside).
func attemptsMade(res taskengine.Result) int {
	n := 0
	for _, t := range res.Tiers {
		n += t.Attempts
	}
	if n == 0 {
		n = len(res.Attempts)
	}
	return n
}

// missingHint says what to install when the agent CLI of backend is not
// installed: its npm package for a built-in one, Claude Code's (the first
// that jlgcli picks) when no backend was named.
func missingHint(backend string) string {
	if backend == "" {
		return "install an agent CLI, e.g. Claude Code: " + agent.InstallCommand(agent.Builtins[0]) +
			" (Node.js 22 or later), or configure a backend; 'jlgcli backends' lists each one's package"
	}
	if c := agent.InstallCommand(backend); c != "" {
		return "install it with: " + c + " (Node.js 22 or later), or choose another backend with -b; 'jlgcli backends' lists each one's package"
	}
	return "install the agent CLI, or choose another backend with -b (see 'jlgcli backends')"
}
