package gate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// What a check does (Check.Kind): it orders the checks fast first and tells
// the report where a failure belongs.
const (
	// KindBuild compiles or parses the code: go build, python -m
	// compileall, cargo build.
	KindBuild = "build"
	// KindVet analyses the code without running it: go vet, linters.
	KindVet = "vet"
	// KindTest runs the tests: its failures may be re-run (flaky tests) and
	// its counts compared with the baseline's.
	KindTest = "test"
)

// Parsers of a check's output (Check.Format).
const (
	// FormatGoTest reads go test -json (test2json events, and the build
	// output that go prints as text or as build-output events).
	FormatGoTest = "gotest"
	// FormatGo reads the text of go build, go vet and go test without
	// -json: compiler and vet diagnostics.
	FormatGo = "go"
	// FormatPytest reads pytest's text output.
	FormatPytest = "pytest"
	// FormatCargo reads cargo build and cargo test.
	FormatCargo = "cargo"
	// FormatPython reads python -m compileall and Python tracebacks.
	FormatPython = "python"
	// FormatNode reads node's test runner (node --test) with its TAP or
	// spec reporter.
	FormatNode = "node"
	// FormatJest and FormatVitest read the summaries of jest and vitest:
	// their counts of tests.
	FormatJest   = "jest"
	FormatVitest = "vitest"
	// FormatText reads any output: crashes only.
	FormatText = "text"
)

var (
	kinds   = []string{KindBuild, KindVet, KindTest}
	formats = []string{FormatGoTest, FormatGo, FormatPytest, FormatCargo, FormatPython, FormatNode, FormatJest, FormatVitest, FormatText}
)

func (c Check) validateHints() error {
	if c.Kind != "" && !slices.Contains(kinds, c.Kind) {
		return &FieldError{"kind", "must be one of " + strings.Join(kinds, ", ") + ", not " + quote(c.Kind)}
	}
	if c.Format != "" && !slices.Contains(formats, c.Format) {
		return &FieldError{"format", "must be one of " + strings.Join(formats, ", ") + ", not " + quote(c.Format)}
	}
	return nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// words is c's command split into words: its argv, or its command line split
// as sh would split a simple command. ok is false for a command line that
// is not one simple command (pipes, lists, redirections, substitutions,
// escapes): its words are then only a guess, split at blanks.
func (c Check) words() (w []string, ok bool) {
	if c.Shell == "" {
		return c.Argv, true
	}
	return shellWords(c.Shell)
}

// shellWords splits a simple command line at blanks, honouring single and
// double quotes; false (and the line split at blanks) when it holds
// anything sh would read otherwise.
func shellWords(line string) ([]string, bool) {
	if strings.ContainsAny(line, "|&;<>()$`\\\n*?[{~#") {
		return strings.Fields(line), false
	}
	var words []string
	var cur strings.Builder
	inWord := false
	var q byte
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case q != 0 && ch == q:
			q = 0
		case q != 0:
			cur.WriteByte(ch)
		case ch == '\'' || ch == '"':
			q, inWord = ch, true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if q != 0 {
		return strings.Fields(line), false
	}
	if inWord {
		words = append(words, cur.String())
	}
	// An assignment before the command (FOO=1 go test) is not a word of it.
	if len(words) > 0 && strings.Contains(words[0], "=") {
		return words, false
	}
	return words, true
}

// program is the base name of a command word, without a version suffix:
// /usr/bin/python3.11 → python.
func program(w string) string {
	b := path.Base(w)
	if strings.HasPrefix(b, "python") {
		return "python"
	}
	return b
}

// InferKind is c.Kind, or what c's command says it does: a test runner
// (go test, pytest, cargo test, npm test, jest, ...) is KindTest, a linter
// or go vet KindVet, a build or compile KindBuild; "" when it cannot tell.
func InferKind(c Check) string {
	if c.Kind != "" {
		return c.Kind
	}
	w, _ := c.words()
	for i, x := range w {
		p := program(x)
		switch p {
		case "pytest", "py.test", "jest", "mocha", "vitest", "tox", "nox", "ctest", "phpunit", "rspec":
			return KindTest
		case "compileall", "py_compile", "tsc", "javac", "gcc", "clang", "rustc":
			return KindBuild
		case "golangci-lint", "staticcheck", "ruff", "flake8", "pylint", "mypy", "eslint", "clippy", "cargo-clippy", "shellcheck":
			return KindVet
		}
		if p == "node" && slices.ContainsFunc(w[i+1:], isNodeTestFlag) {
			return KindTest
		}
		if i+1 < len(w) && (p == "go" || p == "cargo" || p == "npm" || p == "yarn" || p == "pnpm" || p == "make" || p == "dotnet" || p == "mvn" || p == "gradle") {
			switch sub := w[i+1]; {
			case sub == "test" || sub == "nextest" || sub == "t":
				return KindTest
			case sub == "vet" || sub == "clippy" || sub == "lint":
				return KindVet
			case sub == "build" || sub == "check" || sub == "compile":
				return KindBuild
			case sub == "run" && i+2 < len(w):
				switch w[i+2] {
				case "test", "tests":
					return KindTest
				case "lint":
					return KindVet
				case "build", "typecheck":
					return KindBuild
				}
			}
		}
	}
	return ""
}

// InferFormat is c.Format, or the parser that c's command calls for: go
// test with -json is FormatGoTest, another go command FormatGo, pytest
// FormatPytest, cargo FormatCargo, python FormatPython, node --test
// FormatNode, jest FormatJest, vitest FormatVitest, anything else
// FormatText.
func InferFormat(c Check) string {
	if c.Format != "" {
		return c.Format
	}
	w, _ := c.words()
	return formatOfWords(w)
}

// formatOfWords is the parser that a command of words calls for.
func formatOfWords(w []string) string {
	for i, x := range w {
		switch p := program(x); p {
		case "node":
			if slices.ContainsFunc(w[i+1:], isNodeTestFlag) {
				return FormatNode
			}
		case "jest":
			return FormatJest
		case "vitest":
			return FormatVitest
		case "go":
			if i+1 < len(w) && w[i+1] == "test" && slices.ContainsFunc(w[i+2:], func(a string) bool {
				return a == "-json" || a == "--json" || a == "-json=true" || a == "--json=true"
			}) {
				return FormatGoTest
			}
			return FormatGo
		case "pytest", "py.test":
			return FormatPytest
		case "cargo":
			return FormatCargo
		case "python":
			if i+2 < len(w) && w[i+1] == "-m" && (w[i+2] == "pytest" || w[i+2] == "py.test") {
				return FormatPytest
			}
			return FormatPython
		}
	}
	return FormatText
}

// kindRank orders kinds fast first: builds, then static analysis, then the
// rest (tests, and checks of unknown kind, in their own order).
func kindRank(k string) int {
	switch k {
	case KindBuild:
		return 0
	case KindVet:
		return 1
	}
	return 2
}

// SortFastFirst returns the checks ordered fast first by InferKind: builds,
// then static analysis, then tests and the checks whose kind it cannot tell.
// The order within each group is kept.
func SortFastFirst(checks []Check) []Check {
	out := slices.Clone(checks)
	slices.SortStableFunc(out, func(a, b Check) int { return kindRank(InferKind(a)) - kindRank(InferKind(b)) })
	return out
}

// npmPlaceholderTest is the test script that npm init writes.
const npmPlaceholderTest = "no test specified"

// pythonSkipDirs are the directories that python -m compileall skips: the
// virtual environments, caches and build outputs of a project.
const pythonSkipDirs = `(^|/)(\.git|\.hg|\.venv|venv|\.env|env|\.tox|\.nox|\.eggs|node_modules|site-packages|__pycache__|build|dist)(/|$)`

// DetectDefaults returns the checks that the project in dir calls for when
// none is configured, fast first (builds, then vet, then tests):
//
//   - Go (go.mod): go build -o /dev/null ./... (-o /dev/null: a module
//     whose only package is a command would otherwise get its binary
//     written into the tree), go vet ./..., go test -json ./...
//   - Python (pyproject.toml, setup.py, setup.cfg, requirements.txt, or a
//     *.py file at the top): python -m compileall on the tree, skipping
//     virtual environments and build outputs; then pytest (-q -rfE, without
//     its cache directory), when the project configures pytest (pytest.ini,
//     conftest.py, [tool.pytest.ini_options], [tool:pytest], tox.ini's
//     [pytest], or pytest in its requirements) or when pytest is installed
//     and the project has test files. The Python is the project's virtual
//     environment's (.venv, venv) when it has one, else python3 on PATH.
//   - Rust (Cargo.toml): cargo build, cargo test --no-fail-fast (every
//     test binary runs, not only up to the first that fails).
//   - Node (package.json with a "test" script other than npm's placeholder
//     "no test specified"): npm test.
//
// It returns nil when it recognises nothing.
func DetectDefaults(dir string) []Check {
	var build, vet, test []Check
	add := func(list *[]Check, kind, format string, argv ...string) {
		*list = append(*list, Check{Name: strings.Join(argv, " "), Argv: argv, Kind: kind, Format: format})
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	if exists("go.mod") {
		add(&build, KindBuild, FormatGo, "go", "build", "-o", os.DevNull, "./...")
		add(&vet, KindVet, FormatGo, "go", "vet", "./...")
		add(&test, KindTest, FormatGoTest, "go", "test", "-json", "./...")
	}
	if isPythonProject(dir) {
		py := pythonFor(dir)
		add(&build, KindBuild, FormatPython, py, "-m", "compileall", "-q", "-x", pythonSkipDirs, ".")
		if pytestConfigured(dir) || (hasPythonTests(dir) && pytestInstalled(py)) {
			add(&test, KindTest, FormatPytest, py, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider")
		}
	}
	if exists("Cargo.toml") {
		add(&build, KindBuild, FormatCargo, "cargo", "build")
		add(&test, KindTest, FormatCargo, "cargo", "test", "--no-fail-fast")
	}
	if npmHasTest(filepath.Join(dir, "package.json")) {
		add(&test, KindTest, npmTestFormat(dir), "npm", "test")
	}
	return slices.Concat(build, vet, test)
}

func npmHasTest(file string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	t := strings.TrimSpace(pkg.Scripts["test"])
	return t != "" && !strings.Contains(t, npmPlaceholderTest)
}

func isPythonProject(dir string) bool {
	for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	return len(m) > 0
}

// pythonFor is the Python of the project in dir: its virtual environment's,
// else python3 (or python) on PATH.
func pythonFor(dir string) string {
	for _, venv := range []string{".venv", "venv"} {
		p := filepath.Join(dir, venv, "bin", "python")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	if _, err := exec.LookPath("python3"); err != nil {
		if _, err := exec.LookPath("python"); err == nil {
			return "python"
		}
	}
	return "python3"
}

var pytestConfigRE = regexp.MustCompile(`(?m)^\s*\[(tool\.pytest\.ini_options|tool:pytest|pytest)\]`)

// pytestConfigured reports a project that says it uses pytest.
func pytestConfigured(dir string) bool {
	for _, f := range []string{"pytest.ini", "conftest.py", filepath.Join("tests", "conftest.py")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	for _, f := range []string{"pyproject.toml", "setup.cfg", "tox.ini"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil && pytestConfigRE.Match(data) {
			return true
		}
	}
	reqs, _ := filepath.Glob(filepath.Join(dir, "requirements*.txt"))
	for _, f := range append(reqs, filepath.Join(dir, "pyproject.toml"), filepath.Join(dir, "setup.py")) {
		if data, err := os.ReadFile(f); err == nil && pytestReqRE.Match(data) {
			return true
		}
	}
	return false
}

var pytestReqRE = regexp.MustCompile(`(?m)(^|["'\s,\[])pytest\b`)

// hasPythonTests reports test files (test_*.py, *_test.py) at the top of
// dir or in a tests/test directory.
func hasPythonTests(dir string) bool {
	for _, sub := range []string{".", "tests", "test"} {
		for _, pat := range []string{"test_*.py", "*_test.py"} {
			if m, _ := filepath.Glob(filepath.Join(dir, sub, pat)); len(m) > 0 {
				return true
			}
		}
	}
	return false
}

// pytestInstalled reports whether python can import pytest (five seconds
// at most). It runs isolated (-I: neither the current directory nor the
// PYTHON* variables on its import path) from an empty directory of its
// own, so that a pytest.py (or anything) in the project is not what runs.
func pytestInstalled(python string) bool {
	// A project's own virtualenv is the project's (an agent's, after a
	// call): jlgcli never runs its python outside the sandbox, it looks
	// for pytest's package in it instead.
	if venv := filepath.Dir(filepath.Dir(python)); filepath.IsAbs(python) && filepath.Base(filepath.Dir(python)) == "bin" &&
		(filepath.Base(venv) == ".venv" || filepath.Base(venv) == "venv") {
		found, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "pytest", "__init__.py"))
		return len(found) > 0
	}
	tmp, err := os.MkdirTemp("", "jlgcli-pytest-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(python, "-I", "-c", "import pytest")
	cmd.Dir = tmp
	if err := cmd.Start(); err != nil {
		return false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err == nil
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return false
	}
}

// IsTestFile reports whether a path (slash- or OS-separated, relative to
// the repository) is a test file by the conventions of Go (*_test.go),
// Python (test_*.py, *_test.py, conftest.py), JavaScript and TypeScript
// (*.test.js, *.spec.ts, files under __tests__), Rust (tests/*.rs), Java and
// Kotlin (*Test.java, *Tests.kt under src/test), Ruby (*_spec.rb,
// *_test.rb), or a file of a testdata directory. The caller gives the
// deleted paths that pass it to Test as DeletedTestFiles.
func IsTestFile(p string) bool {
	p = filepath.ToSlash(p)
	base := path.Base(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	dirs := strings.Split(path.Dir(p), "/")
	if slices.Contains(dirs, "testdata") {
		return true
	}
	switch ext {
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || base == "conftest.py"
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || slices.Contains(dirs, "__tests__")
	case ".rs":
		return slices.Contains(dirs, "tests")
	case ".java", ".kt", ".scala", ".cs":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "Spec")
	case ".rb":
		return strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test")
	}
	return false
}

// isNodeTestFlag: the flag that makes node run tests.
func isNodeTestFlag(a string) bool { return a == "--test" }

// npmFamily are the package managers whose "test" runs package.json's test
// script.
var npmFamily = map[string]bool{"npm": true, "yarn": true, "pnpm": true, "bun": true}

// npmTest reports whether words run package.json's test script: npm test,
// npm t, npm run test, yarn test, pnpm test, ...
func npmTest(w []string) bool {
	for i, x := range w {
		if !npmFamily[program(x)] || i+1 >= len(w) {
			continue
		}
		switch w[i+1] {
		case "test", "t":
			return true
		case "run", "run-script":
			return i+2 < len(w) && w[i+2] == "test"
		}
	}
	return false
}

// npmTestFormat is the parser of what package.json's test script in dir
// runs: FormatNode for node --test, FormatJest, FormatVitest; else
// FormatText.
func npmTestFormat(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return FormatText
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return FormatText
	}
	w, _ := shellWords(pkg.Scripts["test"])
	switch f := formatOfWords(w); f {
	case FormatNode, FormatJest, FormatVitest:
		return f
	}
	return FormatText
}

// Counted is c as the gate runs it so that its tests can be counted and
// named, and the parser of its output. A check whose command jlgcli reads
// (one simple command, its format not set otherwise, no JUnit report) is
// rewritten where that changes nothing but its output: go test gets -json
// (unless it has -json already, or builds a binary: -c, -o, -list, -fuzz),
// pytest gets -rA (every test's outcome named in its summary). npm test
// (yarn, pnpm) is read with the parser of what package.json's test script
// runs in dir (node --test, jest, vitest). Any other check is run as it
// is; its tests are counted when its output says how many ran.
func Counted(c Check, dir string) (Check, string) {
	format := InferFormat(c)
	w, ok := c.words()
	if !ok || c.JUnit != "" {
		return c, format
	}
	inferred := formatOfWords(w)
	if c.Format != "" && c.Format != inferred && !(c.Format == FormatText && npmTest(w)) {
		return c, format
	}
	if npmTest(w) && (c.Format == "" || c.Format == FormatText) {
		return c, npmTestFormat(dir)
	}
	var out []string
	switch inferred {
	case FormatGo:
		out = goTestJSON(w)
		if out != nil {
			format = FormatGoTest
		}
	case FormatPytest:
		out = pytestAll(w)
	}
	if out == nil {
		return c, format
	}
	r := c
	if c.Shell != "" {
		q := make([]string, len(out))
		for i, a := range out {
			q[i] = shellQuote(a)
		}
		r.Shell = strings.Join(q, " ")
	} else {
		r.Argv = out
	}
	if r.Format != "" {
		r.Format = format
	}
	return r, format
}

// goTestJSON is the words of a go test with -json added after "test"; nil
// when they are not a go test, have it already, or build a binary.
func goTestJSON(w []string) []string {
	if len(w) < 2 || program(w[0]) != "go" || w[1] != "test" {
		return nil
	}
	for _, a := range w[2:] {
		if a == "-args" || a == "--args" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "json" || name == "c" || name == "o" || name == "list" || name == "fuzz") {
			return nil
		}
	}
	return slices.Concat(w[:2], []string{"-json"}, w[2:])
}

// pytestAll is the words of a pytest with -rA added at the end; nil when
// they are not a pytest or have it.
func pytestAll(w []string) []string {
	k := -1
	for i, x := range w {
		p := program(x)
		if p == "pytest" || p == "py.test" || (p == "python" && i+2 < len(w) && w[i+1] == "-m" && (w[i+2] == "pytest" || w[i+2] == "py.test")) {
			k = i
			break
		}
	}
	if k < 0 || slices.Contains(w, "-rA") {
		return nil
	}
	return append(slices.Clone(w), "-rA")
}
