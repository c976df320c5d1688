package gate

import (
	"regexp"
	"slices"
	"strings"
)

// nodeParser reads the output of node's test runner (node --test, and npm
// test when the test script runs it) with either of its built-in
// reporters: TAP (node 18 to 22 when stdout is no terminal) and spec (a
// terminal, and node 23 on). Each test is named by its path of suites and
// tests ("suite > test"); the leaves are counted (a test with subtests
// counts through them, as Go's do); a failure gets its file:line and its
// error with the expected and actual values.
type nodeParser struct {
	dir string
	o   parsed
	// names are the names of the enclosing suites and tests by level.
	names []string
	// children[l]: a result was seen at level l since the last result at
	// level l-1 (its parent then has subtests).
	children []bool
	// yaml: the lines of the TAP YAML block being read; cur the failure
	// it belongs to (nil for a pass).
	yaml       []string
	inYAML     bool
	yamlIndent int
	cur        *failure
	// spec: the spec reporter's failure whose error lines are read, and
	// the indentation of its result line; tail: the "failing tests:"
	// recap at the end, which repeats the failures.
	specCur    *failure
	specIndent int
	specLines  []string
	tail       bool
	tailLoc    string
	summary    map[string]int
	sawResults bool
	// tapIndent is the indentation of the TAP result line just read (-1
	// after any other line): its YAML block starts on the next line.
	tapIndent int
	// loose are the lines since the last result that no rule read: what a
	// test file wrote on its standard error (TAP's "# " comments), such as
	// why it did not load; curLoose and specLoose those before the
	// failure being read.
	loose, curLoose, specLoose []string
	// fileTests are the "tests" named by the path of a test file: a file
	// that failed outside its tests.
	fileTests map[string]bool
}

func newNodeParser(dir string) *nodeParser { return &nodeParser{dir: dir, tapIndent: -1} }

var (
	nodeTAPResultRE  = regexp.MustCompile(`^( *)(not ok|ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$`)
	nodeTAPSubtestRE = regexp.MustCompile(`^( *)# Subtest: (.*)$`)
	nodeSummaryRE    = regexp.MustCompile(`^(?:# |ℹ )(tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$`)
	// The spec reporter: "✔ name (1.2ms)", "✖ name (3ms)", "﹣ name (0.2ms) # SKIP",
	// "▶ suite" (a suite starts; it ends with ✔ or ✖ at its indentation).
	nodeSpecResultRE = regexp.MustCompile(`^( *)(✔|✖|﹣) (.*?)(?: \([\d.]+m?s\))?(?: # (SKIP|TODO)\b.*)?$`)
	nodeSpecSuiteRE  = regexp.MustCompile(`^( *)▶ (.*)$`)
	nodeLocRE        = regexp.MustCompile(`^(?:test at )?(.+?):(\d+):\d+$`)
	nodeFrameRE      = regexp.MustCompile(`\(?(?:file://)?((?:/|\.|[A-Za-z]:)[^\s():]*\.[cm]?[jt]sx?):(\d+):\d+\)?`)
)

func (p *nodeParser) line(s string, _ bool) {
	t := strings.TrimRight(stripANSI(s), "\r")
	if p.inYAML {
		if strings.TrimSpace(t) == "..." && len(t)-len(strings.TrimLeft(t, " ")) <= p.yamlIndent {
			p.inYAML = false
			p.endYAML()
			return
		}
		p.yaml = append(p.yaml, t)
		return
	}
	if m := nodeSummaryRE.FindStringSubmatch(strings.TrimSpace(t)); m != nil && len(t)-len(strings.TrimLeft(t, " ")) == 0 {
		if p.summary == nil {
			p.summary = map[string]int{}
		}
		p.summary[m[1]] = atoi(m[2])
		return
	}
	afterResult := p.tapIndent
	p.tapIndent = -1
	if afterResult >= 0 && t == strings.Repeat(" ", afterResult+2)+"---" {
		p.inYAML, p.yaml, p.yamlIndent = true, nil, afterResult+2
		return
	}
	if m := nodeTAPSubtestRE.FindStringSubmatch(t); m != nil {
		p.enter(len(m[1])/4, tapUnescape(m[2]))
		return
	}
	if m := nodeTAPResultRE.FindStringSubmatch(t); m != nil {
		p.specDone()
		level := len(m[1]) / 4
		f := p.done(level, tapUnescape(m[3]), m[2] == "ok", m[4])
		p.cur, p.tapIndent = f, len(m[1])
		p.curLoose, p.loose = p.loose, nil
		return
	}
	if strings.HasPrefix(strings.TrimSpace(t), "✖ failing tests:") {
		p.specDone()
		p.tail = true
		return
	}
	if p.tail {
		// The recap: "test at file:line:col" then the failure again.
		if m := nodeLocRE.FindStringSubmatch(strings.TrimSpace(t)); m != nil && strings.HasPrefix(strings.TrimSpace(t), "test at ") {
			p.tailLoc = strings.TrimSpace(t)
			return
		}
		if m := nodeSpecResultRE.FindStringSubmatch(t); m != nil && m[2] == "✖" && p.tailLoc != "" {
			lm := nodeLocRE.FindStringSubmatch(p.tailLoc)
			for i := range p.o.failures {
				f := &p.o.failures[i]
				if f.File == "" && (f.Test == m[3] || strings.HasSuffix(f.Test, " > "+m[3])) {
					f.File, f.Line = relPath(p.dir, lm[1]), atoi(lm[2])
					break
				}
			}
			p.tailLoc = ""
		}
		return
	}
	if m := nodeSpecSuiteRE.FindStringSubmatch(t); m != nil {
		p.specDone()
		p.enter(len(m[1])/2, m[2])
		return
	}
	if m := nodeSpecResultRE.FindStringSubmatch(t); m != nil {
		p.specDone()
		level := len(m[1]) / 2
		if level < len(p.names) && p.names[level] == m[3] {
			// The end of a suite started with ▶: its result.
			p.names = p.names[:level]
		}
		f := p.done(level, m[3], m[2] != "✖", m[4])
		if f != nil {
			p.specCur, p.specIndent, p.specLines, p.specLoose = f, len(m[1]), nil, p.loose
		}
		p.loose = nil
		return
	}
	if p.specCur != nil {
		indent := len(t) - len(strings.TrimLeft(t, " "))
		if strings.TrimSpace(t) == "" || indent > p.specIndent {
			if len(p.specLines) < maxKeptLines {
				p.specLines = append(p.specLines, t)
			}
			return
		}
		p.specDone()
	}
	if crashLine(t) {
		p.o.add(diag{text: strings.TrimSpace(t), class: classRuntime, crash: true})
	}
	if len(p.loose) < maxKeptLines {
		if c, ok := strings.CutPrefix(t, "#"); ok {
			t = strings.TrimPrefix(c, " ")
		}
		p.loose = append(p.loose, t)
	}
}

// enter notes a suite or test that starts at level, with name.
func (p *nodeParser) enter(level int, name string) {
	for len(p.names) < level {
		p.names = append(p.names, "")
	}
	p.names = append(p.names[:level], name)
}

// id is the name of the test name at level: the path of its parents.
func (p *nodeParser) id(level int, name string) string {
	parts := make([]string, 0, level+1)
	for i := 0; i < level && i < len(p.names); i++ {
		if p.names[i] != "" {
			parts = append(parts, p.names[i])
		}
	}
	return strings.Join(append(parts, name), " > ")
}

// done records the end of the test name at level; the failure it made
// (nil for a pass, a skip or a parent whose subtests failed).
func (p *nodeParser) done(level int, name string, ok bool, directive string) *failure {
	p.sawResults = true
	p.o.hasCounts = true
	for len(p.children) <= level+1 {
		p.children = append(p.children, false)
	}
	parent := p.children[level+1]
	p.children[level+1] = false
	p.children[level] = true
	file := nodeFileTest(name)
	if file {
		// A test file that failed outside its tests, named by its path:
		// relative to the check's directory, as every location is.
		name = relPath(p.dir, name)
	}
	id := p.id(level, name)
	if file {
		if p.fileTests == nil {
			p.fileTests = map[string]bool{}
		}
		p.fileTests[id] = true
	}
	if len(p.names) > level {
		p.names = p.names[:level]
	}
	switch {
	case directive != "":
		// # SKIP, # TODO: not run, or not held against the run.
		p.o.skip(id)
		if !parent {
			p.o.counts.Skipped++
		}
		return nil
	case ok:
		p.o.pass(id)
		if !parent {
			p.o.counts.Passed++
		}
		return nil
	case parent:
		return nil // failed because a subtest did
	}
	p.o.counts.Failed++
	f := failure{TestFailure: TestFailure{Test: id}, id: id}
	if p.fileTests[id] {
		// No test of its own: a test file that did not load, or whose
		// process failed, as a Go package that fails outside its tests.
		// Its tests run once it loads; it is not one that stops running.
		f.id = ""
	}
	p.o.failures = append(p.o.failures, f)
	return &p.o.failures[len(p.o.failures)-1]
}

// endYAML reads the YAML block of a TAP result: the failure's location
// and error, with the expected and actual values.
func (p *nodeParser) endYAML() {
	f := p.cur
	p.cur = nil
	if f == nil || len(p.o.failures) == 0 {
		return
	}
	f = &p.o.failures[len(p.o.failures)-1]
	fields := map[string]string{}
	nested := map[string]bool{} // the values that are YAML mappings or sequences
	var key string
	var block []string
	indent := -1
	flush := func() {
		if key != "" && block != nil {
			fields[key] = strings.Join(block, "\n")
		}
		key, block = "", nil
	}
	for _, l := range p.yaml {
		trimmed := strings.TrimLeft(l, " ")
		ind := len(l) - len(trimmed)
		if indent < 0 {
			indent = ind
		}
		if key != "" && block != nil && (ind > indent || trimmed == "") {
			block = append(block, strings.TrimPrefix(l, strings.Repeat(" ", indent+2)))
			continue
		}
		flush()
		k, v, ok := strings.Cut(trimmed, ":")
		if !ok || ind != indent {
			continue
		}
		v = strings.TrimSpace(v)
		switch v {
		case "|-", "|", ">-":
			key, block = k, []string{}
			continue
		case "":
			// A mapping or a sequence on the next lines: node's expected
			// and actual objects.
			key, block, nested[k] = k, []string{}, true
			continue
		}
		fields[k] = yamlScalar(v)
	}
	flush()
	if fields["failureType"] == "subtestsFailed" {
		return
	}
	if m := nodeLocRE.FindStringSubmatch(fields["location"]); m != nil {
		f.File, f.Line = relPath(p.dir, m[1]), atoi(m[2])
	}
	msg := strings.TrimSpace(fields["error"])
	if n := fields["name"]; n != "" && !strings.HasPrefix(msg, n) {
		msg = n + ": " + msg
	}
	if fields["failureType"] == "hookFailed" {
		msg = "a hook failed: " + msg
	}
	if _, ok := fields["expected"]; ok {
		// The values, unless the error's diff shows them already.
		if !strings.Contains(msg, nodeDiffHeader) {
			msg += "\n" + yamlValue("expected", fields["expected"], nested["expected"]) + "\n" + yamlValue("actual", fields["actual"], nested["actual"])
		}
	}
	// The location of the failure in the test file, from the stack.
	if m := nodeFrameRE.FindStringSubmatch(fields["stack"]); m != nil && (f.File == "" || relPath(p.dir, m[1]) == f.File) {
		f.File, f.Line = relPath(p.dir, m[1]), atoi(m[2])
	}
	if fields["error"] == "test failed" && p.fileTests[f.Test] {
		msg = p.fileFailed(f, p.curLoose, fields["exitCode"])
	}
	p.curLoose = nil
	f.Error = clip(msg)
	if f.Error == "" {
		f.Error = "failed"
	}
}

// yamlValue is "key: value", or key and its value of several lines
// indented under it.
func yamlValue(key, v string, nested bool) string {
	if !nested && !strings.Contains(v, "\n") {
		return key + ": " + v
	}
	return key + ":\n" + indent(strings.TrimRight(v, "\n"), "  ")
}

// nodeFileTest: a test named by the path of a test file, as node names a
// file whose process failed outside its tests.
func nodeFileTest(name string) bool {
	return strings.ContainsRune(name, '/') && nodeFileRE.MatchString(name)
}

var (
	nodeFileRE = regexp.MustCompile(`\.[cm]?[jt]sx?$`)
	// nodeErrorLineRE is the line of an uncaught error: "SyntaxError:
	// Unexpected token ';'", "Error: Cannot find module './missing'",
	// "AssertionError [ERR_ASSERTION]: ...".
	nodeErrorLineRE = regexp.MustCompile(`^(?:[A-Z]\w*)?(?:Error|Exception)(?: \[\w+\])?: `)
	// nodeSourceRE is the "file:line" that node prints above the source
	// line of a syntax error.
	nodeSourceRE = regexp.MustCompile(`^((?:/|\.|[A-Za-z]:)\S*\.[cm]?[jt]sx?):(\d+)$`)
)

// fileFailed is the error of a test file that failed outside its tests
// (it did not load, or its process exited), from what it wrote on its
// standard error (loose): the error, led by the source line and caret of a
// syntax error, at the file:line node gives (the header of a syntax error,
// else the first frame in a file outside node's and node_modules); else
// that it failed, with its exit status.
func (p *nodeParser) fileFailed(f *failure, loose []string, exit string) string {
	start := slices.IndexFunc(loose, func(l string) bool { return nodeErrorLineRE.MatchString(l) })
	if start < 0 {
		if exit != "" && exit != "~" {
			return "the test file failed outside its tests (exit status " + exit + ")"
		}
		return "the test file failed outside its tests"
	}
	var msg []string
	file, line := "", 0
	for i := start - 1; i >= 0; i-- {
		if m := nodeSourceRE.FindStringSubmatch(strings.TrimSpace(loose[i])); m != nil {
			file, line = relPath(p.dir, m[1]), atoi(m[2])
			var src []string
			for _, l := range loose[i+1 : start] {
				if strings.TrimSpace(l) != "" {
					src = append(src, l)
				}
			}
			if len(src) > 0 {
				msg = append(msg, dedent(src))
			}
			break
		}
	}
	msg = append(msg, loose[start])
	for _, l := range loose[start+1:] {
		tl := strings.TrimSpace(l)
		if tl == "" || strings.HasPrefix(tl, "at ") || strings.HasPrefix(tl, "Node.js v") || strings.HasSuffix(tl, "{") {
			break
		}
		msg = append(msg, l)
	}
	if file == "" {
		for _, l := range loose[start:] {
			if strings.Contains(l, "node:") || strings.Contains(l, "node_modules") {
				continue
			}
			if m := nodeFrameRE.FindStringSubmatch(l); m != nil {
				file, line = relPath(p.dir, m[1]), atoi(m[2])
				break
			}
		}
	}
	if file != "" {
		f.File, f.Line = file, line
	}
	return strings.Join(msg, "\n")
}

// nodeSpecNameRE is the error's class with node's code in brackets, as the
// spec reporter prints it: "AssertionError [ERR_ASSERTION]: ".
var nodeSpecNameRE = regexp.MustCompile(`^(\w*(?:Error|Exception)) \[\w+\]: `)

// specDone ends the error lines of a spec reporter's failure: its message
// (the error's class without node's code in brackets), its expected and
// actual values (from the properties node prints after the stack), its
// location from the stack.
func (p *nodeParser) specDone() {
	f := p.specCur
	p.specCur = nil
	if f == nil {
		return
	}
	var head []string
	values := map[string][]string{}
	inProps, propIndent, key := false, -1, ""
	for _, l := range p.specLines {
		tl := strings.TrimSpace(l)
		if strings.HasPrefix(tl, "at ") && !inProps {
			if m := nodeFrameRE.FindStringSubmatch(tl); m != nil && !strings.HasPrefix(m[1], "node:") && f.File == "" {
				f.File, f.Line = relPath(p.dir, m[1]), atoi(m[2])
			}
			// The last frame opens the error's properties: "... {".
			inProps = inProps || strings.HasSuffix(tl, "{")
			continue
		}
		if !inProps {
			head = append(head, l)
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " "))
		if propIndent < 0 {
			propIndent = ind
		}
		switch {
		case ind < propIndent:
			inProps, key = false, "" // the closing brace
		case ind == propIndent && nodePropRE.MatchString(tl):
			k, v, _ := strings.Cut(tl, ":")
			key = k
			if k == "expected" || k == "actual" {
				values[k] = []string{strings.TrimSpace(v)}
			}
		case values[key] != nil:
			values[key] = append(values[key], strings.TrimPrefix(l, strings.Repeat(" ", propIndent)))
		}
	}
	text := strings.TrimSpace(dedent(head))
	text = nodeSpecNameRE.ReplaceAllString(text, "$1: ")
	if len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\'' && !strings.Contains(text, "\n") {
		text = text[1 : len(text)-1] // node's quoted message: 'test failed'
	}
	if values["expected"] != nil && !strings.Contains(text, nodeDiffHeader) {
		for _, k := range []string{"expected", "actual"} {
			v := strings.TrimSuffix(strings.Join(values[k], "\n"), ",")
			text += "\n" + yamlValue(k, v, false)
		}
	}
	if text == "test failed" && p.fileTests[f.Test] {
		text = p.fileFailed(f, p.specLoose, "")
	}
	p.specLoose = nil
	f.Error = clip(text)
	if f.Error == "" {
		f.Error = "failed"
	}
	p.specLines = nil
}

// nodePropRE is a property of an error as node inspects it: "actual: 2,".
var nodePropRE = regexp.MustCompile(`^\w+: `)

// nodeDiffHeader heads the diff of node's assertion errors, which shows
// the expected and actual values already.
const nodeDiffHeader = "+ actual - expected"

func (p *nodeParser) result() *parsed {
	p.specDone()
	o := &p.o
	if !p.sawResults && p.summary != nil {
		// Only the summary: its counts.
		o.hasCounts = true
		o.counts.Passed = p.summary["pass"]
		o.counts.Failed = p.summary["fail"] + p.summary["cancelled"]
		o.counts.Skipped = p.summary["skipped"] + p.summary["todo"]
	}
	o.counts.Run = o.counts.Passed + o.counts.Failed
	return o
}

// yamlScalar is the value of a one-line YAML scalar: unquoted.
func yamlScalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		return strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
	}
	return v
}

// tapUnescape undoes TAP's escapes of a test's name (\# and \\).
func tapUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\#`, "#", `\\`, `\`).Replace(s)
}
