// Package engine is jlgcli's loop engine, behind `run` and `loop` (seed
// 001; engine.go, state.go: Run, Replay, ResultOf): prompt → agent →
// observe → decide, under the guards maxIterations, the global timeout and
// noProgressLimit. It does no I/O of its own: the agent, the clock, the
// journal and the progress sink are given to it.
//
// It also holds what the task engine (package taskengine, behind `task`
// and `batch`) shares with it; taskengine imports engine, never the other
// way round. Shared are the statuses of how a run ends (result.go, whose
// codes are package exit's), the journal's events and stop (state.go:
// Event, EventStart, StopData…), the subscription windows and the window
// limit's decision (window.go), the rate-limit wait, the heartbeat and the
// sleep (wait.go), and the names of an environment (env.go).
package engine

import (
	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// Status is how a run ended.
type Status string

// The statuses, with their exit codes in ExitCode.
const (
	StatusDone                   Status = "done"
	StatusBackendMissing         Status = "backend-missing"
	StatusMaxIterations          Status = "max-iterations"
	StatusNoProgress             Status = "no-progress"
	StatusBackendUnauthenticated Status = "backend-unauthenticated"
	StatusBudgetExceeded         Status = "budget-exceeded"
	StatusBackendUnknown         Status = "backend-unknown"
	StatusBackendUnsupported     Status = "backend-unsupported"
	StatusInvalidJSON            Status = "invalid-json"
	StatusRateLimited            Status = "rate-limited"
	StatusTimeout                Status = "timeout"
	StatusInterrupted            Status = "interrupted"
	StatusError                  Status = "error"
	// StatusIncomplete ends a batch some of whose tasks are not done, a
	// task whose change passed but was held for the user's review (it
	// touches jlgcli.toml or the repository's hooks: git.RefusedReview),
	// and any command that found a landing left half done by a stopped
	// jlgcli in a checkout the user changed since (local.LandingError).
	StatusIncomplete Status = "incomplete"
	// StatusNeedsYou ends a pull-request loop that gave up: what blocks the
	// pull request needs a person (its comment on the pull request and the
	// run's result say what).
	StatusNeedsYou Status = "needs-you"
)

// ExitCode is the fixed exit code of a status (exit.Table); StatusError has
// none of its own (the agent's code is used) and gives exit.Error.
func (s Status) ExitCode() int { return exit.OfStatus(string(s)) }

// Entry is one iteration in the transcript.
type Entry struct {
	Iteration    int             `json:"iteration"`
	StartedAt    string          `json:"startedAt"`
	Prompt       string          `json:"prompt"`
	Response     string          `json:"response"`
	DurationMs   millis.Duration `json:"durationMs"`
	ExitCode     int             `json:"exitCode"`
	SessionID    string          `json:"sessionId,omitempty"`
	InputTokens  int64           `json:"inputTokens"`
	OutputTokens int64           `json:"outputTokens"`
	CostUSD      float64         `json:"costUsd"`
	CostKnown    bool            `json:"costKnown,omitempty"`
	Truncated    bool            `json:"truncated,omitempty"`
	Failure      *agent.Failure  `json:"failure,omitempty"`
	// Windows are the subscription windows the call reported.
	Windows []agent.Window `json:"windows,omitempty"`
	// Refusal is why the iteration was refused (a guard of done, or one
	// that judges every call); the journal keeps it in IterationData.
	Refusal *Refusal `json:"refusal,omitempty"`
}

// Result is the outcome of a run, with the seed's field names.
type Result struct {
	ExitCode     int             `json:"exitCode"`
	Text         string          `json:"text"`
	Backend      string          `json:"backend"`
	Status       Status          `json:"status"`
	Iterations   int             `json:"iterations"`
	DurationMs   millis.Duration `json:"durationMs"`
	Transcript   []Entry         `json:"transcript"`
	Summary      string          `json:"summary,omitempty"`
	Details      string          `json:"details,omitempty"`
	RunID        string          `json:"runId"`
	CostUSD      float64         `json:"costUsd"`
	InputTokens  int64           `json:"inputTokens"`
	OutputTokens int64           `json:"outputTokens"`
	// CostKnown tells whether the agent reported any cost; when false,
	// CostUSD is 0 because the CLI reports none, not because it was free.
	CostKnown bool   `json:"costKnown"`
	SessionID string `json:"sessionId,omitempty"`
	// Truncated is set when a reply was longer than jlgcli keeps in memory;
	// its tail was kept.
	Truncated bool           `json:"truncated,omitempty"`
	Failure   *agent.Failure `json:"failure,omitempty"`
	// GateFailed is set when the run stopped (not done) while the last
	// reply that claimed done had been refused by a guard (checks,
	// checklist, premature stop); Details says which and why.
	GateFailed bool `json:"gateFailed,omitempty"`
	// Windows are the last known use of the subscription windows the
	// agent reported (none when it reports none).
	Windows Windows `json:"windows,omitempty"`
}

func (r *Result) add(e Entry, u agent.Usage) {
	r.Transcript = append(r.Transcript, e)
	r.Iterations = len(r.Transcript)
	r.Text = e.Response
	r.InputTokens += u.InputTokens
	r.OutputTokens += u.OutputTokens
	r.CostUSD += u.CostUSD
	r.CostKnown = r.CostKnown || u.CostKnown
	r.Truncated = r.Truncated || e.Truncated
	if e.SessionID != "" {
		r.SessionID = e.SessionID
	}
}

func (r *Result) stop(s Status, details string) {
	r.Status = s
	r.ExitCode = s.ExitCode()
	r.Details = details
}
