package gate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

func pass(name string) CheckResult {
	return CheckResult{Name: name, Command: name, Passed: true, Fingerprint: "v1:p"}
}
func fail(name, fp string) CheckResult {
	return CheckResult{Name: name, Command: name, ExitCode: 1, Fingerprint: fp, OutputTail: "boom " + fp, OutputBytes: 10}
}

func names(cs []CheckResult) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Name+"="+c.Baseline)
	}
	return strings.Join(s, ",")
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name                string
		current, baseline   *Result
		passed              bool
		failed, tolerated   string
		interrupted, hasBas bool
	}{
		{name: "all pass, no baseline", current: &Result{Checks: []CheckResult{pass("a"), pass("b")}}, passed: true},
		{name: "a failure blocks without a baseline", current: &Result{Checks: []CheckResult{pass("a"), fail("b", "x")}},
			failed: "b="},
		{name: "same failure as the baseline is tolerated",
			current:  &Result{Checks: []CheckResult{pass("a"), fail("b", "x")}},
			baseline: &Result{Checks: []CheckResult{pass("a"), fail("b", "x")}},
			passed:   true, tolerated: "b=same-failure", hasBas: true},
		{name: "another failure than the baseline blocks",
			current:  &Result{Checks: []CheckResult{fail("b", "y")}},
			baseline: &Result{Checks: []CheckResult{fail("b", "x")}},
			failed:   "b=other-failure", hasBas: true},
		{name: "passed in the baseline, fails now",
			current:  &Result{Checks: []CheckResult{fail("a", "x")}},
			baseline: &Result{Checks: []CheckResult{pass("a")}},
			failed:   "a=passed", hasBas: true},
		{name: "missing from the baseline",
			current:  &Result{Checks: []CheckResult{fail("new", "x")}},
			baseline: &Result{Checks: []CheckResult{fail("old", "x")}},
			failed:   "new=missing", hasBas: true},
		{name: "interrupted in the baseline counts as missing",
			current:  &Result{Checks: []CheckResult{fail("a", "x")}},
			baseline: &Result{Checks: []CheckResult{{Name: "a", Interrupted: true}}, Interrupted: true},
			failed:   "a=missing", hasBas: true},
		{name: "empty fingerprints never match",
			current:  &Result{Checks: []CheckResult{fail("a", "")}},
			baseline: &Result{Checks: []CheckResult{fail("a", "")}},
			failed:   "a=other-failure", hasBas: true},
		{name: "duplicate names match in order",
			current:  &Result{Checks: []CheckResult{fail("t", "x"), fail("t", "y")}},
			baseline: &Result{Checks: []CheckResult{fail("t", "x"), fail("t", "z")}},
			failed:   "t=other-failure", tolerated: "t=same-failure", hasBas: true},
		{name: "interrupted current never passes",
			current: &Result{Checks: []CheckResult{pass("a")}, Interrupted: true}, interrupted: true},
		{name: "nil current never passes", interrupted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.current, tc.baseline)
			if v.Passed != tc.passed || names(v.Failed) != tc.failed || names(v.Tolerated) != tc.tolerated ||
				v.Interrupted != tc.interrupted || v.HasBaseline != tc.hasBas {
				t.Errorf("got passed %v, failed %q, tolerated %q, interrupted %v, baseline %v",
					v.Passed, names(v.Failed), names(v.Tolerated), v.Interrupted, v.HasBaseline)
			}
		})
	}
}

func TestJudgeDoesNotChangeItsInput(t *testing.T) {
	cur := &Result{Checks: []CheckResult{fail("a", "x")}}
	Judge(cur, &Result{Checks: []CheckResult{fail("a", "x")}})
	if cur.Checks[0].Baseline != "" {
		t.Error("Judge wrote into the current result")
	}
}

func TestFailurePrompt(t *testing.T) {
	if p := FailurePrompt(Verdict{Passed: true}); p != "" {
		t.Errorf("a passed verdict has a prompt: %q", p)
	}
	tail := "--- FAIL: TestX (0.00s)\n    x_test.go:9: ```not a fence``` got 2\nFAIL"
	v := Verdict{
		Failed: []CheckResult{
			{Name: "unit", Command: "go test ./...", ExitCode: 1, OutputTail: tail, OutputBytes: 3 << 10, Baseline: BaselineOtherFailure},
			{Name: "lint", Command: "golangci-lint run", TimedOut: true, TimeoutMs: millis.Of(10 * time.Minute), ExitCode: 143},
			{Name: "silent", Command: "silent", ExitCode: 4},
		},
		Tolerated: []CheckResult{{Name: "flaky e2e", ExitCode: 1}},
	}
	p := FailurePrompt(v)
	for _, want := range []string{
		"not done", `Check "unit" exited with status 1.`, "Command: go test ./...", "fails differently",
		"````\n" + tail + "\n````", "3.0 KiB in all",
		`Check "lint" timed out after 10m0s`, "Command: golangci-lint run",
		`Check "silent" exited with status 4.`, "It printed nothing.",
		"every check passes", "Do not weaken, skip or delete", `not blocking: "flaky e2e"`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "Command: silent") {
		t.Errorf("the command is repeated when it is the name:\n%s", p)
	}
	s := v.Summary()
	if !strings.Contains(s, `the gate failed: "unit" exited with status 1; "lint" timed out`) || !strings.Contains(s, "1 check(s) failing as in the baseline tolerated") {
		t.Errorf("Summary() = %q", s)
	}
}

// TestFailurePromptBounded: many failing checks with long outputs make a
// prompt of bounded size that still names each of them.
func TestFailurePromptBounded(t *testing.T) {
	var v Verdict
	for i := range 50 {
		v.Failed = append(v.Failed, CheckResult{Name: "check " + string(rune('A'+i%26)) + string(rune('a'+i/26)),
			ExitCode: 1, OutputTail: strings.Repeat("x", TailBytes-1)})
	}
	p := FailurePrompt(v)
	if len(p) > maxPromptTails+16<<10 {
		t.Errorf("prompt of %d bytes", len(p))
	}
	for _, c := range v.Failed {
		if !strings.Contains(p, `"`+c.Name+`"`) {
			t.Errorf("prompt does not name %s", c.Name)
		}
	}
}

func TestCheckConstructors(t *testing.T) {
	fieldOf := func(err error) string {
		var fe *FieldError
		if errors.As(err, &fe) {
			return fe.Field
		}
		return ""
	}
	if c, err := ShellCheck("go test ./... "); err != nil || c.Name != "go test ./..." || c.Shell != "go test ./... " ||
		c.Command() != "go test ./... " || strings.Join(c.argv(), "|") != "sh|-c|go test ./... " {
		t.Errorf("ShellCheck: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		name  string
		make  func() (Check, error)
		field string
	}{
		{"empty --check", func() (Check, error) { return ShellCheck("") }, "--check"},
		{"blank --check", func() (Check, error) { return ShellCheck("  ") }, "--check"},
		{"empty run", func() (Check, error) { return ArgvCheck("x", nil, 0) }, "run"},
		{"empty program", func() (Check, error) { return ArgvCheck("x", []string{"", "a"}, 0) }, "run[0]"},
		{"negative timeout", func() (Check, error) { return ArgvCheck("x", []string{"go"}, -time.Second) }, "timeout"},
		{"both argv and shell", func() (Check, error) { c := Check{Argv: []string{"a"}, Shell: "b"}; return c, c.Validate() }, "run"},
	} {
		if _, err := tc.make(); fieldOf(err) != tc.field {
			t.Errorf("%s: error %v, want one on field %q", tc.name, err, tc.field)
		}
	}
	c, err := ArgvCheck("", []string{"go", "test", "-run", "Test X", "it's"}, 0)
	if err != nil || c.Name != "go test -run Test X it's" || c.Command() != `go test -run 'Test X' 'it'\''s'` || c.timeout() != DefaultTimeout {
		t.Errorf("ArgvCheck: %+v, command %s, %v", c, c.Command(), err)
	}
}
