package gate

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Outputs of real tools for one failure, twice, differing only in noise.
const (
	goTestA = `--- FAIL: TestParse (0.00s)
    parse_test.go:42: Parse("a=1") = 2, want 1
    store_test.go:31: open /tmp/TestParse2716391538/001/db.sqlite: permission denied
FAIL
FAIL	github.com/x/y/parse	0.012s
ok  	github.com/x/y/cli	0.104s
?   	github.com/x/y/cmd	[no test files]
FAIL
`
	goTestB = `=== RUN   TestParse
--- FAIL: TestParse (0.01s)
    parse_test.go:42: Parse("a=1") = 2, want 1
    store_test.go:31: open /tmp/TestParse99120457/001/db.sqlite: permission denied
=== RUN   TestNewlyAdded
--- PASS: TestNewlyAdded (0.00s)
FAIL
FAIL	github.com/x/y/parse	1.207s
ok  	github.com/x/y/cli	(cached)
ok  	github.com/x/y/newpkg	0.003s	coverage: 71.4% of statements
?   	github.com/x/y/cmd	[no test files]
FAIL
`
	goPanicA = `--- FAIL: TestServer (0.02s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered]
	panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x5f2c1a]

goroutine 34 [running]:
testing.tRunner.func1.2({0x6a1b20, 0x8f2e40})
	/usr/local/go/src/testing/testing.go:1545 +0x238
github.com/x/y/server.(*Server).Handle(0xc000124000, {0x7ff1c8, 0xc00012e0a0})
	/home/u/y/server/server.go:88 +0x1d
created by testing.(*T).Run in goroutine 1
FAIL	github.com/x/y/server	0.031s
FAIL
`
	goPanicB = `--- FAIL: TestServer (0.03s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered]
	panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x5f3d2b]

goroutine 7 [running]:
testing.tRunner.func1.2({0x6a2c30, 0x8f3f50})
	/usr/local/go/src/testing/testing.go:1545 +0x24c
github.com/x/y/server.(*Server).Handle(0xc0001a2000, {0x7ff2d8, 0xc0001b40a0})
	/home/u/y/server/server.go:88 +0x1f
created by testing.(*T).Run in goroutine 3
FAIL	github.com/x/y/server	0.029s
FAIL
`
	pytestA = `============================= test session starts ==============================
platform linux -- Python 3.11.4, pytest-7.4.0, pluggy-1.2.0
rootdir: /tmp/pytest-of-u/pytest-12/test_run0
collected 3 items

tests/test_calc.py .F.                                                   [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(1, 0) == 0
E       ZeroDivisionError: division by zero

tests/test_calc.py:9: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide - ZeroDivisionError: division by zero
========================= 1 failed, 2 passed in 0.12s ==========================
`
	pytestB = `============================= test session starts ==============================
platform linux -- Python 3.11.4, pytest-7.4.0, pluggy-1.2.0
rootdir: /tmp/pytest-of-u/pytest-13/test_run0
collected 4 items

tests/test_calc.py .F..                                                  [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(1, 0) == 0
E       ZeroDivisionError: division by zero

tests/test_calc.py:9: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide - ZeroDivisionError: division by zero
======================== 1 failed, 3 passed in 10.41s =========================
`
	npmJestA = `
> calc@1.0.0 test
> jest

FAIL src/calc.test.js
  ● divide › by zero

    expect(received).toBe(expected) // Object.is equality

    Expected: 0
    Received: Infinity

      10 |   test('by zero', () => {
    > 11 |     expect(divide(1, 0)).toBe(0);
         |                          ^
      12 |   });

      at Object.toBe (src/calc.test.js:11:26)

PASS src/util.test.js (5 ms)

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 4 passed, 5 total
Snapshots:   0 total
Time:        1.234 s
Ran all test suites.
npm error code 1
npm error path /home/u/calc
npm error command failed
npm error command sh -c jest
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2024-05-01T10_00_00_123Z-debug-0.log
`
	npmJestB = "\n> calc@1.0.0 test\n> jest\n\n" +
		"\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m src/calc.test.js\n" + `  ● divide › by zero

    expect(received).toBe(expected) // Object.is equality

    Expected: 0
    Received: Infinity

      10 |   test('by zero', () => {
    > 11 |     expect(divide(1, 0)).toBe(0);
         |                          ^
      12 |   });

      at Object.toBe (src/calc.test.js:11:26)

PASS src/util.test.js
PASS src/new.test.js (12 ms)

Test Suites: 1 failed, 2 passed, 3 total
Tests:       1 failed, 7 passed, 8 total
Snapshots:   0 total
Time:        0.981 s, estimated 2 s
Ran all test suites.
npm error code 1
npm error path /home/u/calc
npm error command failed
npm error command sh -c jest
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2024-05-02T17_41_09_872Z-debug-0.log
`
)

func TestFingerprintIgnoresNoise(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"go test", goTestA, goTestB},
		{"go panic", goPanicA, goPanicB},
		{"pytest", pytestA, pytestB},
		{"npm jest", npmJestA, npmJestB},
		{"log lines", "2024-05-01T10:00:00.123Z server pid=4242 listening on 127.0.0.1:43121\nerror: boom after 35ms\n",
			"2024-05-03 09:12:45,002 server pid=77 listening on 127.0.0.1:50002\nerror: boom after 120ms\n"},
		{"seeds and uuids", "-test.shuffle 1714550000123\nrun 9b2f0a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b failed\n",
			"-test.shuffle 1714559999999\nrun 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9 failed\n"},
		{"unittest", "..F.\nFAIL: test_x (t.T)\nRan 4 tests in 0.002s\nFAILED (failures=1)\n",
			"..F...\nFAIL: test_x (t.T)\nRan 6 tests in 0.010s\nFAILED (failures=1)\n"},
		{"progress redraw", "building 10%\rbuilding 100%\nerror: x\n", "building 55%\rbuilding 100%\nerror: x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa, fb := Fingerprint(1, false, tc.a), Fingerprint(1, false, tc.b)
			if fa != fb {
				t.Errorf("fingerprints differ:\n%s\n--- normalized A:\n%s--- normalized B:\n%s", tc.name, Normalize(tc.a), Normalize(tc.b))
			}
		})
	}
}

func TestFingerprintSeesRealDifferences(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"another failing test", goTestA, strings.Replace(goTestA, "TestParse (", "TestParseEmpty (", 1)},
		{"another line number", goTestA, strings.Replace(goTestA, "parse_test.go:42", "parse_test.go:43", 1)},
		{"another message", goTestA, strings.Replace(goTestA, "= 2, want 1", "= 3, want 1", 1)},
		{"another package fails", goTestA, goTestA + "FAIL\tgithub.com/x/y/other\t0.010s\n"},
		{"a second failure", goTestA, goTestA + "--- FAIL: TestOther (0.00s)\n"},
		{"another panic line", goPanicA, strings.Replace(goPanicA, "server.go:88", "server.go:91", 1)},
		{"pytest another test", pytestA, strings.ReplaceAll(pytestA, "test_divide", "test_multiply")},
		{"pytest another error", pytestA, strings.ReplaceAll(pytestA, "ZeroDivisionError", "TypeError")},
		{"pytest another file fails", pytestA, strings.Replace(pytestA, "tests/test_calc.py .F.", "tests/test_calc.py .F.\ntests/test_io.py F", 1)},
		{"jest another received", npmJestA, strings.Replace(npmJestA, "Received: Infinity", "Received: NaN", 1)},
		{"jest another line", npmJestA, strings.Replace(npmJestA, "calc.test.js:11:26", "calc.test.js:12:26", 1)},
		{"jest more failures", npmJestA, strings.Replace(npmJestA, "Tests:       1 failed", "Tests:       2 failed", 1)},
		{"a file name in a temp dir", "open /tmp/TestX123/001/a.go: no such file\n", "open /tmp/TestX123/001/b.go: no such file\n"},
		{"short hex values", "want 0x10, got 0x20\n", "want 0x10, got 0x30\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if Fingerprint(1, false, tc.a) == Fingerprint(1, false, tc.b) {
				t.Errorf("same fingerprint; normalized B:\n%s", Normalize(tc.b))
			}
		})
	}
}

func TestFingerprintExitCodeAndTimeout(t *testing.T) {
	base := Fingerprint(1, false, goTestA)
	if Fingerprint(2, false, goTestA) == base {
		t.Error("another exit code gives the same fingerprint")
	}
	if Fingerprint(1, true, goTestA) == base {
		t.Error("a timeout gives the same fingerprint")
	}
	if !strings.HasPrefix(base, fingerprintVersion) || len(base) != len(fingerprintVersion)+32 {
		t.Errorf("fingerprint %q: want %s and 32 hex digits", base, fingerprintVersion)
	}
}

// TestFingerprintLineOrder: parallel tests print in any order.
func TestFingerprintLineOrder(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(goPanicA), "\n")
	shuffled := append([]string(nil), lines...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if Fingerprint(2, false, strings.Join(lines, "\n")) != Fingerprint(2, false, strings.Join(shuffled, "\r\n")) {
		t.Error("the order of lines changed the fingerprint")
	}
	// A duplicated line is a difference.
	if Fingerprint(2, false, "x\n") == Fingerprint(2, false, "x\nx\n") {
		t.Error("a repeated line did not change the fingerprint")
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"--- FAIL: TestX (0.12s)", "--- FAIL: TestX (<dur>)"},
		{"FAIL\tgithub.com/x/y\t0.012s", "FAIL github.com/x/y <dur>"},
		{"ok  \tgithub.com/x/y\t0.012s", ""},
		{"=== RUN   TestX", ""},
		{"    --- PASS: TestX/sub (0.00s)", ""},
		{"tests/test_a.py::test_b PASSED                [ 50%]", ""},
		{"tests/test_a.py::test_b FAILED                [ 50%]", "tests/test_a.py::test_b FAILED [<pct>]"},
		{"tests/test_a.py ..sF.E  [100%]", "tests/test_a.py FE"},
		{"  ✓ adds numbers (3 ms)", ""},
		{"took 1m2.5s then 120µs and 5 ms", "took <dur> then <dur> and <dur>"},
		{"\x1b[31mFAIL\x1b[0m x", "FAIL x"},
		{"addr 0xc000123456 off +0x1d small 0x1f", "addr 0x<addr> off +0x<off> small 0x1f"},
		{"at /tmp/tmpk3j_x2/a.py:12 and /tmp/go-build123/b001/x", "at <tmp>/tmp*/a.py:12 and <tmp>/go-build#/b#/x"},
		{"cache at /home/u/tmp/x1/y", "cache at /home/u/tmp/x1/y"},
		{"goroutine 12 [chan receive, 3 minutes]:", "goroutine <n> [chan receive, <dur>]:"},
		{"Tests:       1 failed, 4 passed, 5 total", "Tests: 1 failed, <n> passed, <n> total"},
		{"=================== 1 failed in 0.1s ===================", "=== 1 failed in <dur> ==="},
		{"main.go:12:5: undefined: foo", "main.go:12:5: undefined: foo"},
		{"ok 2 - adds", ""},
		{"not ok 1 - adds", "not ok 1 - adds"},
		{"  duration_ms: 3.399054", "duration_ms: <dur>"},
		{"ℹ duration_ms 1059.53", "ℹ duration_ms <dur>"},
		{"# pass 12", "# pass <n>"},
		{"# fail 1", "# fail 1"},
		{`{"Time":"2026-11-22T05:16:32.62Z","Action":"output","Package":"p","Test":"TestX","Output":"--- FAIL: TestX (0.01s)\n"}`, "--- FAIL: TestX (<dur>)"},
		{`{"Time":"2026-11-22T05:16:32.62Z","Action":"fail","Package":"p","Test":"TestX","Elapsed":0.01}`, ""},
		{"   ", ""},
	} {
		got := strings.TrimSuffix(Normalize(tc.in), "\n")
		if got != tc.want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	out := strings.Repeat(goPanicA+pytestA+npmJestA, 200) // about 600 KiB
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		Fingerprint(1, false, out)
	}
}
