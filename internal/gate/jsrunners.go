package gate

import (
	"regexp"
	"strings"
)

// jsSummary reads the summary line of jest and vitest: their counts of
// tests ("Tests:       1 failed, 2 passed, 3 total"; "Tests  1 failed |
// 2 passed (3)"). It reports whether t (without escape codes, trimmed) was
// that line.
func jsSummary(o *parsed, t string) bool {
	m := jestTestsRE.FindStringSubmatch(t)
	if m == nil {
		m = vitestTestsRE.FindStringSubmatch(t)
	}
	if m == nil {
		return false
	}
	var c Counts
	for _, cm := range jsCountRE.FindAllStringSubmatch(m[1], -1) {
		switch n := atoi(cm[1]); cm[2] {
		case "passed":
			c.Passed += n
		case "failed":
			c.Failed += n
		default:
			c.Skipped += n
		}
	}
	c.Run = c.Passed + c.Failed
	o.counts, o.hasCounts = c, true
	return true
}

var (
	jestTestsRE   = regexp.MustCompile(`^Tests:\s+(.*?),?\s*\d+ total`)
	vitestTestsRE = regexp.MustCompile(`^Tests\s+(.*?)\s*\(\d+\)`)
	jsCountRE     = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo|pending)`)
	// jsFrameRE is a frame of a stack: "at Object.toBe (sum.test.js:5:23)",
	// "at sum.test.js:5:23".
	jsFrameRE = regexp.MustCompile(`^at (?:.*? \()?(?:file://)?([^\s()]+?):(\d+):\d+\)?$`)
	// jsCodeFrameRE is a line of the code that jest and vitest show around
	// a failure: "    > 5 |     expect(x)", "      |    ^", "   12| ...".
	jsCodeFrameRE = regexp.MustCompile(`^\s*(?:>\s*)?\d*\s?\|`)
)

// jsFailure is a failure of jest or vitest being read: its lines.
type jsFailure struct {
	tests []string // vitest names the tests of one error on as many lines
	file  string
	loc   string // the file of the location, "" until read
	line  int
	msg   []string
}

// jsDone adds the failure read (if any) to o, each of its tests with the
// message and location. The failures of jest and vitest have no id: their
// tests are compared as counts, never re-run by name.
func jsDone(o *parsed, dir string, f *jsFailure) {
	if f == nil {
		return
	}
	msg := clip(dedent(f.msg))
	if msg == "" {
		msg = "failed"
	}
	file, line := f.file, 0
	if f.loc != "" {
		file, line = relPath(dir, f.loc), f.line
	}
	for _, name := range f.tests {
		o.failures = append(o.failures, failure{TestFailure: TestFailure{Test: name, Error: msg, File: file, Line: line}})
	}
}

// jsFrame reads a frame of a stack into f's location: the first that is in
// the project (not node_modules, not node's own). It reports whether l
// was a frame.
func (f *jsFailure) frame(l string) bool {
	m := jsFrameRE.FindStringSubmatch(strings.TrimSpace(l))
	if m == nil {
		return false
	}
	if f.loc == "" && !strings.Contains(m[1], "node_modules") && !strings.HasPrefix(m[1], "node:") {
		f.loc, f.line = m[1], atoi(m[2])
	}
	return true
}

// jestParser reads jest's output: each failure's block ("● suite › test",
// its message with the expected and received values, the code around it
// and its stack) under the "FAIL file" of its test file, a test file that
// failed to run, and the counts of the summary.
type jestParser struct {
	dir  string
	o    parsed
	file string     // the test file of the lines read
	cur  *jsFailure // the failure being read
	skip bool       // in a block that is no failure (● Console)
}

var (
	jestFileRE  = regexp.MustCompile(`^(?:FAIL|PASS) (\S+)`)
	jestBlockRE = regexp.MustCompile(`^  ● (.+)$`)
)

func (p *jestParser) line(s string, _ bool) {
	t := strings.TrimRight(stripANSI(s), " \r")
	if m := jestFileRE.FindStringSubmatch(t); m != nil {
		p.end()
		p.file = strings.TrimPrefix(m[1], "./")
		return
	}
	if jsSummary(&p.o, strings.TrimSpace(t)) || strings.HasPrefix(t, "Test Suites:") {
		p.end()
		return
	}
	if m := jestBlockRE.FindStringSubmatch(t); m != nil {
		p.end()
		if m[1] == "Console" {
			p.skip = true
			return
		}
		name := m[1]
		if name == "Test suite failed to run" && p.file != "" {
			name = p.file
		}
		p.cur = &jsFailure{tests: []string{name}, file: p.file}
		return
	}
	if p.cur == nil {
		if crashLine(t) && !p.skip {
			p.o.add(diag{text: strings.TrimSpace(t), class: classRuntime, crash: true})
		}
		return
	}
	if p.cur.frame(t) || jsCodeFrameRE.MatchString(t) {
		return
	}
	if len(p.cur.msg) < maxKeptLines {
		p.cur.msg = append(p.cur.msg, t)
	}
}

// end ends the block being read.
func (p *jestParser) end() {
	jsDone(&p.o, p.dir, p.cur)
	p.cur, p.skip = nil, false
}

func (p *jestParser) result() *parsed {
	p.end()
	return &p.o
}

// vitestParser reads vitest's output: each failure (" FAIL  file > suite
// > test", several of them for one error, then the error, its diff of the
// expected and received values, "❯ file:line:col" and the code around
// it), a test file that failed to load (" FAIL  file [ file ]"), and the
// counts of the summary.
type vitestParser struct {
	dir string
	o   parsed
	cur *jsFailure
	// located: the failure's "❯ file:line" was read; what follows, to the
	// next separator, is the code around it.
	located bool
}

var (
	vitestFailRE = regexp.MustCompile(`^\s*FAIL\s+(\S+?)(?: > (.*?))?(?: \[ .* \])?$`)
	vitestLocRE  = regexp.MustCompile(`^\s*❯ (\S+?):(\d+):\d+$`)
)

func (p *vitestParser) line(s string, _ bool) {
	t := strings.TrimRight(stripANSI(s), " \r")
	tt := strings.TrimSpace(t)
	if jsSummary(&p.o, tt) || strings.HasPrefix(tt, "Test Files ") {
		p.end()
		return
	}
	if m := vitestFailRE.FindStringSubmatch(t); m != nil {
		name := m[2]
		if name == "" {
			name = m[1] // a test file that failed to load
		}
		if p.cur != nil && len(p.cur.msg) == 0 && !p.located {
			// Another test of the same error.
			p.cur.tests = append(p.cur.tests, name)
			return
		}
		p.end()
		p.cur = &jsFailure{tests: []string{name}, file: m[1]}
		return
	}
	if strings.HasPrefix(tt, "⎯") {
		p.end() // the separator after a failure, or before the failures
		return
	}
	if p.cur == nil {
		if crashLine(t) {
			p.o.add(diag{text: tt, class: classRuntime, crash: true})
		}
		return
	}
	if m := vitestLocRE.FindStringSubmatch(t); m != nil {
		if !p.located {
			p.cur.loc, p.cur.line = m[1], atoi(m[2])
		}
		p.located = true
		return
	}
	if p.located || jsCodeFrameRE.MatchString(t) || p.cur.frame(t) {
		return
	}
	if len(p.cur.msg) < maxKeptLines {
		p.cur.msg = append(p.cur.msg, t)
	}
}

func (p *vitestParser) end() {
	jsDone(&p.o, p.dir, p.cur)
	p.cur, p.located = nil, false
}

func (p *vitestParser) result() *parsed {
	p.end()
	return &p.o
}
