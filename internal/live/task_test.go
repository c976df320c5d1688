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

// An attempt's line says what the gate found first and, when the task
// escalates or stops, which rule or limit.
func TestAttemptTextSaysWhy(t *testing.T) {
	fail := gate.Report{Status: gate.StatusFail, Recommendation: gate.RecommendFixRequired,
		TestFailures: []gate.TestFailure{{Test: "TestComma", Error: "\nhumanize_test.go:12: got 1,000.5, want 1,000\nmore"}}}
	// The same-error rule's details name the checks' fingerprints, which
	// the line never shows (cut to its width, half a hash).
	same := &detect.Detection{Rule: "same-error", Attempts: []int{1, 2, 3}, Details: "attempts 1, 2 and 3 failed the gate the same way: go_test_-json_./...=v3:6dfb6045de5a10f1ed2be50b6761257d"}
	p := taskengine.Progress{Tier: "fast", Tiers: 2, Attempts: 3, InTier: 3}
	for _, c := range []struct {
		name string
		p    taskengine.Progress
		a    taskengine.Attempt
		want string
	}{
		{"retry", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionRetry},
			"W · gate fail: TestComma: humanize_test.go:12: got 1,000.5, want 1,000 · retry"},
		{"escalate on a loop", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionEscalate, Detection: same},
			"W · gate fail: TestComma: humanize_test.go:12: got 1,000.5, want 1,000 · escalate: same-error (attempts 1, 2 and 3 failed the gate the same way)"},
		{"escalate when spent", p, taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionEscalate},
			"W · gate fail: TestComma: humanize_test.go:12: got 1,000.5, want 1,000 · escalate: tier fast spent its 3 attempts"},
		{"stop on the budget", taskengine.Progress{Tier: "fast", Attempts: 3, CostUSD: 1.02, CostKnown: true, BudgetUSD: 1},
			taskengine.Attempt{Tier: "fast", Gate: gate.Report{Status: gate.StatusFail, Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "go test", ExitCode: 2, OutputTail: "ok\nFAIL\tpkg\t0.1s\n"}}}}, Action: taskengine.ActionStop},
			"W · gate fail: go test exited 2: FAIL\tpkg\t0.1s · stop: budget-exceeded $1.02 of $1.00"},
		{"stop on a loop", p, taskengine.Attempt{Tier: "smart", Gate: fail, Action: taskengine.ActionStop, Detection: same},
			"W · gate fail: TestComma: humanize_test.go:12: got 1,000.5, want 1,000 · stop: no-progress: same-error (attempts 1, 2 and 3 failed the gate the same way)"},
		{"pass", p, taskengine.Attempt{Tier: "fast", Gate: gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit}, Action: taskengine.ActionPass},
			"W · gate pass · pass"},
	} {
		if got := attemptText("W", c.p, c.a); got != c.want {
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
