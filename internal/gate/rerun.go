package gate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// rerun runs a failed test check's failed tests again, up to
// opt.maxReruns() times, and moves those that pass to run.flaky. When no
// failure is left, the check passes.
func rerun(ctx context.Context, dir string, env []string, run *checkRun, opt TestOptions) {
	cr, o := run.cr, run.o
	max := opt.maxReruns()
	if max == 0 || cr.Passed || cr.TimedOut || cr.Interrupted || cr.Error != "" || o == nil || o.buildFailed {
		return
	}
	if run.kind != KindTest && run.check.JUnit == "" {
		return
	}
	for _, d := range o.diags {
		if d.class != classRuntime {
			return // a build error: nothing to re-run
		}
	}
	// A test that failed with several messages (Go's rows) is one test to
	// run again.
	tests := oneEach(o.failures)
	if len(tests) > opt.maxRerunFailures() {
		return
	}
	// Every failure must be one test's, that a rerun can tell passed;
	// without any (a test runner whose output says nothing), the whole
	// check is run again.
	whole := len(o.failures) == 0
	for _, f := range o.failures {
		if f.id == "" {
			return
		}
	}
	if whole && run.format != FormatText {
		return // a known format that names no failure: not a test failure
	}
	remaining := tests
	for attempt := 1; attempt <= max && (whole || len(remaining) > 0); attempt++ {
		if ctx.Err() != nil {
			return
		}
		c, targeted := rerunCheck(run.check, run.format, remaining)
		if whole {
			c, targeted = run.check, false
		}
		format := InferFormat(c)
		cr2, o2, _ := runParsed(ctx, opt.Box, dir, env, c, run.kind, format)
		run.reruns++
		if cr2.Interrupted {
			return
		}
		if !targeted && cr2.Passed {
			// The whole check passed: every failure was flaky.
			if whole {
				run.flaky = append(run.flaky, run.check.Name)
				run.notes = append(run.notes, fmt.Sprintf("flaky: check %q failed, then passed on rerun %d", run.check.Name, attempt))
			}
			for _, f := range remaining {
				run.markFlaky(f, attempt)
			}
			remaining, whole = nil, false
			break
		}
		if whole {
			continue
		}
		var still []failure
		for _, f := range remaining {
			if passedInRerun(format, f, o2) {
				run.markFlaky(f, attempt)
			} else {
				still = append(still, f)
			}
		}
		remaining = still
	}
	if whole || len(remaining) > 0 || len(run.flaky) == 0 {
		return
	}
	// Every failure was flaky: the check passes, and its flaky tests count
	// as passed.
	run.cr.Passed = true
	o.counts.Passed += o.counts.Failed
	o.counts.Failed = 0
}

// oneEach is the first failure of each test (by id) of fs.
func oneEach(fs []failure) []failure {
	var out []failure
	seen := map[string]bool{}
	for _, f := range fs {
		if f.id != "" && seen[f.id] {
			continue
		}
		seen[f.id] = true
		out = append(out, f)
	}
	return out
}

// markFlaky moves a failure that passed on rerun attempt to the flaky tests.
func (run *checkRun) markFlaky(f failure, attempt int) {
	o := run.o
	name := f.id
	if name == "" {
		name = f.Test
	}
	run.flaky = append(run.flaky, name)
	run.notes = append(run.notes, fmt.Sprintf("flaky: %s failed, then passed on rerun %d (not counted as a failure)", name, attempt))
	o.failures = slices.DeleteFunc(o.failures, func(g failure) bool { return g.id == f.id && g.Test == f.Test })
	o.diags = slices.DeleteFunc(o.diags, func(d diag) bool { return f.id != "" && d.test == f.id })
	if o.counts.Failed > 0 {
		o.counts.Failed--
		o.counts.Passed++
	}
}

// passedInRerun reports whether a rerun shows f passing: go test said so,
// or pytest ran tests, loaded every module and did not list f as failed.
func passedInRerun(format string, f failure, o *parsed) bool {
	if o.passed[f.id] {
		return true
	}
	if format != FormatPytest || o.buildFailed || !o.hasCounts || o.counts.Run == 0 {
		return false
	}
	return !slices.ContainsFunc(o.failures, func(g failure) bool { return g.id == f.id })
}

// rerunCheck is the check that runs only the failures again: go test -run
// in their packages, pytest with their node ids; false (and c itself) when
// it cannot make one, and the whole check runs again.
func rerunCheck(c Check, format string, fails []failure) (Check, bool) {
	w, ok := c.words()
	if !ok || len(fails) == 0 {
		return c, false
	}
	var argv []string
	switch format {
	case FormatGoTest, FormatGo:
		// go test, with or without -json: the rerun has -json.
		argv, format = goRerunArgv(w, fails), FormatGoTest
	case FormatPytest:
		argv = pytestRerunArgv(w, fails)
	}
	if argv == nil {
		return c, false
	}
	return Check{Name: c.Name, Argv: argv, Timeout: c.Timeout, Kind: c.Kind, Format: format}, true
}

// goTestValueFlags are the flags of go test and go build that take a value
// (when not given as -flag=value).
var goTestValueFlags = map[string]bool{
	"run": true, "skip": true, "count": true, "timeout": true, "parallel": true, "p": true, "tags": true,
	"bench": true, "benchtime": true, "cpu": true, "coverprofile": true, "covermode": true, "coverpkg": true,
	"cpuprofile": true, "memprofile": true, "memprofilerate": true, "blockprofile": true, "blockprofilerate": true,
	"mutexprofile": true, "mutexprofilefraction": true, "trace": true, "outputdir": true, "o": true, "exec": true,
	"vet": true, "shuffle": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true, "list": true,
	"mod": true, "modfile": true, "overlay": true, "pkgdir": true, "toolexec": true, "ldflags": true,
	"gcflags": true, "asmflags": true, "gccgoflags": true, "C": true, "compiler": true, "installsuffix": true,
	"buildmode": true, "pgo": true,
}

// goTestDropFlags are the flags a rerun replaces or does without: the
// selection, repetition and order of tests, and the files they write.
var goTestDropFlags = map[string]bool{
	"run": true, "skip": true, "count": true, "failfast": true, "shuffle": true, "json": true, "list": true,
	"bench": true, "benchtime": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true,
	"coverprofile": true, "cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true,
	"trace": true, "outputdir": true, "o": true,
}

// goRerunArgv is go test run again on the failed tests: the flags of the
// original command but those that select or repeat tests, -json -count=1,
// -run '^(TestA|TestB)$' (their top-level tests), their packages, and the
// original arguments after -args.
func goRerunArgv(w []string, fails []failure) []string {
	if len(w) < 2 || program(w[0]) != "go" || w[1] != "test" {
		return nil
	}
	var flags, binArgs []string
	for i := 2; i < len(w); i++ {
		a := w[i]
		if a == "-args" || a == "--args" {
			binArgs = w[i:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue // a package pattern: the rerun names the packages
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		n := 1
		if !hasValue && goTestValueFlags[name] && i+1 < len(w) {
			n = 2
		}
		if !goTestDropFlags[name] {
			flags = append(flags, w[i:i+n]...)
		}
		i += n - 1
	}
	var tops, pkgs []string
	for _, f := range fails {
		if f.goTop == "" || f.goPkg == "" {
			return nil
		}
		if !slices.Contains(tops, f.goTop) {
			tops = append(tops, f.goTop)
		}
		if !slices.Contains(pkgs, f.goPkg) {
			pkgs = append(pkgs, f.goPkg)
		}
	}
	quoted := make([]string, len(tops))
	for i, t := range tops {
		quoted[i] = regexp.QuoteMeta(t)
	}
	argv := append([]string{w[0], "test"}, flags...)
	argv = append(argv, "-json", "-count=1", "-run", "^("+strings.Join(quoted, "|")+")$")
	argv = append(argv, pkgs...)
	return append(argv, binArgs...)
}

// pytestValueFlags are pytest's options that take a value as the next word.
var pytestValueFlags = map[string]bool{
	"-k": true, "-m": true, "-p": true, "-c": true, "-o": true, "-W": true, "-r": true, "-n": true,
	"--tb": true, "--rootdir": true, "--junitxml": true, "--junit-xml": true, "--basetemp": true,
	"--deselect": true, "--ignore": true, "--ignore-glob": true, "--confcutdir": true, "--durations": true,
	"--maxfail": true, "--import-mode": true, "--log-level": true, "--log-cli-level": true, "--timeout": true,
	"--dist": true, "--capture": true, "--color": true, "--override-ini": true,
}

// pytestDropFlags are the options a rerun of node ids does without: the
// selection of tests, stopping early, the JUnit file of the first run.
var pytestDropFlags = map[string]bool{
	"-k": true, "-x": true, "--exitfirst": true, "--maxfail": true, "--lf": true, "--last-failed": true,
	"--ff": true, "--failed-first": true, "--nf": true, "--new-first": true, "--sw": true, "--stepwise": true,
	"--junitxml": true, "--junit-xml": true, "--deselect": true,
}

// pytestRerunArgv is pytest run again on the failed node ids, with the
// options of the original command but those that select tests.
func pytestRerunArgv(w []string, fails []failure) []string {
	k := -1
	for i, x := range w {
		p := program(x)
		if p == "pytest" || p == "py.test" {
			k = i
			break
		}
	}
	if k < 0 {
		return nil
	}
	argv := slices.Clone(w[:k+1])
	for _, f := range fails {
		if !strings.Contains(f.id, "::") {
			return nil
		}
		argv = append(argv, f.id)
	}
	for i := k + 1; i < len(w); i++ {
		a := w[i]
		if !strings.HasPrefix(a, "-") {
			continue // a path of tests: the node ids replace them
		}
		name, _, hasValue := strings.Cut(a, "=")
		n := 1
		if !hasValue && pytestValueFlags[name] && i+1 < len(w) {
			n = 2
		}
		if !pytestDropFlags[name] {
			argv = append(argv, w[i:i+n]...)
		}
		i += n - 1
	}
	return argv
}
