package gate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordTestdata records, with GATE_RECORD=1, the real output of go,
// pytest, python and cargo on the fixtures into testdata/, which the parser
// tests read. The temporary directory of each run is replaced by
// recordDir. The parts whose tool is missing are left as they are.
// GATE_RECORD=WORD, another value than 1, records only the files whose
// name holds WORD.
//
//	GATE_RECORD=1 go test -run TestRecordTestdata ./internal/gate/
func TestRecordTestdata(t *testing.T) {
	if os.Getenv("GATE_RECORD") == "" {
		t.Skip("set GATE_RECORD=1 to record testdata")
	}
	goEnv := []string{"GOPROXY=off", "GOFLAGS=", "GOWORK=off"}
	t.Run("go", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("no go")
		}
		record(t, "gotest/failing.jsonl", goFailing, goEnv, "go", "test", "-json", "./...")
		record(t, "gotest/passing.jsonl", goPassing, goEnv, "go", "test", "-json", "./...")
		record(t, "gotest/broken.jsonl", goBroken, goEnv, "go", "test", "-json", "./...")
		record(t, "gotest/broken-text.jsonl", goBroken, append(goEnv, "GODEBUG=gotestjsonbuildtext=1"), "go", "test", "-json", "./...")
		record(t, "gotest/vet.jsonl", goVet, goEnv, "go", "test", "-json", "./...")
		record(t, "gotest/hang.jsonl", goHang, goEnv, "go", "test", "-json", "-timeout", "2s", "./...")
		record(t, "go/build.txt", goBroken, goEnv, "go", "build", "-o", os.DevNull, "./...")
		record(t, "go/vet.txt", goVet, goEnv, "go", "vet", "./...")
		record(t, "go/test-failing.txt", goFailing, goEnv, "go", "test", "./...")
		record(t, "go/test-failing-v.txt", goFailing, goEnv, "go", "test", "-v", "./...")
		record(t, "gotest/rows.jsonl", goRows, goEnv, "go", "test", "-json", "./...")
		record(t, "go/test-rows.txt", goRows, goEnv, "go", "test", "./...")
	})
	t.Run("python", func(t *testing.T) {
		py := ""
		for _, p := range []string{"python3", "/usr/bin/python3"} {
			if exec.Command(p, "-c", "import pytest").Run() == nil {
				py = p
				break
			}
		}
		if py == "" {
			t.Skip("no pytest")
		}
		record(t, "pytest/failures.txt", pyProject, nil, py, "-m", "pytest", "-p", "no:cacheprovider")
		record(t, "pytest/failures-q.txt", pyProject, nil, py, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider")
		record(t, "pytest/collection.txt", merge(pyProject, pyBroken), nil, py, "-m", "pytest", "-p", "no:cacheprovider")
		record(t, "pytest/pass-q.txt", map[string]string{"tests/test_fine.py": pyBroken["tests/test_fine.py"]}, nil,
			py, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider")
		recordFile(t, "junit/pytest-xunit1.xml", pyProject, "out.xml", py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1", "--junitxml=out.xml")
		recordFile(t, "junit/pytest-xunit2.xml", pyProject, "out.xml", py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=out.xml")
		record(t, "python/compileall.txt", pyBroken, nil, py, "-m", "compileall", "-q", "-x", pythonSkipDirs, ".")
	})
	t.Run("node", func(t *testing.T) {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("no npm")
		}
		// npm test (the default gate) runs node --test, whose reporter is
		// TAP on a pipe before node 23; spec is node 23's and a terminal's.
		record(t, "node/failing-tap.txt", nodeProject, []string{"NO_COLOR=1"}, "npm", "test")
		record(t, "node/failing-spec.txt", nodeProject, []string{"NO_COLOR=1"}, "node", "--test", "--test-reporter=spec", "--test-concurrency=1")
	})
	t.Run("js", func(t *testing.T) {
		// jest and vitest from a node_modules of their own, installed
		// outside the repository: GATE_JS_MODULES=DIR/node_modules, after
		// npm install --prefix DIR jest vitest.
		modules := os.Getenv("GATE_JS_MODULES")
		if modules == "" {
			t.Skip("set GATE_JS_MODULES to a node_modules that holds jest and vitest")
		}
		recordJS(t, "jest/failing.txt", jestProject, modules, "npm", "test")
		recordJS(t, "vitest/failing.txt", vitestProject, modules, "npm", "test")
	})
	t.Run("cargo", func(t *testing.T) {
		if _, err := exec.LookPath("cargo"); err != nil {
			t.Skip("no cargo")
		}
		env := []string{"RUST_BACKTRACE=0", "CARGO_TERM_COLOR=never"}
		record(t, "cargo/test.txt", rustCrate, env, "cargo", "test", "--no-fail-fast")
		record(t, "cargo/build-errors.txt", rustBroken, env, "cargo", "build")
		record(t, "cargo/syntax.txt", rustSyntax, env, "cargo", "build")
	})
}

func merge(trees ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range trees {
		for k, v := range t {
			out[k] = v
		}
	}
	return out
}

// record runs argv on a fresh copy of files and writes its combined output
// to testdata/name.
func record(t *testing.T, name string, files map[string]string, env []string, argv ...string) {
	t.Helper()
	if !recordWanted(name) {
		return
	}
	dir := project(t, files)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // failing is what most fixtures are for
	save(t, name, dir, out.Bytes())
}

// recordJS runs argv as record does, in a project whose node_modules is a
// link to modules; the paths into modules are written as the project's
// own node_modules.
func recordJS(t *testing.T, name string, files map[string]string, modules string, argv ...string) {
	t.Helper()
	if !recordWanted(name) {
		return
	}
	dir := project(t, files)
	real, err := filepath.EvalSymlinks(modules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	s := out.String()
	if rel, err := filepath.Rel(dir, real); err == nil {
		s = strings.ReplaceAll(s, rel+"/", "node_modules/")
	}
	s = strings.ReplaceAll(s, real, filepath.Join(dir, "node_modules"))
	save(t, name, dir, []byte(s))
}

// recordFile runs argv and writes the file it wrote to testdata/name.
func recordFile(t *testing.T, name string, files map[string]string, file string, argv ...string) {
	t.Helper()
	if !recordWanted(name) {
		return
	}
	dir := project(t, files)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	_ = cmd.Run()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	save(t, name, dir, data)
}

// recordWanted: GATE_RECORD asks for testdata/name (1: every file).
func recordWanted(name string) bool {
	v := os.Getenv("GATE_RECORD")
	return v == "1" || strings.Contains(name, v)
}

func save(t *testing.T, name, dir string, data []byte) {
	t.Helper()
	s := string(data)
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		s = strings.ReplaceAll(s, real, recordDir)
	}
	s = strings.ReplaceAll(s, dir, recordDir)
	p := filepath.Join("testdata", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d bytes)", name, len(s))
}
