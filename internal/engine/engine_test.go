package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
)

// fakeAgent replies from a script and records every request.
type fakeAgent struct {
	avail   agent.Availability
	replies []agent.Response
	delay   time.Duration // each call waits this long, or until ctx ends
	onRun   func()        // called at each call (e.g. to move a fake clock)

	mu   sync.Mutex
	reqs []agent.Request
}

func (f *fakeAgent) Name() string { return "fake" }

func (f *fakeAgent) Check(context.Context) agent.Availability {
	if f.avail.Status == "" {
		return agent.Availability{Status: agent.Available}
	}
	return f.avail
}

func (f *fakeAgent) Run(ctx context.Context, req agent.Request) (agent.Response, error) {
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.onRun != nil {
		f.onRun()
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return agent.Response{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailTimeout, Message: "stopped"}}, nil
		}
	}
	if n < len(f.replies) {
		return f.replies[n], nil
	}
	return agent.Response{Text: "ok"}, nil
}

func texts(ss ...string) []agent.Response {
	out := make([]agent.Response, len(ss))
	for i, s := range ss {
		out[i] = agent.Response{Text: s}
	}
	return out
}

func opts(mod func(*Options)) Options {
	o := Options{
		Prompt:          "Task",
		MaxIterations:   10,
		Timeout:         5 * time.Minute,
		Completion:      completion.ModeMarker,
		Marker:          "DONE",
		NoProgressLimit: 3,
	}
	if mod != nil {
		mod(&o)
	}
	return o
}

// TestLoopSeedCases covers every test case written in seeds 001 and 000.
func TestLoopSeedCases(t *testing.T) {
	tests := []struct {
		name       string
		agent      *fakeAgent
		opts       func(*Options)
		status     Status
		exit       int
		iterations int
		summary    string
		details    string // a substring of Details
	}{
		// Seed 001.
		{name: "marker DONE after 2 iterations", agent: &fakeAgent{replies: texts("Step 1 in progress", "Step 2 completed\nDONE")},
			status: StatusDone, exit: 0, iterations: 2},
		{name: "continue while DONE absent", agent: &fakeAgent{replies: texts("Still working...", "More work...", "DONE")},
			opts: func(o *Options) { o.MaxIterations = 5 }, status: StatusDone, exit: 0, iterations: 3},
		{name: "UNDONE is not the marker", agent: &fakeAgent{replies: texts("UNDONE", "still UNDONE", "DONE.")},
			opts: func(o *Options) { o.MaxIterations = 3 }, status: StatusMaxIterations, exit: 4, iterations: 3},
		{name: "json status done", agent: &fakeAgent{replies: texts(`{"status":"continue","next":"step2"}`, `{"status":"done","summary":"Task completed"}`)},
			opts: func(o *Options) { o.Completion = completion.ModeJSON }, status: StatusDone, exit: 0, iterations: 2, summary: "Task completed"},
		{name: "json invalid", agent: &fakeAgent{replies: texts("This is not JSON at all")},
			opts: func(o *Options) { o.Completion = completion.ModeJSON }, status: StatusInvalidJSON, exit: 65, iterations: 1, details: "status"},
		{name: "max iterations", agent: &fakeAgent{replies: texts("Working 1", "Working 2", "Working 3")},
			opts: func(o *Options) { o.MaxIterations = 3 }, status: StatusMaxIterations, exit: 4, iterations: 3},
		{name: "global timeout", agent: &fakeAgent{delay: time.Hour},
			opts: func(o *Options) { o.MaxIterations = 100; o.Timeout = 50 * time.Millisecond }, status: StatusTimeout, exit: 75, iterations: 1},
		{name: "backend missing", agent: &fakeAgent{avail: agent.Availability{Status: agent.Missing, Details: "command not found: copilot"}},
			status: StatusBackendMissing, exit: 2, iterations: 0, details: "not found"},
		{name: "backend unauthenticated", agent: &fakeAgent{avail: agent.Availability{Status: agent.Unauthenticated, Details: "Login required"}},
			status: StatusBackendUnauthenticated, exit: 6, iterations: 0, details: "Login required"},
		{name: "backend unsupported", agent: &fakeAgent{avail: agent.Availability{Status: agent.Unsupported, Details: "too old"}},
			status: StatusBackendUnsupported, exit: 64, iterations: 0},
		{name: "agent exit code passed through", agent: &fakeAgent{replies: []agent.Response{{Text: "Backend error occurred", ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailCrash}}}},
			status: StatusError, exit: 1, iterations: 1},
		{name: "agent exit 3 passed through", agent: &fakeAgent{replies: []agent.Response{{Text: "boom", ExitCode: 3}}},
			status: StatusError, exit: 3, iterations: 1},
		{name: "api error with status 0 exits 1", agent: &fakeAgent{replies: []agent.Response{{Text: "API Error: 500", Failure: &agent.Failure{Kind: agent.FailAPI, HTTPStatus: 500}}}},
			status: StatusError, exit: 1, iterations: 1},
		{name: "auth failure on first call", agent: &fakeAgent{replies: []agent.Response{{Text: "Not logged in", ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailAuth, Message: "Not logged in · Please run /login"}}}},
			status: StatusBackendUnauthenticated, exit: 6, iterations: 1, details: "Not logged in"},
		{name: "rate limited with reset", agent: &fakeAgent{replies: []agent.Response{{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429", ResetAt: time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)}}}},
			status: StatusRateLimited, exit: 69, iterations: 0, details: "2026-11-22T13:00:00Z"},
		// Seed 000.
		{name: "stop after noProgressLimit identical replies", agent: &fakeAgent{replies: texts("Same response", "Same response", "Same response")},
			opts: func(o *Options) { o.NoProgressLimit = 3 }, status: StatusNoProgress, exit: 5, iterations: 3, details: "3 identical"},
		{name: "counter resets on a different reply", agent: &fakeAgent{replies: texts("Response A", "Response A", "Response B", "Response B", "DONE")},
			opts: func(o *Options) { o.NoProgressLimit = 3 }, status: StatusDone, exit: 0, iterations: 5},
		{name: "noProgressLimit 0 disables", agent: &fakeAgent{replies: texts("Same", "Same", "Same", "Same", "Same")},
			opts: func(o *Options) { o.NoProgressLimit = 0; o.MaxIterations = 5 }, status: StatusMaxIterations, exit: 4, iterations: 5},
		{name: "noProgressLimit 2", agent: &fakeAgent{replies: texts("Repeat", "Repeat")},
			opts: func(o *Options) { o.NoProgressLimit = 2 }, status: StatusNoProgress, exit: 5, iterations: 2},
		{name: "no-progress checked before completion", agent: &fakeAgent{replies: texts("DONE?", "DONE?", "DONE")},
			opts: func(o *Options) { o.NoProgressLimit = 2 }, status: StatusNoProgress, exit: 5, iterations: 2},
		{name: "identical done replies: no-progress wins", agent: &fakeAgent{replies: texts("x\nDONE", "x\nDONE")},
			opts: func(o *Options) { o.NoProgressLimit = 1 }, status: StatusNoProgress, exit: 5, iterations: 1},
		// run (one call).
		{name: "once done without marker", agent: &fakeAgent{replies: texts("hello")},
			opts: func(o *Options) { o.Once = true }, status: StatusDone, exit: 0, iterations: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.agent, opts(tt.opts))
			if res.Status != tt.status || res.ExitCode != tt.exit || res.Iterations != tt.iterations {
				t.Fatalf("got status %s exit %d iterations %d, want %s %d %d (details %q)",
					res.Status, res.ExitCode, res.Iterations, tt.status, tt.exit, tt.iterations, res.Details)
			}
			if len(res.Transcript) != res.Iterations {
				t.Errorf("transcript has %d entries for %d iterations", len(res.Transcript), res.Iterations)
			}
			if res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
			if !strings.Contains(res.Details, tt.details) {
				t.Errorf("details %q do not contain %q", res.Details, tt.details)
			}
			if tt.status != StatusDone && res.Details == "" {
				t.Errorf("a run that is not done must say why")
			}
		})
	}
}

// With noProgressLimit 1 every reply is a repetition of itself: the seed's
// counter starts at 1, so the first reply already meets a limit of 1.
func TestNoProgressLimitOneStopsAtOnce(t *testing.T) {
	res := Run(context.Background(), &fakeAgent{replies: texts("a", "b")}, opts(func(o *Options) { o.NoProgressLimit = 1 }))
	if res.Status != StatusNoProgress || res.Iterations != 1 {
		t.Fatalf("got %s after %d", res.Status, res.Iterations)
	}
}

func TestJSONNextIsTheNextPrompt(t *testing.T) {
	a := &fakeAgent{replies: texts(`{"status":"continue","next":"Do step 2"}`, `{"status":"continue"}`, `{"status":"done"}`)}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Prompt = "Start"; o.Completion = completion.ModeJSON }))
	if res.Status != StatusDone {
		t.Fatalf("status %s", res.Status)
	}
	var prompts []string
	for _, r := range a.reqs {
		prompts = append(prompts, r.Prompt)
	}
	// continue without next keeps the prompt it had.
	if diff := cmp.Diff([]string{"Start", "Do step 2", "Do step 2"}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
}

func TestOptionsPassedToEveryCall(t *testing.T) {
	a := &fakeAgent{replies: texts("one", "DONE")}
	Run(context.Background(), a, opts(func(o *Options) {
		o.Dir = "/custom/path"
		o.Env = []string{"MY_VAR=value"}
		o.Model = "m1"
	}))
	if len(a.reqs) != 2 {
		t.Fatalf("%d calls", len(a.reqs))
	}
	for _, r := range a.reqs {
		if r.Dir != "/custom/path" || !cmp.Equal(r.Env, []string{"MY_VAR=value"}) || r.Model != "m1" {
			t.Errorf("request %+v", r)
		}
	}
}

func TestTranscriptAndTotals(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{
		{Text: "Response 1", SessionID: "s1", Usage: agent.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: 0.5, CostKnown: true}},
		{Text: "Response 2\nDONE", SessionID: "s1", Usage: agent.Usage{InputTokens: 20, OutputTokens: 3, CostUSD: 0.25, CostKnown: true}},
	}}
	// Each call takes one second of a fake clock.
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	a.onRun = func() { clock = clock.Add(time.Second) }
	obs := &recorder{}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Prompt = "Initial prompt"; o.Now = now; o.Observer = obs; o.RunID = "r1" }))
	want := []Entry{
		{Iteration: 1, StartedAt: "2026-11-22T10:00:00.000Z", Prompt: "Initial prompt", Response: "Response 1", DurationMs: 1000, SessionID: "s1", InputTokens: 10, OutputTokens: 2, CostUSD: 0.5, CostKnown: true},
		{Iteration: 2, StartedAt: "2026-11-22T10:00:01.000Z", Prompt: "Initial prompt", Response: "Response 2\nDONE", DurationMs: 1000, SessionID: "s1", InputTokens: 20, OutputTokens: 3, CostUSD: 0.25, CostKnown: true},
	}
	if diff := cmp.Diff(want, res.Transcript); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if res.InputTokens != 30 || res.OutputTokens != 5 || res.CostUSD != 0.75 || !res.CostKnown || res.SessionID != "s1" || res.RunID != "r1" {
		t.Errorf("totals %+v", res)
	}
	if res.Text != "Response 2\nDONE" || res.DurationMs != 2000 {
		t.Errorf("text %q duration %d", res.Text, res.DurationMs)
	}
	if diff := cmp.Diff([]int{1, 2}, obs.started); diff != "" {
		t.Errorf("observer started: %s", diff)
	}
	if diff := cmp.Diff([]int{1, 2}, obs.done); diff != "" {
		t.Errorf("observer done: %s", diff)
	}
}

type recorder struct{ started, done []int }

func (r *recorder) IterationStarted(i, _ int, _ time.Time) { r.started = append(r.started, i) }
func (r *recorder) IterationDone(e Entry, _ *Result)       { r.done = append(r.done, e.Iteration) }

func TestTimeoutIsGlobalAcrossIterations(t *testing.T) {
	// Each call takes 30ms; with 100ms in all, the run cannot reach the
	// 10th iteration, whatever each call's own length.
	a := &fakeAgent{delay: 30 * time.Millisecond}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Timeout = 100 * time.Millisecond; o.NoProgressLimit = 0 }))
	if res.Status != StatusTimeout || res.ExitCode != 75 {
		t.Fatalf("got %s (%d)", res.Status, res.ExitCode)
	}
	if res.Iterations >= 10 {
		t.Errorf("%d iterations: the timeout is not global", res.Iterations)
	}
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeAgent{delay: time.Hour}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	res := Run(ctx, a, opts(nil))
	if res.Status != StatusInterrupted || res.ExitCode != 130 {
		t.Fatalf("got %s (%d)", res.Status, res.ExitCode)
	}
}

func TestTruncatedReplyIsReported(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{{Text: "tail\nDONE", Truncated: true}}}
	res := Run(context.Background(), a, opts(nil))
	if !res.Truncated || !res.Transcript[0].Truncated {
		t.Fatalf("truncated not reported: %+v", res)
	}
}

func TestExitCodeTable(t *testing.T) {
	want := map[Status]int{
		StatusDone: 0, StatusBackendMissing: 2, StatusMaxIterations: 4, StatusNoProgress: 5,
		StatusBackendUnauthenticated: 6, StatusBudgetExceeded: 7, StatusBackendUnknown: 64,
		StatusBackendUnsupported: 64, StatusInvalidJSON: 65, StatusRateLimited: 69, StatusTimeout: 75,
		StatusInterrupted: 130, StatusError: 1,
	}
	for s, code := range want {
		if got := s.ExitCode(); got != code {
			t.Errorf("%s: exit %d, want %d", s, got, code)
		}
	}
}
