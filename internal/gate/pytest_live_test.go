package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pythonWithPytest is a Python that can import pytest; the test is skipped
// without one (pytest is not a dependency of the project: the parser tests
// read its recorded output).
func pythonWithPytest(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pytest")
	}
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pytest").Run() == nil {
			return p
		}
	}
	t.Skip("no Python with pytest")
	return ""
}

// TestTestPytestLive: real pytest failures stay failures after two reruns
// of their node ids, and a flaky test passes on the first.
func TestTestPytestLive(t *testing.T) {
	t.Parallel()
	py := pythonWithPytest(t)
	dir := project(t, pyProject, pyFlaky)
	counter := t.TempDir()
	checks := []Check{
		{Name: "compileall", Argv: []string{py, "-m", "compileall", "-q", "-x", pythonSkipDirs, "."}, Kind: KindBuild},
		{Name: "pytest", Argv: []string{py, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"}, Kind: KindTest},
	}
	r := Test(context.Background(), dir, []string{"FLAKY_DIR=" + counter, "PYTHONDONTWRITEBYTECODE=1"}, checks, TestOptions{})
	if diff := cmp.Diff([]string{"test_add", "test_div_zero", "test_param[1-1]", "TestCalc.test_method", "test_uses_fixture"}, failureTests(r)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tests/test_flaky.py::test_flaky"}, r.Flaky); diff != "" {
		t.Errorf("flaky (-want +got):\n%s", diff)
	}
	if c := r.Checks[1]; c.Reruns != 2 || c.Passed {
		t.Errorf("reruns %d, passed %v", c.Reruns, c.Passed)
	}
	if runs, _ := os.ReadFile(filepath.Join(counter, "runs")); string(runs) != "xx" {
		t.Errorf("the flaky test ran %q, want twice", runs)
	}
	if want := (Counts{Run: 9, Passed: 4, Failed: 5, Skipped: 1}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}

	// Test modules that do not load: compileall stops the checks on the
	// syntax error; pytest alone reports both.
	dir = project(t, pyProject, pyBroken)
	r = Test(context.Background(), dir, []string{"PYTHONDONTWRITEBYTECODE=1"}, checks, TestOptions{})
	if diff := cmp.Diff([]string{"tests/test_syntax.py:1: SyntaxError: invalid syntax"}, r.SyntaxErrors); diff != "" || !slices.Equal(r.NotRun, []string{"pytest"}) {
		t.Errorf("syntax (-want +got):\n%s\nnot run %v", diff, r.NotRun)
	}
	r = Test(context.Background(), dir, []string{"PYTHONDONTWRITEBYTECODE=1"}, checks[1:], TestOptions{})
	if diff := cmp.Diff([]string{"tests/test_imp.py:1: ModuleNotFoundError: No module named 'ratelimit'"}, r.ImportErrors); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	if len(r.SyntaxErrors) != 1 || r.Checks[0].Reruns != 0 || r.Status != StatusFail {
		t.Errorf("%+v", r)
	}
}
