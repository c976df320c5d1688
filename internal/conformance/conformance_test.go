package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/cli"
	ms "github.com/jlgcli/jlgcli/internal/modelserver"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// hangGuard bounds a jlgcli call: it stops a stuck test, it does not
// measure speed. Every call but the timeout case also gets --timeout
// runTimeout, so that jlgcli stops the CLI itself first. Both leave room
// for kilo's start (about 18 CPU seconds each call) on a CI machine that
// runs the race detector's builds of other packages at the same time: a
// loop of three kilo calls took 3 minutes there.
const (
	hangGuard  = 8 * time.Minute
	runTimeout = "6m"
)

// tagVar is set to a unique value in the environment of every run, so that
// the processes of that run can be found afterwards in /proc.
const tagVar = "JLGCLI_CONFORMANCE_TAG"

// leftoverWait is how long the processes of a run may take to disappear
// after jlgcli returned (they were SIGKILLed; the kernel reaps them).
const leftoverWait = 3 * time.Second

// slots bounds the CLI runs going at once (JLGCLI_CONFORMANCE_PARALLEL,
// default 3): each is a Node.js program of a few hundred MB that takes a CPU
// second or more to start (kilo, a Bun binary, takes about 18 CPU seconds),
// but most of a run is spent waiting: for the CLIs' own retries, for jlgcli's
// rate-limit back-off, for a slow scripted answer.
var slots = make(chan struct{}, parallelRuns())

func parallelRuns() int {
	if n, err := strconv.Atoi(os.Getenv("JLGCLI_CONFORMANCE_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 3
}

// Price given to the scripted model (USD per million tokens), for the CLIs
// whose cost comes from a price the configuration sets (opencode).
const priceIn, priceOut = 3.0, 15.0

// costMode is how a CLI reports cost.
type costMode int

const (
	// costNone: the CLI reports none (costKnown false, costUsd 0).
	costNone costMode = iota
	// costOwn: the CLI prices the tokens by its own table (claude): known
	// and positive.
	costOwn
	// costPriced: the CLI prices them at the configured price (opencode).
	costPriced
)

// resetMode is how a CLI reports when a rate limit resets.
type resetMode int

const (
	// resetNone: the CLI never says; only exit 69 is asserted.
	resetNone resetMode = iota
	// resetExact: the reset time sent is reported exactly.
	resetExact
	// resetNear: reported as a delay counted from an event's time stamp,
	// so within a few seconds.
	resetNear
)

// backend is what the tests expect of one agent CLI.
type backend struct {
	name string
	// tokens: the CLI reports token counts (the scripted usage).
	tokens bool
	cost   costMode
	// session matches the CLI's session ids.
	session *regexp.Regexp
	// reset says how the 429 case's reset time comes back (API-key login).
	reset resetMode
	// retryAfter is the Retry-After sent with the 429 case; zero: up to the
	// reset time. opencode obeys it before each of its 5 retries, so it
	// gets 1s.
	retryAfter time.Duration
	// attempts is how many model requests one process of the CLI sends on
	// a 429 before it gives up (its first and its own retries), where
	// known: the rate limit of ratelimit-wait answers at least that many,
	// so that the CLI gives up however slowly a loaded machine runs its
	// retries.
	attempts int
	// rateMessage: the 429 says when to retry in its message, as OpenAI's
	// do ("Please try again in 7m12s."): the only place a CLI that passes
	// the provider's message through (copilot) can read it from.
	rateMessage bool
	// limit is the --timeout of the timeout case: long enough for the CLI
	// to start and send its model request on a loaded machine (the Node.js
	// CLIs that start slowest take several seconds), so that it is stopped
	// while it waits for the model.
	limit time.Duration
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// backends are the CLIs under test, the slowest first so that the runs pack
// well into the slots.
var backends = []backend{
	// kilo (opencode's fork, the same events): it takes 15-20 s and about
	// 18 CPU seconds to start, much more while other CLIs run, and its
	// OpenAI client obeys Retry-After before each of its 5 retries.
	{name: "kilo", limit: time.Minute, tokens: true, cost: costPriced, session: regexp.MustCompile(`^ses_[0-9A-Za-z]+$`), reset: resetExact, retryAfter: time.Second, attempts: 6},
	// qwen (Chat Completions): tokens, no cost; its 429 message passes the
	// provider's words through but no reset time. Its OpenAI client retries
	// a 429 6 times, obeying Retry-After.
	{name: "qwen", limit: 15 * time.Second, tokens: true, session: uuidRE, reset: resetNone, retryAfter: time.Second, attempts: 7},
	// opencode: retries 429 and 5xx 5 times, sleeping Retry-After; the
	// reset time comes from the rate-limit headers of its error event.
	{name: "opencode", limit: 10 * time.Second, tokens: true, cost: costPriced, session: regexp.MustCompile(`^ses_[0-9A-Za-z]+$`), reset: resetExact, retryAfter: time.Second, attempts: 6},
	// copilot (BYOK, Chat Completions): no tokens, no cost. It reads no
	// rate-limit header, but passes the provider's message through in its
	// session.error event: the reset is the delay OpenAI's message gives,
	// counted from the event's time stamp.
	{name: "copilot", limit: 10 * time.Second, session: uuidRE, reset: resetNear, rateMessage: true, attempts: 6},
	// gemini: "Suggested retry after Ns." counted from the result event.
	{name: "gemini", limit: 10 * time.Second, tokens: true, session: uuidRE, reset: resetNear},
	// codex: "try again at 5:17 AM." (local wall clock, minute precision;
	// the reset sent is a whole minute).
	{name: "codex", limit: 5 * time.Second, tokens: true, session: uuidRE, reset: resetExact},
	// claude: with an API key Claude Code prints no reset time; logged in
	// as a subscriber it does (the claude-only case ratelimit-subscription).
	{name: "claude", limit: 5 * time.Second, tokens: true, cost: costOwn, session: uuidRE, reset: resetNone},
}

// tcase is one conformance case.
type tcase struct {
	name string
	only string // when set, the one backend the case is for
	fn   func(t *testing.T, b backend)
}

var cases = []tcase{
	{name: "run", fn: testRun},
	{name: "loop-write", fn: testLoopWrite},
	{name: "json-next", fn: testJSONNext},
	{name: "no-key", fn: testNoKey},
	{name: "rejected-key", fn: testRejectedKey},
	{name: "ratelimit", fn: testRateLimit},
	{name: "ratelimit-subscription", only: "claude", fn: testRateLimitSubscription},
	{name: "server-error", fn: testServerError},
	{name: "timeout", fn: testTimeout},
	{name: "session-continue", fn: testSessionContinue},
	{name: "ratelimit-wait", fn: testRateLimitWait},
	{name: "window-limit", only: "claude", fn: testWindowLimit},
	{name: "window-none", only: "codex", fn: testWindowNone},
	{name: "config-readonly", fn: testConfigReadOnly},
}

// TestConformance drives every CLI through every case, with jlgcli.
func TestConformance(t *testing.T) {
	if testing.Short() && os.Getenv(ms.RequireAgentsEnv) != "1" {
		t.Skip("the conformance tests run the real agent CLIs; skipped with -short")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ms.RequireAgent(t, b.name)
			t.Parallel()
			for _, c := range cases {
				if c.only != "" && c.only != b.name {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.fn(t, b)
				})
			}
		})
	}
}

// (a) One call: the scripted text, session id, tokens and cost.
func testRun(t *testing.T, b backend) {
	const text = "Hello from the conformance script."
	prompt := "Say hello. (conformance run of " + b.name + ")"
	o := jlgcli(t, b, call{
		script: func(string) ms.Script { return ms.Script{ms.Text(text, ms.U(120, 7))} },
		args:   func(string) []string { return []string{"run", "--json", "-b", b.name, "--timeout", runTimeout, prompt} },
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	r := o.res
	if r.Iterations != 1 || len(r.Transcript) != 1 {
		t.Fatalf("iterations %d, transcript of %d; want 1", r.Iterations, len(r.Transcript))
	}
	if got := strings.TrimSpace(r.Text); got != text {
		t.Errorf("text = %q, want %q", got, text)
	}
	if r.Failure != nil {
		t.Errorf("failure = %+v, want none", r.Failure)
	}
	o.wantSession(t, b)
	o.wantUsage(t, b, 120, 7)
	turns := o.srv.TurnRequests()
	if len(turns) != 1 {
		t.Fatalf("%d model requests, want 1", len(turns))
	}
	if got := turns[0].LastUserText(); !strings.Contains(got, prompt) {
		t.Errorf("the model request's last user message %q does not hold the prompt %q", clip(got, 500), prompt)
	}
}

// (b) A loop of three iterations; in the second the model writes a file with
// the CLI's own tool; the third ends with the marker.
func testLoopWrite(t *testing.T, b backend) {
	content := "written by the " + b.name + " file tool\nsecond line\n"
	replies := []string{
		"Iteration 1: I will write out.txt next.",
		"Iteration 2: out.txt is written.",
		"Iteration 3: out.txt checked.\nDONE",
	}
	prompt := "Write out.txt, check it, and end your reply with a line DONE when it is all done."
	o := jlgcli(t, b, call{
		script: func(work string) ms.Script {
			return ms.Script{
				ms.Text(replies[0], ms.U(100, 10)),
				ms.WriteFile(filepath.Join(work, "out.txt"), content).WithUsage(ms.U(200, 20)),
				ms.Text(replies[1], ms.U(300, 5)),
				ms.Text(replies[2], ms.U(400, 6)),
			}
		},
		args: func(work string) []string {
			return []string{"loop", "--json", "-b", b.name, "--cwd", work, "--max-iterations", "5", "--timeout", runTimeout, prompt}
		},
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	r := o.res
	if r.Iterations != 3 || len(r.Transcript) != 3 {
		t.Fatalf("iterations %d, transcript of %d; want 3", r.Iterations, len(r.Transcript))
	}
	for i, e := range r.Transcript {
		if got := strings.TrimSpace(e.Response); got != replies[i] {
			t.Errorf("iteration %d: response %q, want %q", i+1, got, replies[i])
		}
	}
	got, err := os.ReadFile(filepath.Join(o.work, "out.txt"))
	if err != nil || string(got) != content {
		t.Errorf("out.txt in --cwd = %q, %v; want %q", got, err, content)
	}
	o.wantConfined(t)
	o.wantUsage(t, b, 100+200+300+400, 10+20+5+6)
	turns := o.srv.TurnRequests()
	if len(turns) != 4 {
		t.Errorf("%d model requests, want 4 (one per iteration, and one after the tool ran)", len(turns))
	}
	for _, q := range turns {
		if q.Error != "" {
			t.Errorf("model request %d: %s", q.Turn, q.Error)
		}
	}
}

// (c) json completion: the "next" of a continue object is what the model is
// asked next.
func testJSONNext(t *testing.T, b backend) {
	next := "Now do part two: list the steps you took. (the next prompt, " + b.name + ")"
	continueReply := "Part one is done.\n```json\n" + `{"status":"continue","next":"` + next + `"}` + "\n```"
	prompt := "Do part one, then say what is next as a JSON status object."
	o := jlgcli(t, b, call{
		script: func(string) ms.Script {
			return ms.Script{
				ms.Text(continueReply, ms.U(50, 5)),
				ms.Text(`{"status":"done","summary":"both parts done"}`, ms.U(60, 6)),
			}
		},
		args: func(work string) []string {
			return []string{"loop", "--json", "-b", b.name, "--cwd", work, "--completion", "json", "--timeout", runTimeout, prompt}
		},
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	r := o.res
	if r.Summary != "both parts done" {
		t.Errorf("summary = %q, want %q", r.Summary, "both parts done")
	}
	if r.Iterations != 2 || len(r.Transcript) != 2 {
		t.Fatalf("iterations %d, transcript of %d; want 2", r.Iterations, len(r.Transcript))
	}
	if !strings.Contains(r.Transcript[1].Prompt, next) {
		t.Errorf("iteration 2's prompt %q does not hold the next prompt", clip(r.Transcript[1].Prompt, 500))
	}
	turns := o.srv.TurnRequests()
	if len(turns) != 2 {
		t.Fatalf("%d model requests, want 2", len(turns))
	}
	if got := turns[0].LastUserText(); !strings.Contains(got, prompt) {
		t.Errorf("the first model request's last user message %q does not hold the prompt", clip(got, 500))
	}
	if got := turns[1].LastUserText(); !strings.Contains(got, next) {
		t.Errorf("the second model request's last user message %q does not hold the next prompt %q", clip(got, 500), next)
	}
}

// (d) No key at all: the CLI's own complaint is classified, exit 6.
func testNoKey(t *testing.T, b backend) {
	o := jlgcli(t, b, call{
		auth:   ms.AuthNone,
		script: func(string) ms.Script { return ms.Script{ms.Text("nobody should ask me", ms.U(1, 1))} },
		args: func(string) []string {
			return []string{"run", "--json", "-b", b.name, "--timeout", runTimeout, "Say hello."}
		},
	})
	o.wantExit(t, 6)
	o.wantStatus(t, "backend-unauthenticated")
	o.wantFailure(t, "auth")
	if n := len(o.srv.TurnRequests()); n != 0 {
		t.Errorf("%d model requests without a key, want 0", n)
	}
}

// (d) The server rejects the key (401): exit 6.
func testRejectedKey(t *testing.T, b backend) {
	o := jlgcli(t, b, call{
		script: func(string) ms.Script { return ms.Script{ms.Fault(401).Forever()} },
		args: func(string) []string {
			return []string{"run", "--json", "-b", b.name, "--timeout", runTimeout, "Say hello."}
		},
	})
	o.wantExit(t, 6)
	o.wantStatus(t, "backend-unauthenticated")
	o.wantFailure(t, "auth")
	if f := o.res.Failure; f != nil && f.HTTPStatus != 401 {
		t.Errorf("failure.httpStatus = %d, want 401", f.HTTPStatus)
	}
	o.wantReached(t)
}

// (e) 429: rate-limited, exit 69, with the reset time where the CLI says it.
func testRateLimit(t *testing.T, b backend) {
	rateLimitCase(t, b, ms.AuthKey, b.reset)
}

// (e) claude logged in as a subscriber: Claude Code reports the reset time.
func testRateLimitSubscription(t *testing.T, b backend) {
	rateLimitCase(t, b, ms.AuthSubscription, resetExact)
}

func rateLimitCase(t *testing.T, b backend, auth ms.Auth, mode resetMode) {
	// A whole minute (codex prints hours and minutes) about 90 minutes
	// ahead.
	built := time.Now() // delays sent are counted from here, or later
	reset := built.Add(90 * time.Minute).Truncate(time.Minute).UTC()
	retry := b.retryAfter
	if retry == 0 {
		retry = time.Until(reset).Round(time.Second)
	}
	opts := []ms.FaultOption{ms.RetryAfter(retry), ms.ResetAt(reset)}
	if b.rateMessage {
		// OpenAI's words, with the delay as OpenAI writes it: a Go
		// duration ("8.64s", "7m12s", "1h29m30s").
		opts = append(opts, ms.Message(fmt.Sprintf("Rate limit reached for fake-model in organization org-scripted on requests per day (RPD): "+
			"Limit 10000, Used 10000, Requested 1. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
			time.Until(reset).Round(time.Second))))
	}
	o := jlgcli(t, b, call{
		auth: auth,
		// Stop at the first rate limit: by default jlgcli waits for a reset
		// up to an hour away (maxWait), backing off when the CLI gave no
		// reset time.
		userConfig: "maxWait = \"0s\"\n",
		script:     func(string) ms.Script { return ms.Script{ms.Fault(429, opts...).Forever()} },
		args: func(string) []string {
			return []string{"run", "--json", "-b", b.name, "--timeout", runTimeout, "Say hello."}
		},
	})
	o.wantExit(t, 69)
	o.wantStatus(t, "rate-limited")
	o.wantFailure(t, "rate-limit")
	o.wantReached(t)
	f := o.res.Failure
	if f == nil {
		return
	}
	switch mode {
	case resetExact:
		if !f.ResetAt.Equal(reset) {
			t.Errorf("failure.resetAt = %v, want %v", f.ResetAt, reset)
		}
	case resetNear:
		// The delay ("retry after 5338s") was computed when the server or
		// the script sent it, and is counted from the time stamp of the
		// CLI's event, a little later: the reset comes back late by at most
		// the time since the script was built (plus rounding).
		lo, hi := reset.Add(-2*time.Second), reset.Add(time.Since(built)+2*time.Second)
		if f.ResetAt.Before(lo) || f.ResetAt.After(hi) {
			t.Errorf("failure.resetAt = %v, want %v (between %v and %v)", f.ResetAt, reset, lo.Format(time.TimeOnly), hi.Format(time.TimeOnly))
		}
	case resetNone:
		// The CLI never surfaces the reset time: only the class and the
		// exit code are asserted.
		t.Logf("%s reports no reset time (failure.resetAt = %v)", b.name, f.ResetAt)
	}
}

// (f) 500: status error, never done.
func testServerError(t *testing.T, b backend) {
	o := jlgcli(t, b, call{
		// Retry-After 1s: opencode sleeps it out before each of its
		// retries (without it, 2+4+8+16+32 s). copilot retries 5 times
		// whatever it is told.
		script: func(string) ms.Script { return ms.Script{ms.Fault(500, ms.RetryAfter(time.Second)).Forever()} },
		args: func(string) []string {
			return []string{"run", "--json", "-b", b.name, "--timeout", runTimeout, "Say hello."}
		},
	})
	o.wantStatus(t, "error")
	o.wantFailure(t, "api-error")
	if o.exit == 0 || o.res.ExitCode != o.exit {
		t.Errorf("exit %d (result exitCode %d), want the same non-zero code", o.exit, o.res.ExitCode)
	}
	if n := len(o.res.Transcript); n == 1 && o.res.Transcript[0].ExitCode != 0 && o.exit != o.res.Transcript[0].ExitCode {
		t.Errorf("exit %d, want the agent's own exit code %d passed through", o.exit, o.res.Transcript[0].ExitCode)
	}
	o.wantReached(t)
}

// (e) A rate limit that lifts: the model answers 429 (Retry-After 1s, the
// pause opencode, kilo and qwen obey before each of their own retries) to
// every request for rateWindow, longer than any CLI's own retries (and to at
// least as many requests as one process of the CLI sends, where known); jlgcli
// waits (until the reset the CLI reported, else backing off) and calls again,
// which succeeds. The wait costs no iteration and is in the run's journal.
func testRateLimitWait(t *testing.T, b backend) {
	const rateWindow = 8 * time.Second
	const reply = "The limit lifted.\nDONE"
	o := jlgcli(t, b, call{
		userConfig: "maxWait = \"2m\"\n",
		script: func(string) ms.Script {
			return ms.Script{
				ms.Fault(429, ms.RetryAfter(time.Second)).For(rateWindow).AtLeast(b.attempts),
				ms.Text(reply, ms.U(50, 5)),
			}
		},
		args: func(work string) []string {
			return []string{"loop", "--json", "-b", b.name, "--cwd", work, "--max-iterations", "3", "--timeout", runTimeout,
				"Say hello once the rate limit lifts. End your reply with a line DONE."}
		},
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	r := o.res
	if r.Iterations != 1 || len(r.Transcript) != 1 {
		t.Errorf("iterations %d, transcript of %d; want 1: a rate limit is not an iteration", r.Iterations, len(r.Transcript))
	}
	if got := strings.TrimSpace(r.Text); got != reply {
		t.Errorf("text = %q, want %q", got, reply)
	}
	turns := o.srv.TurnRequests()
	if len(turns) < 2 || turns[0].Turn != 0 || turns[len(turns)-1].Turn != 1 {
		t.Fatalf("%d model requests; want the 429s then the answer", len(turns))
	}
	events, err := os.ReadFile(filepath.Join(o.stateHome, "jlgcli", "runs", r.RunID, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(events, []byte(`"type":"rate-limit-wait"`)) {
		t.Errorf("the journal holds no rate-limit-wait: jlgcli did not wait (the CLI's own retries outlasted the limit?)")
	}
}

// (i) Subscription windows (claude logged in as a subscriber, the only CLI
// that reports them): the model's first answer says the 5-hour window is at
// 92% (past the 75% threshold) and resets in a few seconds; with
// --window-limit 80 jlgcli waits for that reset before the second iteration,
// which ends done, and the wait is in the journal with its window; without
// the flag it does not wait; with a reset beyond --max-wait it stops with
// exit 69 after the first iteration, naming the window.
func testWindowLimit(t *testing.T, b backend) {
	script := func(reset time.Duration) func(string) ms.Script {
		return func(string) ms.Script {
			now := time.Now()
			return ms.Script{
				ms.Text("Step one is done.", ms.U(50, 5)).WithWindows(
					ms.Window{Claim: "5h", Utilization: 0.92, ResetAt: now.Add(reset), SurpassedThreshold: 0.75}),
				ms.Text("All done.\nDONE", ms.U(60, 6)).WithWindows(
					ms.Window{Claim: "5h", Utilization: 0.1, ResetAt: now.Add(5 * time.Hour), SurpassedThreshold: 0.75}),
			}
		}
	}
	loop := func(extra ...string) func(string) []string {
		return func(work string) []string {
			args := []string{"loop", "--json", "-b", b.name, "--cwd", work, "--max-iterations", "3", "--timeout", runTimeout}
			return append(append(args, extra...), "Do the task in two steps. End your reply with a line DONE when it is done.")
		}
	}
	journal := func(o *outcome) []byte {
		events, err := os.ReadFile(filepath.Join(o.stateHome, "jlgcli", "runs", o.res.RunID, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return events
	}

	// The reset a few seconds ahead (the CLI takes a few to start): waited for.
	o := jlgcli(t, b, call{auth: ms.AuthSubscription, script: script(8 * time.Second), args: loop("--window-limit", "80", "--max-wait", "2m")})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	if o.res.Iterations != 2 {
		t.Fatalf("iterations %d, want 2", o.res.Iterations)
	}
	if w := o.res.Transcript[0].Windows; len(w) != 1 || w[0].Kind != "5h" || w[0].Used != 0.92 {
		t.Errorf("iteration 1's windows %+v: want 5h at 92%%", w)
	}
	if w := o.res.Windows; len(w) != 1 || w[0].Backend != "claude" || w[0].Kind != "5h" || w[0].Used != 0.1 {
		t.Errorf("the run's windows %+v: want claude 5h at 10%%", w)
	}
	if ev := journal(o); !regexp.MustCompile(`"type":"rate-limit-wait".*"window":\{"backend":"claude","kind":"5h","used":0.92`).Match(ev) {
		t.Errorf("the journal holds no wait for the 5h window:\n%s", ev)
	}
	if raw, err := os.ReadFile(filepath.Join(o.stateHome, "jlgcli", "runs", o.res.RunID, "output", "1.log")); err == nil {
		t.Logf("iteration 1's output:\n%s", raw)
	}

	// Without the flag: no wait.
	o = jlgcli(t, b, call{auth: ms.AuthSubscription, script: script(time.Hour), args: loop("--max-wait", "2m")})
	o.wantExit(t, 0)
	if o.res.Iterations != 2 || len(o.res.Windows) != 1 {
		t.Errorf("iterations %d, windows %+v: want 2 and one window", o.res.Iterations, o.res.Windows)
	}
	if bytes.Contains(journal(o), []byte(`"type":"rate-limit-wait"`)) {
		t.Errorf("waited without --window-limit")
	}

	// A reset beyond --max-wait: 69 at once, naming the window.
	o = jlgcli(t, b, call{auth: ms.AuthSubscription, script: script(time.Hour), args: loop("--window-limit", "80", "--max-wait", "1m")})
	o.wantExit(t, 69)
	o.wantStatus(t, "rate-limited")
	if o.res.Iterations != 1 || !strings.HasPrefix(o.res.Details, "claude 5h window at 92% (--window-limit 80%), resets at ") {
		t.Errorf("iterations %d, details %q: want 1 and the window named", o.res.Iterations, o.res.Details)
	}
	if n := len(o.srv.TurnRequests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// (i) codex reads its window headers (x-codex-primary-used-percent, ...) but
// "codex exec --json" prints nothing of them: sent with the answer, they
// reach no event, and jlgcli records no window (nothing is guessed).
func testWindowNone(t *testing.T, b backend) {
	o := jlgcli(t, b, call{
		script: func(string) ms.Script {
			return ms.Script{ms.Text("Hello.", ms.U(50, 5)).WithWindows(
				ms.Window{Claim: "5h", Utilization: 0.92, ResetAt: time.Now().Add(time.Hour)},
				ms.Window{Claim: "7d", Utilization: 0.5, ResetAt: time.Now().Add(72 * time.Hour)})}
		},
		args: func(work string) []string {
			return []string{"loop", "--json", "-b", b.name, "--cwd", work, "--window-limit", "80", "--max-iterations", "1",
				"--timeout", runTimeout, "Say hello."}
		},
	})
	o.wantReached(t)
	if len(o.res.Windows) != 0 {
		t.Errorf("windows %+v: %s reports none in its JSON output", o.res.Windows, b.name)
	}
	raw, err := os.ReadFile(filepath.Join(o.stateHome, "jlgcli", "runs", o.res.RunID, "output", "1.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"used_percent", "rate_limit"} {
		if bytes.Contains(raw, []byte(word)) {
			t.Errorf("the output holds %q: %s may report its windows after all:\n%s", word, b.name, raw)
		}
	}
	// The window's use as a number of its own: not the digits 9 and 2 of
	// a session's random id ("…5809274a66").
	if m := windowUse.Find(raw); m != nil {
		t.Errorf("the output holds %q: %s may report its windows after all:\n%s", m, b.name, raw)
	}
	t.Logf("output:\n%s", raw)
}

// windowUse is the 5h window's use the model server reports (92%, 0.92),
// as a number of its own in a CLI's output.
var windowUse = regexp.MustCompile(`(^|[^0-9A-Za-z.])(0\.92|92(\.0+)?)([^0-9A-Za-z.]|$)`)

// (h) --session continue: the second iteration resumes the CLI's own session
// of the first, so the model is sent the first exchange again.
func testSessionContinue(t *testing.T, b backend) {
	first := "Part one is done, the " + b.name + " session remembers it."
	o := jlgcli(t, b, call{
		script: func(string) ms.Script {
			return ms.Script{
				ms.Text(first, ms.U(100, 10)),
				ms.Text("Part two is done.\nDONE", ms.U(200, 20)),
			}
		},
		args: func(work string) []string {
			return []string{"loop", "--json", "-b", b.name, "--cwd", work, "--session", "continue", "--max-iterations", "3",
				"--timeout", runTimeout, "Do part one, then part two. End your reply with a line DONE when both are done."}
		},
	})
	o.wantExit(t, 0)
	o.wantStatus(t, "done")
	r := o.res
	if r.Iterations != 2 || len(r.Transcript) != 2 {
		t.Fatalf("iterations %d, transcript of %d; want 2", r.Iterations, len(r.Transcript))
	}
	o.wantSession(t, b)
	if s1, s2 := r.Transcript[0].SessionID, r.Transcript[1].SessionID; s1 == "" || s1 != s2 {
		t.Errorf("session ids %q then %q: want the first one continued", s1, s2)
	}
	turns := o.srv.TurnRequests()
	if len(turns) != 2 {
		t.Fatalf("%d model requests, want 2", len(turns))
	}
	if !bytes.Contains(turns[1].Body, []byte(first)) {
		t.Errorf("the second model request does not carry the first reply %q: the session was not continued", first)
	}
	if bytes.Contains(turns[0].Body, []byte(first)) {
		t.Errorf("the first model request already holds the first reply: the check above proves nothing")
	}
}

// (g) --timeout shorter than a slow answer: exit 75 soon after the limit,
// and no process of the CLI left (checked by jlgcli for every run). The CLI
// must have been stopped while it waited for the model: when a slow start on
// a loaded machine ate the whole limit before it asked, the case is run
// again with retryLimit.
func testTimeout(t *testing.T, b backend) {
	retryLimit := max(45*time.Second, 2*b.limit)
	for limit := b.limit; ; limit = retryLimit {
		o := jlgcli(t, b, call{
			watch:  true,
			guard:  limit + time.Minute,
			script: func(string) ms.Script { return ms.Script{ms.Slow(time.Minute, ms.Text("too late", ms.U(1, 1)))} },
			args: func(string) []string {
				return []string{"run", "--json", "-b", b.name, "--timeout", limit.String(), "Say hello, slowly."}
			},
		})
		o.wantExit(t, 75)
		o.wantStatus(t, "timeout")
		o.wantFailure(t, "timeout")
		if o.elapsed < limit || o.elapsed > limit+15*time.Second {
			t.Errorf("jlgcli returned after %v, want between %v and %v", o.elapsed.Round(time.Millisecond), limit, limit+15*time.Second)
		}
		if len(o.srv.TurnRequests()) == 0 && limit < retryLimit {
			t.Logf("%s sent no model request within --timeout %v (a slow start on a loaded machine): again with --timeout %v", b.name, limit, retryLimit)
			continue
		}
		o.wantReached(t)
		switch {
		case !o.leftChecked:
			t.Log("leftover processes not checked: no /proc on this system")
		case o.liveDuring == 0:
			t.Errorf("no process of the run was seen while the CLI waited for the model: the leftover check sees nothing")
		default:
			t.Logf("%d process(es) of the run were live while the CLI waited for the model; none left after", o.liveDuring)
		}
		return
	}
}

// call is one jlgcli invocation of a case. Its script and arguments are made
// once the working directory exists.
type call struct {
	auth   ms.Auth
	script func(work string) ms.Script
	args   func(work string) []string
	// setup, when set, prepares the working directory (a git repository,
	// files) before the server and the CLI's environment are made.
	setup func(t *testing.T, work string)
	// prepare, when set, is given the CLI's environment once it is made
	// (its configuration files written), before jlgcli runs.
	prepare func(t *testing.T, env []string)
	// guard bounds the call; zero: hangGuard.
	guard time.Duration
	// userConfig, when set, is written as jlgcli's user configuration file
	// ($XDG_CONFIG_HOME/jlgcli/config.toml of the isolated home).
	userConfig string
	// watch counts the run's processes once the server got a model request
	// (outcome.liveDuring), to prove that the leftover check can see them.
	watch bool
}

// outcome is what one jlgcli call gave.
type outcome struct {
	exit           int
	stdout, stderr string
	res            result
	srv            *ms.Server
	work           string
	elapsed        time.Duration
	leftChecked    bool
	liveDuring     int
	// stateHome is $XDG_STATE_HOME of the run, under which jlgcli keeps
	// the runs of a working directory outside a git repository.
	stateHome string
	// env is the CLI's environment.
	env []string
}

// result is the part of jlgcli's result object the tests read.
type result struct {
	Windows      []window `json:"windows"`
	ExitCode     int      `json:"exitCode"`
	Text         string   `json:"text"`
	Backend      string   `json:"backend"`
	Status       string   `json:"status"`
	Iterations   int      `json:"iterations"`
	Transcript   []entry  `json:"transcript"`
	Summary      string   `json:"summary"`
	Details      string   `json:"details"`
	RunID        string   `json:"runId"`
	CostUSD      float64  `json:"costUsd"`
	InputTokens  int64    `json:"inputTokens"`
	OutputTokens int64    `json:"outputTokens"`
	CostKnown    bool     `json:"costKnown"`
	SessionID    string   `json:"sessionId"`
	Failure      *fail    `json:"failure"`
}

type window struct {
	Backend  string    `json:"backend"`
	Kind     string    `json:"kind"`
	Used     float64   `json:"used"`
	ResetsAt time.Time `json:"resetsAt"`
}

type entry struct {
	Windows      []window `json:"windows"`
	Iteration    int      `json:"iteration"`
	Prompt       string   `json:"prompt"`
	Response     string   `json:"response"`
	ExitCode     int      `json:"exitCode"`
	SessionID    string   `json:"sessionId"`
	InputTokens  int64    `json:"inputTokens"`
	OutputTokens int64    `json:"outputTokens"`
	CostUSD      float64  `json:"costUsd"`
	Failure      *fail    `json:"failure"`
}

type fail struct {
	Kind       string    `json:"kind"`
	Message    string    `json:"message"`
	HTTPStatus int       `json:"httpStatus"`
	ResetAt    time.Time `json:"resetAt"`
}

// jlgcli runs jlgcli in-process against a fresh server playing c's script,
// with the real CLI of b in an isolated environment, and checks that no
// process of the run is left.
func jlgcli(t *testing.T, b backend, c call) *outcome {
	t.Helper()
	bin := ms.RequireAgent(t, b.name)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if c.setup != nil {
		c.setup(t, work)
	}
	srv := ms.New(c.script(work))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	tag := newTag()
	env, err := ms.AgentEnv(b.name, srv.URL(), home,
		ms.WithAuth(c.auth),
		ms.WithPathDir(filepath.Dir(bin)),
		tzOption(),
		ms.WithModelPrice(priceIn, priceOut),
		// The tag reaches the confined CLI as a variable the user names.
		ms.WithEnv(tagVar+"="+tag, "JLGCLI_SANDBOX_PASS_ENV="+tagVar))
	if err != nil {
		t.Fatal(err)
	}
	if c.prepare != nil {
		c.prepare(t, env)
	}
	if c.userConfig != "" {
		f := filepath.Join(lookup(env)("XDG_CONFIG_HOME"), "jlgcli", "config.toml")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c.userConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := c.args(work)
	guard := c.guard
	if guard == 0 {
		guard = hangGuard
	}

	slots <- struct{}{}
	defer func() { <-slots }()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var stdout, stderr lockedBuffer
	var live chan int
	if c.watch {
		live = make(chan int, 1)
		go func() {
			n := 0
			for ctx.Err() == nil {
				if len(srv.TurnRequests()) > 0 {
					n = len(tagged(tag))
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			live <- n
		}()
	}
	start := time.Now()
	code := cli.Main(ctx, args, cli.Stdio{
		In:      strings.NewReader(""),
		Out:     &stdout,
		Err:     &stderr,
		Getenv:  lookup(env),
		Environ: env,
		Dir:     work,
	})
	o := &outcome{exit: code, stdout: stdout.String(), stderr: stderr.String(), srv: srv, work: work, elapsed: time.Since(start),
		stateHome: lookup(env)("XDG_STATE_HOME"), env: env}
	if ctx.Err() != nil {
		t.Errorf("jlgcli %s: still running after %v (hang guard)", strings.Join(args, " "), guard)
	}
	if live != nil {
		cancel()
		o.liveDuring = <-live
	}
	t.Logf("jlgcli %s\n-> exit %d after %v\nstdout:\n%s\nstderr:\n%s", quoteArgs(args), code, o.elapsed.Round(time.Millisecond), clip(o.stdout, 8000), clip(o.stderr, 4000))
	if turns := srv.TurnRequests(); len(turns) > 0 {
		t.Logf("first model request %v after jlgcli started", turns[0].Time.Sub(start).Round(time.Millisecond))
	}
	for i, q := range srv.Requests() {
		t.Logf("server request %d: %s %s protocol=%s turn=%d aux=%v err=%q user=%q", i, q.Method, q.Path, q.Protocol, q.Turn, q.Aux, q.Error, clip(q.LastUserText(), 200))
	}
	o.leftChecked = checkLeftovers(t, tag)
	if err := json.Unmarshal([]byte(o.stdout), &o.res); err != nil {
		t.Fatalf("stdout is not one result object: %v", err)
	}
	if o.res.ExitCode != code {
		t.Errorf("result exitCode %d, but jlgcli exited %d", o.res.ExitCode, code)
	}
	if o.res.Backend != b.name {
		t.Errorf("result backend %q, want %q", o.res.Backend, b.name)
	}
	return o
}

func (o *outcome) wantExit(t *testing.T, code int) {
	t.Helper()
	if o.exit != code {
		t.Errorf("exit %d, want %d (status %q, details %q)", o.exit, code, o.res.Status, o.res.Details)
	}
}

func (o *outcome) wantStatus(t *testing.T, status string) {
	t.Helper()
	if o.res.Status != status {
		t.Errorf("status %q, want %q (details %q)", o.res.Status, status, o.res.Details)
	}
}

// wantConfined checks that the loop's agent ran in the sandbox wherever the
// machine can confine (sandbox auto, the default): its run records it.
func (o *outcome) wantConfined(t *testing.T) {
	t.Helper()
	tool, why := sandbox.Available()
	if why != "" {
		if os.Getenv("JLGCLI_REQUIRE_SANDBOX") == "1" {
			t.Errorf("JLGCLI_REQUIRE_SANDBOX=1 but %s", why)
		}
		return
	}
	b, err := os.ReadFile(filepath.Join(o.stateHome, "jlgcli", "runs", o.res.RunID, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Sandbox *sandbox.Record }
	if err := json.Unmarshal(b, &meta); err != nil || meta.Sandbox == nil || !meta.Sandbox.Confined || meta.Sandbox.Tool != tool {
		t.Errorf("the run's sandbox is %+v (%v), want confined by %s", meta.Sandbox, err, tool)
	}
}

func (o *outcome) wantFailure(t *testing.T, kind string) {
	t.Helper()
	switch f := o.res.Failure; {
	case f == nil:
		t.Errorf("no failure in the result, want kind %q", kind)
	case f.Kind != kind:
		t.Errorf("failure.kind %q (%q), want %q", f.Kind, f.Message, kind)
	}
}

// wantReached checks that the CLI sent the server a model request.
func (o *outcome) wantReached(t *testing.T) {
	t.Helper()
	if len(o.srv.TurnRequests()) == 0 {
		t.Errorf("the CLI sent no model request")
	}
}

func (o *outcome) wantSession(t *testing.T, b backend) {
	t.Helper()
	r := o.res
	if !b.session.MatchString(r.SessionID) {
		t.Errorf("sessionId %q does not look like a %s session id (%s)", r.SessionID, b.name, b.session)
	}
	if len(r.Transcript) > 0 && r.Transcript[len(r.Transcript)-1].SessionID != r.SessionID {
		t.Errorf("sessionId %q, but the transcript's last is %q", r.SessionID, r.Transcript[len(r.Transcript)-1].SessionID)
	}
}

// wantUsage checks the totals of tokens and cost against the scripted usage.
func (o *outcome) wantUsage(t *testing.T, b backend, in, out int64) {
	t.Helper()
	r := o.res
	if !b.tokens {
		in, out = 0, 0
	}
	if r.InputTokens != in || r.OutputTokens != out {
		t.Errorf("tokens in/out = %d/%d, want %d/%d", r.InputTokens, r.OutputTokens, in, out)
	}
	switch b.cost {
	case costNone:
		if r.CostKnown || r.CostUSD != 0 {
			t.Errorf("costKnown %v, costUsd %v; want false, 0 (%s reports no cost)", r.CostKnown, r.CostUSD, b.name)
		}
	case costOwn:
		if !r.CostKnown || r.CostUSD <= 0 {
			t.Errorf("costKnown %v, costUsd %v; want a known positive cost", r.CostKnown, r.CostUSD)
		}
	case costPriced:
		want := (float64(in)*priceIn + float64(out)*priceOut) / 1e6
		if !r.CostKnown || math.Abs(r.CostUSD-want) > 1e-9 {
			t.Errorf("costKnown %v, costUsd %v; want true, %v", r.CostKnown, r.CostUSD, want)
		}
	}
}

// checkLeftovers fails the test when a process carrying the run's tag is
// still there leftoverWait after jlgcli returned, and kills it. It reports
// whether it could check (Linux /proc).
func checkLeftovers(t *testing.T, tag string) bool {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		return false
	}
	deadline := time.Now().Add(leftoverWait)
	for {
		pids := tagged(tag)
		if len(pids) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				desc = append(desc, fmt.Sprintf("%d %s", pid, strings.Join(strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00"), " ")))
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("%d process(es) of the CLI left running %v after jlgcli returned (killed now):\n%s", len(pids), leftoverWait, strings.Join(desc, "\n"))
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tagged lists the live processes whose environment holds tagVar=tag.
func tagged(tag string) []int {
	want := []byte(tagVar + "=" + tag)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or a zombie
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func newTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tzOption gives the CLI the time zone jlgcli runs in: a CLI that prints a
// wall-clock reset time (codex) prints it in its zone, and jlgcli reads it in
// its own.
func tzOption() ms.EnvOption {
	tz, ok := os.LookupEnv("TZ")
	switch {
	case !ok:
		return ms.WithTZ("") // both use the system's zone
	case tz == "":
		return ms.WithTZ("UTC") // Go reads an empty TZ as UTC
	}
	return ms.WithTZ(tz)
}

// lookup is a Getenv over env, the last assignment winning.
func lookup(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\n'\"") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + "\n...\n" + s[len(s)-n/2:]
}

// TestLeftoverCheck proves that the leftover check sees a tagged process,
// whatever its process group, and not an untagged one.
func TestLeftoverCheck(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc on this system")
	}
	tag := newTag()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), tagVar+"="+tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := tagged(tag); len(got) != 1 || got[0] != cmd.Process.Pid {
		t.Errorf("tagged(tag) = %v, want [%d]", got, cmd.Process.Pid)
	}
	if got := tagged(newTag()); len(got) != 0 {
		t.Errorf("tagged(another tag) = %v, want none", got)
	}
}
