package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// maxJUnitBytes bounds one JUnit file that the report reads.
const maxJUnitBytes = 32 << 20

// junitSuite is a <testsuites> or <testsuite> element: either may hold
// the other and test cases, at any depth.
type junitSuite struct {
	Name   string       `xml:"name,attr"`
	File   string       `xml:"file,attr"`
	Suites []junitSuite `xml:"testsuite"`
	Cases  []junitCase  `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	File      string         `xml:"file,attr"`
	Line      string         `xml:"line,attr"`
	Failures  []junitProblem `xml:"failure"`
	Errors    []junitProblem `xml:"error"`
	Skipped   []junitProblem `xml:"skipped"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// parseJUnit reads a JUnit XML report (the schema of Ant and Maven
// Surefire, which pytest --junitxml, jest-junit, go-junit-report, gotestsum
// and most CI tools write): each test case passed, failed (<failure> or
// <error>) or skipped, with its file and line when the file says them or
// the failure's text shows them. dir makes absolute paths relative.
func parseJUnit(r io.Reader, dir string) (*parsed, error) {
	var root junitSuite
	dec := xml.NewDecoder(io.LimitReader(r, maxJUnitBytes))
	dec.Strict = false
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("junit: %w", err)
	}
	o := &parsed{hasCounts: true}
	var walk func(s junitSuite, file string)
	walk = func(s junitSuite, file string) {
		if s.File != "" {
			file = s.File
		}
		for _, c := range s.Cases {
			id := c.Name
			if c.Classname != "" {
				id = c.Classname + "." + c.Name
			}
			problems := append(slices.Clip(c.Failures), c.Errors...)
			switch {
			case len(problems) > 0:
				o.counts.Failed++
				o.failures = append(o.failures, junitFailure(c, problems[0], id, file, dir))
			case len(c.Skipped) > 0:
				o.counts.Skipped++
				o.skip(id)
			default:
				o.counts.Passed++
				o.pass(id)
			}
		}
		for _, sub := range s.Suites {
			walk(sub, file)
		}
	}
	walk(root, "")
	o.counts.Run = o.counts.Passed + o.counts.Failed
	return o, nil
}

var (
	// "tests/test_calc.py:7: AssertionError" (pytest), "src/x.go:12:" .
	junitLocRE = regexp.MustCompile(`(?m)^\s*([^\s:()"'<>]+\.[A-Za-z]\w{0,4}):(\d+):`)
	// "at com.x.FooTest.testBar(FooTest.java:42)" (JVM),
	// "at Object.<anonymous> (src/sum.test.js:5:20)" (Node).
	junitFrameRE = regexp.MustCompile(`\(([^\s():]+\.[A-Za-z]\w{0,4}):(\d+)(?::\d+)?\)`)
)

func junitFailure(c junitCase, pr junitProblem, id, suiteFile, dir string) failure {
	f := failure{TestFailure: TestFailure{Test: c.Name, Package: c.Classname}, id: id}
	f.File = c.File
	if f.File == "" {
		f.File = suiteFile
	}
	msg := strings.TrimSpace(pr.Message)
	text := strings.TrimSpace(pr.Text)
	if msg == "" {
		msg = strings.SplitN(text, "\n", 2)[0]
	}
	if pr.Type != "" && !strings.HasPrefix(msg, pr.Type) && !strings.Contains(pr.Type, ".skip") {
		msg = pr.Type + ": " + msg
	}
	if len(c.Failures) == 0 {
		msg = "error: " + msg
	}
	f.Error = clip(msg)
	// The line: a location in the text in the test's file (pytest's line
	// attribute counts from 0, its text from 1), else the line attribute.
	// The test's file is the file attribute's, or the one named after the
	// class (CalcTest.java, tests/test_calc.py for tests.test_calc).
	base := filepath.Base(f.File)
	class := c.Classname[strings.LastIndexByte(c.Classname, '.')+1:]
	var first []string
	found := false
	for _, re := range []*regexp.Regexp{junitLocRE, junitFrameRE} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if re == junitLocRE && first == nil {
				first = m
			}
			mb := filepath.Base(m[1])
			if (f.File != "" && (m[1] == f.File || mb == base)) ||
				(f.File == "" && class != "" && strings.TrimSuffix(mb, filepath.Ext(mb)) == class) {
				if f.File == "" {
					f.File = m[1]
				}
				f.Line, found = atoi(m[2]), true
				break
			}
		}
		if found {
			break
		}
	}
	switch {
	case found:
	case f.File == "" && first != nil:
		f.File, f.Line = first[1], atoi(first[2])
	default:
		f.Line = atoi(c.Line)
	}
	f.File = relPath(dir, f.File)
	return f
}

// junitSnapshot is the modification time and size of each file that a
// check's JUnit pattern matches.
type junitSnapshot map[string]junitStamp

type junitStamp struct {
	mod  time.Time
	size int64
}

func snapshotJUnit(dir, pattern string) junitSnapshot {
	snap := junitSnapshot{}
	if pattern == "" {
		return snap
	}
	p := pattern
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	matches, _ := filepath.Glob(p)
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
			snap[m] = junitStamp{fi.ModTime(), fi.Size()}
		}
	}
	return snap
}

// readJUnit parses the JUnit files that the check wrote: those that match
// its pattern now and are new or changed since before. It returns nil when
// there is none; a file that does not parse is reported in warnings.
func readJUnit(dir, pattern string, before junitSnapshot) (o *parsed, warnings []string) {
	after := snapshotJUnit(dir, pattern)
	files := make([]string, 0, len(after))
	for f, st := range after {
		if old, ok := before[f]; !ok || !old.mod.Equal(st.mod) || old.size != st.size {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("JUnit report %s: %v", relPath(dir, file), err))
			continue
		}
		one, err := parseJUnit(fh, dir)
		fh.Close()
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("JUnit report %s could not be read: %v", relPath(dir, file), err))
			continue
		}
		if o == nil {
			o = &parsed{hasCounts: true}
		}
		o.failures = append(o.failures, one.failures...)
		o.counts.Passed += one.counts.Passed
		o.counts.Failed += one.counts.Failed
		o.counts.Skipped += one.counts.Skipped
		o.counts.Run += one.counts.Run
		for id := range one.passed {
			o.pass(id)
		}
		for id := range one.skipped {
			o.skip(id)
		}
	}
	return o, warnings
}
