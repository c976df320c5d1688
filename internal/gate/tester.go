package gate

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// Defaults of TestOptions.
const (
	// DefaultMaxReruns is how many times failed tests are run again.
	DefaultMaxReruns = 2
	// DefaultMaxRerunFailures is the most failed tests that are run again:
	// more failures than that are not flakiness.
	DefaultMaxRerunFailures = 10
)

// TestOptions tune Test.
type TestOptions struct {
	// Baseline is the report of the same checks before the agent's changes
	// (BaselineReport): the anti-gaming rules compare the tests run and
	// skipped with it. Nil: no comparison of counts.
	Baseline *Report
	// DeletedTestFiles are the test files that the change deletes, as the
	// caller computes them (from git, filtered with IsTestFile): each is an
	// anti-gaming finding.
	DeletedTestFiles []string
	// WeakenedTests are the test files of the task's base whose lines the
	// change removes or alters, as the caller computes them (from git):
	// each is an anti-gaming finding. A task meant to change its tests
	// leaves them out.
	WeakenedTests []WeakenedTest
	// Gaming is what an anti-gaming finding does: GamingRefuse (the
	// default, also for "") fails the report, GamingWarn makes it a warning.
	Gaming Gaming
	// RunAll runs every check even after one failed (a baseline wants all
	// the counts); by default the checks stop at the first failure.
	RunAll bool
	// MaxReruns is how many times a test check's failed tests are run
	// again; zero means DefaultMaxReruns, negative none.
	MaxReruns int
	// MaxRerunFailures is the most failed tests that are run again; zero
	// means DefaultMaxRerunFailures.
	MaxRerunFailures int
	// KeepTests keeps in the report each check's tests by name
	// (CheckReport.Tests): a baseline's, which the tests of the base are
	// compared with.
	KeepTests bool
	// BaseTests, when set, judges a change that passed its own checks with
	// the tests as they stood at the task's base, against Baseline.
	BaseTests *BaseTests
	// Scratch is a directory of jlgcli's own, empty, writable by the
	// checks and no part of the change, where the checks' by-products go
	// (Python's bytecode: PYTHONPYCACHEPREFIX); "": none. The checks run
	// with PYTHONDONTWRITEBYTECODE=1 in any case.
	Scratch string
	// Box is the sandbox every check runs in; nil: none.
	Box *sandbox.Box
}

func (o TestOptions) maxReruns() int {
	switch {
	case o.MaxReruns < 0:
		return 0
	case o.MaxReruns == 0:
		return DefaultMaxReruns
	}
	return o.MaxReruns
}

func (o TestOptions) maxRerunFailures() int {
	if o.MaxRerunFailures <= 0 {
		return DefaultMaxRerunFailures
	}
	return o.MaxRerunFailures
}

// Test is the tester of seed 003: it runs the checks in dir one after the
// other, in the order given (SortFastFirst orders them fast first; the
// defaults of DetectDefaults are), stopping at the first that fails unless
// RunAll; it reads each check's output with the parser of its Format (go
// test -json, pytest, cargo, JUnit XML, compiler output) into the seed's
// report; it runs failed tests again (flaky tests); and it applies the
// anti-gaming rules against the baseline. env is as for Run.
//
// A test check that fails with at most MaxRerunFailures failed tests, and
// no build error, has those tests run again, up to MaxReruns times: go test
// with -run selecting their top-level tests in their packages, pytest with
// their node ids, any other check whole. A test that passes on a rerun is
// reported in Flaky, not as a failure; a check whose failures were all
// flaky passes, and the report's status is then a warning.
func Test(ctx context.Context, dir string, env []string, checks []Check, opt TestOptions) Report {
	start := time.Now()
	full := environ(append(slices.Clip(env), checkEnv(opt.Scratch)...))
	var runs []*checkRun
	var notRun []string
	interrupted := false
	for i, c := range checks {
		if ctx.Err() != nil {
			interrupted = true
			notRun = checkNames(checks[i:])
			break
		}
		run := runCheck(ctx, opt.Box, dir, full, c)
		rerun(ctx, dir, full, run, opt)
		runs = append(runs, run)
		if run.cr.Interrupted {
			interrupted = true
			notRun = checkNames(checks[i+1:])
			break
		}
		if !run.cr.Passed && !opt.RunAll {
			notRun = checkNames(checks[i+1:])
			break
		}
	}
	r := build(runs, notRun, interrupted, start, opt)
	if opt.BaseTests != nil {
		judgeBase(ctx, dir, env, checks, &r, opt)
	}
	if !opt.KeepTests {
		for i := range r.Checks {
			r.Checks[i].Tests = nil
		}
	}
	r.DurationMs = millis.Of(time.Since(start))
	return r
}

// checkEnv is what the gate adds to its checks' environment: Python writes
// no bytecode next to the sources (what it compiles goes to scratch, a
// directory of jlgcli's own, when there is one; and it reads none that an
// agent may have left there).
func checkEnv(scratch string) []string {
	env := []string{"PYTHONDONTWRITEBYTECODE=1"}
	if scratch != "" {
		env = append(env, "PYTHONPYCACHEPREFIX="+filepath.Join(scratch, "pycache"))
	}
	return env
}

// BaselineReport runs the checks before the first iteration, for Test's
// TestOptions.Baseline: Test with BaselineOptions.
func BaselineReport(ctx context.Context, dir string, env []string, checks []Check) *Report {
	r := Test(ctx, dir, env, checks, BaselineOptions(""))
	return &r
}

// BaselineOptions are the options of a baseline: every check, even after a
// failure, no reruns, and the tests by name (KeepTests); scratch is as
// TestOptions.Scratch.
func BaselineOptions(scratch string) TestOptions {
	return TestOptions{RunAll: true, MaxReruns: -1, KeepTests: true, Scratch: scratch}
}

// RunStaged is Run that stops at the first check that fails (checks
// ordered fast first: a build error makes running the tests pointless).
// The checks after it are missing from the Result, which is not Passed.
func RunStaged(ctx context.Context, dir string, env []string, checks []Check) Result {
	return runChecks(ctx, nil, dir, env, checks, true)
}

func checkNames(checks []Check) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Name)
	}
	return out
}

// runCheck runs one check, reading its output with its parser and its
// JUnit files.
func runCheck(ctx context.Context, box *sandbox.Box, dir string, env []string, c Check) *checkRun {
	c, format := Counted(c, dir)
	run := &checkRun{check: c, kind: InferKind(c), format: format}
	run.cr, run.o, run.notes = runParsed(ctx, box, dir, env, c, run.kind, run.format)
	return run
}

func runParsed(ctx context.Context, box *sandbox.Box, dir string, env []string, c Check, kind, format string) (CheckResult, *parsed, []string) {
	p := &locked{p: newParser(format, kind, dir)}
	var snap junitSnapshot
	if c.JUnit != "" {
		snap = snapshotJUnit(dir, c.JUnit)
	}
	cr := runObserved(ctx, box, dir, env, c, p.line)
	o := p.p.result()
	var notes []string
	if c.JUnit != "" && cr.Error == "" && !cr.Interrupted {
		j, w := readJUnit(dir, c.JUnit, snap)
		notes = append(notes, w...)
		switch {
		case j != nil:
			// The JUnit report says which tests failed; the output still
			// says why the code did not build.
			o.failures, o.counts, o.hasCounts, o.passed = j.failures, j.counts, true, j.passed
		case !o.buildFailed:
			notes = append(notes, "check "+quote(c.Name)+" wrote no JUnit report matching "+quote(c.JUnit))
		}
	}
	if fp, ok := parsedFingerprint(format, cr, o); ok {
		cr.Fingerprint = fp
	}
	return cr, o, notes
}
