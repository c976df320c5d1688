package gate

import (
	"regexp"
	"slices"
	"strings"
)

// pytestParser reads pytest's text output: the short test summary (FAILED
// and ERROR lines, which -rfE asks for and pytest prints by default), the
// sections of the failures and errors (for each its E lines and the
// file:line where it failed), the collection errors (syntax and import
// errors of test modules), and the counts of the last line.
type pytestParser struct {
	dir      string
	section  string              // the current ===== section, lower case
	sub      string              // the current _____ subsection's title
	subs     map[string][]string // the lines of each subsection of FAILURES and ERRORS
	subOrder []string
	summary  []pytestSummary
	passed   []string // the node ids of -rA's PASSED, XPASS and XFAIL lines
	counts   map[string]int
	hasCount bool
	crashes  []string
	kept     int // lines kept in subs, at most maxPytestLines
}

// maxPytestLines bounds the lines of the failure sections that a pytest
// parser keeps.
const maxPytestLines = 20000

type pytestSummary struct {
	kind   string // FAILED or ERROR
	nodeID string
	msg    string
}

func newPytestParser(dir string) *pytestParser {
	return &pytestParser{dir: dir, subs: map[string][]string{}}
}

var (
	pytestSectionRE = regexp.MustCompile(`^={3,} (.+?) ={3,}$`)
	pytestSubRE     = regexp.MustCompile(`^_{3,} (.+?) _{3,}$`)
	pytestShortRE   = regexp.MustCompile(`^(FAILED|ERROR) (\S+(?:\[[^\]]*\])?)(?: - (.*))?$`)
	// pytestPassedRE is a line of -rA's summary for a test that passed (or
	// failed as expected): "PASSED tests/test_x.py::test_a".
	pytestPassedRE = regexp.MustCompile(`^(?:PASSED|XPASS|XFAIL) (\S+::\S+(?:\[[^\]]*\])?)`)
	pytestCountsRE = regexp.MustCompile(`^(?:\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+s\b`)
	pytestCountRE  = regexp.MustCompile(`(\d+) ([a-z]+)`)
	// pytestLocRE matches a location of a traceback: "tests/test_x.py:7:
	// AssertionError", "tests/test_x.py:15: in test_div_zero".
	pytestLocRE = regexp.MustCompile(`^([^\s:]+\.py):(\d+):(?: (.*))?$`)
)

func (p *pytestParser) line(s string, _ bool) {
	t := strings.TrimRight(s, " \r")
	if m := pytestSectionRE.FindStringSubmatch(t); m != nil {
		if p.counts1(m[1]) {
			return
		}
		p.section, p.sub = strings.ToLower(m[1]), ""
		return
	}
	if p.counts1(t) {
		return
	}
	if crashLine(t) {
		p.crashes = append(p.crashes, strings.TrimSpace(t))
	}
	switch p.section {
	case "failures", "errors":
		if m := pytestSubRE.FindStringSubmatch(t); m != nil {
			p.sub = m[1]
			if _, ok := p.subs[p.sub]; !ok {
				p.subOrder = append(p.subOrder, p.sub)
			}
			return
		}
		if p.sub != "" && len(p.subs[p.sub]) < maxKeptLines && p.kept < maxPytestLines {
			p.subs[p.sub] = append(p.subs[p.sub], t)
			p.kept++
		}
	case "short test summary info":
		if m := pytestShortRE.FindStringSubmatch(t); m != nil {
			p.summary = append(p.summary, pytestSummary{kind: m[1], nodeID: m[2], msg: m[3]})
		} else if m := pytestPassedRE.FindStringSubmatch(t); m != nil {
			p.passed = append(p.passed, m[1])
		}
	}
}

// counts1 reads the last line of pytest ("4 failed, 3 passed in 0.03s",
// framed by = without -q); false for another line.
func (p *pytestParser) counts1(s string) bool {
	if !pytestCountsRE.MatchString(s) {
		return false
	}
	p.counts, p.hasCount = map[string]int{}, true
	for _, m := range pytestCountRE.FindAllStringSubmatch(strings.SplitN(s, " in ", 2)[0], -1) {
		word := m[2]
		if word == "error" {
			word = "errors"
		}
		if word == "warning" {
			word = "warnings"
		}
		p.counts[word] += atoi(m[1])
	}
	return true
}

// pyDetail is what a subsection says of one failure.
type pyDetail struct {
	file    string
	line    int
	errs    []string // the E lines
	excType string   // the type after the last location: "AssertionError"
}

func (p *pytestParser) detail(title, wantFile string) pyDetail {
	var d pyDetail
	var lastFile string
	var lastLine int
	for _, l := range p.subs[title] {
		if strings.HasPrefix(l, "E ") || l == "E" {
			d.errs = append(d.errs, strings.TrimPrefix(l, "E"))
			continue
		}
		if m := pytestLocRE.FindStringSubmatch(l); m != nil {
			lastFile, lastLine = m[1], atoi(m[2])
			if wantFile == "" || m[1] == wantFile {
				d.file, d.line = m[1], atoi(m[2])
			}
			if e := strings.TrimSpace(m[3]); e != "" && !strings.HasPrefix(e, "in ") {
				d.excType = e
			}
		}
	}
	if d.file == "" {
		d.file, d.line = lastFile, lastLine
	}
	return d
}

// errorText is the E lines of a failure, led by its exception type when
// the first line does not name it (pytest's assertion rewriting prints
// "assert 0 == 4" for an AssertionError).
func (d pyDetail) errorText() string {
	text := strings.TrimSpace(dedent(d.errs))
	if d.excType != "" && pyExcRE.MatchString(d.excType) && !strings.HasPrefix(text, d.excType) && !strings.Contains(strings.SplitN(text, "\n", 2)[0], "Error:") {
		text = d.excType + ": " + text
	}
	return text
}

func (p *pytestParser) result() *parsed {
	o := &parsed{}
	for _, id := range p.passed {
		o.pass(id)
	}
	for _, c := range p.crashes {
		o.add(diag{text: c, class: classRuntime, crash: true})
	}
	collection := 0
	seen := map[string]bool{}
	summary := p.summary
	if len(summary) == 0 {
		// Without the short summary (-rN, or an old pytest), the sections
		// name the failures.
		for _, title := range p.subOrder {
			switch {
			case strings.HasPrefix(title, "ERROR collecting "):
				summary = append(summary, pytestSummary{kind: "ERROR", nodeID: strings.TrimPrefix(title, "ERROR collecting ")})
			case strings.HasPrefix(title, "ERROR at "):
				if _, name, ok := strings.Cut(title, " of "); ok {
					summary = append(summary, pytestSummary{kind: "ERROR", nodeID: name})
				}
			default:
				summary = append(summary, pytestSummary{kind: "FAILED", nodeID: title})
			}
		}
	}
	// -rA lists errors before failures, -rfE after: failures first.
	slices.SortStableFunc(summary, func(a, b pytestSummary) int {
		return strings.Compare(b.kind, a.kind) // FAILED before ERROR
	})
	for _, s := range summary {
		if seen[s.kind+s.nodeID] {
			continue
		}
		seen[s.kind+s.nodeID] = true
		file, name, isTest := strings.Cut(s.nodeID, "::")
		if !isTest && s.kind == "ERROR" && strings.HasSuffix(file, ".py") {
			// A test module that could not be collected.
			collection++
			o.buildFailed = true
			d := p.detail("ERROR collecting "+file, file)
			text := d.errorText()
			dg := diag{class: classRuntime}
			if m := pyExcInText(text); m != nil {
				dg = pyDiag(m[1], m[2])
				if fm := pyFileRE.FindStringSubmatch(text); fm != nil && dg.parse {
					d.file, d.line = relPath(p.dir, fm[1]), atoi(fm[2])
				}
				text = m[0]
			}
			if text == "" {
				text = s.msg
			}
			if text == "" {
				text = "could not be collected"
			}
			if d.file == "" {
				d.file = file
			}
			if dg.class == classRuntime {
				o.failures = append(o.failures, failure{TestFailure: TestFailure{Test: file, Error: clip(text), File: file, Line: d.line}})
				continue
			}
			dg.text = location(d.file, d.line, 0) + text
			o.add(dg)
			continue
		}
		if !isTest {
			// Without a node id (sections only), the title names the test.
			name, file = strings.ReplaceAll(s.nodeID, ".", "::"), ""
		}
		title := strings.ReplaceAll(name, "::", ".")
		var d pyDetail
		var prefix string
		if s.kind == "ERROR" {
			for _, when := range []string{"setup", "teardown"} {
				if _, ok := p.subs["ERROR at "+when+" of "+title]; ok {
					d, prefix = p.detail("ERROR at "+when+" of "+title, file), "error at "+when+": "
				}
			}
		} else {
			d = p.detail(title, file)
		}
		text := d.errorText()
		if text == "" {
			text = s.msg
		}
		if text == "" {
			text = strings.ToLower(s.kind)
		}
		if d.file == "" {
			d.file = file
		}
		o.failures = append(o.failures, failure{
			TestFailure: TestFailure{Test: title, Error: clip(prefix + text), File: d.file, Line: d.line},
			id:          s.nodeID,
		})
	}
	if p.hasCount {
		o.hasCounts = true
		c := p.counts
		o.counts.Passed = c["passed"] + c["xfailed"] + c["xpassed"]
		o.counts.Failed = c["failed"] + max(0, c["errors"]-collection)
		o.counts.Skipped = c["skipped"]
		o.counts.Run = o.counts.Passed + o.counts.Failed
	}
	return o
}

var pyExcLineRE = regexp.MustCompile(`(?m)^((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt))(?:: (.*))?$`)

// pyExcInText finds the line of an exception in text: [line, type, message].
func pyExcInText(text string) []string {
	ms := pyExcLineRE.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return nil
	}
	return ms[len(ms)-1]
}

// dedent joins lines without the indentation they all share.
func dedent(lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(out, "\n")
}
