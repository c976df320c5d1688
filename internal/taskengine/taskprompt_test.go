package taskengine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
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
	h := History{State: State{Attempts: 2, Tier: 1, StepBase: "snap-1", Start: "snap-1"}, Attempts: []Attempt{a1, a2}}
	p := developerPrompt("Fix the relative times", h, Next{Number: 3, TierIndex: 1, InTier: 1, Start: "snap-1"})

	mustContain(t, "the prompt", p,
		// Attempt 2's diff, reply and failure (the last check result).
		"### Attempt 2 (tier fast)", "-\treturn d / 3\n+\treturn d / 4\n", "reply line 1\n", "reply line 10\n", "… (5 more lines cut)",
		`got "58 minutes ago"`,
		// Attempt 1's diff, reply and failure as text.
		"### Attempt 1 (tier fast)", "-\treturn d / 2\n+\treturn d / 3\n", "I looked at times.go.\nChanged the rounding.",
		`TestAnswer (a_test.go:7): TestRelTime/one_hour: want "1 hour ago", got "59 minutes ago"`,
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
	h := History{State: State{Attempts: 40, Tier: 1, StepBase: "snap-1", Start: "snap-1"}, Attempts: attempts}
	p := developerPrompt("A task", h, Next{Number: 41, TierIndex: 1, InTier: 1, Start: "snap-1"})
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

// TestResumedTurnStartsWhereItsPromptSays: a task stopped because its tier
// spent its attempts gets, on resume, a new turn that starts where a tier
// taking over starts: the step's start by default (the earlier edits set
// aside), the last attempt's tree with EscalateFromLast; the prompt says
// which. A second resume after the new turn is cut short makes that turn's
// attempt again from the same tree.
func TestResumedTurnStartsWhereItsPromptSays(t *testing.T) {
	for _, c := range []struct {
		from     EscalateFrom
		found    string // what the resumed attempt finds in a.go
		says     string
		mustNot  []string
		restored string
	}{
		{EscalateFromBase, "original content", "Tier t1 did not get the checks to pass in its earlier attempts; the task was resumed to give it more. " +
			"Its changes were set aside: the working tree is back where this step started.",
			[]string{"You take over", "holds"}, "snap-1"},
		{EscalateFromLast, "wrong answer", "the task was resumed to give it more. The working tree holds its last attempt's changes (attempt 1)",
			[]string{"You take over", "set aside"}, "snap-2"},
	} {
		t.Run(string(c.from), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := newWorld("Fix the answer", []tierSpec{{name: "t1", attempts: 1}}, answer("right answer", nil))
			w.opts.EscalateFrom = c.from
			a := w.agents["t1"]
			a.replies = []reply{
				{write: map[string]string{"a.go": "wrong answer", "stray.go": "oops"}, resp: agent.Response{Text: "wrote wrong answer"}},
				{before: cancel, write: map[string]string{"a.go": "half an edit"}, resp: agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}},
				edit("a.go", "right answer"),
			}
			policy := Policy{Task: w.opts.Task, Tiers: w.opts.Tiers, EscalateFrom: c.from}
			resume := func(ctx context.Context) Result {
				j, err := Replay(w.journal.all())
				if err != nil {
					t.Fatal(err)
				}
				j.Resume.State = policy.Resumed(j.Resume.State, j.Stop)
				w.opts.Resume = &j.Resume
				return Run(ctx, w.opts)
			}
			if r := w.run(context.Background()); r.Status != engine.StatusMaxIterations {
				t.Fatalf("status %s (%s)", r.Status, r.Details)
			}
			if r := resume(ctx); r.Status != engine.StatusInterrupted {
				t.Fatalf("first resume: status %s (%s)", r.Status, r.Details)
			}
			r := resume(context.Background())
			if r.Status != engine.StatusDone || len(r.Attempts) != 2 || r.Attempts[1].InTier != 1 {
				t.Fatalf("second resume: status %s (%s), %d attempts", r.Status, r.Details, len(r.Attempts))
			}
			p := a.prompts()
			for i := 1; i <= 2; i++ {
				if got := a.seen[i]["a.go"]; got != c.found {
					t.Errorf("call %d found a.go %q, want %q", i+1, got, c.found)
				}
				mustContain(t, fmt.Sprintf("prompt %d", i+1), p[i], c.says)
				mustNotContain(t, fmt.Sprintf("prompt %d", i+1), p[i], c.mustNot...)
			}
			if _, stray := a.seen[2]["stray.go"]; stray != (c.from == EscalateFromLast) {
				t.Errorf("the resumed attempt found stray.go: %v", stray)
			}
			if n := len(w.ws.restores); n == 0 || w.ws.restores[n-1] != c.restored {
				t.Errorf("restores %v: the last must be %s", w.ws.restores, c.restored)
			}
			checkReplay(t, w.journal.all(), r)
		})
	}
}

// TestStartingPoint: the prompt's starting point reads the commit the tree
// is restored to.
func TestStartingPoint(t *testing.T) {
	t1 := []Attempt{{Number: 1, Tier: "t1", TierIndex: 0, Start: "base", Result: "r1"}, {Number: 2, Tier: "t1", TierIndex: 0, Start: "r1", Result: "r2"}}
	for _, c := range []struct {
		name    string
		earlier []Attempt
		next    Next
		want    string
	}{
		{"first", nil, Next{Number: 1, InTier: 1}, "The working tree is the repository as this step started."},
		{"retry", t1, Next{Number: 3, TierIndex: 0, InTier: 3, Start: "r2"}, "holds the changes of your previous attempt (attempt 2)"},
		{"escalate from base", t1, Next{Number: 3, TierIndex: 1, InTier: 1, Start: "base"}, "You take over from tier t1, which did not get the checks to pass. Its changes were set aside"},
		{"escalate from last", t1, Next{Number: 3, TierIndex: 1, InTier: 1, Start: "r2"}, "You take over from tier t1, which did not get the checks to pass. The working tree holds its last attempt's changes (attempt 2)"},
		{"resumed from base", t1, Next{Number: 3, TierIndex: 0, InTier: 1, Start: "base"}, "Tier t1 did not get the checks to pass in its earlier attempts; the task was resumed to give it more. Its changes were set aside"},
		{"resumed from last", t1, Next{Number: 3, TierIndex: 0, InTier: 1, Start: "r2"}, "resumed to give it more. The working tree holds its last attempt's changes (attempt 2)"},
		{"another attempt's tree", t1, Next{Number: 3, TierIndex: 1, InTier: 1, Start: "r1"}, "The working tree holds the changes that attempt 1 left."},
	} {
		if got := startingPoint(c.earlier, "base", c.next); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to hold %q", c.name, got, c.want)
		}
	}
}

// A refused weakening of the tests is told once, under "Refused", and a
// failure whose file has no line number is located by its file alone.
func TestGateDigestTellsAFindingOnce(t *testing.T) {
	msg := "the test file add_test.go existed before the task and the change removes or alters 1 line of it"
	r := gate.Report{
		Status: gate.StatusFail,
		TestFailures: []gate.TestFailure{
			{Test: "anti-gaming: " + gate.RuleWeakenedTest, Error: msg, File: "add_test.go"},
			{Test: "TestParse", Error: "want 1, got 2", File: "parse_test.go"},
		},
		Gaming: []gate.GamingFinding{{Rule: gate.RuleWeakenedTest, File: "add_test.go", Message: msg}},
	}
	got := GateDigest(r, 10000)
	if n := strings.Count(got, msg); n != 1 {
		t.Errorf("the finding is told %d times, want once:\n%s", n, got)
	}
	if !strings.Contains(got, "Refused (tests weakened):\n- "+msg) {
		t.Errorf("no Refused section:\n%s", got)
	}
	if !strings.Contains(got, "TestParse (parse_test.go): want 1, got 2\n") || strings.Contains(got, ":0)") {
		t.Errorf("the failure's place:\n%s", got)
	}
}
