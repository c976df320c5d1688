package gate

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// BaseTests asks Test to judge a change that passed its own checks with
// the tests as they stood at the task's base (TestOptions.BaseTests): the
// base's version of every test file the change modifies or deletes is put
// back, the test files it adds are taken away, and the checks of tests run
// again on the changed code. Done then needs every test that ran at the
// baseline (passed or failed) to pass there, and none of them to be
// skipped or to vanish.
type BaseTests struct {
	// SetAside, when set, is why the base's tests do not judge the change
	// (the task is meant to change its tests): the report says it, nothing
	// runs.
	SetAside string
	// Laid are the test files of the base that the change modifies or
	// deletes, Removed the test files it adds (BaseTestFile), as the
	// caller computes them from the change.
	Laid, Removed []string
	// Lay makes the tree so: the base's version of each of Laid, none of
	// Removed. Test calls it once, when either is not empty and the
	// change passed its own checks; the caller puts the tree back after
	// Test returns.
	Lay func(ctx context.Context) error
}

// BaseTestsReport.Status values.
const (
	// BasePass: the tests of the base passed on the change.
	BasePass = "pass"
	// BaseFail: they did not (each reason is a finding of Report.Gaming).
	BaseFail = "fail"
	// BaseSetAside: the task is meant to change its tests; the change's
	// own tests judged it (BaseTests.SetAside).
	BaseSetAside = "set-aside"
	// BaseNotRun: the change failed its own checks first.
	BaseNotRun = "not-run"
)

// BaseTestsReport is what the tests of the task's base said of a change.
type BaseTestsReport struct {
	Status string `json:"status"`
	// Reason says why they were set aside or not run.
	Reason string `json:"reason,omitempty"`
	// Laid and Removed are the test files put back as the base had them,
	// and those of the change taken away, for their run.
	Laid    []string `json:"laid,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Rerun: the checks of tests ran again with the base's test files;
	// false when the change touches none (its own run was theirs).
	Rerun bool `json:"rerun,omitempty"`
	// Counts are the tests of that run.
	Counts *Counts `json:"counts,omitempty"`
	// ByExitStatus are the checks whose tests could be neither named nor
	// counted, here or at the baseline: only their exit status judged.
	ByExitStatus []string        `json:"byExitStatus,omitempty"`
	DurationMs   millis.Duration `json:"durationMs,omitempty"`
}

// The rules of the tests of the base (GamingFinding.Rule).
const (
	// RuleBaseTestsFail: a check of tests fails with the base's tests.
	RuleBaseTestsFail = "base-tests-fail"
	// RuleBaseTestsNotRun: tests that ran at the baseline are skipped, or
	// no longer run, with the base's tests.
	RuleBaseTestsNotRun = "base-tests-not-run"
)

// testDirNames are directories whose files all belong to the tests.
var testDirNames = map[string]bool{"tests": true, "test": true, "__tests__": true, "spec": true, "testdata": true, "__snapshots__": true, "fixtures": true}

// BaseTestFile reports whether p (slash-separated, relative to the
// repository) belongs to the tests that BaseTests lays back: a test file
// (IsTestFile: Go's _test.go, Python's test_*.py and conftest.py, *.test.js,
// ...) or any file under a directory of tests, their data or snapshots
// (tests, test, spec, __tests__, testdata, __snapshots__, fixtures).
func BaseTestFile(p string) bool {
	if IsTestFile(p) {
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		if testDirNames[d] {
			return true
		}
	}
	return false
}

// judgeBase adds to r, the report of the change's own run of the checks,
// what the tests of the base say (opt.BaseTests).
func judgeBase(ctx context.Context, dir string, env []string, checks []Check, r *Report, opt TestOptions) {
	bt := opt.BaseTests
	rep := &BaseTestsReport{Laid: bt.Laid, Removed: bt.Removed}
	r.BaseTests = rep
	switch {
	case bt.SetAside != "":
		rep.Status, rep.Reason = BaseSetAside, bt.SetAside
		return
	case r.Interrupted || !r.OK():
		rep.Status, rep.Reason = BaseNotRun, "the change did not pass its own checks"
		return
	}
	start := time.Now()
	current := slices.DeleteFunc(slices.Clone(r.Checks), func(c CheckReport) bool { return !runsTests(c.Kind) })
	var sub *Report
	if len(bt.Laid)+len(bt.Removed) > 0 {
		rep.Rerun = true
		lay := bt.Lay
		if lay == nil {
			lay = func(context.Context) error { return fmt.Errorf("no way to lay them was given") }
		}
		if err := lay(ctx); err != nil {
			rep.Status = BaseFail
			r.addFindings([]GamingFinding{{Rule: RuleBaseTestsFail,
				Message: fmt.Sprintf("the test files of the task's base could not be put back over the change to run them: %v", err)}}, opt.Gaming)
			return
		}
		var tests []Check
		for _, c := range checks {
			if runsTests(InferKind(c)) {
				tests = append(tests, c)
			}
		}
		s := Test(ctx, dir, env, tests, TestOptions{MaxReruns: opt.MaxReruns, MaxRerunFailures: opt.MaxRerunFailures, KeepTests: true, Scratch: opt.Scratch, Box: opt.Box})
		sub = &s
		if s.Interrupted {
			r.Interrupted = true
			rep.Status, rep.Reason = BaseNotRun, "interrupted"
			return
		}
		current = s.Checks
		for _, w := range s.Warnings {
			if strings.HasPrefix(w, "flaky: ") {
				r.Warnings = append(r.Warnings, "tests of the base: "+w)
			}
		}
		r.Flaky = append(r.Flaky, s.Flaky...)
	}
	var counts Counts
	counted := false
	for _, c := range current {
		if c.Counts != nil {
			counts.add(*c.Counts)
			counted = true
		}
	}
	if counted {
		rep.Counts = &counts
	}
	findings := baseFindings(opt.Baseline, current, sub, rep)
	rep.DurationMs = millis.Of(time.Since(start))
	rep.Status = BasePass
	if len(findings) > 0 {
		rep.Status = BaseFail
		r.addFindings(findings, opt.Gaming)
	}
}

// runsTests: a check of this kind may run tests (a test, or a check whose
// kind jlgcli cannot tell).
func runsTests(kind string) bool { return kind != KindBuild && kind != KindVet }

// maxNamed bounds the tests a finding names.
const maxNamed = 10

// baseFindings compares the run of the base's tests (current; sub its
// report, nil when it was the change's own run) with the baseline.
func baseFindings(baseline *Report, current []CheckReport, sub *Report, rep *BaseTestsReport) []GamingFinding {
	var out []GamingFinding
	where := "with the tests as they stood at the task's base"
	if len(rep.Laid) > 0 || len(rep.Removed) > 0 {
		where += " (" + laidText(rep.Laid, rep.Removed) + ")"
	}
	if sub != nil && !sub.OK() {
		for _, c := range current {
			if c.Passed {
				continue
			}
			out = append(out, GamingFinding{Rule: RuleBaseTestsFail, Check: c.Name,
				Message: fmt.Sprintf("%s, check %q fails:%s\nthe change must pass the existing tests as they were: fix the code, not the tests (a task that is meant to change existing tests declares it with editTests)",
					where, c.Name, failuresText(sub, c.Name))})
		}
		if len(out) == 0 {
			out = append(out, GamingFinding{Rule: RuleBaseTestsFail, Message: where + ", the checks fail: " + sub.Summary()})
		}
		return out
	}
	byName := map[string][]CheckReport{}
	if baseline != nil {
		for _, b := range baseline.Checks {
			byName[b.Name] = append(byName[b.Name], b)
		}
	}
	seen := map[string]int{}
	for _, c := range current {
		k := seen[c.Name]
		seen[c.Name]++
		bs := byName[c.Name]
		if k >= len(bs) || !comparable(bs[k]) && bs[k].Tests == nil {
			rep.ByExitStatus = append(rep.ByExitStatus, c.Name)
			continue
		}
		b := bs[k]
		if b.Tests != nil && c.Tests != nil {
			have, skipped := idSet(c.Tests.Passed), idSet(c.Tests.Skipped)
			var nowSkipped, missing []string
			for _, id := range slices.Concat(b.Tests.Passed, b.Tests.Failed) {
				n := normalizeID(id)
				switch {
				case have[n]:
				case skipped[n]:
					nowSkipped = append(nowSkipped, id)
				default:
					missing = append(missing, id)
				}
			}
			if gone := slices.Concat(nowSkipped, missing); len(gone) > 0 {
				out = append(out, GamingFinding{Rule: RuleBaseTestsNotRun, Check: c.Name, Lines: named(gone),
					Message: fmt.Sprintf("%s, check %q no longer runs %s that ran before the change (%s):%s\ntests must not be skipped, deselected or disabled to make the checks pass",
						where, c.Name, plural.N(len(gone), "test"), goneWhy(len(nowSkipped), len(missing)), bullets(named(gone), len(gone)))})
			}
			continue
		}
		if b.Counts == nil || c.Counts == nil {
			rep.ByExitStatus = append(rep.ByExitStatus, c.Name)
			continue
		}
		if c.Counts.Run < b.Counts.Run || c.Counts.Skipped > b.Counts.Skipped {
			out = append(out, GamingFinding{Rule: RuleBaseTestsNotRun, Check: c.Name, Baseline: b.Counts.Run, Current: c.Counts.Run,
				Message: fmt.Sprintf("%s, check %q ran %d tests and skipped %d, where the baseline ran %d and skipped %d: tests must not be skipped, deselected or disabled to make the checks pass",
					where, c.Name, c.Counts.Run, c.Counts.Skipped, b.Counts.Run, b.Counts.Skipped)})
		}
	}
	return out
}

func goneWhy(skipped, missing int) string {
	switch {
	case skipped > 0 && missing > 0:
		return fmt.Sprintf("%d now skipped, %d not run at all", skipped, missing)
	case skipped > 0:
		return "now skipped"
	}
	return "not run at all"
}

// laidText says which files were put back and taken away.
func laidText(laid, removed []string) string {
	var parts []string
	if len(laid) > 0 {
		parts = append(parts, listFiles(laid)+" as the base had "+pronoun(len(laid)))
	}
	if len(removed) > 0 {
		parts = append(parts, listFiles(removed)+" of the change left out")
	}
	return strings.Join(parts, "; ")
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// listFiles names at most 5 files, then how many more.
func listFiles(files []string) string {
	if len(files) <= 5 {
		return strings.Join(files, ", ")
	}
	return strings.Join(files[:5], ", ") + fmt.Sprintf(" and %d more", len(files)-5)
}

// failuresText lists the failures of check name in r, as lines.
func failuresText(r *Report, name string) string {
	var b strings.Builder
	n := 0
	for _, f := range r.TestFailures {
		if f.Check != name || f.IsGaming() {
			continue
		}
		n++
		if n > maxNamed {
			continue
		}
		where := ""
		if f.File != "" {
			where = " (" + strings.TrimSuffix(location(f.File, f.Line, 0), ": ") + ")"
		}
		msg := strings.ReplaceAll(strings.TrimSpace(f.Error), "\n", "\n        ")
		fmt.Fprintf(&b, "\n    - %s%s: %s", f.Test, where, msg)
	}
	if n > maxNamed {
		fmt.Fprintf(&b, "\n    (and %d more)", n-maxNamed)
	}
	for _, e := range slices.Concat(r.SyntaxErrors, r.ImportErrors, r.RuntimeErrors) {
		if n >= maxNamed {
			break
		}
		n++
		fmt.Fprintf(&b, "\n    - %s", e)
	}
	if n == 0 {
		for _, c := range r.Checks {
			if c.Name == name && c.OutputTail != "" {
				b.WriteString("\n" + indent(lastLines(c.OutputTail, 15), "    "))
			}
		}
	}
	return b.String()
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func named(ids []string) []string {
	if len(ids) > maxNamed {
		return ids[:maxNamed]
	}
	return ids
}

func bullets(ids []string, total int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("\n    - " + id)
	}
	if total > len(ids) {
		fmt.Fprintf(&b, "\n    (and %d more)", total-len(ids))
	}
	return b.String()
}

// addrRE matches a memory address in a test's name (a parameter's repr).
var addrRE = regexp.MustCompile(`0x[0-9a-fA-F]+`)

// normalizeID is a test's id without what changes from run to run.
func normalizeID(id string) string { return addrRE.ReplaceAllString(id, "0x") }

func idSet(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[normalizeID(id)] = true
	}
	return m
}

// addFindings adds anti-gaming findings to a report made: failures that
// fail it, or warnings when mode is GamingWarn.
func (r *Report) addFindings(findings []GamingFinding, mode Gaming) {
	r.Gaming = append(r.Gaming, findings...)
	for _, g := range findings {
		if mode == GamingWarn {
			r.Warnings = append(r.Warnings, "anti-gaming: "+g.Message)
			continue
		}
		r.TestFailures = append(r.TestFailures, TestFailure{Test: gamingTest + g.Rule, Error: g.Message, File: g.File, Check: g.Check})
	}
	switch {
	case mode != GamingWarn:
		r.Status = StatusFail
		if r.Recommendation != RecommendEscalateTier {
			r.Recommendation = RecommendFixRequired
		}
	case r.Status == StatusPass:
		r.Status = StatusWarning
	}
}
