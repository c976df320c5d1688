// Package engine runs the loop: prompt → agent → observe → decide, under the
// guards maxIterations, the global timeout and noProgressLimit. It does no I/O
// of its own: the agent, the clock and the progress sink are given to it.
package engine

import (
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
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
)

// Exit codes of the contract (README, DESIGN.md). An agent's own non-zero
// exit code passes through for StatusError.
const (
	ExitOK              = 0
	ExitError           = 1
	ExitBackendMissing  = 2
	ExitMaxIterations   = 4
	ExitNoProgress      = 5
	ExitUnauthenticated = 6
	ExitBudgetExceeded  = 7
	ExitUsage           = 64
	ExitInvalidJSON     = 65
	ExitRateLimited     = 69
	ExitTimeout         = 75
	ExitInterrupted     = 130
)

// ExitCode is the fixed exit code of a status; StatusError has none of its
// own (the agent's code is used) and gives ExitError.
func (s Status) ExitCode() int {
	switch s {
	case StatusDone:
		return ExitOK
	case StatusBackendMissing:
		return ExitBackendMissing
	case StatusMaxIterations:
		return ExitMaxIterations
	case StatusNoProgress:
		return ExitNoProgress
	case StatusBackendUnauthenticated:
		return ExitUnauthenticated
	case StatusBudgetExceeded:
		return ExitBudgetExceeded
	case StatusBackendUnknown, StatusBackendUnsupported:
		return ExitUsage
	case StatusInvalidJSON:
		return ExitInvalidJSON
	case StatusRateLimited:
		return ExitRateLimited
	case StatusTimeout:
		return ExitTimeout
	case StatusInterrupted:
		return ExitInterrupted
	}
	return ExitError
}

// Entry is one iteration in the transcript.
type Entry struct {
	Iteration    int            `json:"iteration"`
	StartedAt    string         `json:"startedAt"`
	Prompt       string         `json:"prompt"`
	Response     string         `json:"response"`
	DurationMs   int64          `json:"durationMs"`
	ExitCode     int            `json:"exitCode"`
	SessionID    string         `json:"sessionId,omitempty"`
	InputTokens  int64          `json:"inputTokens"`
	OutputTokens int64          `json:"outputTokens"`
	CostUSD      float64        `json:"costUsd"`
	CostKnown    bool           `json:"costKnown,omitempty"`
	Truncated    bool           `json:"truncated,omitempty"`
	Failure      *agent.Failure `json:"failure,omitempty"`
}

// Result is the outcome of a run, with the seed's field names.
type Result struct {
	ExitCode     int     `json:"exitCode"`
	Text         string  `json:"text"`
	Backend      string  `json:"backend"`
	Status       Status  `json:"status"`
	Iterations   int     `json:"iterations"`
	DurationMs   int64   `json:"durationMs"`
	Transcript   []Entry `json:"transcript"`
	Summary      string  `json:"summary,omitempty"`
	Details      string  `json:"details,omitempty"`
	RunID        string  `json:"runId"`
	CostUSD      float64 `json:"costUsd"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
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

// ms is d in whole milliseconds.
func ms(d time.Duration) int64 { return d.Milliseconds() }
