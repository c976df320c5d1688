package gate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goEnv keeps the go commands of the tests off the network and out of any
// workspace.
var goEnv = []string{"GOPROXY=off", "GOWORK=off", "GOFLAGS="}

func needGo(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test on a throwaway module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
}

func goTestCheck() Check {
	return Check{Name: "go test -json ./...", Argv: []string{"go", "test", "-json", "./..."}, Kind: KindTest, Format: FormatGoTest}
}

func failureTests(r Report) []string {
	var out []string
	for _, f := range r.TestFailures {
		out = append(out, f.Test)
	}
	return out
}

// TestTestGoDefaultsStopAtBuild: the default checks of a Go module whose
// code does not compile stop at go build, which says why.
func TestTestGoDefaultsStopAtBuild(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goBroken)
	checks := DetectDefaults(dir)
	r := Test(context.Background(), dir, goEnv, checks, TestOptions{})
	if r.Status != StatusFail || r.Recommendation != RecommendFixRequired {
		t.Errorf("status %s, recommendation %s; want fail, fix_required", r.Status, r.Recommendation)
	}
	if diff := cmp.Diff([]string{
		"syntax/syntax.go:3:13: syntax error: unexpected { in parameter list; possibly missing comma or )",
		"compile/compile.go:5:23: undefined: undefinedThing",
	}, r.SyntaxErrors, cmp.Transformer("sort", func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s })); diff != "" {
		t.Errorf("syntax errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`compile/compile.go:3:8: "os" imported and not used`}, r.ImportErrors); diff != "" {
		t.Errorf("import errors (-want +got):\n%s", diff)
	}
	if len(r.Checks) != 1 || !r.Checks[0].BuildFailed || r.Checks[0].Kind != KindBuild {
		t.Errorf("checks %+v, want go build only", r.Checks)
	}
	if diff := cmp.Diff([]string{"go vet ./...", "go test -json ./..."}, r.NotRun); diff != "" {
		t.Errorf("not run (-want +got):\n%s", diff)
	}
	if len(r.TestFailures) != 0 {
		t.Errorf("test failures %+v", r.TestFailures)
	}
}

// TestTestGoFailing: real failures are re-run twice, stay failures, and the
// panic escalates.
func TestTestGoFailing(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goFailing)
	r := Test(context.Background(), dir, goEnv, []Check{goTestCheck()}, TestOptions{})
	if diff := cmp.Diff([]string{"TestAdd", "TestTable/two", "TestNilMap"}, failureTests(r)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if f := r.TestFailures[0]; f.File != "calc/calc_test.go" || f.Line != 7 || f.Error != "Add(2, 2) = 0, want 4" || f.Check != "go test -json ./..." {
		t.Errorf("TestAdd: %+v", f)
	}
	if r.Status != StatusFail || r.Recommendation != RecommendEscalateTier {
		t.Errorf("status %s, recommendation %s; want fail, escalate_tier (a panic is a crash)", r.Status, r.Recommendation)
	}
	if len(r.RuntimeErrors) != 1 || !strings.Contains(r.RuntimeErrors[0], "panic: assignment to entry in nil map") {
		t.Errorf("runtime errors %q", r.RuntimeErrors)
	}
	if c := r.Checks[0]; c.Reruns != 2 || len(c.Flaky) != 0 || c.Passed {
		t.Errorf("reruns %d, flaky %v, passed %v; want 2 reruns, no flaky test, failed", c.Reruns, c.Flaky, c.Passed)
	}
	if want := (Counts{Run: 5, Passed: 2, Failed: 3, Skipped: 1}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}
}

// TestTestFlakyGo: a test that fails on its first run and passes on the
// second is flaky, not a failure; the rerun runs only the failed tests.
func TestTestFlakyGo(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goFlaky)
	counter := t.TempDir()
	env := append(slices.Clone(goEnv), "FLAKY_DIR="+counter)
	r := Test(context.Background(), dir, env, DetectDefaults(dir), TestOptions{})
	if r.Status != StatusWarning || r.Recommendation != RecommendPassToCommit {
		t.Errorf("status %s, recommendation %s; want warning, pass_to_commit", r.Status, r.Recommendation)
	}
	if diff := cmp.Diff([]string{"example.com/proj/flaky.TestFlaky"}, r.Flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
	if len(r.TestFailures) != 0 || len(r.RuntimeErrors) != 0 {
		t.Errorf("failures %+v, runtime %q", r.TestFailures, r.RuntimeErrors)
	}
	if len(r.Checks) != 3 {
		t.Fatalf("%d checks ran, want build, vet, test", len(r.Checks))
	}
	test := r.Checks[2]
	if !test.Passed || test.Reruns != 1 || test.ExitCode == 0 {
		t.Errorf("test check: passed %v, reruns %d, exit %d; want passed after 1 rerun of a run that exited non-zero", test.Passed, test.Reruns, test.ExitCode)
	}
	if want := (Counts{Run: 3, Passed: 3}); r.Counts != want {
		t.Errorf("counts %+v, want %+v (the flaky test counts as passed)", r.Counts, want)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "flaky: example.com/proj/flaky.TestFlaky failed, then passed on rerun 1")
	}) {
		t.Errorf("warnings %q", r.Warnings)
	}
	if r.Confidence != 0.8 {
		t.Errorf("confidence %v, want 0.8", r.Confidence)
	}
	if runs, _ := os.ReadFile(filepath.Join(counter, "runs")); string(runs) != "xx" {
		t.Errorf("TestFlaky ran %d times, want 2", len(runs))
	}

	// With a test that always fails: the flaky one is still flaky, the
	// broken one a failure after two reruns, the second of which runs it
	// alone.
	counter = t.TempDir()
	env = append(slices.Clone(goEnv), "FLAKY_DIR="+counter, "FLAKY_BROKEN=1")
	r = Test(context.Background(), dir, env, []Check{goTestCheck()}, TestOptions{})
	if r.Status != StatusFail || r.Recommendation != RecommendFixRequired {
		t.Errorf("status %s, recommendation %s; want fail, fix_required", r.Status, r.Recommendation)
	}
	if diff := cmp.Diff([]string{"TestBroken"}, failureTests(r)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.com/proj/flaky.TestFlaky"}, r.Flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
	if c := r.Checks[0]; c.Reruns != 2 || c.Passed {
		t.Errorf("reruns %d, passed %v", c.Reruns, c.Passed)
	}
	if runs, _ := os.ReadFile(filepath.Join(counter, "runs")); string(runs) != "xx" {
		t.Errorf("TestFlaky ran %d times, want 2 (the second rerun runs TestBroken alone)", len(runs))
	}
	if want := (Counts{Run: 3, Passed: 2, Failed: 1}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}

	// go test without -json (a --check): the gate adds -json, so that its
	// tests are counted and named.
	counter = t.TempDir()
	env = append(slices.Clone(goEnv), "FLAKY_DIR="+counter)
	r = Test(context.Background(), dir, env, []Check{{Name: "go test ./...", Shell: "go test ./..."}}, TestOptions{})
	if c := r.Checks[0]; r.Status != StatusWarning || !slices.Equal(r.Flaky, []string{"example.com/proj/flaky.TestFlaky"}) ||
		c.Format != FormatGoTest || c.Command != "go test -json ./..." || c.Name != "go test ./..." || c.Counts == nil {
		t.Errorf("status %s, flaky %v, format %s, command %q, counts %v", r.Status, r.Flaky, c.Format, c.Command, c.Counts)
	}
}

// TestTestRerunLimits: more failures than MaxRerunFailures, or a build
// error, are not re-run; MaxReruns < 0 disables reruns.
func TestTestRerunLimits(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goFailing)
	r := Test(context.Background(), dir, goEnv, []Check{goTestCheck()}, TestOptions{MaxRerunFailures: 2})
	if r.Checks[0].Reruns != 0 {
		t.Errorf("3 failures > 2: %d reruns", r.Checks[0].Reruns)
	}
	r = Test(context.Background(), dir, goEnv, []Check{goTestCheck()}, TestOptions{MaxReruns: -1})
	if r.Checks[0].Reruns != 0 {
		t.Errorf("MaxReruns -1: %d reruns", r.Checks[0].Reruns)
	}
	broken := project(t, goBroken)
	r = Test(context.Background(), broken, goEnv, []Check{goTestCheck()}, TestOptions{})
	if r.Checks[0].Reruns != 0 || !r.Checks[0].BuildFailed {
		t.Errorf("build failure: %d reruns, buildFailed %v", r.Checks[0].Reruns, r.Checks[0].BuildFailed)
	}
	if len(r.ImportErrors) != 2 || len(r.SyntaxErrors) != 2 {
		t.Errorf("syntax %q, imports %q", r.SyntaxErrors, r.ImportErrors)
	}
}

// TestTestWholeCheckRerun: a test check whose output no parser knows is run
// again whole; it is flaky when it then passes.
func TestTestWholeCheckRerun(t *testing.T) {
	dir := t.TempDir()
	flaky := Check{Name: "flaky suite", Shell: "if [ -f ran ]; then echo ok; exit 0; fi; touch ran; echo 'something broke'; exit 1", Kind: KindTest}
	r := Test(context.Background(), dir, nil, []Check{flaky}, TestOptions{})
	if r.Status != StatusWarning || r.Recommendation != RecommendPassToCommit || !slices.Equal(r.Flaky, []string{"flaky suite"}) {
		t.Errorf("status %s, recommendation %s, flaky %v", r.Status, r.Recommendation, r.Flaky)
	}
	if r.Checks[0].Reruns != 1 || !r.Checks[0].Passed || len(r.TestFailures) != 0 {
		t.Errorf("%+v", r.Checks[0])
	}

	broken := Check{Name: "broken suite", Shell: "echo run >> runs; echo 'FAILED: everything'; exit 1", Kind: KindTest}
	r = Test(context.Background(), dir, nil, []Check{broken}, TestOptions{})
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 3 {
		t.Errorf("ran %q, want 3 times", runs)
	}
	if r.Status != StatusFail || len(r.TestFailures) != 1 || r.TestFailures[0].Test != "broken suite" ||
		r.TestFailures[0].Error != "exited with status 1:\nFAILED: everything" || r.Confidence != 0.7 {
		t.Errorf("status %s, failures %+v, confidence %v", r.Status, r.TestFailures, r.Confidence)
	}
	// A check of unknown kind is not re-run.
	r = Test(context.Background(), dir, nil, []Check{{Name: "lint", Shell: "exit 1"}}, TestOptions{})
	if r.Checks[0].Reruns != 0 {
		t.Errorf("a check of unknown kind was re-run")
	}
}

func TestTestJUnitFile(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/junit/surefire.xml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A report left by an earlier run is not read.
	stale := filepath.Join(dir, "out", "TEST-old.xml")
	if err := os.WriteFile(stale, []byte(readTestdata(t, "junit/jest-junit.xml")), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Check{Name: "mvn test", Shell: "cp '" + src + "' out/TEST-calc.xml; exit 1", Kind: KindTest, JUnit: "out/TEST-*.xml"}
	r := Test(context.Background(), dir, nil, []Check{c}, TestOptions{MaxReruns: -1})
	if diff := cmp.Diff([]string{"addsTwoNumbers", "dividesByZero"}, failureTests(r)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if f := r.TestFailures[0]; f.File != "CalcTest.java" || f.Line != 14 || f.Package != "com.example.CalcTest" {
		t.Errorf("%+v", f)
	}
	if want := (Counts{Run: 3, Passed: 1, Failed: 2, Skipped: 1}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}

	// A check that writes no report: a warning, and its output's failure.
	c = Check{Name: "mvn test", Shell: "echo no report; exit 1", Kind: KindTest, JUnit: "out/none-*.xml"}
	r = Test(context.Background(), dir, nil, []Check{c}, TestOptions{MaxReruns: -1})
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "wrote no JUnit report") }) || len(r.TestFailures) != 1 {
		t.Errorf("warnings %q, failures %+v", r.Warnings, r.TestFailures)
	}
}

func TestTestTimeoutEscalates(t *testing.T) {
	c := Check{Name: "hangs", Shell: "sleep 10", Timeout: 200 * time.Millisecond, Kind: KindTest}
	r := Test(context.Background(), t.TempDir(), nil, []Check{c, {Name: "after", Shell: "true"}}, TestOptions{})
	if r.Status != StatusWarning || r.Recommendation != RecommendEscalateTier || r.Confidence != 0.5 {
		t.Errorf("status %s, recommendation %s, confidence %v; want warning, escalate_tier, 0.5", r.Status, r.Recommendation, r.Confidence)
	}
	if len(r.RuntimeErrors) != 1 || !strings.Contains(r.RuntimeErrors[0], `check "hangs" timed out after 200ms`) {
		t.Errorf("runtime errors %q", r.RuntimeErrors)
	}
	if !slices.Equal(r.NotRun, []string{"after"}) || r.Checks[0].Reruns != 0 {
		t.Errorf("not run %v, reruns %d", r.NotRun, r.Checks[0].Reruns)
	}
}

func TestTestCrashAndNotStarted(t *testing.T) {
	r := Test(context.Background(), t.TempDir(), nil, []Check{{Name: "segv", Shell: "kill -SEGV $$", Kind: KindBuild}}, TestOptions{})
	if r.Recommendation != RecommendEscalateTier || len(r.RuntimeErrors) != 1 || !strings.Contains(r.RuntimeErrors[0], "killed by signal 11") {
		t.Errorf("recommendation %s, runtime %q", r.Recommendation, r.RuntimeErrors)
	}
	r = Test(context.Background(), t.TempDir(), nil, []Check{{Name: "missing", Argv: []string{"/nonexistent/jlgcli-test-prog"}}}, TestOptions{})
	if r.Status != StatusFail || len(r.TestFailures) != 1 || !strings.HasPrefix(r.TestFailures[0].Error, "could not be started: ") {
		t.Errorf("status %s, failures %+v", r.Status, r.TestFailures)
	}
}

func TestTestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Test(ctx, t.TempDir(), nil, []Check{{Name: "a", Shell: "true"}, {Name: "b", Shell: "true"}}, TestOptions{})
	if !r.Interrupted || r.Status != StatusWarning || r.Recommendation != RecommendFixRequired || !slices.Equal(r.NotRun, []string{"a", "b"}) {
		t.Errorf("%+v", r)
	}
}

func TestTestPassAndJSON(t *testing.T) {
	r := Test(context.Background(), t.TempDir(), nil, []Check{{Name: "ok", Shell: "echo fine", Kind: KindBuild}}, TestOptions{})
	if r.Status != StatusPass || r.Recommendation != RecommendPassToCommit || !r.OK() {
		t.Errorf("%+v", r)
	}
	// No test ran: the pass is worth less.
	if r.Confidence != 0.6 {
		t.Errorf("confidence %v, want 0.6", r.Confidence)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"syntax_errors", "import_errors", "test_failures", "runtime_errors", "warnings", "flaky"} {
		if l, ok := m[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, m[k])
		}
	}
	for k, want := range map[string]any{"status": "pass", "recommendation": "pass_to_commit", "confidence": 0.6} {
		if m[k] != want {
			t.Errorf("%s = %#v, want %#v", k, m[k], want)
		}
	}
	// A failure in the seed's format.
	f, _ := json.Marshal(TestFailure{Test: "test_authenticate_user", Error: "AssertionError: Expected True, got False", File: "tests/test_auth.py", Line: 42})
	if string(f) != `{"test":"test_authenticate_user","error":"AssertionError: Expected True, got False","file":"tests/test_auth.py","line":42}` {
		t.Errorf("%s", f)
	}
}

func TestReportSummaryAndResult(t *testing.T) {
	r := Report{Status: StatusFail, Recommendation: RecommendFixRequired, SyntaxErrors: []string{"a", "b"}, TestFailures: []TestFailure{{Test: "x"}},
		Checks: []CheckReport{{CheckResult: CheckResult{Name: "go build", Passed: true}}, {CheckResult: CheckResult{Name: "go test", ExitCode: 1}}}}
	if s := r.Summary(); s != "fail (fix_required): 2 syntax errors, 1 test failure" {
		t.Errorf("%q", s)
	}
	res := r.Result()
	if res.Passed || len(res.Checks) != 2 || res.Checks[1].Name != "go test" {
		t.Errorf("%+v", res)
	}
}

func TestRunStaged(t *testing.T) {
	dir := t.TempDir()
	res := RunStaged(context.Background(), dir, nil, []Check{
		{Name: "a", Shell: "true"},
		{Name: "b", Shell: "echo broken; exit 2"},
		{Name: "c", Shell: "touch ran"},
	})
	if res.Passed || len(res.Checks) != 2 || res.Checks[1].ExitCode != 2 {
		t.Errorf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the check after the failure ran")
	}
	if res := RunStaged(context.Background(), dir, nil, []Check{{Name: "a", Shell: "true"}}); !res.Passed || len(res.Checks) != 1 {
		t.Errorf("%+v", res)
	}
}

// TestTestRunAll: a baseline runs every check, even after a failure, and
// does not re-run.
func TestTestRunAll(t *testing.T) {
	dir := t.TempDir()
	base := BaselineReport(context.Background(), dir, nil, []Check{
		{Name: "a", Shell: "echo run >> runs; exit 1", Kind: KindTest},
		{Name: "b", Shell: "true"},
	})
	if len(base.Checks) != 2 || base.NotRun != nil || base.Checks[0].Reruns != 0 {
		t.Errorf("%+v", base)
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); string(runs) != "run\n" {
		t.Errorf("runs %q", runs)
	}
}

// TestTestEscalation: three parse errors escalate; compiler errors that are
// not parse errors (undefined names, types) do not, however many.
func TestTestEscalation(t *testing.T) {
	dir := t.TempDir()
	three := Check{Name: "go build", Kind: KindBuild, Format: FormatGo,
		Shell: "printf 'a.go:1:1: syntax error: unexpected {\\nb.go:2:1: syntax error: unexpected }\\nc.go:3:1: expected declaration, found x\\n'; exit 1"}
	r := Test(context.Background(), dir, nil, []Check{three}, TestOptions{})
	if len(r.SyntaxErrors) != 3 || r.Recommendation != RecommendEscalateTier {
		t.Errorf("syntax %q, recommendation %s; want 3, escalate_tier", r.SyntaxErrors, r.Recommendation)
	}
	undefined := Check{Name: "go build", Kind: KindBuild, Format: FormatGo,
		Shell: "for i in 1 2 3 4 5; do echo \"a.go:$i:1: undefined: x$i\"; done; exit 1"}
	r = Test(context.Background(), dir, nil, []Check{undefined}, TestOptions{})
	if len(r.SyntaxErrors) != 5 || r.Recommendation != RecommendFixRequired {
		t.Errorf("syntax %q, recommendation %s; want 5, fix_required", r.SyntaxErrors, r.Recommendation)
	}
}

// TestTestCargoLive: cargo's defaults on a crate with failing tests.
func TestTestCargoLive(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs cargo")
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo is not on PATH")
	}
	dir := project(t, rustCrate)
	r := Test(context.Background(), dir, []string{"CARGO_TERM_COLOR=never", "RUST_BACKTRACE=0"}, DetectDefaults(dir), TestOptions{MaxReruns: 1})
	// cargo runs tests in parallel: failures come in any order.
	got := failureTests(r)
	slices.Sort(got)
	if diff := cmp.Diff([]string{"tests::adds", "tests::unwraps"}, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	for _, f := range r.TestFailures {
		if f.Test == "tests::adds" && (f.File != "src/lib.rs" || f.Line != 11) {
			t.Errorf("%+v", f)
		}
	}
	if want := (Counts{Run: 4, Passed: 2, Failed: 2, Skipped: 1}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}
	if r.Status != StatusFail || r.Recommendation != RecommendFixRequired || r.Checks[1].Reruns != 1 {
		t.Errorf("status %s, recommendation %s, reruns %d", r.Status, r.Recommendation, r.Checks[1].Reruns)
	}
}

// TestTestReportBounded: a report lists at most MaxReportEntries of each
// kind, and says how many it left out.
func TestTestReportBounded(t *testing.T) {
	c := Check{Name: "go build", Kind: KindBuild, Format: FormatGo,
		Shell: "i=0; while [ $i -lt 150 ]; do echo \"a.go:$i:1: undefined: x$i\"; i=$((i+1)); done; exit 1"}
	r := Test(context.Background(), t.TempDir(), nil, []Check{c}, TestOptions{DeletedTestFiles: []string{"a_test.go"}})
	if len(r.SyntaxErrors) != MaxReportEntries || !slices.Contains(r.Warnings, "50 more errors and test failures are left out of this report") {
		t.Errorf("%d syntax errors, warnings %q", len(r.SyntaxErrors), r.Warnings)
	}
	if len(r.TestFailures) != 1 || r.TestFailures[0].Test != "anti-gaming: deleted-test-file" {
		t.Errorf("failures %+v", r.TestFailures)
	}
}
