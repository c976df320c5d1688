package gate

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Where a diagnostic goes in the report.
type diagClass int

const (
	classSyntax  diagClass = iota // SyntaxErrors: the code does not parse or compile
	classImport                   // ImportErrors: a dependency, package or module cannot be found
	classRuntime                  // RuntimeErrors: crashes, vet findings, uncaught exceptions
)

// diag is one error found in a check's output.
type diag struct {
	text  string
	class diagClass
	// parse: a genuine syntax error (the code does not parse), which is what
	// the seed's "3+ syntax errors → escalate" counts; a type error or an
	// undefined name is a SyntaxErrors entry but not a parse error.
	parse bool
	// crash: a panic, segfault, fatal runtime error, deadlock or test
	// timeout, which escalates.
	crash bool
	// test is the id of the test it happened in, "" for none: it is dropped
	// when that test turns out flaky.
	test string
}

// failure is a TestFailure with the identity that reruns and flaky records
// use.
type failure struct {
	TestFailure
	// id names the test across runs: "pkg.TestName" for Go, the node id for
	// pytest, classname.name for JUnit; "" for a failure that is not one
	// test's (a package that failed outside its tests, a check that failed
	// without saying why).
	id string
	// goPkg and goTop are, for a Go test, its package and its top-level test
	// (what -run can select).
	goPkg, goTop string
}

// parsed is what a parser read in one run of a check.
type parsed struct {
	diags    []diag
	failures []failure
	counts   Counts
	// hasCounts: the output said how many tests ran (a summary line, test
	// events, a JUnit file).
	hasCounts bool
	// buildFailed: the code did not build (or a test file did not load), so
	// the failures are not to be re-run.
	buildFailed bool
	// passed holds the ids of the tests seen passing, for reruns and for
	// the tests of the base (TestOutcomes); skipped those seen skipped.
	passed, skipped map[string]bool
}

func (o *parsed) add(d diag) { o.diags = append(o.diags, d) }

func (o *parsed) pass(id string) {
	if o.passed == nil {
		o.passed = map[string]bool{}
	}
	o.passed[id] = true
}

func (o *parsed) skip(id string) {
	if o.skipped == nil {
		o.skipped = map[string]bool{}
	}
	o.skipped[id] = true
}

// parser reads a check's output line by line (line is never called from
// two goroutines at once: see locked) and then says what it found.
type parser interface {
	line(s string, stderr bool)
	result() *parsed
}

// locked serializes the lines of stdout and stderr that runObserved hands
// over from two goroutines.
type locked struct {
	mu sync.Mutex
	p  parser
}

func (l *locked) line(s string, stderr bool) {
	l.mu.Lock()
	l.p.line(s, stderr)
	l.mu.Unlock()
}

// newParser returns the parser of format for a check run in dir.
func newParser(format, kind, dir string) parser {
	switch format {
	case FormatGoTest:
		return newGoTestParser(dir)
	case FormatGo:
		return &goDiagParser{vetCheck: kind == KindVet, dir: dir, module: modulePath(dir)}
	case FormatPytest:
		return newPytestParser(dir)
	case FormatCargo:
		return newCargoParser()
	case FormatPython:
		return &pythonParser{dir: dir}
	case FormatNode:
		return newNodeParser(dir)
	case FormatJest:
		return &jestParser{dir: dir}
	case FormatVitest:
		return &vitestParser{dir: dir}
	}
	return &textParser{}
}

// parseOutput runs a parser over a whole recorded output (tests, and
// checks that did not stream).
func parseOutput(format, kind, dir, output string) *parsed {
	p := newParser(format, kind, dir)
	for l := range strings.Lines(output) {
		p.line(strings.TrimRight(l, "\r\n"), false)
	}
	return p.result()
}

// Bounds of what a report keeps of one failure.
const (
	maxErrorLines = 20
	maxErrorBytes = 2000
	// maxKeptLines bounds the output kept for one test while it runs: its
	// first and last lines.
	maxKeptLines = 200
)

// clip bounds an error text to maxErrorLines lines and maxErrorBytes bytes.
func clip(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > maxErrorLines {
		lines = append(lines[:maxErrorLines], "…")
	}
	s = strings.Join(lines, "\n")
	if len(s) > maxErrorBytes {
		cut := maxErrorBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(stripANSI(s), "\uFFFD")
}

// lineBuf keeps the first and last lines of an output, maxKeptLines in
// all.
type lineBuf struct {
	head, tail []string
	dropped    int
}

func (b *lineBuf) add(s string) {
	if len(b.head) < maxKeptLines/2 {
		b.head = append(b.head, s)
		return
	}
	b.tail = append(b.tail, s)
	if len(b.tail) > maxKeptLines/2 {
		b.tail = b.tail[1:]
		b.dropped++
	}
}

func (b *lineBuf) lines() []string {
	if b == nil {
		return nil
	}
	out := append([]string(nil), b.head...)
	if b.dropped > 0 {
		out = append(out, "… ("+strconv.Itoa(b.dropped)+" lines left out)")
	}
	return append(out, b.tail...)
}

// relPath makes a path that the output printed relative to dir when it is
// inside it, and cleans it.
func relPath(dir, p string) string {
	if p == "" {
		return p
	}
	if filepath.IsAbs(p) && dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			if r, err := filepath.Rel(abs, p); err == nil && !strings.HasPrefix(r, "..") {
				return filepath.ToSlash(r)
			}
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				if r, err := filepath.Rel(real, p); err == nil && !strings.HasPrefix(r, "..") {
					return filepath.ToSlash(r)
				}
			}
		}
		return p
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// crashRE matches the lines that say a process crashed: Go's panics and
// fatal runtime errors, signals, Python's fatal errors, V8's, and the
// shells' and cargo's reports of a signal.
var crashRE = regexp.MustCompile(`^panic: |^fatal error: |^\[signal SIG|Segmentation fault|segmentation violation|SIGSEGV|SIGBUS|SIGABRT|core dumped|^Fatal Python error|^FATAL ERROR: |\(signal: \d+|^signal: (?:killed|segmentation|aborted|bus)`)

// crashLine reports a line that says a process crashed.
func crashLine(s string) bool {
	if len(s) < 6 {
		return false
	}
	return crashRE.MatchString(strings.TrimSpace(s))
}

// textParser reads an output it knows nothing of: it finds crashes only.
type textParser struct {
	o         parsed
	lastCrash bool
}

func (p *textParser) line(s string, _ bool) {
	crash := crashLine(s)
	// A crash says more on its next lines ("[signal SIGSEGV ...]" after a
	// panic): the first is enough.
	if crash && !p.lastCrash {
		p.o.add(diag{text: strings.TrimSpace(s), class: classRuntime, crash: true})
	}
	p.lastCrash = crash
}

func (p *textParser) result() *parsed { return &p.o }

// pythonParser reads python -m compileall and Python tracebacks: syntax
// errors, import errors, uncaught exceptions.
type pythonParser struct {
	dir     string
	o       parsed
	file    string // the last `File "x", line N` location
	lineNo  int
	inTrace bool
}

var (
	pyFileRE = regexp.MustCompile(`^\s*File "([^"]+)", line (\d+)`)
	pyExcRE  = regexp.MustCompile(`^((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt))(?:: (.*))?$`)
)

func (p *pythonParser) line(s string, _ bool) {
	if m := pyFileRE.FindStringSubmatch(s); m != nil {
		p.file, p.lineNo = relPath(p.dir, m[1]), atoi(m[2])
		p.inTrace = true
		return
	}
	if strings.HasPrefix(s, "Traceback (most recent call last)") || strings.HasPrefix(s, "*** Error compiling") {
		p.inTrace = true
		return
	}
	if crashLine(s) {
		p.o.add(diag{text: strings.TrimSpace(s), class: classRuntime, crash: true})
		return
	}
	m := pyExcRE.FindStringSubmatch(s)
	if m == nil || !p.inTrace {
		return
	}
	d := pyDiag(m[1], m[2])
	d.text = location(p.file, p.lineNo, 0) + strings.TrimSpace(s)
	p.o.add(d)
	if d.class != classRuntime {
		p.o.buildFailed = true
	}
	p.inTrace, p.file, p.lineNo = false, "", 0
}

func (p *pythonParser) result() *parsed { return &p.o }

// pyDiag classifies a Python exception by its type.
func pyDiag(typ, msg string) diag {
	switch base := typ[strings.LastIndexByte(typ, '.')+1:]; base {
	case "SyntaxError", "IndentationError", "TabError":
		return diag{class: classSyntax, parse: true}
	case "ModuleNotFoundError", "ImportError":
		return diag{class: classImport}
	}
	return diag{class: classRuntime}
}

// location is "file:line: " (or "file:line:col: "), "" without a file.
func location(file string, line, col int) string {
	switch {
	case file == "":
		return ""
	case line <= 0:
		return file + ": "
	case col <= 0:
		return file + ":" + strconv.Itoa(line) + ": "
	}
	return file + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": "
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
