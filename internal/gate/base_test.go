package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseNode: node --test's TAP (node 20 when stdout is no terminal) and
// spec reporters name the same tests, count the leaves, and give each
// failure its file:line and assertion.
func TestParseNode(t *testing.T) {
	for _, name := range []string{"node/tap.txt", "node/spec.txt"} {
		o := parseRecorded(t, name, FormatNode, KindTest)
		if want := (Counts{Run: 4, Passed: 2, Failed: 2, Skipped: 2}); o.counts != want || !o.hasCounts {
			t.Errorf("%s: counts %+v, want %+v", name, o.counts, want)
		}
		out := outcomes(o, nil)
		want := &TestOutcomes{Passed: []string{"adds", "group > inner ok"}, Failed: []string{"fails", "group > inner bad"}, Skipped: []string{"skipped", "todo"}}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("%s: outcomes (-want +got):\n%s", name, diff)
		}
		fs := testFailures(o)
		if len(fs) != 2 || fs[0].File != "a.test.js" || fs[0].Line != 4 || !strings.Contains(fs[0].Error, "2 !== 3") ||
			fs[1].Test != "group > inner bad" || fs[1].Line != 9 || !strings.Contains(fs[1].Error, "nope") {
			t.Errorf("%s: failures %+v", name, fs)
		}
	}
}

// TestParseNodeFailures: what node --test says of each failure reaches
// the report from either reporter (npm test's TAP, node 23's spec): the
// test's name and file:line (of the assertion, from the stack), the
// assertion's message with the expected and actual values (or the diff
// that shows them), and for a test file that did not load, the error it
// wrote on its standard error and where, never node's own frames.
func TestParseNodeFailures(t *testing.T) {
	diff := "AssertionError: Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n+   total: 0\n-   total: 2\n  }"
	want := []TestFailure{
		{Test: "broken.test.js", File: "broken.test.js", Line: 1, Error: "Error: Cannot find module './missing'\nRequire stack:\n- /work/proj/broken.test.js"},
		{Test: "needs the database", File: "hook.test.js", Line: 4, Error: "a hook failed: the database is down"},
		{Test: "adds", File: "sum.test.js", Line: 6, Error: "AssertionError: Expected values to be strictly equal:\n\n-1 !== 5\nexpected: 5\nactual: -1"},
		{Test: "totals", File: "sum.test.js", Line: 14, Error: diff},
		{Test: "totals with a message", File: "sum.test.js", Line: 18, Error: "AssertionError: the cart total\n+ actual - expected\n\n  {\n    items: [\n      1,\n      1\n    ],\n+   total: 0\n-   total: 2\n  }"},
		{Test: "math > nested > reads a property", File: "sum.test.js", Line: 25, Error: "TypeError: Cannot read properties of undefined (reading 'x')"},
		{Test: "async", File: "sum.test.js", Line: 32, Error: "rejected later"},
		{Test: "syntax.test.js", File: "syntax.test.js", Line: 4, Error: "const x = ;\n          ^\nSyntaxError: Unexpected token ';'"},
	}
	o := parseRecorded(t, "node/failing-tap.txt", FormatNode, KindTest)
	if d := cmp.Diff(want, testFailures(o)); d != "" {
		t.Errorf("TAP: failures (-want +got):\n%s", d)
	}
	if c := (Counts{Run: 9, Passed: 1, Failed: 8}); o.counts != c {
		t.Errorf("TAP: counts %+v, want %+v", o.counts, c)
	}
	// A test file that did not load has no test of its own: once it
	// loads, its tests run and none of the baseline's is gone.
	if out := outcomes(o, nil); slices.ContainsFunc(out.Failed, func(id string) bool { return strings.HasSuffix(id, ".test.js") }) {
		t.Errorf("TAP: the tests by name hold a test file: %q", out.Failed)
	}
	// The spec reporter does not say that a hook failed, and names the
	// class of a plain Error.
	want[1].Error = "Error: the database is down"
	want[6].Error = "Error: rejected later"
	o = parseRecorded(t, "node/failing-spec.txt", FormatNode, KindTest)
	if d := cmp.Diff(want, testFailures(o)); d != "" {
		t.Errorf("spec: failures (-want +got):\n%s", d)
	}
}

// TestParseJSSummary: jest's and vitest's summaries give the counts.
func TestParseJSSummary(t *testing.T) {
	for _, c := range []struct {
		format, out string
		want        Counts
	}{
		{FormatJest, "Test Suites: 1 failed, 1 total\nTests:       1 failed, 1 skipped, 2 todo, 3 passed, 7 total\nSnapshots:   0 total\n", Counts{Run: 4, Passed: 3, Failed: 1, Skipped: 3}},
		{FormatVitest, " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed | 1 skipped (4)\n", Counts{Run: 3, Passed: 2, Failed: 1, Skipped: 1}},
		{FormatVitest, "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m5 passed\x1b[39m\x1b[22m\x1b[90m (5)\x1b[39m\n", Counts{Run: 5, Passed: 5}},
	} {
		o := parseOutput(c.format, KindTest, "", c.out)
		if !o.hasCounts || o.counts != c.want {
			t.Errorf("%s %q: counts %+v (%v), want %+v", c.format, c.out, o.counts, o.hasCounts, c.want)
		}
	}
}

// TestParseJSFailures: jest's and vitest's failures reach the report
// with the test's name, the file:line of the assertion (never a frame in
// node_modules), the message with the expected and received values; a
// test file that failed to load is named by its path; console output is
// no failure. Recorded by npm test from jest 30 and vitest 4.
func TestParseJSFailures(t *testing.T) {
	jestDiff := "expect(received).toEqual(expected) // deep equality\n\n- Expected  - 1\n+ Received  + 1\n\n  Object {\n-   \"total\": 2,\n+   \"total\": 0,\n  }"
	vitestDiff := "AssertionError: expected { total: +0 } to deeply equal { total: 2 }\n\n- Expected\n+ Received\n\n  {\n-   \"total\": 2,\n+   \"total\": 0,\n  }"
	for _, c := range []struct {
		name, format string
		want         []TestFailure
	}{
		{"jest/failing.txt", FormatJest, []TestFailure{
			{Test: "sum › adds", File: "sum.test.js", Line: 5, Error: "expect(received).toBe(expected) // Object.is equality\n\nExpected: 5\nReceived: -1"},
			{Test: "sum › objects", File: "sum.test.js", Line: 13, Error: jestDiff},
			{Test: "throws", File: "sum.test.js", Line: 19, Error: "TypeError: Cannot read properties of undefined (reading 'x')"},
			{Test: "logs and fails", File: "more.test.js", Line: 5, Error: "Expect takes at most one argument."},
			{Test: "broken.test.js", File: "broken.test.js", Line: 2, Error: "Cannot find module './missing' from 'broken.test.js'"},
		}},
		{"vitest/failing.txt", FormatVitest, []TestFailure{
			{Test: "broken.test.js", File: "broken.test.js", Line: 3, Error: "Error: Cannot find module './missing.js' imported from /work/proj/broken.test.js"},
			{Test: "logs and fails", File: "more.test.js", Line: 6, Error: "AssertionError: sum of 1 and 2: expected false to be true // Object.is equality\n\n- Expected\n+ Received\n\n- true\n+ false"},
			{Test: "sum > adds", File: "sum.test.js", Line: 6, Error: "AssertionError: expected -1 to be 5 // Object.is equality\n\n- Expected\n+ Received\n\n- 5\n+ -1"},
			{Test: "sum > objects", File: "sum.test.js", Line: 14, Error: vitestDiff},
			{Test: "throws", File: "sum.test.js", Line: 20, Error: "TypeError: Cannot read properties of undefined (reading 'x')"},
		}},
	} {
		o := parseRecorded(t, c.name, c.format, KindTest)
		if d := cmp.Diff(c.want, testFailures(o)); d != "" {
			t.Errorf("%s: failures (-want +got):\n%s", c.name, d)
		}
		if want := (Counts{Run: 6, Passed: 2, Failed: 4, Skipped: 1}); o.counts != want || !o.hasCounts {
			t.Errorf("%s: counts %+v, want %+v", c.name, o.counts, want)
		}
		if out := outcomes(o, nil); out != nil {
			t.Errorf("%s: tests named %+v, want none (jest and vitest are compared as counts)", c.name, out)
		}
	}

	// vitest names the tests that failed with one error together.
	o := parseOutput(FormatVitest, KindTest, "", " FAIL  a.test.js > one\n FAIL  a.test.js > two\nError: down\n ❯ a.test.js:3:9\n      3|   x()\n⎯⎯⎯[1/1]⎯\n")
	if d := cmp.Diff([]TestFailure{{Test: "one", File: "a.test.js", Line: 3, Error: "Error: down"}, {Test: "two", File: "a.test.js", Line: 3, Error: "Error: down"}}, testFailures(o)); d != "" {
		t.Errorf("one error of two tests (-want +got):\n%s", d)
	}
}

// TestParsePytestAll: -rA names the tests that passed.
func TestParsePytestAll(t *testing.T) {
	out := "..F.s\n=========================== short test summary info ============================\n" +
		"PASSED tests/test_a.py::test_one\nPASSED tests/test_a.py::test_p[1-2]\nXFAIL tests/test_a.py::test_x - known\n" +
		"SKIPPED [1] tests/test_a.py:9: later\nFAILED tests/test_a.py::test_two - assert 1 == 2\n1 failed, 2 passed, 1 skipped, 1 xfailed in 0.05s\n"
	o := parseOutput(FormatPytest, KindTest, "", out)
	want := &TestOutcomes{Passed: []string{"tests/test_a.py::test_one", "tests/test_a.py::test_p[1-2]", "tests/test_a.py::test_x"}, Failed: []string{"tests/test_a.py::test_two"}}
	if diff := cmp.Diff(want, outcomes(o, nil)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// TestCounted: a plain check whose runner jlgcli knows is run so that its
// tests are counted and named, and nothing else changes.
func TestCounted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{"test":"node --test test/"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		check   Check
		command string
		format  string
	}{
		{Check{Name: "go test ./...", Shell: "go test ./..."}, "go test -json ./...", FormatGoTest},
		{Check{Name: "go test -v -race ./...", Shell: "go test -v -race ./..."}, "go test -json -v -race ./...", FormatGoTest},
		{Check{Name: "t", Argv: []string{"go", "test", "-run", "Test A", "./..."}}, "go test -json -run 'Test A' ./...", FormatGoTest},
		{Check{Name: "go test -json ./...", Shell: "go test -json ./..."}, "go test -json ./...", FormatGoTest},
		{Check{Name: "go test -c ./x", Shell: "go test -c ./x"}, "go test -c ./x", FormatGo},
		{Check{Name: "go test ./... | tee log", Shell: "go test ./... | tee log"}, "go test ./... | tee log", FormatGo},
		{Check{Name: "go vet ./...", Shell: "go vet ./..."}, "go vet ./...", FormatGo},
		{Check{Name: "pytest", Shell: "pytest"}, "pytest -rA", FormatPytest},
		{Check{Name: "p", Argv: []string{"python3", "-m", "pytest", "-q", "-rfE"}, Format: FormatPytest}, "python3 -m pytest -q -rfE -rA", FormatPytest},
		{Check{Name: "pytest -rA", Shell: "pytest -rA"}, "pytest -rA", FormatPytest},
		{Check{Name: "npm test", Shell: "npm test"}, "npm test", FormatNode},
		{Check{Name: "npm test", Argv: []string{"npm", "test"}, Format: FormatText}, "npm test", FormatNode},
		{Check{Name: "node --test", Shell: "node --test"}, "node --test", FormatNode},
		{Check{Name: "npx jest", Shell: "npx jest"}, "npx jest", FormatJest},
		{Check{Name: "make test", Shell: "make test"}, "make test", FormatText},
		{Check{Name: "go test", Shell: "go test ./...", Format: FormatText}, "go test ./...", FormatText},
	} {
		got, format := Counted(c.check, dir)
		if got.Command() != c.command || format != c.format || got.Name != c.check.Name {
			t.Errorf("%q: %q %s (name %q), want %q %s", c.check.Command(), got.Command(), format, got.Name, c.command, c.format)
		}
	}
}

func TestBaseTestFile(t *testing.T) {
	for p, want := range map[string]bool{
		"a_test.go": true, "pkg/testdata/golden.txt": true, "tests/helpers.py": true, "conftest.py": true,
		"test/util.js": true, "src/__snapshots__/x.snap": true, "a.go": false, "helpers.py": false, "src/index.js": false,
	} {
		if BaseTestFile(p) != want {
			t.Errorf("BaseTestFile(%q) = %v", p, !want)
		}
	}
}

// goDouble is a module with a bug (Double(3) is 7) and its test, which
// goes through a shared helper.
var goDouble = map[string]string{
	"go.mod":    goMod,
	"double.go": "package proj\n\nfunc Double(x int) int {\n\tif x == 3 {\n\t\treturn 7\n\t}\n\treturn 2 * x\n}\n",
	"helpers_test.go": `package proj

import "testing"

func check(t *testing.T, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("got %d, want %d", got, want)
	}
}
`,
	"double_test.go": `package proj

import "testing"

func TestDouble(t *testing.T) {
	check(t, Double(1), 2)
	check(t, Double(3), 6)
}

func TestSmall(t *testing.T) { check(t, Double(0), 0) }
`,
}

// TestBaseTestsGo: a change that passes its own checks only because it
// weakened the tests is refused by the tests of the base, whatever the
// check (the default go test -json, or a plain go test): an early return
// in the shared helper, a skip behind testing.Short, a build tag on the
// test file. The fix of the code, with a new test, passes.
func TestBaseTestsGo(t *testing.T) {
	t.Parallel()
	needGo(t)
	base := project(t, goDouble)
	fixed := "package proj\n\nfunc Double(x int) int { return 2 * x }\n"
	for _, c := range []struct {
		name    string
		files   map[string]string
		removed []string
		rule    string
	}{
		{"helper returns early", map[string]string{"helpers_test.go": strings.Replace(goDouble["helpers_test.go"], "\tt.Helper()\n", "\tt.Helper()\n\treturn\n", 1)}, nil, RuleBaseTestsFail},
		{"skip unless short", map[string]string{"double_test.go": strings.Replace(goDouble["double_test.go"], "func TestDouble(t *testing.T) {\n", "func TestDouble(t *testing.T) {\n\tif !testing.Short() {\n\t\tt.Skip(\"slow\")\n\t}\n", 1)}, nil, RuleBaseTestsFail},
		{"build tag", map[string]string{"double_test.go": "//go:build slowtests\n\n" + goDouble["double_test.go"]}, nil, RuleBaseTestsFail},
		{"honest fix and a new test", map[string]string{"double.go": fixed, "more_test.go": "package proj\n\nimport \"testing\"\n\nfunc TestFour(t *testing.T) { check(t, Double(4), 8) }\n"}, []string{"more_test.go"}, ""},
	} {
		for _, check := range []Check{goTestCheck(), {Name: "go test ./...", Shell: "go test ./..."}} {
			t.Run(c.name+"/"+check.Name, func(t *testing.T) {
				dir := project(t, goDouble)
				baseline := Test(context.Background(), dir, goEnv, []Check{check}, BaselineOptions(""))
				if baseline.Checks[0].Tests == nil || baseline.Checks[0].Passed {
					t.Fatalf("baseline %+v", baseline.Checks[0])
				}
				writeTree(t, dir, c.files)
				var laid []string
				for f := range c.files {
					if BaseTestFile(f) && !slices.Contains(c.removed, f) {
						laid = append(laid, f)
					}
				}
				bt := &BaseTests{Laid: laid, Removed: c.removed, Lay: func(context.Context) error {
					for _, f := range laid {
						data, _ := os.ReadFile(filepath.Join(base, f))
						if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
							return err
						}
					}
					for _, f := range c.removed {
						if err := os.Remove(filepath.Join(dir, f)); err != nil {
							return err
						}
					}
					return nil
				}}
				r := Test(context.Background(), dir, goEnv, []Check{check}, TestOptions{Baseline: &baseline, BaseTests: bt})
				if r.BaseTests == nil {
					t.Fatalf("no base tests report: %+v", r)
				}
				if c.rule == "" {
					if !r.OK() || r.BaseTests.Status != BasePass || !r.BaseTests.Rerun || len(r.Gaming) > 0 {
						t.Fatalf("honest change refused: %s %+v %+v", r.Summary(), r.BaseTests, r.Gaming)
					}
					return
				}
				if r.OK() || len(r.Gaming) == 0 {
					t.Fatalf("weakened change: %s, base tests %+v, gaming %+v", r.Summary(), r.BaseTests, r.Gaming)
				}
				if r.BaseTests.Status == BaseNotRun {
					// The change's own run refused it first (it runs fewer
					// tests, or skips more, than the baseline).
					if r.Gaming[0].Rule != RuleFewerTestsRun {
						t.Errorf("refused by %+v", r.Gaming)
					}
					return
				}
				if r.BaseTests.Status != BaseFail || len(r.Gaming) != 1 || r.Gaming[0].Rule != c.rule {
					t.Fatalf("weakened change: %s, base tests %+v, gaming %+v", r.Summary(), r.BaseTests, r.Gaming)
				}
				if msg := r.Gaming[0].Message; !strings.Contains(msg, "TestDouble") || !strings.Contains(msg, "got 7, want 6") || !strings.Contains(msg, "as the base had it") {
					t.Errorf("message: %s", msg)
				}
				if r.Checks[0].Tests != nil {
					t.Error("the tests by name are kept in an attempt's report")
				}
			})
		}
	}
}

// TestBaseTestsNotRun: a change to no test file that deselects a test that
// passed at the baseline (pytest.ini's addopts), while as many tests run,
// is refused by the comparison of the tests by name; the same in warn mode is a warning; a
// task that changes its tests sets the base's tests aside.
func TestBaseTestsNotRun(t *testing.T) {
	t.Parallel()
	py := pythonWithPytest(t)
	files := map[string]string{
		"calc.py":            "def add(a, b):\n    return a + b\n",
		"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
		"pytest.ini":         "[pytest]\npythonpath = .\n",
	}
	dir := project(t, files)
	check := Check{Name: "pytest", Argv: []string{py, "-m", "pytest", "-q", "-p", "no:cacheprovider"}}
	baseline := Test(context.Background(), dir, nil, []Check{check}, BaselineOptions(""))
	if !baseline.OK() || baseline.Checks[0].Tests == nil || len(baseline.Checks[0].Tests.Passed) != 2 {
		t.Fatalf("baseline %s %+v", baseline.Summary(), baseline.Checks[0].Tests)
	}
	// As many tests run as before (a module that is no test file by its
	// name joins them), but test_zero is not one of them.
	writeTree(t, dir, map[string]string{
		"pytest.ini":    "[pytest]\npythonpath = .\npython_files = test_*.py check_*.py\naddopts = -k 'not test_zero'\n",
		"check_more.py": "def test_more():\n    assert True\n",
	})
	bt := &BaseTests{Lay: func(context.Context) error { t.Error("nothing to lay"); return nil }}
	r := Test(context.Background(), dir, nil, []Check{check}, TestOptions{Baseline: &baseline, BaseTests: bt})
	if r.OK() || len(r.Gaming) != 1 || r.Gaming[0].Rule != RuleBaseTestsNotRun || r.BaseTests.Rerun ||
		!slices.Equal(r.Gaming[0].Lines, []string{"tests/test_calc.py::test_zero"}) {
		t.Fatalf("%s %+v %+v", r.Summary(), r.BaseTests, r.Gaming)
	}
	r = Test(context.Background(), dir, nil, []Check{check}, TestOptions{Baseline: &baseline, BaseTests: bt, Gaming: GamingWarn})
	if !r.OK() || r.Status != StatusWarning || len(r.Gaming) != 1 {
		t.Fatalf("warn: %s %+v", r.Summary(), r.Gaming)
	}
	r = Test(context.Background(), dir, nil, []Check{check}, TestOptions{Baseline: &baseline, BaseTests: &BaseTests{SetAside: "the task changes its tests"}})
	if !r.OK() || r.BaseTests.Status != BaseSetAside || r.BaseTests.Reason != "the task changes its tests" {
		t.Fatalf("set aside: %s %+v", r.Summary(), r.BaseTests)
	}
}

// TestUncounted: a check whose output counts no test is named in the
// report; one whose runner jlgcli knows is not.
func TestUncounted(t *testing.T) {
	dir := t.TempDir()
	r := Test(context.Background(), dir, nil, []Check{
		{Name: "make test", Shell: "echo all good", Kind: KindTest},
		{Name: "build", Shell: "true", Kind: KindBuild},
		{Name: "counted", Shell: "echo '3 passed in 0.01s'", Format: FormatPytest, Kind: KindTest},
	}, TestOptions{})
	if !slices.Equal(r.Uncounted, []string{"make test"}) {
		t.Errorf("uncounted %v", r.Uncounted)
	}
}

// TestCheckEnv: the checks write no Python bytecode into the tree; what
// compileall compiles goes to the scratch directory.
func TestCheckEnv(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3")
	}
	dir := project(t, map[string]string{"m.py": "X = 1\n", "test_m.py": "import m\n"})
	scratch := t.TempDir()
	r := Test(context.Background(), dir, nil, []Check{
		{Name: "compileall", Argv: []string{"/usr/bin/python3", "-m", "compileall", "-q", "."}},
		{Name: "import", Argv: []string{"/usr/bin/python3", "-c", "import test_m"}},
	}, TestOptions{Scratch: scratch})
	if !r.OK() {
		t.Fatal(r.Summary())
	}
	if _, err := os.Stat(filepath.Join(dir, "__pycache__")); err == nil {
		t.Error("__pycache__ written in the tree")
	}
	if m, _ := filepath.Glob(filepath.Join(scratch, "pycache", "*", "*", "*", "*.pyc")); len(m) == 0 {
		var all []string
		filepath.Walk(scratch, func(p string, _ os.FileInfo, _ error) error { all = append(all, p); return nil })
		if !slices.ContainsFunc(all, func(p string) bool { return strings.HasSuffix(p, ".pyc") }) {
			t.Errorf("no bytecode in the scratch directory: %v", all)
		}
	}
}
