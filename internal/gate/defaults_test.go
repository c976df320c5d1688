package gate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func argvs(checks []Check) [][]string {
	var out [][]string
	for _, c := range checks {
		out = append(out, c.Argv)
	}
	return out
}

func TestDetectDefaultsGo(t *testing.T) {
	dir := project(t, map[string]string{"go.mod": goMod})
	checks := DetectDefaults(dir)
	want := [][]string{{"go", "build", "-o", os.DevNull, "./..."}, {"go", "vet", "./..."}, {"go", "test", "-json", "./..."}}
	if diff := cmp.Diff(want, argvs(checks)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for i, k := range []string{KindBuild, KindVet, KindTest} {
		if checks[i].Kind != k || checks[i].Name != checks[i].Command() || checks[i].Validate() != nil {
			t.Errorf("check %d: %+v", i, checks[i])
		}
	}
	if checks[2].Format != FormatGoTest || InferFormat(checks[2]) != FormatGoTest {
		t.Errorf("format %q", checks[2].Format)
	}
	if got := DetectDefaults(t.TempDir()); got != nil {
		t.Errorf("empty directory: %+v", got)
	}
}

func TestDetectDefaultsNode(t *testing.T) {
	placeholder := `{"name":"x","scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`
	if got := DetectDefaults(project(t, map[string]string{"package.json": placeholder})); got != nil {
		t.Errorf("npm's placeholder: %+v", got)
	}
	if got := DetectDefaults(project(t, map[string]string{"package.json": `{"scripts":{"build":"tsc"}}`})); got != nil {
		t.Errorf("no test script: %+v", got)
	}
	got := DetectDefaults(project(t, map[string]string{"package.json": `{"scripts":{"test":"jest"}}`}))
	if diff := cmp.Diff([][]string{{"npm", "test"}}, argvs(got)); diff != "" || got[0].Kind != KindTest {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDetectDefaultsPython(t *testing.T) {
	// Configured: pytest runs whether or not it is installed (a project that
	// says it uses pytest wants to hear that it is missing).
	dir := project(t, map[string]string{
		"pyproject.toml":     "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
		"tests/test_calc.py": "def test_x():\n    pass\n",
	})
	checks := DetectDefaults(dir)
	if len(checks) != 2 || checks[0].Kind != KindBuild || checks[1].Kind != KindTest {
		t.Fatalf("%+v", checks)
	}
	py := checks[0].Argv[0]
	if diff := cmp.Diff([]string{py, "-m", "compileall", "-q", "-x", pythonSkipDirs, "."}, checks[0].Argv); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{py, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"}, checks[1].Argv); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if InferFormat(checks[1]) != FormatPytest || InferFormat(checks[0]) != FormatPython {
		t.Error("formats")
	}
	for _, files := range []map[string]string{
		{"requirements.txt": "requests\npytest==8.0\n"},
		{"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"},
		{"main.py": "", "conftest.py": ""},
		{"tox.ini": "[pytest]\n", "setup.py": ""},
	} {
		if c := DetectDefaults(project(t, files)); len(c) != 2 {
			t.Errorf("%v: %d checks, want compileall and pytest", files, len(c))
		}
	}

	// Not configured, no test file: compileall only.
	if c := DetectDefaults(project(t, map[string]string{"main.py": "print(1)\n"})); len(c) != 1 {
		t.Errorf("%+v", c)
	}
	// Not configured, test files: pytest when it is installed.
	dir = project(t, map[string]string{"main.py": "", "test_main.py": ""})
	want := 1
	if pytestInstalled(pythonFor(dir)) {
		want = 2
	}
	if c := DetectDefaults(dir); len(c) != want {
		t.Errorf("%d checks, want %d", len(c), want)
	}

	// A virtual environment's Python.
	dir = project(t, map[string]string{"setup.py": "", ".venv/bin/python": "#!/bin/sh\n"})
	c := DetectDefaults(dir)
	if abs, _ := filepath.Abs(filepath.Join(dir, ".venv", "bin", "python")); len(c) == 0 || c[0].Argv[0] != abs {
		t.Errorf("%+v, want %s", c, abs)
	}
}

func TestDetectDefaultsRustAndMixed(t *testing.T) {
	got := DetectDefaults(project(t, map[string]string{"Cargo.toml": rustCrate["Cargo.toml"]}))
	if diff := cmp.Diff([][]string{{"cargo", "build"}, {"cargo", "test", "--no-fail-fast"}}, argvs(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Fast first across languages: the builds, then vet, then the tests.
	got = DetectDefaults(project(t, map[string]string{"go.mod": goMod, "Cargo.toml": "", "package.json": `{"scripts":{"test":"vitest"}}`}))
	var kinds []string
	for _, c := range got {
		kinds = append(kinds, c.Kind)
	}
	if diff := cmp.Diff([]string{KindBuild, KindBuild, KindVet, KindTest, KindTest, KindTest}, kinds); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestInferKindAndFormat(t *testing.T) {
	cases := []struct {
		check        Check
		kind, format string
	}{
		{Check{Shell: "go test ./..."}, KindTest, FormatGo},
		{Check{Shell: "go test -race -json ./..."}, KindTest, FormatGoTest},
		{Check{Argv: []string{"go", "vet", "./..."}}, KindVet, FormatGo},
		{Check{Argv: []string{"go", "build", "./..."}}, KindBuild, FormatGo},
		{Check{Shell: "python3 -m pytest -x tests"}, KindTest, FormatPytest},
		{Check{Shell: ".venv/bin/pytest"}, KindTest, FormatPytest},
		{Check{Shell: "python -m compileall ."}, KindBuild, FormatPython},
		{Check{Shell: "cargo test --all"}, KindTest, FormatCargo},
		{Check{Shell: "cargo clippy"}, KindVet, FormatCargo},
		{Check{Shell: "npm test"}, KindTest, FormatText},
		{Check{Shell: "npm run lint"}, KindVet, FormatText},
		{Check{Shell: "npx tsc --noEmit"}, KindBuild, FormatText},
		{Check{Shell: "golangci-lint run"}, KindVet, FormatText},
		{Check{Shell: "make check"}, KindBuild, FormatText},
		{Check{Shell: "./scripts/verify.sh"}, "", FormatText},
		{Check{Shell: "make test", Kind: KindVet, Format: FormatGoTest}, KindVet, FormatGoTest},
	}
	for _, c := range cases {
		if k, f := InferKind(c.check), InferFormat(c.check); k != c.kind || f != c.format {
			t.Errorf("%q: kind %q, format %q; want %q, %q", c.check.Command(), k, f, c.kind, c.format)
		}
	}
}

func TestSortFastFirst(t *testing.T) {
	in := []Check{
		{Name: "tests", Shell: "go test ./..."},
		{Name: "script", Shell: "./verify.sh"},
		{Name: "lint", Shell: "golangci-lint run"},
		{Name: "build", Shell: "go build ./..."},
		{Name: "e2e", Shell: "make e2e", Kind: KindTest},
	}
	var got []string
	for _, c := range SortFastFirst(in) {
		got = append(got, c.Name)
	}
	if diff := cmp.Diff([]string{"build", "lint", "tests", "script", "e2e"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if in[0].Name != "tests" {
		t.Error("SortFastFirst changed its argument")
	}
}

func TestCheckHintsValidate(t *testing.T) {
	var fe *FieldError
	if err := (Check{Shell: "true", Kind: "unit"}).Validate(); !errors.As(err, &fe) || fe.Field != "kind" {
		t.Errorf("%v", err)
	}
	if err := (Check{Shell: "true", Format: "tap"}).Validate(); !errors.As(err, &fe) || fe.Field != "format" {
		t.Errorf("%v", err)
	}
	if err := (Check{Shell: "true", Kind: KindTest, Format: FormatPytest, JUnit: "out.xml"}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestIsTestFile(t *testing.T) {
	yes := []string{"calc/calc_test.go", "tests/test_auth.py", "pkg/auth_test.py", "conftest.py", "src/sum.test.js", "src/a.spec.ts",
		"src/__tests__/a.js", "tests/integ.rs", "src/test/java/com/x/CalcTest.java", "spec/user_spec.rb", "internal/gate/testdata/go/build.txt"}
	no := []string{"calc/calc.go", "testing.go", "pkg/auth.py", "src/sum.js", "src/lib.rs", "src/main/java/com/x/Calc.java", "README.md", "contest.py"}
	for _, p := range yes {
		if !IsTestFile(p) {
			t.Errorf("IsTestFile(%q) = false", p)
		}
	}
	for _, p := range no {
		if IsTestFile(p) {
			t.Errorf("IsTestFile(%q) = true", p)
		}
	}
}

func TestShellWords(t *testing.T) {
	cases := []struct {
		line string
		want []string
		ok   bool
	}{
		{"go test -json ./...", []string{"go", "test", "-json", "./..."}, true},
		{`pytest -k "not slow" 'tests/a b.py'`, []string{"pytest", "-k", "not slow", "tests/a b.py"}, true},
		{"go test ./... | tee out", nil, false},
		{"CGO_ENABLED=0 go test ./...", nil, false},
		{`echo "unterminated`, nil, false},
	}
	for _, c := range cases {
		got, ok := shellWords(c.line)
		if ok != c.ok || (c.ok && !cmp.Equal(got, c.want)) {
			t.Errorf("shellWords(%q) = %q, %v", c.line, got, ok)
		}
	}
}

func TestRerunArgv(t *testing.T) {
	fails := []failure{
		{goPkg: "example.com/p/a", goTop: "TestA", id: "example.com/p/a.TestA"},
		{goPkg: "example.com/p/a", goTop: "TestTable", id: "example.com/p/a.TestTable/x.y"},
		{goPkg: "example.com/p/b", goTop: "TestA", id: "example.com/p/b.TestA"},
	}
	c := Check{Name: "t", Argv: []string{"go", "test", "-race", "-json", "-count=3", "-run", "Foo", "-timeout", "5m", "-coverprofile=c.out", "-tags=integration", "./...", "-args", "-update"}}
	got, ok := rerunCheck(c, FormatGoTest, fails)
	want := []string{"go", "test", "-race", "-timeout", "5m", "-tags=integration", "-json", "-count=1", "-run", "^(TestA|TestTable)$", "example.com/p/a", "example.com/p/b", "-args", "-update"}
	if !ok || !cmp.Equal(got.Argv, want) {
		t.Errorf("go rerun %q, %v\nwant %q", got.Argv, ok, want)
	}
	if _, ok := rerunCheck(Check{Shell: "go test -json ./... 2>&1 | tee log"}, FormatGoTest, fails); ok {
		t.Error("a pipeline was re-run by test")
	}

	pyFails := []failure{{id: "tests/test_a.py::test_x"}, {id: "tests/test_a.py::TestC::test_y[1-2]"}}
	c = Check{Shell: "python3 -m pytest -q -x -k 'not slow' tests/ -p no:cacheprovider --maxfail=3 --junitxml=out.xml"}
	got, ok = rerunCheck(c, FormatPytest, pyFails)
	want = []string{"python3", "-m", "pytest", "tests/test_a.py::test_x", "tests/test_a.py::TestC::test_y[1-2]", "-q", "-p", "no:cacheprovider"}
	if !ok || !cmp.Equal(got.Argv, want) {
		t.Errorf("pytest rerun %q, %v\nwant %q", got.Argv, ok, want)
	}
	if _, ok := rerunCheck(Check{Argv: []string{"cargo", "test"}}, FormatCargo, []failure{{id: "tests::adds"}}); ok {
		t.Error("cargo is re-run whole")
	}
}

// TestVenvPythonNotRun: a project's own .venv/bin/python (which an agent
// may have written) is never run outside the sandbox to learn whether
// pytest is there: its site-packages are looked at instead.
func TestVenvPythonNotRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	os.MkdirAll(filepath.Join(dir, ".venv", "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, ".venv", "bin", "python"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "test_x.py"), []byte("def test_x():\n    assert True\n"), 0o644)
	DetectDefaults(dir)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the project's .venv/bin/python ran")
	}
	os.MkdirAll(filepath.Join(dir, ".venv", "lib", "python3.11", "site-packages", "pytest"), 0o755)
	os.WriteFile(filepath.Join(dir, ".venv", "lib", "python3.11", "site-packages", "pytest", "__init__.py"), nil, 0o644)
	if !pytestInstalled(pythonFor(dir)) {
		t.Error("pytest in the virtualenv's site-packages was not found")
	}
}
