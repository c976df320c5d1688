package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
)

func shell(t *testing.T, cmdline string) Check {
	t.Helper()
	c, err := ShellCheck(cmdline)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunEveryCheckRuns(t *testing.T) {
	dir := t.TempDir()
	res := Run(context.Background(), dir, nil, []Check{
		shell(t, "echo first failure; exit 3"),
		shell(t, "true"),
		shell(t, "echo second failure >&2; exit 1"),
	})
	if res.Passed || res.Interrupted || len(res.Checks) != 3 {
		t.Fatalf("Passed %v, Interrupted %v, %d checks; want false, false, 3", res.Passed, res.Interrupted, len(res.Checks))
	}
	want := []struct {
		code   int
		passed bool
		tail   string
	}{{3, false, "first failure"}, {0, true, ""}, {1, false, "second failure"}}
	for i, w := range want {
		c := res.Checks[i]
		if c.ExitCode != w.code || c.Passed != w.passed || c.OutputTail != w.tail || c.TimedOut || c.Fingerprint == "" {
			t.Errorf("check %d = %+v; want exit %d, passed %v, tail %q, a fingerprint", i, c, w.code, w.passed, w.tail)
		}
	}
	if res.Checks[0].Name != "echo first failure; exit 3" || res.Checks[0].Command != res.Checks[0].Name {
		t.Errorf("name %q, command %q: want the command line", res.Checks[0].Name, res.Checks[0].Command)
	}
}

func TestRunAllPass(t *testing.T) {
	c, err := ArgvCheck("listing", []string{"ls", "-a"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), t.TempDir(), nil, []Check{c, shell(t, "exit 0")})
	if !res.Passed || len(res.Checks) != 2 {
		t.Fatalf("%+v", res)
	}
	if res.Checks[0].Command != "ls -a" || res.Checks[0].TimeoutMs != millis.Of(DefaultTimeout) {
		t.Errorf("%+v", res.Checks[0])
	}
	if r := Run(context.Background(), "", nil, nil); !r.Passed || len(r.Checks) != 0 {
		t.Errorf("no checks: %+v, want passed", r)
	}
}

func TestRunDirAndEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), dir, []string{"GATE_TEST_VAR=yes"}, []Check{
		shell(t, "test -f marker"),
		shell(t, `test "$GATE_TEST_VAR" = yes`),
		shell(t, `test -n "$PATH"`),
	})
	if !res.Passed {
		t.Errorf("%+v", res)
	}
}

func TestRunTimeout(t *testing.T) {
	c := shell(t, "echo started; sleep 30")
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	res := Run(context.Background(), t.TempDir(), nil, []Check{c, shell(t, "echo next")})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
	cr := res.Checks[0]
	if !cr.TimedOut || cr.Passed || cr.Interrupted || cr.OutputTail != "started" || cr.TimeoutMs != 300 {
		t.Errorf("%+v: want timed out, output started", cr)
	}
	if len(res.Checks) != 2 || !res.Checks[1].Passed || res.Passed || res.Interrupted {
		t.Errorf("the next check did not run, or the result is wrong: %+v", res)
	}
	v := Judge(&res, nil)
	if !strings.Contains(FailurePrompt(v), "timed out after 300ms") {
		t.Errorf("prompt does not say it timed out:\n%s", FailurePrompt(v))
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	res := Run(ctx, t.TempDir(), nil, []Check{shell(t, "sleep 30"), shell(t, "echo never")})
	if !res.Interrupted || res.Passed || len(res.Checks) != 1 || !res.Checks[0].Interrupted || res.Checks[0].TimedOut {
		t.Fatalf("%+v: want interrupted, one check", res)
	}
	if res.Checks[0].Fingerprint != "" {
		t.Error("an interrupted check has a fingerprint")
	}
	if v := Judge(&res, &res); v.Passed || !v.Interrupted {
		t.Errorf("verdict %+v: want interrupted, not passed", v)
	}
	// Already cancelled: nothing runs.
	res = Run(ctx, t.TempDir(), nil, []Check{shell(t, "true")})
	if !res.Interrupted || res.Passed || len(res.Checks) != 0 {
		t.Errorf("%+v", res)
	}
}

func TestRunNotStarted(t *testing.T) {
	c, _ := ArgvCheck("", []string{"jlgcli-no-such-program-xyz"}, 0)
	res := Run(context.Background(), t.TempDir(), nil, []Check{c, {Name: "invalid"}, shell(t, "true")})
	cr := res.Checks[0]
	if cr.Passed || cr.ExitCode != ExitNotStarted || !strings.Contains(cr.Error, "jlgcli-no-such-program-xyz") || cr.Fingerprint == "" {
		t.Errorf("%+v", cr)
	}
	if cr := res.Checks[1]; cr.Passed || !strings.Contains(cr.Error, "run:") {
		t.Errorf("an invalid check: %+v", cr)
	}
	if res.Passed || len(res.Checks) != 3 || !res.Checks[2].Passed {
		t.Errorf("%+v", res)
	}
	if p := FailurePrompt(Judge(&res, nil)); !strings.Contains(p, "could not be started") {
		t.Errorf("prompt:\n%s", p)
	}
	res = Run(context.Background(), filepath.Join(t.TempDir(), "missing"), nil, []Check{shell(t, "true")})
	if res.Passed || res.Checks[0].ExitCode != ExitNotStarted {
		t.Errorf("missing directory: %+v", res)
	}
}

// TestRunBoundsOutput: a check printing megabytes keeps a short tail for the
// prompt, ending with its last line.
func TestRunBoundsOutput(t *testing.T) {
	c := shell(t, `i=0; while [ $i -lt 20000 ]; do echo "line $i of a noisy check, padded to be long enough"; i=$((i+1)); done; echo last line; exit 1`)
	res := Run(context.Background(), t.TempDir(), nil, []Check{c})
	cr := res.Checks[0]
	if cr.OutputBytes < 1<<20 {
		t.Fatalf("OutputBytes %d", cr.OutputBytes)
	}
	lines := strings.Split(cr.OutputTail, "\n")
	if len(cr.OutputTail) > TailBytes || len(lines) > TailLines || lines[len(lines)-1] != "last line" ||
		!strings.HasPrefix(lines[0], "line ") {
		t.Errorf("tail of %d bytes, %d lines, first %q, last %q", len(cr.OutputTail), len(lines), lines[0], lines[len(lines)-1])
	}
}

func TestShortTail(t *testing.T) {
	long := strings.Repeat("é", 3000) // one line of 6000 bytes
	for _, tc := range []struct {
		name, in string
		trunc    bool
		check    func(string) bool
	}{
		{"colours removed", "\x1b[31mred\x1b[0m\n", false, func(s string) bool { return s == "red" }},
		{"partial first line dropped", "artial\nwhole\n", true, func(s string) bool { return s == "whole" }},
		{"one long line cut at a rune", long, false, func(s string) bool {
			return len(s) <= TailBytes && strings.Trim(s, "é") == ""
		}},
		{"redrawn line", "10%\r50%\r100%\ndone\n", false, func(s string) bool { return s == "100%\ndone" }},
	} {
		if got := shortTail([]byte(tc.in), tc.trunc); !tc.check(got) {
			t.Errorf("%s: got %q", tc.name, got)
		}
	}
}

// TestRunFingerprintMatchesFingerprint: the streaming fingerprint of a run
// equals Fingerprint of the same output, and a check failing the same way
// twice (different PID, timing) has the same fingerprint.
func TestRunFingerprintMatchesFingerprint(t *testing.T) {
	c := shell(t, `printf 'FAIL\tpkg\t0.%ds\n' $$; echo "worker pid=$$ failed" >&2; printf 'no newline'; exit 2`)
	a := Run(context.Background(), t.TempDir(), nil, []Check{c})
	b := Run(context.Background(), t.TempDir(), nil, []Check{c})
	want := Fingerprint(2, false, "FAIL\tpkg\t0.5s\nworker pid=1 failed\nno newline")
	if a.Checks[0].Fingerprint != want || b.Checks[0].Fingerprint != want {
		t.Errorf("fingerprints %s, %s; want %s", a.Checks[0].Fingerprint, b.Checks[0].Fingerprint, want)
	}
	v := Judge(&b, &a)
	if !v.Passed || len(v.Tolerated) != 1 || v.Tolerated[0].Baseline != BaselineSameFailure {
		t.Errorf("verdict %+v: want the baseline failure tolerated", v)
	}
}

func TestResultJSON(t *testing.T) {
	res := Run(context.Background(), t.TempDir(), nil, []Check{shell(t, "echo hi; exit 1")})
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"passed":false`, `"checks":[`, `"name":"echo hi; exit 1"`, `"exitCode":1`, `"timedOut":false`,
		`"durationMs":`, `"outputTail":"hi"`, `"fingerprint":"v1:`, `"outputBytes":3`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s: %s", key, data)
		}
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil || back.Checks[0].Fingerprint != res.Checks[0].Fingerprint {
		t.Errorf("round trip: %v, %+v", err, back)
	}
}
