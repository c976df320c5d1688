package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// goEvent is one line of go test -json (cmd/test2json), with the build
// events that go 1.24 and later interleave (build-output, build-fail).
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

type goTest struct {
	name   string
	status string // run, pass, fail, skip
	out    *lineBuf
	// fail is what its output says of its failure, read when it failed (its
	// output is then dropped).
	fail *goFailed
}

type goFailed struct {
	fs    []failure
	crash string
	race  bool
}

type goPackage struct {
	path        string
	tests       map[string]*goTest
	order       []*goTest
	out         lineBuf
	status      string // "", pass, fail, skip
	buildFailed bool
}

// goTestParser reads go test -json: a test's pass, fail or skip, its output
// (the error and the file:line of a failure), and the build output, as
// events (go 1.24 and later) or as text on the standard error (before, or
// with GODEBUG=gotestjsonbuildtext=1).
type goTestParser struct {
	dir    string
	module string // the module path of dir/go.mod, to make paths relative to dir
	pkgs   map[string]*goPackage
	order  []*goPackage
	build  goDiagParser
}

func newGoTestParser(dir string) *goTestParser {
	return &goTestParser{dir: dir, module: modulePath(dir), pkgs: map[string]*goPackage{}}
}

var moduleRE = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)

// modulePath is the module path declared in dir/go.mod, "" without one.
func modulePath(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	if m := moduleRE.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

func (p *goTestParser) pkg(path string) *goPackage {
	g := p.pkgs[path]
	if g == nil {
		g = &goPackage{path: path, tests: map[string]*goTest{}}
		p.pkgs[path] = g
		p.order = append(p.order, g)
	}
	return g
}

func (p *goTestParser) line(s string, stderr bool) {
	var ev goEvent
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &ev) != nil || ev.Action == "" {
		p.build.line(s, stderr)
		return
	}
	switch ev.Action {
	case "build-output":
		for l := range strings.Lines(ev.Output) {
			p.build.line(strings.TrimRight(l, "\r\n"), false)
		}
		return
	case "build-fail":
		p.build.failed = true
		return
	}
	if ev.Package == "" {
		return
	}
	g := p.pkg(ev.Package)
	if ev.Test == "" {
		switch ev.Action {
		case "output":
			out := strings.TrimRight(ev.Output, "\r\n")
			if strings.HasSuffix(out, "[build failed]") || strings.HasSuffix(out, "[setup failed]") {
				g.buildFailed = true
			}
			g.out.add(out)
		case "pass", "fail", "skip":
			g.status = ev.Action
			if ev.FailedBuild != "" {
				g.buildFailed = true
			}
		}
		return
	}
	t := g.tests[ev.Test]
	if t == nil {
		t = &goTest{name: ev.Test, status: "run", out: &lineBuf{}}
		g.tests[ev.Test] = t
		g.order = append(g.order, t)
	}
	switch ev.Action {
	case "output":
		if t.out != nil {
			t.out.add(strings.TrimRight(ev.Output, "\r\n"))
		}
	case "pass", "skip":
		t.status = ev.Action
		t.out = nil // its output says nothing of a failure
	case "fail":
		t.status = ev.Action
		if t.out != nil {
			fs, crash, race := goFailure(p.dir, p.module, g.path, t.name, t.out.lines())
			t.fail, t.out = &goFailed{fs, crash, race}, nil
		}
	}
}

func (p *goTestParser) result() *parsed {
	o := p.build.result()
	for _, g := range p.order {
		if g.buildFailed {
			o.buildFailed = true
		}
		failedTests := 0
		// The tests that have subtests, and those with a failed subtest.
		parents, failedParents := map[string]bool{}, map[string]bool{}
		for _, t := range g.order {
			// A test still running when its package failed was cut short: a
			// panic elsewhere, a timeout, os.Exit.
			if t.status == "run" && g.status == "fail" {
				t.status = "fail"
			}
			for i := strings.LastIndexByte(t.name, '/'); i > 0; i = strings.LastIndexByte(t.name[:i], '/') {
				parents[t.name[:i]] = true
				if t.status == "fail" {
					failedParents[t.name[:i]] = true
				}
			}
		}
		for _, t := range g.order {
			id := g.path + "." + t.name
			leaf := !parents[t.name]
			switch t.status {
			case "pass":
				o.pass(id)
				if leaf {
					o.counts.Passed++
				}
			case "skip":
				o.skip(id)
				if leaf {
					o.counts.Skipped++
				}
			case "fail":
				// A parent that failed only because a subtest did is told by
				// its subtests.
				if !leaf && failedParents[t.name] {
					continue
				}
				o.counts.Failed++
				failedTests++
				fs, crash, race := p.failure(g, t)
				f := fs[0]
				o.failures = append(o.failures, fs...)
				if crash != "" {
					o.add(diag{text: crash, class: classRuntime, crash: true, test: f.id})
				}
				if race {
					o.add(diag{text: f.id + ": data race (go test -race)", class: classRuntime, test: f.id})
				}
			}
			if t.status != "run" {
				o.hasCounts = true
			}
		}
		if g.status == "fail" && failedTests == 0 && !g.buildFailed {
			// The package failed outside its tests: TestMain, init, a panic
			// after the tests, a coverage threshold.
			var lines []string
			for _, l := range g.out.lines() {
				if l == "FAIL" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "ok \t") {
					continue
				}
				lines = append(lines, l)
				if crashLine(l) {
					o.add(diag{text: g.path + ": " + strings.TrimSpace(l), class: classRuntime, crash: true})
				}
			}
			msg := clip(strings.Join(lines, "\n"))
			if msg == "" {
				msg = "the package failed without a failing test"
			}
			o.failures = append(o.failures, failure{TestFailure: TestFailure{Test: g.path, Package: g.path, Error: msg}})
		}
	}
	o.counts.Run = o.counts.Passed + o.counts.Failed
	return o
}

var (
	// goLogRE matches a line of t.Log, t.Error, t.Fatal: "    a_test.go:7: msg".
	goLogRE = regexp.MustCompile(`^\s+([\w.\-/]+\.go):(\d+): ?(.*)$`)
	// goFrameRE matches a frame of a stack trace: "\t/abs/c_test.go:3 +0x28".
	goFrameRE = regexp.MustCompile(`^\s+(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?$`)
)

// failure makes a failed test's failures from its output (goFailure). It
// also returns the text of a crash ("" without one), and whether the race
// detector reported a data race.
func (p *goTestParser) failure(g *goPackage, t *goTest) ([]failure, string, bool) {
	if t.fail != nil {
		return t.fail.fs, t.fail.crash, t.fail.race
	}
	return goFailure(p.dir, p.module, g.path, t.name, t.out.lines())
}

// maxTestEntries bounds the failures read from one Go test: its first and
// last messages are kept.
const maxTestEntries = 10

// goFailure makes the failures of test name of package pkg from its
// output: one for each message it logged (t.Error, t.Fatal and t.Log alike:
// go test's output does not tell them apart), so that two rows of a table
// that fail in one test are two failures, each with its file:line and
// message (the lines of a message of several lines included); and one for
// a panic, first, at the first _test.go frame of its trace. A test that
// failed without a message is one failure, "failed". Every failure has the
// test's identity (id, goPkg, goTop).
func goFailure(dir, module, pkg, name string, lines []string) ([]failure, string, bool) {
	base := failure{
		TestFailure: TestFailure{Test: name, Package: pkg},
		id:          pkg + "." + name,
		goPkg:       pkg,
		goTop:       strings.SplitN(name, "/", 2)[0],
	}
	type entry struct {
		file   string
		line   int
		indent int
		msg    []string
	}
	var entries []*entry
	var loose []string // lines before the first message
	var panicMsg, panicFile string
	panicLine := 0
	inPanic, race := false, false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if goFramingLine(trimmed) {
			continue
		}
		if trimmed == "WARNING: DATA RACE" {
			race = true
		}
		if inPanic {
			if m := goFrameRE.FindStringSubmatch(l); m != nil && panicFile == "" && strings.HasSuffix(m[1], "_test.go") {
				panicFile, panicLine = relPath(dir, m[1]), atoi(m[2])
			}
			if strings.HasPrefix(trimmed, "[signal ") {
				panicMsg += "\n" + trimmed
			}
			continue
		}
		if strings.HasPrefix(trimmed, "panic: ") || strings.HasPrefix(trimmed, "fatal error: ") {
			inPanic = true
			panicMsg = trimmed
			continue
		}
		if m := goLogRE.FindStringSubmatch(l); m != nil {
			entries = append(entries, &entry{file: pkgFile(dir, module, pkg, m[1]), line: atoi(m[2]),
				indent: len(l) - len(strings.TrimLeft(l, " \t")), msg: []string{m[3]}})
			continue
		}
		if len(entries) == 0 {
			loose = append(loose, strings.TrimPrefix(l, "    "))
			continue
		}
		// A line of the last message (indented under it: the message's
		// next lines), or what the test printed after it.
		e := entries[len(entries)-1]
		if strings.HasPrefix(l, strings.Repeat(" ", e.indent+4)) {
			l = l[e.indent+4:]
		}
		e.msg = append(e.msg, l)
	}
	if len(loose) > 0 {
		if len(entries) == 0 && panicMsg == "" {
			entries = append(entries, &entry{})
		}
		if len(entries) > 0 {
			entries[0].msg = append(loose, entries[0].msg...)
		} else {
			panicMsg += "\n" + strings.Join(loose, "\n")
		}
	}
	if len(entries) > maxTestEntries {
		half := maxTestEntries / 2
		left := len(entries) - 2*half
		last := entries[half-1]
		last.msg = append(last.msg, fmt.Sprintf("(… %d more messages of this test left out)", left))
		entries = append(entries[:half], entries[len(entries)-half:]...)
	}
	var out []failure
	if panicMsg != "" {
		f := base
		f.File, f.Line, f.Error = panicFile, panicLine, clip(panicMsg)
		out = append(out, f)
	}
	for _, e := range entries {
		f := base
		f.File, f.Line, f.Error = e.file, e.line, clip(strings.Join(e.msg, "\n"))
		out = append(out, f)
	}
	if len(out) == 0 {
		out = append(out, base)
	}
	for i := range out {
		if out[i].Error == "" {
			out[i].Error = "failed"
		}
	}
	crash := ""
	if panicMsg != "" {
		where := ""
		if panicFile != "" {
			where = " (" + strings.TrimSuffix(location(panicFile, panicLine, 0), ": ") + ")"
		}
		crash = base.id + where + ": " + strings.SplitN(panicMsg, "\n", 2)[0]
	}
	return out, crash, race
}

// goFramingLine reports the lines of go test that frame a test's output.
func goFramingLine(l string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- FAIL:", "--- PASS:", "--- SKIP:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return l == "FAIL" || l == "PASS"
}

// pkgFile is a file named in a test's log (relative to its package's
// directory) relative to the check's directory, for a module (its path) in
// dir.
func pkgFile(dir, module, pkg, file string) string {
	if filepath.IsAbs(file) {
		return relPath(dir, file)
	}
	if module == "" || pkg == "" || strings.Contains(file, "/") {
		return file
	}
	switch {
	case pkg == module:
		return file
	case strings.HasPrefix(pkg, module+"/"):
		return strings.TrimPrefix(pkg, module+"/") + "/" + file
	}
	return file
}

// goDiagParser reads the text of go build, go vet and the build output of
// go test: compiler errors (syntax or import errors), vet findings, and the
// go command's own errors (modules, go.sum).
type goDiagParser struct {
	// vetCheck: the check is go vet, whose findings are vet findings even
	// without a "# [pkg]" header.
	vetCheck    bool
	dir, module string
	// The failed tests of go test without -json: the one whose lines are
	// read (its header's indentation), those whose package line ("FAIL
	// pkg") is still to come, and those done.
	cur       *goTextTest
	pending   []*goTextTest
	tests     []*goTextTest
	running   string              // with -v, the test of the lines read
	runLines  map[string][]string // with -v, the lines of each running test
	lastCrash bool
	// inVet: the lines follow a "# [pkg]" header, which go vet and go test
	// print before vet findings.
	inVet  bool
	failed bool
	o      parsed
	seen   map[string]bool
}

var goDiagRE = regexp.MustCompile(`^(vet: )?((?:[A-Za-z]:)?[^\s:]+\.(?:go|s|c|h|mod|sum|work)):(\d+)(?::(\d+))?: (.*)$`)

// goImportErrors are the messages of the compiler and the go command that
// say a package or module cannot be found or used.
var goImportErrors = []string{
	"imported and not used", "could not import", "cannot find package", "no required module provides package",
	"is not in std", "is not in GOROOT", "missing go.sum entry", "import cycle not allowed", "use of internal package",
	"found packages", "no Go files in", "does not contain package", "cannot find module", "unknown revision",
	"module lookup disabled", "updates to go.mod needed", "go.mod file not found", "malformed module path",
	"invalid version", "reading go.mod", "errors parsing go.mod", "requires go >=",
}

// goTextTest is a failed test in the text output of go test.
type goTextTest struct {
	name, pkg string
	indent    int
	lines     []string
	panicked  bool
}

var (
	goTextFailRE = regexp.MustCompile(`^(\s*)--- FAIL: (\S+) \(`)
	goTextDoneRE = regexp.MustCompile(`^\s*--- (?:PASS|SKIP): (\S+) \(`)
	goTextRunRE  = regexp.MustCompile(`^=== (?:RUN|CONT|NAME)\s+(\S+)$`)
	goTextPkgRE  = regexp.MustCompile(`^(?:FAIL|ok)\s+(\S+)(?:\s|$)`)
)

func (p *goDiagParser) line(s string, _ bool) {
	t := strings.TrimRight(s, "\r")
	if p.testLine(t) {
		return
	}
	if strings.HasPrefix(t, "# ") {
		p.inVet = strings.HasPrefix(t, "# [")
		return
	}
	crash := crashLine(t)
	defer func() { p.lastCrash = crash }()
	if crash {
		if !p.lastCrash {
			p.addDiag(diag{text: strings.TrimSpace(t), class: classRuntime, crash: true})
		}
		return
	}
	if strings.HasPrefix(t, "go: ") {
		msg := strings.TrimPrefix(t, "go: ")
		if strings.HasPrefix(msg, "downloading ") || strings.HasPrefix(msg, "finding ") || strings.HasPrefix(msg, "extracting ") || strings.HasPrefix(msg, "to add module requirements") {
			return
		}
		p.failed = true
		p.addDiag(diag{text: strings.TrimSuffix(t, ":"), class: classImport})
		return
	}
	m := goDiagRE.FindStringSubmatch(t)
	if m == nil {
		return
	}
	vetPrefixed, file, msg := m[1] != "", m[2], m[5]
	d := diag{text: strings.TrimSuffix(strings.TrimPrefix(t, "vet: "), "; to add it:")}
	switch {
	case (p.inVet || p.vetCheck) && !vetPrefixed:
		d.class = classRuntime // a vet finding: a likely runtime error
	case strings.Contains(msg, "syntax error") || strings.HasPrefix(msg, "expected ") || strings.HasPrefix(msg, "illegal character") || strings.Contains(msg, "not terminated"):
		d.class, d.parse = classSyntax, true
	case hasAny(msg, goImportErrors) || strings.HasSuffix(file, ".mod") || strings.HasSuffix(file, ".sum"):
		d.class = classImport
	default:
		d.class = classSyntax
	}
	if d.class != classRuntime {
		p.failed = true
	}
	p.addDiag(d)
}

func (p *goDiagParser) addDiag(d diag) {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[d.text] {
		return
	}
	p.seen[d.text] = true
	p.o.add(d)
}

// testLine reads the lines of go test without -json that tell of failed
// tests: "--- FAIL: TestX (0.00s)" and the lines indented under it (its log,
// or with -v the lines after "=== RUN TestX" before it), a panic and its
// trace, and "FAIL pkg" (or "ok pkg"), which names the package of the
// failures before it. It reports whether the line was one of them and
// needs no other reading.
func (p *goDiagParser) testLine(t string) bool {
	if m := goTextRunRE.FindStringSubmatch(t); m != nil {
		p.running = m[1]
		if p.runLines == nil {
			p.runLines = map[string][]string{}
		}
		p.cur = nil
		return true
	}
	if m := goTextDoneRE.FindStringSubmatch(t); m != nil {
		delete(p.runLines, m[1])
		p.running, p.cur = "", nil
		return true
	}
	if m := goTextFailRE.FindStringSubmatch(t); m != nil {
		p.cur = &goTextTest{name: m[2], indent: len(m[1]), lines: p.runLines[m[2]]}
		delete(p.runLines, m[2])
		p.running = ""
		p.pending = append(p.pending, p.cur)
		return true
	}
	if m := goTextPkgRE.FindStringSubmatch(t); m != nil && !strings.HasPrefix(m[1], "[") {
		for _, tt := range p.pending {
			tt.pkg = m[1]
		}
		p.tests = append(p.tests, p.pending...)
		p.pending, p.cur, p.running, p.runLines = nil, nil, "", nil
		return true
	}
	if t == "FAIL" || t == "PASS" {
		p.cur, p.running = nil, ""
		return true
	}
	isPanic := strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "fatal error: ")
	if p.cur == nil && p.running != "" {
		if isPanic {
			// A panic in a running test (-v): the test fails with it.
			p.cur = &goTextTest{name: p.running, lines: p.runLines[p.running]}
			delete(p.runLines, p.running)
			p.pending = append(p.pending, p.cur)
		} else {
			if l := p.runLines[p.running]; len(l) < maxKeptLines {
				p.runLines[p.running] = append(l, t)
			}
			return strings.HasPrefix(t, " ") || strings.HasPrefix(t, "\t")
		}
	}
	if p.cur == nil {
		return false
	}
	indent := len(t) - len(strings.TrimLeft(t, " \t"))
	if p.cur.panicked || isPanic || indent > p.cur.indent {
		p.cur.panicked = p.cur.panicked || isPanic
		if len(p.cur.lines) < maxKeptLines {
			p.cur.lines = append(p.cur.lines, t)
		}
		return true
	}
	p.cur = nil
	return false
}

func (p *goDiagParser) result() *parsed {
	p.o.buildFailed = p.o.buildFailed || p.failed
	tests := append(p.tests, p.pending...)
	failedSub := map[string]bool{}
	for _, tt := range tests {
		for i := strings.LastIndexByte(tt.name, '/'); i > 0; i = strings.LastIndexByte(tt.name[:i], '/') {
			failedSub[tt.pkg+" "+tt.name[:i]] = true
		}
	}
	for _, tt := range tests {
		if failedSub[tt.pkg+" "+tt.name] && len(tt.lines) == 0 {
			continue // failed because a subtest did
		}
		fs, crash, race := goFailure(p.dir, p.module, tt.pkg, tt.name, tt.lines)
		if tt.pkg == "" {
			for i := range fs {
				fs[i].id, fs[i].goPkg = tt.name, ""
			}
		}
		f := fs[0]
		if crash != "" {
			p.o.add(diag{text: crash, class: classRuntime, crash: true, test: f.id})
		}
		if race {
			p.o.add(diag{text: f.id + ": data race (go test -race)", class: classRuntime, test: f.id})
		}
		p.o.failures = append(p.o.failures, fs...)
	}
	return &p.o
}

func hasAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
