package gate

import (
	"regexp"
	"strings"
)

// cargoParser reads cargo build and cargo test: rustc's errors (with the
// file:line of their --> line), each test's ok, FAILED or ignored, the
// panic message and location of a failed test, and the counts of the
// "test result:" lines (summed over the test binaries).
type cargoParser struct {
	o       parsed
	tests   map[string]string // name → ok, FAILED, ignored
	order   []string
	section string // the test whose "---- name stdout ----" we are in
	details map[string]*pyDetail
	pending *cargoError
	inPanic bool
	seen    map[string]bool
}

type cargoError struct {
	code, msg string
}

func newCargoParser() *cargoParser {
	return &cargoParser{tests: map[string]string{}, details: map[string]*pyDetail{}, seen: map[string]bool{}}
}

var (
	cargoTestRE    = regexp.MustCompile(`^test (\S+) \.\.\. (ok|FAILED|ignored)\b`)
	cargoResultRE  = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored`)
	cargoSectionRE = regexp.MustCompile(`^---- (\S+) stdout ----$`)
	// Rust 1.73 and later: "thread 'x' (1234) panicked at src/lib.rs:11:9:",
	// the message on the next lines; before: "thread 'x' panicked at 'msg',
	// src/lib.rs:11:9".
	cargoPanicRE    = regexp.MustCompile(`^thread '([^']+)'(?: \(\d+\))? panicked at (\S+?):(\d+):(\d+):$`)
	cargoOldPanicRE = regexp.MustCompile(`^thread '([^']+)' panicked at '(.*)', (\S+?):(\d+):(\d+)$`)
	cargoErrorRE    = regexp.MustCompile(`^error(?:\[(E\d+)\])?: (.*)$`)
	cargoArrowRE    = regexp.MustCompile(`^\s*--> (\S+?):(\d+):(\d+)$`)
)

// cargoImportCodes are rustc's errors of imports and crates: unresolved
// import, failed to resolve a path, can't find crate, unresolved extern
// crate.
var cargoImportCodes = map[string]bool{"E0432": true, "E0433": true, "E0463": true, "E0583": true}

func (p *cargoParser) line(s string, _ bool) {
	t := strings.TrimRight(s, "\r")
	if m := cargoTestRE.FindStringSubmatch(t); m != nil {
		if _, ok := p.tests[m[1]]; !ok {
			p.order = append(p.order, m[1])
		}
		p.tests[m[1]] = m[2]
		switch m[2] {
		case "ok":
			p.o.pass(m[1])
		case "ignored":
			p.o.skip(m[1])
		}
		return
	}
	if m := cargoResultRE.FindStringSubmatch(t); m != nil {
		p.o.hasCounts = true
		p.o.counts.Passed += atoi(m[1])
		p.o.counts.Failed += atoi(m[2])
		p.o.counts.Skipped += atoi(m[3])
		p.section = ""
		return
	}
	if m := cargoSectionRE.FindStringSubmatch(t); m != nil {
		p.section, p.inPanic = m[1], false
		return
	}
	if t == "failures:" {
		p.section = ""
		return
	}
	if m := cargoPanicRE.FindStringSubmatch(t); m != nil {
		p.details[m[1]] = &pyDetail{file: m[2], line: atoi(m[3])}
		p.section, p.inPanic = m[1], true
		return
	}
	if m := cargoOldPanicRE.FindStringSubmatch(t); m != nil {
		p.details[m[1]] = &pyDetail{file: m[3], line: atoi(m[4]), errs: []string{m[2]}}
		p.section, p.inPanic = m[1], false
		return
	}
	if p.inPanic && p.section != "" {
		if t == "" || strings.HasPrefix(t, "stack backtrace:") || strings.HasPrefix(t, "note: ") {
			p.inPanic = false
			return
		}
		if d := p.details[p.section]; d != nil && len(d.errs) < maxErrorLines {
			d.errs = append(d.errs, t)
		}
		return
	}
	if crashLine(t) {
		p.addDiag(diag{text: strings.TrimSpace(t), class: classRuntime, crash: true})
		return
	}
	if m := cargoErrorRE.FindStringSubmatch(t); m != nil {
		p.flush("", 0, 0)
		msg := m[2]
		if strings.HasPrefix(msg, "could not compile") || strings.HasPrefix(msg, "test failed") ||
			strings.HasPrefix(msg, "aborting due to") || strings.HasPrefix(msg, "Recipe") || strings.HasPrefix(msg, "1 target failed") ||
			strings.HasSuffix(msg, "targets failed:") {
			return
		}
		p.pending = &cargoError{code: m[1], msg: msg}
		return
	}
	if m := cargoArrowRE.FindStringSubmatch(t); m != nil && p.pending != nil {
		p.flush(m[1], atoi(m[2]), atoi(m[3]))
		return
	}
	if t == "" || strings.HasPrefix(t, "warning") {
		p.flush("", 0, 0)
	}
}

// flush records the pending rustc error, at file:line:col when known.
func (p *cargoParser) flush(file string, line, col int) {
	e := p.pending
	if e == nil {
		return
	}
	p.pending = nil
	d := diag{class: classSyntax}
	code := ""
	if e.code != "" {
		code = "[" + e.code + "]"
	}
	d.text = location(file, line, col) + "error" + code + ": " + e.msg
	switch {
	case cargoImportCodes[e.code]:
		d.class = classImport
	case e.code == "" && file != "":
		// rustc's parser errors carry no code.
		d.parse = true
	case e.code == "" && hasAny(e.msg, []string{"package", "crate", "dependency", "dependencies", "manifest", "Cargo.toml", "registry", "lock file"}):
		d.class = classImport
	}
	p.o.buildFailed = true
	p.addDiag(d)
}

func (p *cargoParser) addDiag(d diag) {
	if p.seen[d.text] {
		return
	}
	p.seen[d.text] = true
	p.o.add(d)
}

func (p *cargoParser) result() *parsed {
	p.flush("", 0, 0)
	for _, name := range p.order {
		if p.tests[name] != "FAILED" {
			continue
		}
		f := failure{TestFailure: TestFailure{Test: name}, id: name}
		if d := p.details[name]; d != nil {
			f.File, f.Line = d.file, d.line
			f.Error = clip(strings.Join(d.errs, "\n"))
		}
		if f.Error == "" {
			f.Error = "failed"
		}
		p.o.failures = append(p.o.failures, f)
	}
	if !p.o.hasCounts && len(p.order) > 0 {
		// No "test result:" line (the binary crashed): count what was seen.
		p.o.hasCounts = true
		for _, st := range p.tests {
			switch st {
			case "ok":
				p.o.counts.Passed++
			case "FAILED":
				p.o.counts.Failed++
			case "ignored":
				p.o.counts.Skipped++
			}
		}
	}
	p.o.counts.Run = p.o.counts.Passed + p.o.counts.Failed
	return &p.o
}
