package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// Bounds of what is kept of a check's output.
const (
	// CaptureBytes is how much of a check's combined output is captured (its
	// tail); the fingerprint reads all of it as it streams.
	CaptureBytes = 64 << 10
	// TailLines and TailBytes bound CheckResult.OutputTail, the part that
	// goes into the prompt.
	TailLines = 40
	TailBytes = 4 << 10
	// fingerprintLineMax bounds one line as the fingerprint reads it.
	fingerprintLineMax = 8 << 10
	// observeLineMax bounds one line as the report's parsers read it: a
	// line of go test -json holds a JSON-quoted line of output.
	observeLineMax = 64 << 10
)

// ExitNotStarted is the ExitCode of a check that could not be started (its
// program does not exist, the directory is missing, ...), as a shell says.
const ExitNotStarted = 127

// CheckResult is how one check ended.
type CheckResult struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	// ExitCode is the exit status, 128+signal when a signal ended it,
	// ExitNotStarted when it could not be started.
	ExitCode int  `json:"exitCode"`
	Passed   bool `json:"passed"`
	// TimedOut: the check's own timeout stopped it.
	TimedOut bool `json:"timedOut"`
	// Interrupted: the run's context ended while the check ran (the user's
	// signal or the global timeout); its outcome says nothing of the code.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error says why the check could not be started.
	Error string `json:"error,omitempty"`
	// Limit says which limit of its sandbox the check reached, when that
	// is why it failed: "the call reached its limit of 512 processes
	// (sandbox.maxProcesses)".
	Limit      string          `json:"limit,omitempty"`
	DurationMs millis.Duration `json:"durationMs"`
	TimeoutMs  millis.Duration `json:"timeoutMs"`
	// OutputTail is the end of the combined output, at most TailLines lines
	// and TailBytes bytes, without terminal escapes.
	OutputTail string `json:"outputTail,omitempty"`
	// OutputBytes is the size of the whole output.
	OutputBytes int64 `json:"outputBytes"`
	// Fingerprint identifies the failure: equal across runs that fail the
	// same way (see Fingerprint). Empty for an interrupted check.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Baseline is set by Judge on the copies it returns: how the check fared
	// in the baseline (one of the Baseline* constants); empty without one.
	Baseline string `json:"baseline,omitempty"`
}

// Result is one run of the checks.
type Result struct {
	// Passed: every check ran and passed (true for no checks).
	Passed bool `json:"passed"`
	// Checks are the results in the order of the checks; when the context
	// ended, those not started are missing.
	Checks []CheckResult `json:"checks"`
	// Interrupted: the context ended before every check had run.
	Interrupted bool            `json:"interrupted,omitempty"`
	DurationMs  millis.Duration `json:"durationMs"`
}

// Run runs each check in dir, one after the other, unconfined (RunIn
// without a sandbox), and returns their results. env holds extra
// KEY=VALUE pairs added to jlgcli's own environment (as
// agent.Request.Env); the checks' standard input is /dev/null.
//
// Each check runs in its own process group, which is stopped (SIGTERM, then
// SIGKILL) at the check's timeout or when ctx ends. Every check runs, so that
// the agent learns of all the failures, unless ctx ends: then the running
// check is marked Interrupted, the rest are not started, and the Result is
// Interrupted and not Passed.
func Run(ctx context.Context, dir string, env []string, checks []Check) Result {
	return RunIn(ctx, nil, dir, env, checks)
}

// RunIn is Run with each check confined in box (nil: none).
func RunIn(ctx context.Context, box *sandbox.Box, dir string, env []string, checks []Check) Result {
	return runChecks(ctx, box, dir, env, checks, false)
}

// runChecks runs the checks in order, confined in box (nil: none); with
// staged, it stops at the first that fails.
func runChecks(ctx context.Context, box *sandbox.Box, dir string, env []string, checks []Check, staged bool) Result {
	start := time.Now()
	res := Result{Passed: true, Checks: make([]CheckResult, 0, len(checks))}
	full := environ(env)
	for _, c := range checks {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		cr := runOne(ctx, box, dir, full, c)
		res.Checks = append(res.Checks, cr)
		if cr.Interrupted {
			res.Interrupted = true
			break
		}
		if !cr.Passed {
			res.Passed = false
			if staged {
				break
			}
		}
	}
	if res.Interrupted {
		res.Passed = false
	}
	res.DurationMs = millis.Of(time.Since(start))
	return res
}

// Baseline runs the checks before the first iteration: the *Result that
// Judge compares later runs with. It is Run under another name, returned as
// a pointer because that is how Judge and a checkpoint hold it (a run
// confined takes its baseline with RunIn).
func Baseline(ctx context.Context, dir string, env []string, checks []Check) *Result {
	r := Run(ctx, dir, env, checks)
	return &r
}

// runOne runs one check. Its output is read by the parser of its format,
// as Test reads it, so that its fingerprint is that of the failures the
// parser understood (parsedFingerprint) when there are some.
func runOne(ctx context.Context, box *sandbox.Box, dir string, env []string, c Check) CheckResult {
	cr, _, _ := runParsed(ctx, box, dir, env, c, InferKind(c), InferFormat(c))
	return cr
}

// runObserved is runOne that also hands observe, when not nil, each line of
// the output (at most observeLineMax bytes of it), with stderr true for a
// line of the standard error. observe may be called from two goroutines at
// once.
func runObserved(ctx context.Context, box *sandbox.Box, dir string, env []string, c Check, observe func(line string, stderr bool)) CheckResult {
	cr := CheckResult{Name: c.Name, Command: c.Command(), TimeoutMs: millis.Of(c.timeout())}
	if err := c.Validate(); err != nil {
		cr.ExitCode = ExitNotStarted
		cr.Error = err.Error()
		cr.OutputTail = cr.Error
		cr.Fingerprint = Fingerprint(cr.ExitCode, false, cr.Error)
		return cr
	}
	tail := proc.NewTail(CaptureBytes)
	fp := newFingerprinter()
	outLines := &proc.Lines{Max: fingerprintLineMax, Fn: fp.addBytes}
	errLines := &proc.Lines{Max: fingerprintLineMax, Fn: fp.addBytes}

	stdout, stderr := io.MultiWriter(tail, outLines), io.MultiWriter(tail, errLines)
	var obsOut, obsErr *proc.Lines
	if observe != nil {
		obsOut = &proc.Lines{Max: observeLineMax, Fn: func(l []byte, _ bool) { observe(string(l), false) }}
		obsErr = &proc.Lines{Max: observeLineMax, Fn: func(l []byte, _ bool) { observe(string(l), true) }}
		stdout, stderr = io.MultiWriter(stdout, obsOut), io.MultiWriter(stderr, obsErr)
	}

	cctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	pc := proc.Cmd{Argv: c.argv(), Dir: dir, Env: env, Stdout: stdout, Stderr: stderr}
	var release func()
	var err error
	if box != nil && len(pc.Argv) > 0 {
		pc, release, err = box.Check(pc, varNames(env, os.Environ()))
	}
	var pr proc.Result
	if err == nil {
		pr, err = proc.Run(cctx, pc)
	}
	if release != nil {
		release()
	}
	outLines.Flush()
	errLines.Flush()
	if observe != nil {
		obsOut.Flush()
		obsErr.Flush()
	}
	cr.DurationMs = millis.Of(pr.Duration)
	cr.OutputBytes = tail.Total()

	if err != nil {
		// Not started: proc.ErrNotFound, a missing directory, ...
		cr.ExitCode = ExitNotStarted
		cr.Error = err.Error()
		if errors.Is(err, proc.ErrNotFound) {
			cr.Error = fmt.Sprintf("%s (is it installed and on PATH?)", err)
		}
		cr.OutputTail = cr.Error
		fp.add(cr.Error)
		cr.Fingerprint = fp.sum(cr.ExitCode, false)
		return cr
	}
	cr.ExitCode = pr.ExitCode
	switch {
	case pr.Stopped && ctx.Err() != nil:
		cr.Interrupted = true
	case pr.Stopped:
		cr.TimedOut = true
	}
	cr.Passed = !pr.Stopped && pr.ExitCode == 0
	if pr.Limit != nil {
		cr.Limit = pr.Limit.Error()
	}
	cr.OutputTail = shortTail(tail.Bytes(), tail.Truncated())
	if !cr.Interrupted {
		cr.Fingerprint = fp.sum(cr.ExitCode, cr.TimedOut)
	}
	return cr
}

// environ is the checks' complete environment: jlgcli's own plus extra;
// nil (the current one) when there is no extra.
func environ(extra []string) []string {
	if len(extra) == 0 {
		return nil
	}
	return append(os.Environ(), extra...)
}

// shortTail is the end of out for a prompt: without terminal escapes, at
// most TailLines lines and TailBytes bytes, starting at a line (or at least
// a character) boundary, valid UTF-8.
func shortTail(out []byte, truncated bool) string {
	if truncated {
		// The first line was cut by the capture; drop it if there are others.
		if i := bytes.IndexByte(out, '\n'); i >= 0 && i < len(out)-1 {
			out = out[i+1:]
		}
	}
	s := strings.TrimRight(stripANSI(string(out)), "\n\r\t ")
	// Keep the last TailLines lines.
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			n++
			if n == TailLines {
				s = s[i+1:]
				break
			}
		}
	}
	if len(s) > TailBytes {
		s = s[len(s)-TailBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		} else {
			for len(s) > 0 && !utf8.RuneStart(s[0]) {
				s = s[1:]
			}
		}
	}
	// Progress bars redraw a line with \r: show what was drawn last.
	if strings.ContainsRune(s, '\r') {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			l = strings.TrimRight(l, "\r")
			if j := strings.LastIndexByte(l, '\r'); j >= 0 {
				l = l[j+1:]
			}
			lines[i] = l
		}
		s = strings.Join(lines, "\n")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// varNames are the names of the variables of env that base does not hold as
// they are (those the run gives its checks beside jlgcli's own
// environment).
func varNames(env, base []string) []string {
	have := make(map[string]bool, len(base))
	for _, kv := range base {
		have[kv] = true
	}
	var out []string
	for _, kv := range env {
		if !have[kv] {
			name, _, _ := strings.Cut(kv, "=")
			out = append(out, name)
		}
	}
	return out
}
