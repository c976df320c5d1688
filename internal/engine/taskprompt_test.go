package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/gate"
)

// goTestFailure is a gate report as the default Go gate gives it: a failed
// test and the check's fingerprint, which the same-error rule compares.
func goTestFailure(msg string) gate.Report {
	r := failReport(msg)
	r.Checks[0].Name, r.Checks[0].Fingerprint = "go test ./...", "v1:0b24c0ffee0b24c0ffee0b24c0ffee00"
	return r
}

func failedAttempt(n int, tier, reply, diff, msg string) Attempt {
	return Attempt{Number: n, Tier: tier, TierIndex: 0, InTier: n, Backend: "fake", Response: reply, AttemptDiff: diff,
		Change: Change{Files: nil}, Gate: goTestFailure(msg), Action: ActionRetry, Start: fmt.Sprintf("snap-%d", 2*n-1),
		Result: fmt.Sprintf("snap-%d", 2*n)}
}

// TestEscalationPromptShowsTheEarlierAttempts: the tier that takes over is
// shown, the most recent first, each earlier attempt's diff, the first lines
// of its reply and how the checks failed, as text: never a fingerprint.
func TestEscalationPromptShowsTheEarlierAttempts(t *testing.T) {
	var reply []string
	for i := 1; i <= 15; i++ {
		reply = append(reply, fmt.Sprintf("reply line %d", i))
	}
	a1 := failedAttempt(1, "fast", "I looked at times.go.\nChanged the rounding.", "--- a/times.go\n+++ b/times.go\n@@ -3 +3 @@\n-\treturn d / 2\n+\treturn d / 3\n",
		"TestRelTime/one_hour: want \"1 hour ago\", got \"59 minutes ago\"")
	a2 := failedAttempt(2, "fast", strings.Join(reply, "\n"), "--- a/times.go\n+++ b/times.go\n@@ -3 +3 @@\n-\treturn d / 3\n+\treturn d / 4\n",
		"TestRelTime/one_hour: want \"1 hour ago\", got \"58 minutes ago\"")
	a2.Action = ActionEscalate
	a2.Detection = &detect.Detection{Rule: "same-error", Attempts: []int{1, 2},
		Details: "attempts 1 and 2 failed the gate the same way: go_test_./...=v1:0b24c0ffee0b24c0ffee0b24c0ffee00"}
	h := History{State: TaskState{Attempts: 2, Tier: 1, StepBase: "snap-1", Start: "snap-1"}, Attempts: []Attempt{a1, a2}}
	p := developerPrompt("Fix the relative times", EscalateFromBase, h, Next{Number: 3, TierIndex: 1, InTier: 1, Start: "snap-1"})

	mustContain(t, "the prompt", p,
		// Attempt 2's diff, reply and failure (the last check result).
		"### Attempt 2 (tier fast)", "-\treturn d / 3\n+\treturn d / 4\n", "reply line 1\n", "reply line 10\n", "… (5 more lines cut)",
		`got "58 minutes ago"`,
		// Attempt 1's diff, reply and failure as text.
		"### Attempt 1 (tier fast)", "-\treturn d / 2\n+\treturn d / 3\n", "I looked at times.go.\nChanged the rounding.",
		`TestRelTime/one_hour: want "1 hour ago", got "59 minutes ago" (a_test.go:7)`,
		"attempts 1 and 2 failed the gate the same way")
	mustNotContain(t, "the prompt", p, "reply line 11", "=v1:", "0b24c0ffee")
	if strings.Index(p, "### Attempt 2") > strings.Index(p, "### Attempt 1") {
		t.Errorf("attempt 1 is shown before attempt 2: the most recent must come first:\n%s", p)
	}
}

// TestNudgeHasNoFingerprint: the nudge tells what repeated in words.
func TestNudgeHasNoFingerprint(t *testing.T) {
	d := detect.Detection{Rule: "same-error", Rules: []string{"same-error", "oscillation"}, Attempts: []int{1, 2, 3},
		Details: "attempts 1, 2 and 3 failed the gate the same way: go_test_./...=v1:0b24c0ffee; attempt 3 brought back the change of attempt 1, after attempt 2's"}
	s := nudge(d, goTestFailure("TestX: boom"))
	mustContain(t, "the nudge", s, "attempts 1, 2 and 3 failed the gate the same way; attempt 3 brought back the change of attempt 1", "TestX: boom")
	mustNotContain(t, "the nudge", s, "=v1:", "0b24c0ffee")
}

// TestEscalationPromptIsBounded: many attempts with big diffs, replies and
// failures make a prompt of bounded size, the most recent in detail and the
// others named.
func TestEscalationPromptIsBounded(t *testing.T) {
	var attempts []Attempt
	big := strings.Repeat("x", 200)
	for n := 1; n <= 40; n++ {
		var diff, reply strings.Builder
		for i := range 400 {
			fmt.Fprintf(&diff, "+line %d of attempt %d %s\n", i, n, big)
			fmt.Fprintf(&reply, "reply %d of attempt %d %s\n", i, n, big)
		}
		d, _ := bound(diff.String(), MaxKeptDiff)
		a := failedAttempt(n, "fast", reply.String(), d, fmt.Sprintf("TestBig: attempt %d: %s", n, strings.Repeat("y", 3000)))
		attempts = append(attempts, a)
	}
	h := History{State: TaskState{Attempts: 40, Tier: 1, StepBase: "snap-1", Start: "snap-1"}, Attempts: attempts}
	p := developerPrompt("A task", EscalateFromBase, h, Next{Number: 41, TierIndex: 1, InTier: 1, Start: "snap-1"})
	if max := MaxAttemptsDetail + MaxGateDigest + 8<<10; len(p) > max {
		t.Errorf("the prompt has %d bytes, more than %d", len(p), max)
	}
	mustContain(t, "the prompt", p, "### Attempt 40 (tier fast)", "+line 0 of attempt 40", "more lines cut)", "reply 0 of attempt 40",
		"TestBig: attempt 39", "older attempts not shown in detail")
	mustNotContain(t, "the prompt", p, "### Attempt 1 (tier fast)", "reply 10 of attempt 40")
}

func TestHeadLines(t *testing.T) {
	for _, c := range []struct {
		in       string
		n, limit int
		want     string
	}{
		{"a\nb\nc\n", 5, 100, "a\nb\nc\n"},
		{"a\nb\nc", 2, 100, "a\nb\n… (1 more lines cut)\n"},
		{"aaaa\nbbbb\ncccc\n", -1, 10, "aaaa\nbbbb\n… (1 more lines cut)\n"},
		{"éééé\nb", -1, 5, "éé…\n… (2 more lines cut)\n"},
	} {
		if got := headLines(c.in, c.n, c.limit); got != c.want {
			t.Errorf("headLines(%q, %d, %d) = %q, want %q", c.in, c.n, c.limit, got, c.want)
		}
	}
}
