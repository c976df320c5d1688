package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// The small projects that the tests run checks on, and that
// TestRecordTestdata records the real output of (testdata/).

// recordDir replaces the temporary directory of a recorded run in
// testdata, so that the recorded absolute paths are the same at each
// recording.
const recordDir = "/work/proj"

const goMod = "module example.com/proj\n\ngo 1.22\n"

// goFailing: failing tests of several kinds, a skip, subtests, a panic.
var goFailing = map[string]string{
	"go.mod": goMod,
	"calc/calc.go": `package calc

func Add(a, b int) int { return a - b }
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 2); got != 4 {
		t.Errorf("Add(2, 2) = %d, want 4", got)
	}
}

func TestOK(t *testing.T) { t.Log("fine") }

func TestSkip(t *testing.T) { t.Skip("not on this machine") }

func TestTable(t *testing.T) {
	for _, c := range []struct{ name string; a, b, want int }{{"zero", 0, 0, 0}, {"two", 1, 1, 2}} {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Fatalf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}
`,
	"crash/crash_test.go": `package crash

import "testing"

func TestNilMap(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}

func TestAfter(t *testing.T) {}
`,
	"notests/notests.go": "package notests\n",
}

// goPassing: tests that pass, with a skip and subtests.
var goPassing = map[string]string{
	"go.mod": goMod,
	"calc/calc.go": `package calc

func Add(a, b int) int { return a + b }
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 2) != 4 {
		t.Fatal("Add")
	}
}

func TestSkip(t *testing.T) { t.Skip("not on this machine") }

func TestTable(t *testing.T) {
	for _, n := range []string{"a", "b", "c"} {
		t.Run(n, func(t *testing.T) {})
	}
}
`,
}

// goBroken: packages that do not build: compiler errors, a syntax error, a
// missing module, a vet finding that go test's vet reports.
var goBroken = map[string]string{
	"go.mod": goMod,
	"compile/compile.go": `package compile

import "os"

func F() int { return undefinedThing }
`,
	"compile/compile_test.go": "package compile\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n",
	"syntax/syntax.go":        "package syntax\n\nfunc S( int { return 1 }\n",
	"syntax/syntax_test.go":   "package syntax\n\nimport \"testing\"\n\nfunc TestS(t *testing.T) {}\n",
	"missing/missing_test.go": `package missing

import (
	"testing"

	"github.com/nothere/pkg"
)

func TestM(t *testing.T) { pkg.X() }
`,
	"ok/ok_test.go": "package ok\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
}

// goVet: code that builds, with a vet finding.
var goVet = map[string]string{
	"go.mod": goMod,
	"v/v.go": `package v

import "fmt"

func V() string { return fmt.Sprintf("%d", "x") }
`,
	"v/v_test.go": "package v\n\nimport \"testing\"\n\nfunc TestV(t *testing.T) { V() }\n",
}

// goHang: a test that never ends (go test -timeout stops it) and a TestMain
// that fails before the tests.
var goHang = map[string]string{
	"go.mod": goMod,
	"hang/hang_test.go": `package hang

import (
	"testing"
	"time"
)

func TestHang(t *testing.T) { time.Sleep(time.Hour) }
`,
	"setup/setup_test.go": `package setup

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	fmt.Println("setup failed: no database")
	os.Exit(1)
}

func TestT(t *testing.T) {}
`,
}

// goFlaky: TestFlaky fails on its first run (two messages) and passes after (a counter
// file in $FLAKY_DIR); TestSolid always passes; TestBroken, when
// $FLAKY_BROKEN is set, always fails.
var goFlaky = map[string]string{
	"go.mod": goMod,
	"flaky/flaky_test.go": `package flaky

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFlaky(t *testing.T) {
	counter := filepath.Join(os.Getenv("FLAKY_DIR"), "runs")
	data, _ := os.ReadFile(counter)
	os.WriteFile(counter, append(data, 'x'), 0o644)
	if len(data) == 0 {
		t.Error("first run fails: a race with the clock")
		t.Fatal("and says so twice")
	}
}

func TestSolid(t *testing.T) {}

func TestBroken(t *testing.T) {
	if os.Getenv("FLAKY_BROKEN") != "" {
		t.Error("always broken")
	}
}
`,
}

// goRows: table tests whose rows fail in one test (no subtests), a
// message of several lines, a log line before a failure, rows that fail as
// subtests, and a failure reported from a helper (t.Helper).
var goRows = map[string]string{
	"go.mod": goMod,
	"calc/calc.go": `package calc

func Add(a, b int) int { return a - b }
`,
	"calc/rows_test.go": `package calc

import "testing"

func TestAddRows(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{0, 0, 0}, {1, 1, 2}, {2, 3, 5}} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestLines(t *testing.T) {
	t.Log("adding 2 and 2")
	if got := Add(2, 2); got != 4 {
		t.Errorf("Add(2, 2):\n got: %d\nwant: %d", got, 4)
	}
}

func TestSubRows(t *testing.T) {
	for _, c := range []struct{ name string; a, b, want int }{{"ones", 1, 1, 2}, {"zeros", 0, 0, 0}, {"twos", 2, 2, 4}} {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Fatalf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func check(t *testing.T, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("got %d, want %d", got, want)
	}
}

func TestHelper(t *testing.T) {
	check(t, Add(3, 1), 4)
	check(t, Add(1, 3), 4)
}
`,
}

// nodeProject: node --test's tests (npm test runs them) failing in the
// ways a developer needs told apart: values not strictly equal, objects
// not deep-equal (with and without a message of the test's own), a
// TypeError in a nested suite, a rejected promise, a before hook that
// throws, and test files that do not load (a missing module, a syntax
// error).
var nodeProject = map[string]string{
	"package.json": `{"name": "sum", "private": true, "scripts": {"test": "node --test"}}
`,
	"sum.js": "module.exports = (a, b) => a - b;\n",
	"sum.test.js": `const { describe, it, test } = require('node:test');
const assert = require('node:assert');
const sum = require('./sum');

test('adds', () => {
  assert.strictEqual(sum(2, 3), 5);
});

test('zero', () => {
  assert.strictEqual(sum(0, 0), 0);
});

test('totals', () => {
  assert.deepStrictEqual({ total: sum(1, 1) }, { total: 2 });
});

test('totals with a message', () => {
  assert.deepStrictEqual({ total: sum(1, 1), items: [1, 1] }, { total: 2, items: [1, 1] }, 'the cart total');
});

describe('math', () => {
  describe('nested', () => {
    it('reads a property', () => {
      const o = undefined;
      return o.x;
    });
  });
});

test('async', async () => {
  await new Promise((resolve) => setTimeout(resolve, 1));
  throw new Error('rejected later');
});
`,
	"hook.test.js": `const { before, test } = require('node:test');

before(() => {
  throw new Error('the database is down');
});

test('needs the database', () => {});
`,
	"broken.test.js": `const missing = require('./missing');
`,
	"syntax.test.js": `const test = require('node:test');

test('never runs', () => {
  const x = ;
});
`,
}

// jsTests are the tests of jestProject and vitestProject: a value not
// equal, objects not equal, a TypeError, a failure with a message of the
// test's own after a console.log, a skip, and a test file that does not
// load.
func jsTests(imports, missing string) map[string]string {
	return map[string]string{
		"sum.test.js": imports + `
describe('sum', () => {
  test('adds', () => {
    expect(sum(2, 3)).toBe(5);
  });

  test('zero', () => {
    expect(sum(0, 0)).toBe(0);
  });

  test('objects', () => {
    expect({ total: sum(1, 1) }).toEqual({ total: 2 });
  });
});

test('throws', () => {
  const o = undefined;
  expect(o.x).toBe(1);
});
`,
		"more.test.js": imports + `
test('logs and fails', () => {
  console.log('debugging', sum(1, 2));
  expect(sum(1, 2) > 2, 'sum of 1 and 2').toBe(true);
});

test('passes', () => {
  expect(sum(2, 2)).toBeDefined();
});

test.skip('skipped', () => {});
`,
		"broken.test.js": imports + missing + `
test('never runs', () => {});
`,
	}
}

// jestProject: jest's tests (CommonJS), run by npm test.
var jestProject = merge(jsTests("const { sum } = require('./sum');\n", "const { missing } = require('./missing');\n"), map[string]string{
	"package.json": `{"name": "sum", "private": true, "scripts": {"test": "jest"}}
`,
	"sum.js": "exports.sum = (a, b) => a - b;\n",
})

// vitestProject: vitest's, run by npm test.
var vitestProject = merge(jsTests("import { describe, test, expect } from 'vitest';\nimport { sum } from './sum.js';\n", "import { missing } from './missing.js';\n"), map[string]string{
	"package.json": `{"name": "sum", "private": true, "type": "module", "scripts": {"test": "vitest run"}}
`,
	"sum.js": "export const sum = (a, b) => a - b;\n",
})

// pyProject: a package, its tests (failures of several kinds, a skip, a
// parametrized test, a class, a fixture that raises), and a conftest.
var pyProject = map[string]string{
	"pkg/__init__.py": "",
	"pkg/calc.py": `def add(a, b):
    return a - b


def div(a, b):
    return a / b
`,
	"tests/test_calc.py": `import pytest

from pkg.calc import add, div


def test_add():
    assert add(2, 2) == 4


def test_div():
    assert div(4, 2) == 2


def test_div_zero():
    div(1, 0)


@pytest.mark.skip(reason="not on this machine")
def test_skipped():
    pass


@pytest.mark.parametrize("a,b", [(1, 1), (2, 0)])
def test_param(a, b):
    assert add(a, b) == a + b


class TestCalc:
    def test_method(self):
        assert add(1, 1) == 2

    def test_ok(self):
        assert True


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_uses_fixture(broken):
    pass
`,
}

// pyBroken: test modules that cannot be collected.
var pyBroken = map[string]string{
	"tests/test_imp.py":    "import ratelimit\n\n\ndef test_x():\n    pass\n",
	"tests/test_syntax.py": "def test_y(:\n    pass\n",
	"tests/test_fine.py":   "def test_fine():\n    pass\n",
}

// rustCrate: a library with a failing test, a panicking one, an ignored
// one, and an integration test.
var rustCrate = map[string]string{
	"Cargo.toml": "[package]\nname = \"proj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
	"src/lib.rs": `pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn ok() {}

    #[test]
    #[ignore]
    fn slow() {}

    #[test]
    fn unwraps() {
        let v: Option<i32> = None;
        v.unwrap();
    }
}
`,
	"tests/integ.rs": "#[test]\nfn integ_ok() {\n    assert_eq!(proj::add(1, 0), 1);\n}\n",
}

// rustBroken: rustc errors: an unresolved import, an undefined name.
var rustBroken = map[string]string{
	"Cargo.toml": rustCrate["Cargo.toml"],
	"src/lib.rs": "use std::collections::Nope;\n\npub fn add(a: i32, b: i32) -> i32 {\n    a - c\n}\n",
}

// rustSyntax: a parse error.
var rustSyntax = map[string]string{
	"Cargo.toml": rustCrate["Cargo.toml"],
	"src/lib.rs": "pub fn f( -> i32 { 1 }\n",
}

// writeTree writes files into dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// project makes a directory with the files of each map.
func project(t testing.TB, trees ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, files := range trees {
		writeTree(t, dir, files)
	}
	return dir
}

// pyFlaky: a test that fails on its first run and passes after (a counter
// file in $FLAKY_DIR).
var pyFlaky = map[string]string{
	"tests/test_flaky.py": `import os
import pathlib


def test_flaky():
    counter = pathlib.Path(os.environ["FLAKY_DIR"]) / "runs"
    runs = counter.read_text() if counter.exists() else ""
    counter.write_text(runs + "x")
    assert runs, "first run fails"
`,
}
