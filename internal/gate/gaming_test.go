package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pytestSays is a check that prints pytest's last line (and fails when
// failed is set), for the counts that the anti-gaming rules compare.
func pytestSays(summary string, failed bool) Check {
	code := "0"
	if failed {
		code = "1"
	}
	return Check{Name: "pytest", Shell: "echo '" + summary + "'; exit " + code, Kind: KindTest, Format: FormatPytest}
}

func rules(r Report) []string {
	var out []string
	for _, g := range r.Gaming {
		out = append(out, g.Rule)
	}
	return out
}

func TestGamingCounts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	base := BaselineReport(ctx, dir, nil, []Check{pytestSays("10 passed, 1 skipped in 0.50s", false)})
	if c := base.Checks[0].Counts; c == nil || c.Run != 10 || c.Skipped != 1 {
		t.Fatalf("baseline counts %+v", c)
	}
	// The baseline goes through JSON, as a checkpoint stores it.
	data, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	var stored Report
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}

	// Two tests deleted, two more skipped: refused.
	r := Test(ctx, dir, nil, []Check{pytestSays("8 passed, 3 skipped in 0.40s", false)}, TestOptions{Baseline: &stored})
	if diff := cmp.Diff([]string{RuleFewerTestsRun, RuleMoreTestsSkipped}, rules(r)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if r.Status != StatusFail || r.Recommendation != RecommendFixRequired || r.OK() {
		t.Errorf("status %s, recommendation %s; want fail, fix_required", r.Status, r.Recommendation)
	}
	if len(r.TestFailures) != 2 || r.TestFailures[0].Test != "anti-gaming: fewer-tests-run" ||
		r.TestFailures[0].Error != `check "pytest" ran 10 tests before your changes and 8 now: tests must not be deleted or disabled to make the checks pass` {
		t.Errorf("failures %+v", r.TestFailures)
	}
	if g := r.Gaming[1]; g.Baseline != 1 || g.Current != 3 || g.Check != "pytest" {
		t.Errorf("%+v", g)
	}

	// In warn mode: a warning, and the change may be committed.
	r = Test(ctx, dir, nil, []Check{pytestSays("8 passed, 3 skipped in 0.40s", false)}, TestOptions{Baseline: &stored, Gaming: GamingWarn})
	if r.Status != StatusWarning || r.Recommendation != RecommendPassToCommit || len(r.TestFailures) != 0 || len(r.Warnings) != 2 ||
		!strings.HasPrefix(r.Warnings[0], "anti-gaming: ") {
		t.Errorf("status %s, recommendation %s, failures %+v, warnings %q", r.Status, r.Recommendation, r.TestFailures, r.Warnings)
	}

	// More tests, fewer skipped: nothing to say.
	r = Test(ctx, dir, nil, []Check{pytestSays("12 passed in 0.40s", false)}, TestOptions{Baseline: &stored})
	if len(r.Gaming) != 0 || r.Status != StatusPass {
		t.Errorf("gaming %+v, status %s", r.Gaming, r.Status)
	}

	// A check that does not load its tests is not compared: it fails anyway.
	broken := Check{Name: "pytest", Shell: "echo '=== short test summary info ==='; echo 'ERROR tests/test_x.py'; echo '=== 1 error in 0.1s ==='; exit 2", Kind: KindTest, Format: FormatPytest}
	r = Test(ctx, dir, nil, []Check{broken}, TestOptions{Baseline: &stored})
	if len(r.Gaming) != 0 || !r.Checks[0].BuildFailed {
		t.Errorf("gaming %+v on a check that did not build (buildFailed %v)", r.Gaming, r.Checks[0].BuildFailed)
	}
	// Nor a check missing from the baseline, nor one without counts.
	r = Test(ctx, dir, nil, []Check{{Name: "other", Shell: "true", Kind: KindTest}}, TestOptions{Baseline: &stored})
	if len(r.Gaming) != 0 {
		t.Errorf("gaming %+v", r.Gaming)
	}
}

func TestGamingDeletedTestFiles(t *testing.T) {
	r := Test(context.Background(), t.TempDir(), nil, []Check{{Name: "ok", Shell: "true"}},
		TestOptions{DeletedTestFiles: []string{"calc/calc_test.go", "tests/test_auth.py"}})
	if diff := cmp.Diff([]string{RuleDeletedTestFile, RuleDeletedTestFile}, rules(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Status != StatusFail || r.TestFailures[0].File != "calc/calc_test.go" ||
		r.TestFailures[1].Error != "the test file tests/test_auth.py was deleted: fix the code or the test rather than deleting it" {
		t.Errorf("status %s, failures %+v", r.Status, r.TestFailures)
	}
	r = Test(context.Background(), t.TempDir(), nil, []Check{{Name: "ok", Shell: "true"}},
		TestOptions{DeletedTestFiles: []string{"calc/calc_test.go"}, Gaming: GamingWarn})
	if r.Status != StatusWarning || !r.OK() {
		t.Errorf("warn mode: status %s, recommendation %s", r.Status, r.Recommendation)
	}
	if !ValidGamingMode("") || !ValidGamingMode(GamingWarn) || ValidGamingMode("ignore") {
		t.Error("ValidGamingMode")
	}
}

// TestGamingGoLive: a real go test run whose change skips a test.
func TestGamingGoLive(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goPassing)
	ctx := context.Background()
	checks := []Check{goTestCheck()}
	base := BaselineReport(ctx, dir, goEnv, checks)
	if want := (Counts{Run: 4, Passed: 4, Skipped: 1}); base.Counts != want {
		t.Fatalf("baseline counts %+v, want %+v", base.Counts, want)
	}
	file := filepath.Join(dir, "calc", "calc_test.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	skipped := strings.Replace(string(src), "func TestAdd(t *testing.T) {", "func TestAdd(t *testing.T) {\n\tt.Skip(\"later\")", 1)
	if err := os.WriteFile(file, []byte(skipped), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Test(ctx, dir, goEnv, checks, TestOptions{Baseline: base})
	if diff := cmp.Diff([]string{RuleFewerTestsRun, RuleMoreTestsSkipped}, rules(r)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if r.Status != StatusFail || !slices.Contains(failureTests(r), "anti-gaming: more-tests-skipped") {
		t.Errorf("status %s, failures %v", r.Status, failureTests(r))
	}
}

// TestGamingWeakenedTest: a weakened test file fails a report that passed
// (refuse), naming the file and its removed lines, bounded; warn makes it a
// warning.
func TestGamingWeakenedTest(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	checks := []Check{pytestSays("3 passed in 0.10s", false)}
	weak := []WeakenedTest{{File: "calc_test.go", Count: 12, Lines: []string{"{3, 6},", `t.Errorf("want %d", want)`}}}
	r := Test(ctx, dir, nil, checks, TestOptions{WeakenedTests: weak})
	if diff := cmp.Diff([]string{RuleWeakenedTest}, rules(r)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if r.Status != StatusFail || r.OK() {
		t.Errorf("status %s, recommendation %s; want fail", r.Status, r.Recommendation)
	}
	g := r.Gaming[0]
	if g.File != "calc_test.go" || !slices.Equal(g.Lines, weak[0].Lines) {
		t.Errorf("finding %+v", g)
	}
	for _, want := range []string{"the test file calc_test.go existed before the task and the change removes or alters 12 lines of it:",
		"\n    - {3, 6},\n", "(and 10 more)", "editTests"} {
		if !strings.Contains(g.Message, want) {
			t.Errorf("message %q lacks %q", g.Message, want)
		}
	}
	if len(r.TestFailures) != 1 || r.TestFailures[0].Test != "anti-gaming: weakened-test" {
		t.Errorf("failures %+v", r.TestFailures)
	}

	r = Test(ctx, dir, nil, checks, TestOptions{WeakenedTests: weak, Gaming: GamingWarn})
	if r.Status != StatusWarning || !r.OK() || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "anti-gaming: the test file calc_test.go") {
		t.Errorf("warn: status %s, warnings %q", r.Status, r.Warnings)
	}
}

// A refused finding is also an entry of test_failures (the seed's readers
// see a failure), but the summary counts it once, as what it is.
func TestSummaryCountsAFindingOnce(t *testing.T) {
	g := GamingFinding{Rule: RuleWeakenedTest, File: "a_test.go", Message: "weakened"}
	r := Report{Status: StatusPass, Recommendation: RecommendPassToCommit}.Refuse(g)
	if got, want := r.Summary(), "fail (fix_required): 1 anti-gaming finding"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	r.TestFailures = append(r.TestFailures, TestFailure{Test: "TestX", Error: "boom"})
	if got, want := r.Summary(), "fail (fix_required): 1 test failure, 1 anti-gaming finding"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
