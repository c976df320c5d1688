package gate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

// Report.Status: the seed's tester statuses.
const (
	// StatusPass: every check passed.
	StatusPass = "pass"
	// StatusFail: a check failed, or the anti-gaming rules refused the
	// change.
	StatusFail = "fail"
	// StatusWarning: nothing failed, but the run is not clean: tests passed
	// only on a rerun (flaky), the anti-gaming rules found something in warn
	// mode, a check timed out (the seed: "if timeout, return warning"), or
	// the run was interrupted.
	StatusWarning = "warning"
)

// Report.Recommendation: what the loop should do next.
const (
	RecommendPassToCommit = "pass_to_commit"
	RecommendFixRequired  = "fix_required"
	RecommendEscalateTier = "escalate_tier"
)

// MaxReportEntries bounds each list of a report (syntax, import and runtime
// errors, test failures, warnings): a report goes into a prompt. The counts
// stay whole.
const MaxReportEntries = 100

// EscalateSyntaxErrors is the seed's "3+ syntax errors → escalate": that
// many parse errors (not type errors or undefined names) escalate.
const EscalateSyntaxErrors = 3

// gamingTest starts the Test of a TestFailure that is an anti-gaming
// finding (one of Report.Gaming) in refuse mode.
const gamingTest = "anti-gaming: "

// IsGaming reports whether f is an anti-gaming finding, which
// Report.Gaming holds as well.
func (f TestFailure) IsGaming() bool { return strings.HasPrefix(f.Test, gamingTest) }

// TestFailure is one failed test, as the seed's test_failures says it.
type TestFailure struct {
	Test  string `json:"test"`
	Error string `json:"error"`
	// File and Line locate the failure, relative to the working directory
	// when the output says where; empty and zero when it does not.
	File string `json:"file"`
	Line int    `json:"line"`
	// Package is the Go package, the JUnit classname.
	Package string `json:"package,omitempty"`
	// Check is the name of the check that failed.
	Check string `json:"check,omitempty"`
}

// Counts are the tests of a run: Run = Passed + Failed (a skipped test did
// not run). Go subtests count, and the tests that have subtests do not
// (unless they fail on their own); a flaky test counts as passed.
type Counts struct {
	Run     int `json:"run"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

func (c *Counts) add(o Counts) {
	c.Run += o.Run
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
}

// CheckReport is how one check fared, with what the report read of it.
type CheckReport struct {
	CheckResult
	// (Passed, in CheckResult, is true for a check whose only failures
	// were tests that passed on a rerun.)
	Kind   string `json:"kind,omitempty"`
	Format string `json:"format,omitempty"`
	// Counts are its tests; nil when its output did not say.
	Counts *Counts `json:"counts,omitempty"`
	// BuildFailed: the code did not build or a test file did not load.
	BuildFailed bool `json:"buildFailed,omitempty"`
	// Reruns is how many times its failed tests were run again.
	Reruns int      `json:"reruns,omitempty"`
	Flaky  []string `json:"flaky,omitempty"`
	// Tests name its tests by how they ended, when its output names them
	// (go test -json, pytest -rA, node --test, cargo, JUnit): kept in a
	// baseline (TestOptions.KeepTests), which the tests of the base are
	// compared with test by test.
	Tests *TestOutcomes `json:"tests,omitempty"`
}

// TestOutcomes are the ids of a check's tests by how they ended: Go's
// "pkg.TestName/sub", pytest's node ids, node's "suite > test", cargo's
// paths, JUnit's "class.name". A flaky test is passed.
type TestOutcomes struct {
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
}

// outcomes are the tests of a run as its parser named them; nil when it
// named none.
func outcomes(o *parsed, flaky []string) *TestOutcomes {
	if o == nil {
		return nil
	}
	var t TestOutcomes
	passed := map[string]bool{}
	for id := range o.passed {
		passed[id] = true
	}
	for _, id := range flaky {
		passed[id] = true
	}
	for id := range passed {
		t.Passed = append(t.Passed, id)
	}
	for _, f := range o.failures {
		if f.id != "" && !passed[f.id] {
			t.Failed = append(t.Failed, f.id)
		}
	}
	for id := range o.skipped {
		if !passed[id] {
			t.Skipped = append(t.Skipped, id)
		}
	}
	if len(t.Passed)+len(t.Failed)+len(t.Skipped) == 0 {
		return nil
	}
	slices.Sort(t.Passed)
	t.Failed = slices.Compact(slices.Sorted(slices.Values(t.Failed)))
	slices.Sort(t.Skipped)
	return &t
}

// Report is the tester's verdict on the code, in the seed's JSON format
// (status, syntax_errors, import_errors, test_failures, runtime_errors,
// warnings, confidence, recommendation) with what the gate adds: the test
// counts, the flaky tests, the anti-gaming findings, and each check's
// result.
type Report struct {
	Status string `json:"status"`
	// SyntaxErrors are the errors of code that does not parse or compile
	// ("file:line:col: message"), ImportErrors those of a package, module
	// or dependency that cannot be found, RuntimeErrors the crashes (panics,
	// segfaults, fatal errors, timeouts), static analysis findings (go vet)
	// and uncaught exceptions.
	SyntaxErrors  []string      `json:"syntax_errors"`
	ImportErrors  []string      `json:"import_errors"`
	TestFailures  []TestFailure `json:"test_failures"`
	RuntimeErrors []string      `json:"runtime_errors"`
	Warnings      []string      `json:"warnings"`
	// Confidence is how far the status can be trusted: 1 when every check
	// ran to its end and said why it failed; lower for flaky tests (0.8), a
	// failure no parser understood (0.7), a pass without a test run (0.6),
	// a timeout or an interruption (0.5).
	Confidence     float64 `json:"confidence"`
	Recommendation string  `json:"recommendation"`

	Counts Counts `json:"counts"`
	// Flaky are the tests that failed and then passed on a rerun: not
	// counted as failures.
	Flaky []string `json:"flaky"`
	// Gaming are the anti-gaming findings against the baseline; in refuse
	// mode each is also a TestFailures entry, in warn mode a Warnings entry.
	Gaming []GamingFinding `json:"gaming,omitempty"`
	// Checks are the checks that ran, in order.
	Checks []CheckReport `json:"checks"`
	// NotRun are the checks not run: a check before them failed (checks
	// stop at the first failure) or the run was interrupted.
	NotRun      []string        `json:"not_run,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
	DurationMs  millis.Duration `json:"duration_ms"`
	// Uncounted are the checks (of tests, or of a kind jlgcli cannot
	// tell) that ran to their end and whose output said neither how many
	// tests ran nor which: the rules that compare tests (fewer-tests-run,
	// more-tests-skipped, and the tests of the base test by test) are off
	// for them, and the tests of the base judge them by their exit status.
	Uncounted []string `json:"uncounted,omitempty"`
	// BaseTests is what the tests as they stood at the task's base said
	// of the change (TestOptions.BaseTests); nil when they were not asked.
	BaseTests *BaseTestsReport `json:"base_tests,omitempty"`
}

// MarshalJSON writes the seed's lists as [] when empty, never null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(r)
	p.SyntaxErrors = nonNil(p.SyntaxErrors)
	p.ImportErrors = nonNil(p.ImportErrors)
	p.TestFailures = nonNil(p.TestFailures)
	p.RuntimeErrors = nonNil(p.RuntimeErrors)
	p.Warnings = nonNil(p.Warnings)
	p.Flaky = nonNil(p.Flaky)
	p.Checks = nonNil(p.Checks)
	return json.Marshal(p)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OK reports whether the change may be committed: the recommendation is
// pass_to_commit (a pass, or a warning for flaky tests or anti-gaming
// findings in warn mode).
func (r Report) OK() bool { return r.Recommendation == RecommendPassToCommit }

// Result is the report's checks as a Result, for Judge and FailurePrompt.
func (r Report) Result() Result {
	res := Result{Passed: !r.Interrupted, Interrupted: r.Interrupted, DurationMs: r.DurationMs}
	for _, c := range r.Checks {
		res.Checks = append(res.Checks, c.CheckResult)
		if !c.Passed {
			res.Passed = false
		}
	}
	return res
}

// Summary is one line for a report: its status and recommendation, and the
// number of each kind of problem, each counted once.
func (r Report) Summary() string {
	var parts []string
	count := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	count(len(r.SyntaxErrors), "syntax error", "syntax errors")
	count(len(r.ImportErrors), "import error", "import errors")
	// An anti-gaming finding is also an entry of TestFailures (so that
	// the seed's readers see a failure): it is counted once, as a finding.
	tests := len(r.TestFailures)
	if len(r.Gaming) > 0 {
		for _, f := range r.TestFailures {
			if f.IsGaming() {
				tests--
			}
		}
	}
	count(tests, "test failure", "test failures")
	count(len(r.RuntimeErrors), "runtime error", "runtime errors")
	count(len(r.Flaky), "flaky test", "flaky tests")
	count(len(r.Gaming), "anti-gaming finding", "anti-gaming findings")
	s := r.Status + " (" + r.Recommendation + ")"
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// checkRun is one check as Test ran it, reruns included.
type checkRun struct {
	check        Check
	kind, format string
	cr           CheckResult
	o            *parsed
	reruns       int
	flaky        []string
	notes        []string // warnings: flaky tests, unreadable JUnit files
}

// build makes the report of the runs.
func build(runs []*checkRun, notRun []string, interrupted bool, start time.Time, opt TestOptions) Report {
	b := &builder{r: Report{Interrupted: interrupted, NotRun: notRun}, seen: map[string]bool{}}
	for _, run := range runs {
		b.addRun(run)
	}
	if b.left > 0 {
		b.r.Warnings = append(b.r.Warnings, fmt.Sprintf("%d more errors and test failures are left out of this report", b.left))
	}
	b.addGaming(opt)
	b.judge(interrupted)
	b.r.DurationMs = millis.Of(time.Since(start))
	return b.r
}

// builder gathers the runs of the checks into a report.
type builder struct {
	r    Report
	seen map[string]bool // texts already listed
	left int             // entries left out past MaxReportEntries

	parseErrors                                int
	crashed, timedOut, notUnderstood, testsRan bool
	gamingFails                                bool // an anti-gaming finding fails the report
}

// addText lists s once, within MaxReportEntries.
func (b *builder) addText(list *[]string, s string) {
	switch {
	case b.seen[s]:
	case len(*list) >= MaxReportEntries:
		b.left++
	default:
		b.seen[s] = true
		*list = append(*list, s)
	}
}

// addFailure lists a test failure, within MaxReportEntries.
func (b *builder) addFailure(f TestFailure) {
	if len(b.r.TestFailures) >= MaxReportEntries {
		b.left++
		return
	}
	b.r.TestFailures = append(b.r.TestFailures, f)
}

// addRun adds one check's run: its report line, counts, flaky tests,
// notes, and, when it failed, what its output says or its end.
func (b *builder) addRun(run *checkRun) {
	r := &b.r
	cr, o := run.cr, run.o
	rep := CheckReport{CheckResult: cr, Kind: run.kind, Format: run.format, Reruns: run.reruns, Flaky: run.flaky}
	if fp, ok := parsedFingerprint(run.format, cr, o); ok {
		// Again, after the reruns: a test that turned out flaky is no
		// part of the failure.
		rep.Fingerprint = fp
	}
	if o != nil {
		rep.BuildFailed = o.buildFailed
		if o.hasCounts {
			c := o.counts
			rep.Counts = &c
			r.Counts.add(c)
			b.testsRan = b.testsRan || c.Run > 0
		}
		rep.Tests = outcomes(o, run.flaky)
	}
	r.Checks = append(r.Checks, rep)
	r.Flaky = append(r.Flaky, run.flaky...)
	for _, n := range run.notes {
		b.addText(&r.Warnings, n)
	}
	if cr.Passed || cr.Interrupted {
		return
	}
	entries := 0
	if o != nil {
		for _, d := range o.diags {
			switch d.class {
			case classSyntax:
				b.addText(&r.SyntaxErrors, d.text)
				if d.parse {
					b.parseErrors++
				}
			case classImport:
				b.addText(&r.ImportErrors, d.text)
			case classRuntime:
				b.addText(&r.RuntimeErrors, d.text)
				b.crashed = b.crashed || d.crash
			}
			entries++
		}
		for _, f := range o.failures {
			tf := f.TestFailure
			tf.Check = cr.Name
			b.addFailure(tf)
			entries++
		}
	}
	switch {
	case cr.TimedOut:
		b.timedOut = true
		b.addText(&r.RuntimeErrors, fmt.Sprintf("check %q timed out after %s and was stopped (an infinite loop or a deadlock?)", cr.Name, cr.TimeoutMs.Duration()))
	case cr.Error != "":
		b.addFailure(TestFailure{Test: cr.Name, Check: cr.Name, Error: "could not be started: " + cr.Error})
	case cr.Limit != "":
		b.addText(&r.RuntimeErrors, fmt.Sprintf("check %q failed: %s", cr.Name, cr.Limit))
	case cr.ExitCode > 128 && !hasCrash(o):
		b.crashed = true
		b.addText(&r.RuntimeErrors, fmt.Sprintf("check %q was killed by signal %d (exit status %d)", cr.Name, cr.ExitCode-128, cr.ExitCode))
	case entries == 0:
		// A failure that no parser understood: the end of its output.
		b.notUnderstood = true
		msg := fmt.Sprintf("exited with status %d", cr.ExitCode)
		if t := lastLines(cr.OutputTail, 15); t != "" {
			msg += ":\n" + t
		}
		b.addFailure(TestFailure{Test: cr.Name, Check: cr.Name, Error: clip(msg)})
	}
}

// addGaming adds the anti-gaming findings, never left out: failures, or
// warnings when opt.Gaming is GamingWarn.
func (b *builder) addGaming(opt TestOptions) {
	r := &b.r
	r.Gaming = gamingFindings(opt.Baseline, r.Checks, opt.DeletedTestFiles, opt.WeakenedTests)
	b.gamingFails = opt.Gaming != GamingWarn && len(r.Gaming) > 0
	for _, g := range r.Gaming {
		if opt.Gaming != GamingWarn {
			r.TestFailures = append(r.TestFailures, TestFailure{Test: gamingTest + g.Rule, Error: g.Message, File: g.File, Check: g.Check})
		} else {
			b.addText(&r.Warnings, "anti-gaming: "+g.Message)
		}
	}
}

// judge gives the report its status, recommendation and confidence.
func (b *builder) judge(interrupted bool) {
	r := &b.r
	failed := b.gamingFails
	for _, c := range r.Checks {
		if !c.Passed && !c.TimedOut && !c.Interrupted {
			failed = true
		}
	}
	switch {
	case failed:
		r.Status = StatusFail
	case interrupted || b.timedOut || len(r.Flaky) > 0 || len(r.Gaming) > 0:
		r.Status = StatusWarning
	default:
		r.Status = StatusPass
	}
	if interrupted {
		b.addText(&r.Warnings, "the checks were interrupted before all of them had run: the report proves nothing")
	}
	for _, c := range r.Checks {
		if c.Counts != nil && c.Kind == KindTest && c.Counts.Run == 0 && c.Passed {
			b.addText(&r.Warnings, fmt.Sprintf("check %q ran no test", c.Name))
		}
		if uncounted(c) {
			r.Uncounted = append(r.Uncounted, c.Name)
		}
	}

	escalate := r.Status != StatusPass && (b.parseErrors >= EscalateSyntaxErrors || b.crashed || b.timedOut)
	switch {
	case escalate:
		r.Recommendation = RecommendEscalateTier
	case r.Status == StatusFail || interrupted:
		r.Recommendation = RecommendFixRequired
	default:
		r.Recommendation = RecommendPassToCommit
	}

	r.Confidence = 1
	lower := func(c float64) { r.Confidence = min(r.Confidence, c) }
	if len(r.Flaky) > 0 {
		lower(0.8)
	}
	if b.notUnderstood {
		lower(0.7)
	}
	if r.Status != StatusFail && !b.testsRan {
		lower(0.6)
	}
	if interrupted || b.timedOut {
		lower(0.5)
	}
}

// uncounted: a check of tests (or of a kind jlgcli cannot tell) that ran
// to its end, built, and whose output counted no test.
func uncounted(c CheckReport) bool {
	return (c.Kind == KindTest || c.Kind == "") && c.Counts == nil && c.Tests == nil &&
		!c.BuildFailed && !c.TimedOut && !c.Interrupted && c.Error == ""
}

func hasCrash(o *parsed) bool {
	return o != nil && slices.ContainsFunc(o.diags, func(d diag) bool { return d.crash })
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
