package taskengine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/gate"
)

// replayed is the gate's report of a check whose output is a real
// runner's, as recorded in internal/gate/testdata (see its README), read
// with the parser of format: the check prints the recording and fails.
// The recording's project directory (/work/proj) is the check's own, where
// the module example.com/proj lives, as it was where it was recorded.
func replayed(t *testing.T, name, format string) gate.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "gate", "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/proj\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "output.txt")
	if err := os.WriteFile(out, []byte(strings.ReplaceAll(string(data), "/work/proj", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	check := gate.Check{Name: "tests", Argv: []string{"sh", "-c", `cat "$0"; exit 1`, out}, Kind: gate.KindTest, Format: format}
	r := gate.Test(context.Background(), dir, nil, []gate.Check{check}, gate.TestOptions{MaxReruns: -1})
	if r.Status != gate.StatusFail {
		t.Fatalf("%s: status %s, want fail", name, r.Status)
	}
	return r
}

// nextPrompt is the prompt of the attempt after one whose gate said r.
func nextPrompt(r gate.Report) string {
	a := Attempt{Number: 1, Tier: "fast", InTier: 1, Backend: "fake", Response: "I fixed it.", Gate: r,
		AttemptDiff: "--- a/x\n+++ b/x\n", Action: ActionRetry, Start: "snap-1", Result: "snap-2"}
	h := History{State: State{Attempts: 1, StepBase: "snap-1", Start: "snap-2"}, Attempts: []Attempt{a}}
	return developerPrompt("Fix sum", h, Next{Number: 2, InTier: 2})
}

// TestPromptTellsEachRunnersFailures: from a real runner's output to the
// prompt of the next attempt, for every default gate: each failing test's
// name, the file:line where it failed and its assertion, with the expected
// and actual values where the runner reports them; two rows of a Go table
// that fail in one test are two entries.
func TestPromptTellsEachRunnersFailures(t *testing.T) {
	for _, c := range []struct {
		name, file, format string
		want               []string // entries of the prompt's test failures
		not                []string
	}{
		{"go", "gotest/rows.jsonl", gate.FormatGoTest, []string{
			"- TestAddRows (calc/rows_test.go:8): Add(1, 1) = 0, want 2\n",
			"- TestAddRows (calc/rows_test.go:8): Add(2, 3) = -1, want 5\n",
			"- TestLines (calc/rows_test.go:16):\n  Add(2, 2):\n   got: 0\n  want: 4\n",
			"- TestSubRows/ones (calc/rows_test.go:24): Add(1, 1) = 0, want 2\n",
			"- TestHelper (calc/rows_test.go:39): got -2, want 4\n",
		}, nil},
		{"go-panic", "gotest/failing.jsonl", gate.FormatGoTest, []string{
			"- TestAdd (calc/calc_test.go:7): Add(2, 2) = 0, want 4\n",
			"- TestNilMap (crash/crash_test.go:7): panic: assignment to entry in nil map",
		}, nil},
		{"pytest", "pytest/failures-q.txt", gate.FormatPytest, []string{
			"- test_add (tests/test_calc.py:7):\n  AssertionError: assert 0 == 4\n   +  where 0 = add(2, 2)\n",
			"- test_param[1-1] (tests/test_calc.py:25):\n  AssertionError: assert 0 == (1 + 1)\n",
			"- test_div_zero (tests/test_calc.py:15): ZeroDivisionError: division by zero\n",
		}, nil},
		{"node-tap", "node/failing-tap.txt", gate.FormatNode, []string{
			"- adds (sum.test.js:6):\n  AssertionError: Expected values to be strictly equal:\n  -1 !== 5\n  expected: 5\n  actual: -1\n",
			"- totals (sum.test.js:14):\n  AssertionError: Expected values to be strictly deep-equal:\n  + actual - expected\n    {\n  +   total: 0\n  -   total: 2\n    }\n",
			"- math > nested > reads a property (sum.test.js:25): TypeError: Cannot read properties of undefined (reading 'x')\n",
			"- broken.test.js (broken.test.js:1):\n  Error: Cannot find module './missing'\n",
			"- syntax.test.js (syntax.test.js:4):\n  const x = ;\n            ^\n  SyntaxError: Unexpected token ';'\n",
		}, []string{"node:internal", "test failed", "# fail"}},
		{"node-spec", "node/failing-spec.txt", gate.FormatNode, []string{
			"- adds (sum.test.js:6):\n  AssertionError: Expected values to be strictly equal:\n  -1 !== 5\n  expected: 5\n  actual: -1\n",
		}, []string{"node:internal", "ERR_ASSERTION"}},
		{"jest", "jest/failing.txt", gate.FormatJest, []string{
			"- sum › adds (sum.test.js:5):\n  expect(received).toBe(expected) // Object.is equality\n  Expected: 5\n  Received: -1\n",
			"- sum › objects (sum.test.js:13):\n  expect(received).toEqual(expected) // deep equality\n  - Expected  - 1\n  + Received  + 1\n    Object {\n  -   \"total\": 2,\n  +   \"total\": 0,\n    }\n",
			"- broken.test.js (broken.test.js:2): Cannot find module './missing' from 'broken.test.js'\n",
		}, []string{"node_modules", "exited with status"}},
		{"vitest", "vitest/failing.txt", gate.FormatVitest, []string{
			"- sum > adds (sum.test.js:6):\n  AssertionError: expected -1 to be 5 // Object.is equality\n  - Expected\n  + Received\n  - 5\n  + -1\n",
			"- throws (sum.test.js:20): TypeError: Cannot read properties of undefined (reading 'x')\n",
		}, []string{"⎯", "exited with status"}},
		{"cargo", "cargo/test.txt", gate.FormatCargo, []string{
			"- tests::adds (src/lib.rs:11):\n  assertion `left == right` failed\n    left: 0\n   right: 4\n",
			"- tests::unwraps (src/lib.rs:24): called `Option::unwrap()` on a `None` value\n",
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := nextPrompt(replayed(t, c.file, c.format))
			last := section(p, "## Last check result")
			mustContain(t, "the last check result", last, c.want...)
			mustNotContain(t, "the last check result", last, c.not...)
			t.Logf("%s", last)
		})
	}
}

// section is the part of a prompt under heading, up to the next "## ".
func section(p, heading string) string {
	i := strings.Index(p, heading+"\n")
	if i < 0 {
		return ""
	}
	s := p[i+len(heading)+1:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j+1]
	}
	return s
}
