package report

import (
	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
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
// attempt that had one, else the hint of the status (Hint).
func TaskHint(res engine.TaskResult) string {
	for i := len(res.Attempts) - 1; i >= 0; i-- {
		if f := res.Attempts[i].Failure; f != nil && f.Hint != "" {
			return f.Hint
		}
	}
	return Hint(engine.Result{Status: res.Status, Backend: res.Backend})
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
