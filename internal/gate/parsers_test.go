package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parseRecorded parses a recorded output as a check run in recordDir on
// module example.com/proj would be.
func parseRecorded(t *testing.T, name, format, kind string) *parsed {
	t.Helper()
	out := readTestdata(t, name)
	p := newParser(format, kind, recordDir)
	if g, ok := p.(*goTestParser); ok {
		g.module = "example.com/proj"
	}
	for l := range strings.Lines(out) {
		p.line(strings.TrimRight(l, "\r\n"), false)
	}
	return p.result()
}

// diagTexts are the texts of o's diagnostics of a class.
func diagTexts(o *parsed, class diagClass) []string {
	var out []string
	for _, d := range o.diags {
		if d.class == class {
			out = append(out, d.text)
		}
	}
	return out
}

func testFailures(o *parsed) []TestFailure {
	var out []TestFailure
	for _, f := range o.failures {
		out = append(out, f.TestFailure)
	}
	return out
}

func TestParseGoTestFailing(t *testing.T) {
	o := parseRecorded(t, "gotest/failing.jsonl", FormatGoTest, KindTest)
	want := []TestFailure{
		{Test: "TestAdd", Error: "Add(2, 2) = 0, want 4", File: "calc/calc_test.go", Line: 7, Package: "example.com/proj/calc"},
		{Test: "TestTable/two", Error: "Add(1, 1) = 0, want 2", File: "calc/calc_test.go", Line: 19, Package: "example.com/proj/calc"},
		{Test: "TestNilMap", Error: "panic: assignment to entry in nil map [recovered, repanicked]", File: "crash/crash_test.go", Line: 7, Package: "example.com/proj/crash"},
	}
	if diff := cmp.Diff(want, testFailures(o)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	// TestOK, TestTable/zero pass; TestSkip skips; TestTable, a parent, is
	// not counted; TestAfter never ran (the panic ended the package).
	if want := (Counts{Run: 5, Passed: 2, Failed: 3, Skipped: 1}); o.counts != want || !o.hasCounts {
		t.Errorf("counts %+v (known %v), want %+v", o.counts, o.hasCounts, want)
	}
	if o.buildFailed {
		t.Error("buildFailed")
	}
	rt := diagTexts(o, classRuntime)
	if len(rt) != 1 || !strings.Contains(rt[0], "TestNilMap (crash/crash_test.go:7): panic: assignment to entry in nil map") || !o.diags[0].crash || o.diags[0].test != "example.com/proj/crash.TestNilMap" {
		t.Errorf("runtime errors %q (%+v), want the panic of TestNilMap, a crash", rt, o.diags)
	}
	if !o.passed["example.com/proj/calc.TestOK"] || !o.passed["example.com/proj/calc.TestTable/zero"] || o.passed["example.com/proj/calc.TestAdd"] {
		t.Errorf("passed %v", o.passed)
	}
	if f := o.failures[1]; f.id != "example.com/proj/calc.TestTable/two" || f.goTop != "TestTable" || f.goPkg != "example.com/proj/calc" {
		t.Errorf("subtest failure identity %q %q %q", f.id, f.goTop, f.goPkg)
	}
}

func TestParseGoTestPassing(t *testing.T) {
	o := parseRecorded(t, "gotest/passing.jsonl", FormatGoTest, KindTest)
	if len(o.failures) != 0 || len(o.diags) != 0 || o.buildFailed {
		t.Errorf("failures %v, diags %v", o.failures, o.diags)
	}
	if want := (Counts{Run: 4, Passed: 4, Skipped: 1}); o.counts != want {
		t.Errorf("counts %+v, want %+v (TestAdd and the three subtests of TestTable)", o.counts, want)
	}
}

// TestParseGoTestBroken: the same build failures whether go prints them as
// build-output events (go 1.24+) or as text on stderr.
func TestParseGoTestBroken(t *testing.T) {
	for _, name := range []string{"gotest/broken.jsonl", "gotest/broken-text.jsonl"} {
		t.Run(name, func(t *testing.T) {
			o := parseRecorded(t, name, FormatGoTest, KindTest)
			if !o.buildFailed {
				t.Error("not buildFailed")
			}
			syntax, imports := diagTexts(o, classSyntax), diagTexts(o, classImport)
			slices.Sort(syntax)
			slices.Sort(imports)
			wantSyntax := []string{
				"compile/compile.go:5:23: undefined: undefinedThing",
				"syntax/syntax.go:3:13: syntax error: unexpected { in parameter list; possibly missing comma or )",
			}
			wantImports := []string{
				`compile/compile.go:3:8: "os" imported and not used`,
				"missing/missing_test.go:6:2: no required module provides package github.com/nothere/pkg",
			}
			if diff := cmp.Diff(wantSyntax, syntax); diff != "" {
				t.Errorf("syntax (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantImports, imports); diff != "" {
				t.Errorf("imports (-want +got):\n%s", diff)
			}
			parse := 0
			for _, d := range o.diags {
				if d.parse {
					parse++
				}
			}
			if parse != 1 {
				t.Errorf("%d parse errors, want 1 (undefined is not one)", parse)
			}
			// Packages that failed to build are not test failures.
			if len(o.failures) != 0 {
				t.Errorf("failures %+v", o.failures)
			}
		})
	}
}

func TestParseGoTestVet(t *testing.T) {
	o := parseRecorded(t, "gotest/vet.jsonl", FormatGoTest, KindTest)
	if diff := cmp.Diff([]string{`v/v.go:5:39: fmt.Sprintf format %d has arg "x" of wrong type string`}, diagTexts(o, classRuntime)); diff != "" {
		t.Errorf("vet findings (-want +got):\n%s", diff)
	}
	if !o.buildFailed || len(o.failures) != 0 || o.diags[0].crash {
		t.Errorf("%+v", o)
	}
}

func TestParseGoTestHangAndTestMain(t *testing.T) {
	o := parseRecorded(t, "gotest/hang.jsonl", FormatGoTest, KindTest)
	got := testFailures(o)
	want := []TestFailure{
		{Test: "TestHang", Error: "panic: test timed out after 2s", File: "hang/hang_test.go", Line: 8, Package: "example.com/proj/hang"},
		{Test: "example.com/proj/setup", Error: "setup failed: no database", Package: "example.com/proj/setup"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if o.failures[1].id != "" {
		t.Errorf("a package's failure has id %q, want none (it cannot be re-run alone)", o.failures[1].id)
	}
	if rt := diagTexts(o, classRuntime); len(rt) != 1 || !strings.Contains(rt[0], "panic: test timed out after 2s") || !o.diags[0].crash {
		t.Errorf("runtime %q", rt)
	}
}

func TestParseGoBuildAndVet(t *testing.T) {
	o := parseRecorded(t, "go/build.txt", FormatGo, KindBuild)
	if diff := cmp.Diff([]string{
		"syntax/syntax.go:3:13: syntax error: unexpected { in parameter list; possibly missing comma or )",
		"compile/compile.go:5:23: undefined: undefinedThing",
	}, diagTexts(o, classSyntax)); diff != "" {
		t.Errorf("syntax (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`compile/compile.go:3:8: "os" imported and not used`}, diagTexts(o, classImport)); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	v := parseRecorded(t, "go/vet.txt", FormatGo, KindVet)
	if diff := cmp.Diff([]string{`v/v.go:5:39: fmt.Sprintf format %d has arg "x" of wrong type string`}, diagTexts(v, classRuntime)); diff != "" {
		t.Errorf("vet (-want +got):\n%s", diff)
	}
	// go vet's own type errors are compiler errors, not findings.
	v2 := parseOutput(FormatGo, KindVet, "", "# example.com/m\n# [example.com/m]\nvet: b/b.go:5:23: undefined: undefinedThing\n")
	if diff := cmp.Diff([]string{"b/b.go:5:23: undefined: undefinedThing"}, diagTexts(v2, classSyntax)); diff != "" {
		t.Errorf("vet type error (-want +got):\n%s", diff)
	}
	m := parseOutput(FormatGo, KindBuild, "", "go: downloading example.com/x v1.0.0\ngo: example.com/x@v1.0.0: missing go.sum entry for go.mod file; to add it:\n\tgo mod download example.com/x\n")
	if diff := cmp.Diff([]string{"go: example.com/x@v1.0.0: missing go.sum entry for go.mod file; to add it"}, diagTexts(m, classImport)); diff != "" {
		t.Errorf("go command error (-want +got):\n%s", diff)
	}
}

// TestParseGoTestText: go test without -json, with and without -v.
func TestParseGoTestText(t *testing.T) {
	want := []TestFailure{
		{Test: "TestAdd", Error: "Add(2, 2) = 0, want 4", File: "calc/calc_test.go", Line: 7, Package: "example.com/proj/calc"},
		{Test: "TestTable/two", Error: "Add(1, 1) = 0, want 2", File: "calc/calc_test.go", Line: 19, Package: "example.com/proj/calc"},
		{Test: "TestNilMap", Error: "panic: assignment to entry in nil map [recovered, repanicked]", File: "crash/crash_test.go", Line: 7, Package: "example.com/proj/crash"},
	}
	for _, name := range []string{"go/test-failing.txt", "go/test-failing-v.txt"} {
		t.Run(name, func(t *testing.T) {
			out := readTestdata(t, name)
			p := &goDiagParser{dir: recordDir, module: "example.com/proj"}
			for l := range strings.Lines(out) {
				p.line(strings.TrimRight(l, "\r\n"), false)
			}
			o := p.result()
			if diff := cmp.Diff(want, testFailures(o)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if o.buildFailed || o.hasCounts {
				t.Errorf("buildFailed %v, hasCounts %v", o.buildFailed, o.hasCounts)
			}
			if len(o.diags) != 1 || !o.diags[0].crash || o.diags[0].test != "example.com/proj/crash.TestNilMap" {
				t.Errorf("diags %+v, want the panic of TestNilMap", o.diags)
			}
			if f := o.failures[1]; f.id != "example.com/proj/calc.TestTable/two" || f.goTop != "TestTable" {
				t.Errorf("%q %q", f.id, f.goTop)
			}
		})
	}
}

func TestParsePytest(t *testing.T) {
	want := []TestFailure{
		{Test: "test_add", Error: "AssertionError: assert 0 == 4\n +  where 0 = add(2, 2)", File: "tests/test_calc.py", Line: 7},
		{Test: "test_div_zero", Error: "ZeroDivisionError: division by zero", File: "tests/test_calc.py", Line: 15},
		{Test: "test_param[1-1]", Error: "AssertionError: assert 0 == (1 + 1)\n +  where 0 = add(1, 1)", File: "tests/test_calc.py", Line: 25},
		{Test: "TestCalc.test_method", Error: "AssertionError: assert 0 == 2\n +  where 0 = add(1, 1)", File: "tests/test_calc.py", Line: 30},
		{Test: "test_uses_fixture", Error: "error at setup: RuntimeError: fixture exploded", File: "tests/test_calc.py", Line: 38},
	}
	for _, name := range []string{"pytest/failures.txt", "pytest/failures-q.txt"} {
		t.Run(name, func(t *testing.T) {
			o := parseRecorded(t, name, FormatPytest, KindTest)
			if diff := cmp.Diff(want, testFailures(o)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if want := (Counts{Run: 8, Passed: 3, Failed: 5, Skipped: 1}); o.counts != want || !o.hasCounts {
				t.Errorf("counts %+v, want %+v", o.counts, want)
			}
			ids := []string{}
			for _, f := range o.failures {
				ids = append(ids, f.id)
			}
			if diff := cmp.Diff([]string{"tests/test_calc.py::test_add", "tests/test_calc.py::test_div_zero", "tests/test_calc.py::test_param[1-1]",
				"tests/test_calc.py::TestCalc::test_method", "tests/test_calc.py::test_uses_fixture"}, ids); diff != "" {
				t.Errorf("node ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePytestCollectionErrors(t *testing.T) {
	o := parseRecorded(t, "pytest/collection.txt", FormatPytest, KindTest)
	if diff := cmp.Diff([]string{"tests/test_syntax.py:1: SyntaxError: invalid syntax"}, diagTexts(o, classSyntax)); diff != "" {
		t.Errorf("syntax (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tests/test_imp.py:1: ModuleNotFoundError: No module named 'ratelimit'"}, diagTexts(o, classImport)); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	if !o.buildFailed || len(o.failures) != 0 || !o.diags[1].parse {
		t.Errorf("buildFailed %v, failures %+v, diags %+v", o.buildFailed, o.failures, o.diags)
	}
	p := parseRecorded(t, "pytest/pass-q.txt", FormatPytest, KindTest)
	if want := (Counts{Run: 1, Passed: 1}); p.counts != want || len(p.failures) != 0 {
		t.Errorf("pass: counts %+v failures %+v", p.counts, p.failures)
	}
}

// TestParsePytestNewerSummary: pytest 8 prints the message of a collection
// error in the short summary, and -rN leaves the summary out: the sections
// still name the failures.
func TestParsePytestNewerSummary(t *testing.T) {
	out := `============================= test session starts ==============================
collected 1 item / 1 error

==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_imp.py ____________________
ImportError while importing test module '/work/proj/tests/test_imp.py'.
tests/test_imp.py:1: in <module>
    import ratelimit
E   ModuleNotFoundError: No module named 'ratelimit'
=========================== short test summary info ============================
ERROR tests/test_imp.py - ModuleNotFoundError: No module named 'ratelimit'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.05s ===============================
`
	o := parseOutput(FormatPytest, KindTest, recordDir, out)
	if diff := cmp.Diff([]string{"tests/test_imp.py:1: ModuleNotFoundError: No module named 'ratelimit'"}, diagTexts(o, classImport)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	noSummary := `=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 2) == 4
E       assert 0 == 4

tests/test_calc.py:7: AssertionError
============================== 1 failed in 0.03s ===============================
`
	o = parseOutput(FormatPytest, KindTest, recordDir, noSummary)
	want := []TestFailure{{Test: "test_add", Error: "AssertionError: assert 0 == 4", File: "tests/test_calc.py", Line: 7}}
	if diff := cmp.Diff(want, testFailures(o)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParsePythonCompileall(t *testing.T) {
	o := parseRecorded(t, "python/compileall.txt", FormatPython, KindBuild)
	if diff := cmp.Diff([]string{"tests/test_syntax.py:1: SyntaxError: invalid syntax"}, diagTexts(o, classSyntax)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !o.buildFailed || !o.diags[0].parse {
		t.Errorf("%+v", o)
	}
	tb := "Traceback (most recent call last):\n  File \"/work/proj/main.py\", line 1, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'\n"
	o = parseOutput(FormatPython, "", recordDir, tb)
	if diff := cmp.Diff([]string{"main.py:1: ModuleNotFoundError: No module named 'requests'"}, diagTexts(o, classImport)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseCargo(t *testing.T) {
	o := parseRecorded(t, "cargo/test.txt", FormatCargo, KindTest)
	want := []TestFailure{
		{Test: "tests::adds", Error: "assertion `left == right` failed\n  left: 0\n right: 4", File: "src/lib.rs", Line: 11},
		{Test: "tests::unwraps", Error: "called `Option::unwrap()` on a `None` value", File: "src/lib.rs", Line: 24},
	}
	if diff := cmp.Diff(want, testFailures(o)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	// The unit tests and the integration test (--no-fail-fast).
	if want := (Counts{Run: 4, Passed: 2, Failed: 2, Skipped: 1}); o.counts != want {
		t.Errorf("counts %+v, want %+v", o.counts, want)
	}
	if len(o.diags) != 0 {
		t.Errorf("diags %+v: a test's panic is its failure, not a crash", o.diags)
	}

	b := parseRecorded(t, "cargo/build-errors.txt", FormatCargo, KindBuild)
	if diff := cmp.Diff([]string{"src/lib.rs:1:5: error[E0432]: unresolved import `std::collections::Nope`"}, diagTexts(b, classImport)); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"src/lib.rs:4:9: error[E0425]: cannot find value `c` in this scope"}, diagTexts(b, classSyntax)); diff != "" {
		t.Errorf("syntax (-want +got):\n%s", diff)
	}
	s := parseRecorded(t, "cargo/syntax.txt", FormatCargo, KindBuild)
	if diff := cmp.Diff([]string{"src/lib.rs:1:24: error: this file contains an unclosed delimiter"}, diagTexts(s, classSyntax)); diff != "" || !s.diags[0].parse {
		t.Errorf("parse error (-want +got):\n%s", diff)
	}
}

func TestParseJUnit(t *testing.T) {
	pytestWant := []TestFailure{
		{Test: "test_add", Error: "assert 0 == 4\n +  where 0 = add(2, 2)", File: "tests/test_calc.py", Line: 7, Package: "tests.test_calc"},
		{Test: "test_div_zero", Error: "ZeroDivisionError: division by zero", File: "tests/test_calc.py", Line: 15, Package: "tests.test_calc"},
		{Test: "test_param[1-1]", Error: "assert 0 == (1 + 1)\n +  where 0 = add(1, 1)", File: "tests/test_calc.py", Line: 25, Package: "tests.test_calc"},
		{Test: "test_method", Error: "assert 0 == 2\n +  where 0 = add(1, 1)", File: "tests/test_calc.py", Line: 30, Package: "tests.test_calc.TestCalc"},
		{Test: "test_uses_fixture", Error: `error: failed on setup with "RuntimeError: fixture exploded"`, File: "tests/test_calc.py", Line: 38, Package: "tests.test_calc"},
	}
	cases := []struct {
		file   string
		want   []TestFailure
		counts Counts
	}{
		// pytest xunit1 has file and line (counted from 0) attributes; xunit2
		// has neither: the file comes from the failure's text.
		{"junit/pytest-xunit1.xml", pytestWant, Counts{Run: 8, Passed: 3, Failed: 5, Skipped: 1}},
		{"junit/pytest-xunit2.xml", pytestWant, Counts{Run: 8, Passed: 3, Failed: 5, Skipped: 1}},
		{"junit/surefire.xml", []TestFailure{
			{Test: "addsTwoNumbers", Error: "org.opentest4j.AssertionFailedError: expected: <4> but was: <0>", File: "CalcTest.java", Line: 14, Package: "com.example.CalcTest"},
			{Test: "dividesByZero", Error: "error: java.lang.ArithmeticException: / by zero", File: "CalcTest.java", Line: 24, Package: "com.example.CalcTest"},
		}, Counts{Run: 3, Passed: 1, Failed: 2, Skipped: 1}},
		{"junit/jest-junit.xml", []TestFailure{
			{Test: "sum adds negatives", Error: "Error: expect(received).toBe(expected) // Object.is equality", File: "src/sum.test.js", Line: 9, Package: "sum adds negatives"},
		}, Counts{Run: 2, Passed: 1, Failed: 1, Skipped: 1}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			o, err := parseJUnit(strings.NewReader(readTestdata(t, c.file)), recordDir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, testFailures(o)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if o.counts != c.counts {
				t.Errorf("counts %+v, want %+v", o.counts, c.counts)
			}
		})
	}
	if _, err := parseJUnit(strings.NewReader("not xml"), ""); err == nil {
		t.Error("no error for a file that is not XML")
	}
}

func TestTextParserCrashes(t *testing.T) {
	out := "running\nSegmentation fault (core dumped)\nsome panic: word in prose\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n"
	o := parseOutput(FormatText, "", "", out)
	want := []string{"Segmentation fault (core dumped)", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"}
	if diff := cmp.Diff(want, diagTexts(o, classRuntime)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGoTestLongOutputBounded: a test that logs a million lines keeps a
// bounded buffer, and its failure still shows where it failed.
func TestGoTestLongOutputBounded(t *testing.T) {
	p := newGoTestParser("")
	p.line(`{"Action":"run","Package":"m/p","Test":"TestBig"}`, false)
	p.line(`{"Action":"output","Package":"m/p","Test":"TestBig","Output":"    big_test.go:3: first failure\n"}`, false)
	for range 100000 {
		p.line(`{"Action":"output","Package":"m/p","Test":"TestBig","Output":"noise\n"}`, false)
	}
	g := p.pkgs["m/p"].tests["TestBig"]
	if n := len(g.out.head) + len(g.out.tail); n > maxKeptLines {
		t.Errorf("%d lines kept", n)
	}
	p.line(`{"Action":"fail","Package":"m/p","Test":"TestBig"}`, false)
	p.line(`{"Action":"fail","Package":"m/p"}`, false)
	if g.out != nil {
		t.Error("the output of a failed test is kept after its failure was read")
	}
	o := p.result()
	if f := o.failures[0]; f.File != "big_test.go" || f.Line != 3 || !strings.HasPrefix(f.Error, "first failure") || len(f.Error) > maxErrorBytes+10 {
		t.Errorf("%+v", f.TestFailure)
	}
}

// TestParseGoRows: every message a failing Go test logs is a failure of
// its own, with its file:line: two rows of a table that fail in one test
// (no subtests) are two failures, as two failing subtests are; a message
// of several lines stays whole; the test is counted once. The same from
// go test -json and from go test's text.
func TestParseGoRows(t *testing.T) {
	const pkg = "example.com/proj/calc"
	want := []TestFailure{
		{Test: "TestAddRows", Error: "Add(1, 1) = 0, want 2", File: "calc/rows_test.go", Line: 8, Package: pkg},
		{Test: "TestAddRows", Error: "Add(2, 3) = -1, want 5", File: "calc/rows_test.go", Line: 8, Package: pkg},
		{Test: "TestLines", Error: "adding 2 and 2", File: "calc/rows_test.go", Line: 14, Package: pkg},
		{Test: "TestLines", Error: "Add(2, 2):\n got: 0\nwant: 4", File: "calc/rows_test.go", Line: 16, Package: pkg},
		{Test: "TestSubRows/ones", Error: "Add(1, 1) = 0, want 2", File: "calc/rows_test.go", Line: 24, Package: pkg},
		{Test: "TestSubRows/twos", Error: "Add(2, 2) = 0, want 4", File: "calc/rows_test.go", Line: 24, Package: pkg},
		{Test: "TestHelper", Error: "got 2, want 4", File: "calc/rows_test.go", Line: 38, Package: pkg},
		{Test: "TestHelper", Error: "got -2, want 4", File: "calc/rows_test.go", Line: 39, Package: pkg},
	}
	o := parseRecorded(t, "gotest/rows.jsonl", FormatGoTest, KindTest)
	if diff := cmp.Diff(want, testFailures(o)); diff != "" {
		t.Errorf("go test -json: failures (-want +got):\n%s", diff)
	}
	if want := (Counts{Run: 6, Passed: 1, Failed: 5}); o.counts != want {
		t.Errorf("counts %+v, want %+v (a test with two failed rows is one failed test)", o.counts, want)
	}
	if got := outcomes(o, nil).Failed; len(got) != 5 {
		t.Errorf("failed tests %q, want each once", got)
	}

	p := &goDiagParser{dir: recordDir, module: "example.com/proj"}
	for l := range strings.Lines(readTestdata(t, "go/test-rows.txt")) {
		p.line(strings.TrimRight(l, "\r\n"), false)
	}
	if diff := cmp.Diff(want, testFailures(p.result())); diff != "" {
		t.Errorf("go test: failures (-want +got):\n%s", diff)
	}
}

// TestGoFailureEntriesBounded: a test that logs many messages keeps its
// first and last ones, and says how many were left out between.
func TestGoFailureEntriesBounded(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("    a_test.go:%d: row %d", i, i))
	}
	fs, _, _ := goFailure("", "", "p", "TestMany", lines)
	if len(fs) != maxTestEntries || fs[0].Error != "row 1" || fs[len(fs)-1].Error != "row 30" || fs[len(fs)-1].Line != 30 {
		t.Fatalf("%d failures: first %+v, last %+v", len(fs), fs[0], fs[len(fs)-1])
	}
	if half := fs[maxTestEntries/2-1]; !strings.Contains(half.Error, "20 more messages of this test left out") {
		t.Errorf("the failure before the gap: %q", half.Error)
	}
}
