// Package agent holds the Agent interface that the engine drives, one adapter
// per agent CLI, the generic command agent, and the classification of their
// failures.
package agent

import (
	"context"
	"errors"
	"time"

	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// Agent is one agent CLI, driven headless.
type Agent interface {
	// Name is the backend name, e.g. "claude".
	Name() string
	// Check reports whether the agent can be used: installed, of a
	// supported version, and authenticated where a cheap probe can tell.
	Check(ctx context.Context) Availability
	// Run makes one call. The call is stopped when ctx ends. The error is
	// non-nil only when the call could not be made at all (e.g. the
	// executable vanished); every outcome of a call that ran, failures
	// included, is described by the Response.
	Run(ctx context.Context, req Request) (Response, error)
}

// Request is one call to an agent.
type Request struct {
	// Prompt is the text sent to the agent.
	Prompt string
	// Model selects the model where the CLI supports it; empty: its default.
	Model string
	// Dir is the working directory of the agent.
	Dir string
	// Env holds extra KEY=VALUE pairs added to jlgcli's own environment.
	Env []string
	// SessionID, when set, asks the CLI to continue that session.
	SessionID string
	// Output, when not nil, receives the agent's raw standard output as it
	// comes (for run directories and progress); it must not block.
	Output func(p []byte)
	// Notice, when not nil, receives as they come the lines in which the
	// CLI says it retries or fails (stderr lines such as "retrying in 2s",
	// stream events such as Claude Code's api_retry), for the live line;
	// it must not block.
	Notice func(line string)
	// StallTimeout, when positive, stops a call whose agent prints nothing
	// for that long; the response's failure is then FailStall.
	StallTimeout time.Duration
	// Box is the sandbox the call runs in (sandbox.Box.Agent); nil: none.
	Box *sandbox.Box
}

// Response is what one call produced.
type Response struct {
	// Text is the agent's final reply. It holds at most MaxReplyBytes; when
	// the reply was longer, its tail is kept and Truncated is set.
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	// SessionID is the CLI's session (thread) id, when it reports one.
	SessionID string `json:"sessionId,omitempty"`
	// Usage is what the call consumed, as far as the CLI tells.
	Usage Usage `json:"usage"`
	// Windows are the subscription windows the call reported, the last
	// report of each kind; none when the CLI reports none (see Window).
	Windows []Window `json:"windows,omitempty"`
	// ExitCode is the agent process's exit code (128+signal when killed).
	ExitCode int `json:"exitCode"`
	// Failure is set when the call failed; nil means it succeeded.
	Failure *Failure `json:"failure,omitempty"`
	// Duration is the wall time of the call.
	Duration time.Duration `json:"-"`
}

// Usage is what one call consumed.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// CostUSD is the cost the CLI reported; CostKnown tells whether it
	// reported one at all.
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens,
		CostUSD:      u.CostUSD + v.CostUSD,
		CostKnown:    u.CostKnown || v.CostKnown,
	}
}

// FailureKind classifies a failed call.
type FailureKind string

// The failure classes.
const (
	// FailAuth: the CLI is not logged in or its key was rejected.
	FailAuth FailureKind = "auth"
	// FailRateLimit: the provider refused the call for a usage limit.
	FailRateLimit FailureKind = "rate-limit"
	// FailAPI: the provider answered with an error (5xx, overloaded, ...).
	FailAPI FailureKind = "api-error"
	// FailCrash: the CLI exited non-zero or was killed for no reason it told.
	FailCrash FailureKind = "crash"
	// FailTimeout: jlgcli stopped the call because its time ran out.
	FailTimeout FailureKind = "timeout"
	// FailStall: jlgcli stopped the call because the agent printed nothing
	// for the stall timeout.
	FailStall FailureKind = "stall"
	// FailContext: the agent's session is full (context window or turn
	// limit); a fresh session can go on.
	FailContext FailureKind = "context"
	// FailLimit: the call reached a limit of its sandbox (processes,
	// memory, temporary space): the kernel refused or killed, or jlgcli
	// ended it.
	FailLimit FailureKind = "limit"
)

// Failure describes why a call failed.
type Failure struct {
	Kind FailureKind `json:"kind"`
	// Message is the CLI's own words, trimmed to one line where possible.
	Message string `json:"message"`
	// HTTPStatus is the provider's status code when the CLI reported it.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// ResetAt is when a rate limit resets, when the CLI said.
	ResetAt time.Time `json:"resetAt,omitzero"`
	// Hint, when the failure is one the user can fix, says how (printed
	// as the "hint:" line of the error).
	Hint string `json:"hint,omitempty"`
}

// Status is an agent's availability.
type Status string

// The availability statuses.
const (
	Available       Status = "available"
	Missing         Status = "missing"
	Unauthenticated Status = "unauthenticated"
	Unsupported     Status = "unsupported"
)

// Availability is the result of Check.
type Availability struct {
	Status  Status `json:"status"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	// Details says why, for any status but Available.
	Details string `json:"details,omitempty"`
	// Note, for an installed CLI, warns of what will make its calls fail
	// here (claude as root without IS_SANDBOX=1).
	Note string `json:"note,omitempty"`
}

// MaxReplyBytes bounds the reply text kept in memory for one call.
const MaxReplyBytes = 4 << 20

// PromptArgMax is the largest prompt ever put on a command line; a longer one
// goes through standard input or a file.
const PromptArgMax = 100 << 10

// ErrPromptTooLong is returned (wrapped) by a backend that could only put a
// prompt over PromptArgMax on its command line.
var ErrPromptTooLong = errors.New("prompt too long for the command line")
