package gate

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goSameFailure: a module whose one test fails the same way at each run,
// printing what changes from run to run (its temporary directory, a port,
// a duration), beside a package that passes (and is "(cached)" when run
// again) and a slow passing test (its elapsed time varies).
var goSameFailure = map[string]string{
	"go.mod": goMod,
	"calc/calc.go": `package calc

func Add(a, b int) int { return a - b }
`,
	"calc/calc_test.go": `package calc

import (
	"net"
	"testing"
	"time"
)

func TestAdd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	got := Add(2, 2)
	t.Logf("server on %s, scratch in %s, took %s", ln.Addr(), t.TempDir(), time.Since(start))
	if got != 4 {
		t.Errorf("Add(2, 2) = %d, want 4", got)
	}
}

func TestSlow(t *testing.T) { time.Sleep(time.Duration(time.Now().UnixNano()%20) * time.Millisecond) }
`,
	"ok/ok.go":      "package ok\n\nfunc One() int { return 1 }\n",
	"ok/ok_test.go": "package ok\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
}

// TestFingerprintRealGoTestRuns: the default gate of a Go module (go test
// -json) gives one fingerprint for one failure, run after run: with
// -count=1, then with the passing package's result cached, through Test
// (task) and Run (loop); another message gives another.
func TestFingerprintRealGoTestRuns(t *testing.T) {
	t.Parallel()
	needGo(t)
	dir := project(t, goSameFailure)
	var checks []Check
	for _, c := range DetectDefaults(dir) {
		if c.Format == FormatGoTest {
			checks = append(checks, c)
		}
	}
	if len(checks) != 1 {
		t.Fatalf("default checks %+v: want one go test -json", DetectDefaults(dir))
	}
	env := goEnv
	fingerprint := func(flags string) (string, string) {
		t.Helper()
		e := append(env, "GOFLAGS="+flags)
		r := Test(context.Background(), dir, e, checks, TestOptions{MaxReruns: -1})
		if r.Status != StatusFail || len(r.Checks) != 1 {
			t.Fatalf("report %+v: want one failed check", r)
		}
		res := Run(context.Background(), dir, e, checks)
		if res.Passed || len(res.Checks) != 1 {
			t.Fatalf("run %+v: want one failed check", res)
		}
		return r.Checks[0].Fingerprint, res.Checks[0].Fingerprint
	}
	first, firstRun := fingerprint("-count=1")
	fingerprint("") // fills the cache, when it is not yet
	cached, cachedRun := fingerprint("")
	if first == "" || first != cached {
		t.Errorf("Test: fingerprint with -count=1 %q, cached %q: want one", first, cached)
	}
	if firstRun == "" || firstRun != cachedRun {
		t.Errorf("Run: fingerprint with -count=1 %q, cached %q: want one", firstRun, cachedRun)
	}
	if first != firstRun {
		t.Errorf("Test's fingerprint %q, Run's %q: want one", first, firstRun)
	}

	// Another wrong result is another failure.
	if err := os.WriteFile(filepath.Join(dir, "calc", "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a * b * b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if other, _ := fingerprint("-count=1"); other == first {
		t.Errorf("Add(2, 2) = 8 has the fingerprint of Add(2, 2) = 0: %s", other)
	}
}

// TestFingerprintDefaultGates: for each default gate (go test -json,
// pytest, cargo test, npm test with jest or node --test), two outputs of
// one failure that differ in timings, temporary paths, ports, addresses
// and order have one fingerprint through Test; another failing test or
// message has another.
func TestFingerprintDefaultGates(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	goA := read("gotest/failing.jsonl") +
		`{"Time":"2026-11-22T05:16:33.1Z","Action":"run","Package":"example.com/proj/net","Test":"TestDial"}` + "\n" +
		`{"Time":"2026-11-22T05:16:33.2Z","Action":"output","Package":"example.com/proj/net","Test":"TestDial","Output":"    net_test.go:9: dial tcp 127.0.0.1:41234: connect: connection refused (scratch /tmp/TestDial2716391538/001)\n"}` + "\n" +
		`{"Time":"2026-11-22T05:16:33.3Z","Action":"output","Package":"example.com/proj/net","Test":"TestDial","Output":"--- FAIL: TestDial (0.01s)\n"}` + "\n" +
		`{"Time":"2026-11-22T05:16:33.3Z","Action":"fail","Package":"example.com/proj/net","Test":"TestDial","Elapsed":0.01}` + "\n" +
		`{"Time":"2026-11-22T05:16:33.4Z","Action":"output","Package":"example.com/proj/ok","Output":"ok  \texample.com/proj/ok\t0.004s\n"}` + "\n" +
		`{"Time":"2026-11-22T05:16:33.4Z","Action":"pass","Package":"example.com/proj/ok","Elapsed":0.004}` + "\n"
	goB := goVariant(goA)
	goMsg := strings.Replace(goA, "Add(2, 2) = 0, want 4", "Add(2, 2) = 1, want 4", 1)
	goTest := strings.ReplaceAll(goA, `"TestDial"`, `"TestDialTLS"`)

	pyA := read("pytest/failures-q.txt")
	pyB := strings.NewReplacer("in 0.02s", "in 1.37s", "0x7ff92825de10", "0x7f0011223344").Replace(pyA)
	pyB = swapLines(pyB, "FAILED tests/test_calc.py::test_add - assert 0 == 4", "FAILED tests/test_calc.py::test_div_zero - ZeroDivisionError: division by zero")
	pyMsg := strings.ReplaceAll(pyA, "assert 0 == 4", "assert 1 == 4")
	pyTest := strings.ReplaceAll(pyA, "test_div_zero", "test_div_by_zero")

	cargoA := read("cargo/test.txt")
	cargoB := strings.NewReplacer("   Compiling proj v0.1.0 (/work/proj)\n", "", "in 0.61s", "in 0.02s",
		"finished in 0.00s", "finished in 0.37s", "proj-2f5cb745fb5fedf3", "proj-9a8b7c6d5e4f3a2b", "(7896)", "(123)", "(7898)", "(124)").Replace(cargoA)
	cargoB = swapLines(cargoB, "test tests::adds ... FAILED", "test tests::ok ... ok")
	cargoMsg := strings.Replace(cargoA, "  left: 0", "  left: 1", 1)
	cargoTest := strings.ReplaceAll(cargoA, "tests::unwraps", "tests::unwraps_none")

	nodeA := nodeTestOutput("3.399054", "92.008709", "1059.530991", "2 !== 3")
	nodeB := nodeTestOutput("37.092293", "69.553913", "1133.25921", "2 !== 3")
	nodeMsg := nodeTestOutput("3.399054", "92.008709", "1059.530991", "4 !== 3")
	nodeTest := strings.Replace(nodeA, "not ok 1 - adds", "not ok 1 - subtracts", 1)

	for _, tc := range []struct {
		gate, format        string
		a, same, msg, other string
	}{
		{"go test -json", FormatGoTest, goA, goB, goMsg, goTest},
		{"pytest", FormatPytest, pyA, pyB, pyMsg, pyTest},
		{"cargo test", FormatCargo, cargoA, cargoB, cargoMsg, cargoTest},
		{"npm test (jest)", FormatText, npmJestA, npmJestB, strings.Replace(npmJestA, "Received: Infinity", "Received: NaN", 1),
			strings.ReplaceAll(npmJestA, "divide › by zero", "divide › by one")},
		{"npm test (node --test)", FormatText, nodeA, nodeB, nodeMsg, nodeTest},
	} {
		t.Run(tc.gate, func(t *testing.T) {
			t.Parallel()
			fa := gateFingerprint(t, tc.format, tc.a)
			if fb := gateFingerprint(t, tc.format, tc.same); fb != fa {
				t.Errorf("one failure, two fingerprints: %s, %s\n--- normalized A:\n%s--- normalized B:\n%s", fa, fb, Normalize(tc.a), Normalize(tc.same))
			}
			if fm := gateFingerprint(t, tc.format, tc.msg); fm == fa {
				t.Errorf("another message, the same fingerprint %s", fa)
			}
			if ft := gateFingerprint(t, tc.format, tc.other); ft == fa {
				t.Errorf("another failing test, the same fingerprint %s", fa)
			}
		})
	}
}

// gateFingerprint is the fingerprint that Test gives a test check of format
// that prints output and fails.
func gateFingerprint(t *testing.T, format, output string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Check{Name: "gate", Shell: "cat out.txt; exit 1", Kind: KindTest, Format: format}
	r := Test(context.Background(), dir, nil, []Check{c}, TestOptions{MaxReruns: -1})
	if len(r.Checks) != 1 || r.Checks[0].Passed || r.Checks[0].Fingerprint == "" {
		t.Fatalf("report %+v: want one failed check with a fingerprint", r)
	}
	return r.Checks[0].Fingerprint
}

var (
	goTimeRE    = regexp.MustCompile(`"Time":"[^"]*"`)
	goElapsedRE = regexp.MustCompile(`"Elapsed":[0-9.]+`)
)

// goVariant is a go test -json output run again: other times and elapsed
// times, other durations in the output, another port and temporary
// directory, the packages in another order, and the passing package
// cached.
func goVariant(s string) string {
	s = goTimeRE.ReplaceAllString(s, `"Time":"2026-11-23T18:02:11.987654321Z"`)
	s = goElapsedRE.ReplaceAllString(s, `"Elapsed":0.042`)
	s = strings.NewReplacer("(0.00s)", "(0.03s)", "(0.01s)", "(0.12s)", "\\t0.009s", "\\t0.041s", "\\t0.010s", "\\t0.033s",
		"127.0.0.1:41234", "127.0.0.1:38011", "TestDial2716391538", "TestDial99187", "\\t0.004s", "\\t(cached)").Replace(s)
	// The packages in another order: the crash package first.
	var calc, rest []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Contains(l, `"example.com/proj/calc"`) {
			calc = append(calc, l)
		} else {
			rest = append(rest, l)
		}
	}
	return strings.Join(rest, "") + strings.Join(calc, "")
}

// swapLines swaps two lines of s.
func swapLines(s, a, b string) string {
	return strings.NewReplacer(a, b, b, a).Replace(s)
}

// nodeTestOutput is what npm test prints for node --test (TAP), a failing
// test and a passing one, with the durations and the assertion's message
// given.
func nodeTestOutput(d1, d2, total, msg string) string {
	return `
> nt@1.0.0 test
> node --test

TAP version 13
# Subtest: adds
not ok 1 - adds
  ---
  duration_ms: ` + d1 + `
  location: '/home/u/nt/calc.test.js:3:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    ` + msg + `

  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  stack: |-
    TestContext.<anonymous> (/home/u/nt/calc.test.js:3:29)
    Test.runInAsyncScope (node:async_hooks:206:9)
  ...
# Subtest: ok
ok 2 - ok
  ---
  duration_ms: ` + d2 + `
  ...
1..2
# tests 2
# suites 0
# pass 1
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms ` + total + `
`
}
