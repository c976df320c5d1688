// Package exit is jlgcli's exit contract: the codes a command ends with,
// what each means and which run statuses end with it (the README's table
// and `jlgcli help exit-codes` are made from Table), and the one usage
// error (exit 64) with the line that tells the user what to do.
//
// It imports nothing of jlgcli's, so every layer can say "this is the
// user's mistake" without knowing how the command line reports it; the
// one place that turns an error into a code is cli.ExitCode.
package exit

import (
	"errors"
	"fmt"
	"slices"
)

// The codes of the contract (README, DESIGN.md). An agent's own non-zero
// exit code passes through for the status "error".
const (
	OK              = 0
	Error           = 1
	BackendMissing  = 2
	Incomplete      = 3
	MaxIterations   = 4
	NoProgress      = 5
	Unauthenticated = 6
	BudgetExceeded  = 7
	NeedsYou        = 8
	Usage           = 64
	InvalidJSON     = 65
	Unreachable     = 68
	RateLimited     = 69
	Timeout         = 75
	Interrupted     = 130
)

// Row is one line of the contract: the code, the name users see, the run
// statuses that end with it and what it means.
type Row struct {
	Code     int
	Name     string
	Statuses []string
	Meaning  string
}

// Table is the contract, in the README's order. Error (1) is the status
// "error"'s when the agent gave no code of its own, and any failure of
// jlgcli itself.
var Table = []Row{
	{OK, "done", []string{"done"}, "completion detected"},
	{BackendMissing, "backend-missing", []string{"backend-missing"}, "the agent's executable is not installed"},
	{Incomplete, "incomplete", []string{"incomplete"}, "batch: some task is not done (failed, blocked, conflict, not started); task: its change was kept on its branch for review (it touches jlgcli.toml or the repository's hooks); any command: a landing a stopped jlgcli left half done was put back, the checkout having changed since"},
	{MaxIterations, "max-iterations", []string{"max-iterations"}, "the iteration limit was reached"},
	{NoProgress, "no-progress", []string{"no-progress"}, "identical consecutive replies (noProgressLimit)"},
	{Unauthenticated, "backend-unauthenticated", []string{"backend-unauthenticated"}, "the agent CLI is not logged in / has no valid key"},
	{BudgetExceeded, "budget-exceeded", []string{"budget-exceeded"}, "the cost budget was spent"},
	{NeedsYou, "needs-you", []string{"needs-you"}, "pr, task --until: the pull-request loop gave up (a check that fails again at the same head, no check at all, rounds or merges spent, the PR closed); the PR's comment says why"},
	{Usage, "usage", []string{"backend-unknown", "backend-unsupported"}, "bad flag, bad config, unknown or unsupported backend"},
	{InvalidJSON, "invalid-json", []string{"invalid-json"}, "json completion and no valid status object"},
	{Unreachable, "server-unreachable", nil, "no Temporal server answered at the address (--temporal)"},
	{RateLimited, "rate-limited", []string{"rate-limited"}, "the provider's rate limit was hit"},
	{Timeout, "timeout", []string{"timeout"}, "the global time limit was reached"},
	{Interrupted, "interrupted", []string{"interrupted"}, "SIGINT/SIGTERM"},
}

// OfStatus is the fixed code of a run status (Table); a status in no row
// ("error") gives Error.
func OfStatus(status string) int {
	for _, row := range Table {
		if slices.Contains(row.Statuses, status) {
			return row.Code
		}
	}
	return Error
}

// UsageError is a command that cannot run as it was asked: a bad flag,
// configuration key or task sheet, a backend jlgcli does not know, a
// sandbox asked for that the machine cannot give (exit 64). Its hint, when
// set, says what the user can do.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NewUsage makes err a usage error with hint ("" for none).
func NewUsage(err error, hint string) error { return &UsageError{Err: err, Hint: hint} }

// Usagef is a usage error of a formatted message, with hint ("" for none).
func Usagef(hint, format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...), Hint: hint}
}

// IsUsage reports whether err is, or wraps, a usage error.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// WithHint adds to err a line telling the user what to do; its exit code
// stays err's.
func WithHint(err error, hint string) error { return &hinted{err: err, hint: hint} }

type hinted struct {
	err  error
	hint string
}

func (e *hinted) Error() string { return e.err.Error() }
func (e *hinted) Unwrap() error { return e.err }
func (e *hinted) Hint() string  { return e.hint }

// HintOf is the hint of the outermost error of err's chain that has one (a
// usage error's, WithHint's, or any error with a Hint method), or "".
func HintOf(err error) string {
	for err != nil {
		if u, ok := err.(*UsageError); ok && u.Hint != "" {
			return u.Hint
		}
		if h, ok := err.(interface{ Hint() string }); ok && h.Hint() != "" {
			return h.Hint()
		}
		err = errors.Unwrap(err)
	}
	return ""
}
