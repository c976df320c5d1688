package live

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// An attempt's line says the gate's status first, then what the task does
// and, when it escalates or stops, which rule or limit, then what failed,
// what it cost and where the task stands; the check that failed comes
// last.
func TestAttemptTextSaysWhy(t *testing.T) {
	fail := gate.Report{Status: gate.StatusFail, Recommendation: gate.RecommendFixRequired,
		TestFailures: []gate.TestFailure{{Test: "TestComma", Check: "go test ./...", Error: "\nhumanize_test.go:12: got 1,000.5, want 1,000\nmore"}},
		Checks:       []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "go build ./...", Passed: true}}, {CheckResult: gate.CheckResult{Name: "go test ./...", ExitCode: 1}}}}
	// A failure no parser understood: the check's command is the test's
	// name, given once, last.
	shell := gate.Report{Status: gate.StatusFail,
		TestFailures: []gate.TestFailure{{Test: "sh check.sh", Check: "sh check.sh", Error: "exited with status 1:\nFAIL: the answer is 1, want 42"}},
		Checks:       []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "sh check.sh", ExitCode: 1}}}}
	timedOut := gate.Report{Status: gate.StatusFail,
		RuntimeErrors: []string{`check "make test" timed out after 5m0s and was stopped (an infinite loop or a deadlock?)`},
		Checks:        []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "make test", TimedOut: true}}}}
	// The same-error rule's details name the checks' fingerprints, which
	// the line never shows (cut to its width, half a hash).
	same := &detect.Detection{Rule: "same-error", Attempts: []int{1, 2, 3}, Details: "attempts 1, 2 and 3 failed the gate the same way: go_test_-json_./...=v3:6dfb6045de5a10f1ed2be50b6761257d"}
	p := taskengine.Progress{Tier: "fast", Tiers: 2, Attempts: 3, InTier: 3}
	const where = " · cost unknown · tier fast (1/2) · attempt 3/3 · 0s"
	for _, c := range []struct {
		name string
		p    taskengine.Progress
		a    taskengine.Attempt
		want string
	}{
		{"retry", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionRetry},
			"gate fail · retry · TestComma: humanize_test.go:12: got 1,000.5, want 1,000" + where + " · check: go test ./..."},
		{"a check's own failure", p, taskengine.Attempt{Tier: "fast", Gate: shell, Action: taskengine.ActionRetry},
			"gate fail · retry · exit 1: FAIL: the answer is 1, want 42" + where + " · check: sh check.sh"},
		{"a timeout", p, taskengine.Attempt{Tier: "fast", Gate: timedOut, Action: taskengine.ActionRetry},
			"gate fail · retry · timed out after 5m0s and was stopped (an infinite loop or a deadlock?)" + where + " · check: make test"},
		{"escalate on a loop", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionEscalate, Detection: same},
			"gate fail · escalate: same-error (attempts 1, 2 and 3 failed the gate the same way) · TestComma: humanize_test.go:12: got 1,000.5, want 1,000" + where + " · check: go test ./..."},
		{"escalate when spent", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionEscalate},
			"gate fail · escalate: tier fast spent its 3 attempts · TestComma: humanize_test.go:12: got 1,000.5, want 1,000" + where + " · check: go test ./..."},
		{"stop on the budget", taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 3, Attempts: 3, CostUSD: 1.02, CostKnown: true, BudgetUSD: 1},
			taskengine.Attempt{Tier: "fast", Gate: gate.Report{Status: gate.StatusFail, Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "go test", ExitCode: 2, OutputTail: "ok\nFAIL\tpkg\t0.1s\n"}}}}, Action: taskengine.ActionStop},
			"gate fail · stop: budget-exceeded $1.02 of $1.00 · exit 2: FAIL\tpkg\t0.1s · $1.0200/$1.00 · tier fast (1/1) · attempt 3/3 · 0s · check: go test"},
		{"stop on a loop", p, taskengine.Attempt{Tier: "smart", Gate: fail, Action: taskengine.ActionStop, Detection: same},
			"gate fail · stop: no-progress: same-error (attempts 1, 2 and 3 failed the gate the same way) · TestComma: humanize_test.go:12: got 1,000.5, want 1,000" + where + " · check: go test ./..."},
		{"pass", p, taskengine.Attempt{Tier: "fast", Gate: gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit}, Action: taskengine.ActionPass},
			"gate pass · pass" + where},
	} {
		if got := attemptText(c.p, c.a, time.Now()); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// A task's line gives the windows its agents last reported, after the cost.
func TestTaskTextWindows(t *testing.T) {
	reset := time.Now().Add(time.Hour)
	p := taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, CostUSD: 0.5, CostKnown: true,
		Windows: engine.Windows{{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: reset}}}
	got := taskText(p, time.Now())
	if want := "tier fast (1/1) · attempt 1/3 · $0.5000 · 5h 92% (resets " + reset.Format("15:04") + ") · "; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start with %q", got, want)
	}
}

// A task's line numbers an attempt as its commit, its refs and the report
// do, the task's attempt number, when the tier's own count differs (a tier
// that took over, a turn that a resume gave); then where the tier stands.
func TestTaskTextNumbersTheAttempt(t *testing.T) {
	for _, c := range []struct {
		p    taskengine.Progress
		want string
	}{
		{taskengine.Progress{Tier: "fast", Tiers: 2, InTier: 2, Attempts: 3, Number: 2}, "tier fast (1/2) · attempt 2/3 · "},
		{taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 2, Number: 3}, "tier fast (1/1) · attempt 3 (1/2 in tier) · "},
		{taskengine.Progress{Tier: "smart", TierIndex: 1, Tiers: 2, InTier: 1, Attempts: 3, Number: 4}, "tier smart (2/2) · attempt 4 (1/3 in tier) · "},
	} {
		if got := taskText(c.p, time.Now()); !strings.HasPrefix(got, c.want) {
			t.Errorf("got %q, want it to start with %q", got, c.want)
		}
	}
}
