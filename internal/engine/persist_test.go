package engine

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// memJournal keeps events in memory.
type memJournal struct {
	mu     sync.Mutex
	events []Event
	cps    []Checkpoint
	// failAfter, when > 0, makes Record fail from that many events on.
	failAfter int
}

func (j *memJournal) Record(ev Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failAfter > 0 && len(j.events) >= j.failAfter {
		return io.ErrShortWrite
	}
	j.events = append(j.events, ev)
	return nil
}

func (j *memJournal) Checkpoint(cp Checkpoint) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cps = append(j.cps, cp)
	return nil
}

func (j *memJournal) Output(int) io.WriteCloser { return nil }

func (j *memJournal) types() []string {
	var out []string
	for _, ev := range j.events {
		out = append(out, ev.Type)
	}
	return out
}

func TestJournalRecordsEveryIterationOnce(t *testing.T) {
	j := &memJournal{}
	a := &fakeAgent{replies: texts("one", "two", "DONE")}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Journal = j; o.RunID = "r" }))
	if res.Status != StatusDone {
		t.Fatal(res.Status)
	}
	if diff := cmp.Diff([]string{"start", "iteration", "iteration", "iteration", "stop"}, j.types()); diff != "" {
		t.Errorf("events: %s", diff)
	}
	st, tr, stop, err := Replay(j.events)
	if err != nil {
		t.Fatal(err)
	}
	if st.Iterations != 3 || len(tr) != 3 || stop == nil || stop.Status != StatusDone {
		t.Errorf("replay: %+v %d %+v", st, len(tr), stop)
	}
	if diff := cmp.Diff(res.Transcript, tr); diff != "" {
		t.Errorf("replayed transcript differs: %s", diff)
	}
	shown, err := ResultOf("r", "fake", j.events)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, shown); diff != "" {
		t.Errorf("the result rebuilt from the journal differs (-run +rebuilt):\n%s", diff)
	}
	last := j.cps[len(j.cps)-1]
	if Status(last.Status) != StatusDone || last.RunID != "r" || last.State.Iterations != 3 {
		t.Errorf("last checkpoint %+v", last)
	}
}

// A run stopped after any number of recorded events resumes to the same
// result as a run that was never stopped: no iteration lost or repeated.
func TestResumeFromEveryPrefix(t *testing.T) {
	replies := func() []agent.Response {
		return texts("a", "b", `{"status":"continue","next":"step 3"}`, "c", "c", "d\nDONE")
	}
	full := Run(context.Background(), &fakeAgent{replies: replies()}, opts(func(o *Options) { o.Journal = &memJournal{} }))
	if full.Status != StatusDone || full.Iterations != 6 {
		t.Fatalf("full run: %s after %d", full.Status, full.Iterations)
	}
	j := &memJournal{}
	Run(context.Background(), &fakeAgent{replies: replies()}, opts(func(o *Options) { o.Journal = j }))
	for cut := 1; cut < len(j.events); cut++ {
		events := append([]Event(nil), j.events[:cut]...)
		st, tr, _, err := Replay(events)
		if err != nil {
			t.Fatal(err)
		}
		// The agent goes on from where the first run was.
		a := &fakeAgent{replies: replies()[st.Iterations:]}
		res := Run(context.Background(), a, opts(func(o *Options) {
			o.Journal = &memJournal{}
			o.Resume = &Resume{State: st, Transcript: tr}
		}))
		if res.Status != StatusDone || res.Iterations != 6 {
			t.Errorf("cut %d: %s after %d", cut, res.Status, res.Iterations)
			continue
		}
		var got, want []string
		for k := range res.Transcript {
			got = append(got, res.Transcript[k].Prompt+"|"+res.Transcript[k].Response)
			want = append(want, full.Transcript[k].Prompt+"|"+full.Transcript[k].Response)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cut %d: transcript (-want +got):\n%s", cut, diff)
		}
	}
}

// A run killed after its last reply was accepted as done and recorded,
// before its stop was, is done on resume: the agent is not called again, and
// the limit of iterations it reached does not turn it into a stop.
func TestResumeOfAcceptedDoneEndsDone(t *testing.T) {
	j := &memJournal{}
	res := Run(context.Background(), &fakeAgent{replies: texts("a", "b\nDONE")},
		opts(func(o *Options) { o.Journal = j; o.MaxIterations = 2 }))
	if res.Status != StatusDone {
		t.Fatalf("first run: %s", res.Status)
	}
	events := j.events[:len(j.events)-1] // the stop was never written
	st, tr, stop, err := Replay(events)
	if err != nil || stop != nil || !st.Accepted {
		t.Fatalf("replay: state %+v, stop %+v, %v", st, stop, err)
	}
	a := &fakeAgent{}
	again := &memJournal{}
	got := Run(context.Background(), a, opts(func(o *Options) {
		o.Journal = again
		o.MaxIterations = 2
		o.Resume = &Resume{State: st, Transcript: tr}
	}))
	if got.Status != StatusDone || got.ExitCode != 0 || got.Iterations != 2 || len(a.reqs) != 0 {
		t.Errorf("resumed: %s (exit %d) after %d iterations, %d agent calls; want done, 0, 2, 0", got.Status, got.ExitCode, got.Iterations, len(a.reqs))
	}
	if diff := cmp.Diff([]string{"resume", "stop"}, again.types()); diff != "" {
		t.Errorf("events of the resume: %s", diff)
	}
	// A reply that was refused or only continued is not done on resume.
	for _, v := range []string{"continue", "refused"} {
		ev := events[len(events)-1]
		var d IterationData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		d.Verdict = v
		ev.Data, _ = json.Marshal(d)
		st, _, _, _ := Replay(append(append([]Event(nil), events[:len(events)-1]...), ev))
		if st.Accepted {
			t.Errorf("verdict %s replays as accepted", v)
		}
	}
}

func TestResumeKeepsNoProgressCount(t *testing.T) {
	j := &memJournal{}
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeAgent{replies: texts("same", "same")}
	a.onRun = func() {
		if len(a.reqs) == 3 {
			cancel() // interrupted during the third call
		}
	}
	a.delay = 10 * time.Millisecond
	res := Run(ctx, a, opts(func(o *Options) { o.Journal = j }))
	if res.Status != StatusInterrupted || res.Iterations != 2 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	st, tr, stop, _ := Replay(j.events)
	if stop == nil || stop.Status != StatusInterrupted || st.Repeats != 2 {
		t.Fatalf("state %+v stop %+v", st, stop)
	}
	res = Run(context.Background(), &fakeAgent{replies: texts("same")}, opts(func(o *Options) {
		o.Resume = &Resume{State: st, Transcript: tr}
	}))
	if res.Status != StatusNoProgress || res.Iterations != 3 {
		t.Errorf("resumed: %s after %d (the count of identical replies must survive the resume)", res.Status, res.Iterations)
	}
}

func TestResumeCountsTimeAlreadyUsed(t *testing.T) {
	st := State{Iterations: 1, ElapsedMs: millis.Of(5 * time.Minute), Prompt: "Task"}
	res := Run(context.Background(), &fakeAgent{}, opts(func(o *Options) {
		o.Resume = &Resume{State: st, Transcript: []Entry{{Iteration: 1}}}
	}))
	if res.Status != StatusTimeout || res.Iterations != 1 {
		t.Errorf("%s after %d: the 5m already used must count against the 5m timeout", res.Status, res.Iterations)
	}
}

type guardFunc func(reply string) *Refusal

func (g guardFunc) Check(_ context.Context, reply string) *Refusal { return g(reply) }

func TestGuardRefusesDoneAndFeedsBack(t *testing.T) {
	calls := 0
	gate := guardFunc(func(string) *Refusal {
		calls++
		if calls == 1 {
			return &Refusal{Guard: "checks", Details: "go test failed", Prompt: "Check `go test` failed:\nFAIL TestX"}
		}
		return nil
	})
	a := &fakeAgent{replies: texts("DONE", "fixed\nDONE")}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Guards = []Guard{gate} }))
	if res.Status != StatusDone || res.Iterations != 2 || res.GateFailed {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	if p := a.reqs[1].Prompt; !strings.Contains(p, "FAIL TestX") || !strings.Contains(p, "Task") {
		t.Errorf("second prompt does not carry the failure and the task:\n%s", p)
	}
}

type callGuardFunc func() *Refusal

func (g callGuardFunc) CheckCall(context.Context) *Refusal { return g() }

// TestCallGuardRefusesAnyIteration: a call guard refuses an iteration
// whose reply claims only progress, and one that claims done, as a guard's
// refusal of done: the next prompt says why, the entry and show know it.
func TestCallGuardRefusesAnyIteration(t *testing.T) {
	calls := 0
	cg := callGuardFunc(func() *Refusal {
		calls++
		if calls <= 2 {
			return &Refusal{Guard: "git-control", Details: "undid .git/config", Prompt: "do not touch .git/config"}
		}
		return nil
	})
	a := &fakeAgent{replies: texts("working on it", "DONE", "fixed\nDONE")}
	res := Run(context.Background(), a, opts(func(o *Options) { o.CallGuards = []CallGuard{cg} }))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("%s after %d, want done after 3", res.Status, res.Iterations)
	}
	for i := 1; i <= 2; i++ {
		if p := a.reqs[i].Prompt; !strings.Contains(p, "do not touch .git/config") {
			t.Errorf("prompt %d does not say why the last iteration was refused:\n%s", i+1, p)
		}
		if r := res.Transcript[i-1].Refusal; r == nil || r.Guard != "git-control" {
			t.Errorf("iteration %d's entry has refusal %+v", i, r)
		}
	}
	if res.Transcript[2].Refusal != nil {
		t.Errorf("the accepted iteration has a refusal")
	}
}

func TestLimitWithGateFailingSaysSo(t *testing.T) {
	gate := guardFunc(func(string) *Refusal {
		return &Refusal{Guard: "checks", Details: "go test failed", Prompt: "fix it"}
	})
	a := &fakeAgent{replies: texts("DONE 1\nDONE", "DONE 2\nDONE")}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Guards = []Guard{gate}; o.MaxIterations = 2 }))
	if res.Status != StatusMaxIterations || res.ExitCode != 4 || !res.GateFailed || !strings.Contains(res.Details, "go test failed") {
		t.Fatalf("%+v", res)
	}
}

func TestStallCountsAndRetries(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{
		{ExitCode: 143, Failure: &agent.Failure{Kind: agent.FailStall, Message: "no output for 10m"}},
		{Text: "DONE"},
	}}
	res := Run(context.Background(), a, opts(func(o *Options) { o.StallTimeout = time.Minute }))
	if res.Status != StatusDone || res.Iterations != 2 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	if f := res.Transcript[0].Failure; f == nil || f.Kind != agent.FailStall {
		t.Errorf("the stall is not recorded: %+v", res.Transcript[0])
	}
	if a.reqs[0].StallTimeout != time.Minute || a.reqs[1].Prompt != a.reqs[0].Prompt {
		t.Errorf("requests %+v", a.reqs)
	}
}

func TestRateLimitWaitsForReset(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var slept []time.Duration
	j := &memJournal{}
	a := &fakeAgent{replies: []agent.Response{
		{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429", ResetAt: clock.Add(20 * time.Minute)}},
		{Text: "DONE"},
	}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.Journal = j
		o.MaxWait = time.Hour
		o.Now = func() time.Time { return clock }
		o.Sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			clock = clock.Add(d)
			return nil
		}
	}))
	if res.Status != StatusDone || res.Iterations != 1 {
		t.Fatalf("%s after %d: %s", res.Status, res.Iterations, res.Details)
	}
	if diff := cmp.Diff([]time.Duration{20*time.Minute + time.Second}, slept); diff != "" {
		t.Errorf("slept: %s", diff)
	}
	// The wait is neither an iteration nor active time.
	if res.DurationMs != 0 {
		t.Errorf("duration %dms counts the wait", res.DurationMs)
	}
	st, _, _, _ := Replay(j.events)
	if st.WaitedMs != millis.Of(20*time.Minute+time.Second) {
		t.Errorf("waited %d", st.WaitedMs)
	}
}

func TestRateLimitBeyondMaxWaitStops(t *testing.T) {
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	a := &fakeAgent{replies: []agent.Response{
		{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429", ResetAt: clock.Add(2 * time.Hour)}},
	}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = time.Hour
		o.Now = func() time.Time { return clock }
		o.Sleep = func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }
	}))
	if res.Status != StatusRateLimited || res.ExitCode != 69 || !strings.Contains(res.Details, "max-wait") {
		t.Fatalf("%+v", res)
	}
}

// Without a reset time, the back-off is capped at what is left of MaxWait;
// the call is made again then, and a refusal after that stops the run.
func TestRateLimitWithoutResetWaitsWhatIsLeft(t *testing.T) {
	var slept []time.Duration
	fail := agent.Response{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429"}}
	a := &fakeAgent{replies: []agent.Response{fail, {Text: "DONE"}}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = 2 * time.Second
		o.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	}))
	if res.Status != StatusDone || len(a.reqs) != 2 || !cmp.Equal(slept, []time.Duration{2 * time.Second}) {
		t.Fatalf("%s after %d calls, slept %v: want done after 2 calls and one wait of 2s", res.Status, len(a.reqs), slept)
	}

	slept = nil
	a = &fakeAgent{replies: []agent.Response{fail, fail, fail}}
	res = Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = 2 * time.Second
		o.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	}))
	if res.Status != StatusRateLimited || res.ExitCode != 69 || len(a.reqs) != 2 || len(slept) != 1 {
		t.Fatalf("%s (%d) after %d calls, slept %v: want rate-limited after 2 calls and one wait", res.Status, res.ExitCode, len(a.reqs), slept)
	}
	if !strings.Contains(res.Details, "--max-wait 2s is spent") {
		t.Errorf("details: %s", res.Details)
	}
}

func TestRateLimitWithoutResetBacksOff(t *testing.T) {
	var slept []time.Duration
	fail := agent.Response{ExitCode: 1, Failure: &agent.Failure{Kind: agent.FailRateLimit, Message: "429"}}
	a := &fakeAgent{replies: []agent.Response{fail, fail, {Text: "DONE"}}}
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.MaxWait = time.Hour
		o.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	}))
	if res.Status != StatusDone || len(slept) != 2 {
		t.Fatalf("%s, slept %v", res.Status, slept)
	}
	if slept[0] < 30*time.Second || slept[0] > 38*time.Second || slept[1] < 60*time.Second {
		t.Errorf("backoff %v: want about 30s then about 60s", slept)
	}
}

func TestSessionContinueResumesTheAgentSession(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{{Text: "one", SessionID: "s1"}, {Text: "two", SessionID: "s1"}, {Text: "DONE", SessionID: "s1"}}}
	Run(context.Background(), a, opts(func(o *Options) { o.Session = SessionContinue }))
	var ids []string
	for _, r := range a.reqs {
		ids = append(ids, r.SessionID)
	}
	if diff := cmp.Diff([]string{"", "s1", "s1"}, ids); diff != "" {
		t.Errorf("session ids: %s", diff)
	}
}

func TestSessionFullRotatesToFresh(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{
		{Text: "one", SessionID: "s1"},
		{ExitCode: 1, SessionID: "s1", Failure: &agent.Failure{Kind: agent.FailContext, Message: "prompt is too long"}},
		{Text: "DONE", SessionID: "s2"},
	}}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Session = SessionContinue; o.Handoff = true; o.ProgressFile = "/run/progress.md" }))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	if a.reqs[2].SessionID != "" || !strings.Contains(a.reqs[2].Prompt, "/run/progress.md") || !strings.Contains(a.reqs[2].Prompt, "Task") {
		t.Errorf("after a full session the next call must be fresh with a handoff: %+v", a.reqs[2])
	}
}

func TestFreshSessionHandoff(t *testing.T) {
	a := &fakeAgent{replies: texts(`{"status":"continue","next":"now step 2"}`, `{"status":"done"}`)}
	Run(context.Background(), a, opts(func(o *Options) {
		o.Completion = "json"
		o.Handoff = true
		o.ProgressFile = "/run/progress.md"
	}))
	first, second := a.reqs[0].Prompt, a.reqs[1].Prompt
	if !strings.HasPrefix(first, "Task\n\n") || !strings.Contains(first, "/run/progress.md") {
		t.Errorf("first prompt:\n%s", first)
	}
	for _, want := range []string{"## Task\n\nTask", "## Next step\n\nnow step 2", "/run/progress.md"} {
		if !strings.Contains(second, want) {
			t.Errorf("handoff lacks %q:\n%s", want, second)
		}
	}
	if a.reqs[1].SessionID != "" {
		t.Error("fresh mode passed a session id")
	}
}

// Without a handoff (the default), a full session rotates to a fresh one
// that gets the user's prompt again, exactly.
func TestSessionFullRotatesToTheSamePrompt(t *testing.T) {
	a := &fakeAgent{replies: []agent.Response{
		{Text: "one", SessionID: "s1"},
		{ExitCode: 1, SessionID: "s1", Failure: &agent.Failure{Kind: agent.FailContext, Message: "prompt is too long"}},
		{Text: "DONE", SessionID: "s2"},
	}}
	res := Run(context.Background(), a, opts(func(o *Options) { o.Session = SessionContinue; o.ProgressFile = "/run/progress.md" }))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	if a.reqs[2].SessionID != "" || a.reqs[2].Prompt != "Task" {
		t.Errorf("after a full session the next call must be fresh with the user's prompt: %+v", a.reqs[2])
	}
}

// Without a handoff, every fresh call sends exactly the current prompt (the
// user's, then the reply's next), and a refusal of done follows it; the
// transcript records what was sent.
func TestFreshSessionSendsThePromptAsIs(t *testing.T) {
	a := &fakeAgent{replies: texts(`{"status":"continue","next":"now step 2"}`, `{"status":"done"}`, `{"status":"done"}`)}
	refusals := 0
	g := guardFunc(func(string) *Refusal {
		if refusals++; refusals == 1 {
			return &Refusal{Guard: "checks", Details: "tests fail", Prompt: "The checks failed: fix them."}
		}
		return nil
	})
	res := Run(context.Background(), a, opts(func(o *Options) {
		o.Completion = "json"
		o.ProgressFile = "/run/progress.md"
		o.Guards = []Guard{g}
	}))
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Details)
	}
	want := []string{"Task", "now step 2", "now step 2\n\nThe checks failed: fix them."}
	var got, recorded []string
	for i, r := range a.reqs {
		got = append(got, r.Prompt)
		recorded = append(recorded, res.Transcript[i].Prompt)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompts sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("prompts recorded (-want +got):\n%s", diff)
	}
}

func TestJournalFailureIsReported(t *testing.T) {
	res := Run(context.Background(), &fakeAgent{replies: texts("DONE")}, opts(func(o *Options) { o.Journal = &memJournal{failAfter: 1} }))
	if res.Status != StatusDone || !strings.Contains(res.Details, "journal failed") {
		t.Errorf("%+v", res)
	}
}

func TestReplayRejectsAGap(t *testing.T) {
	d, _ := json.Marshal(IterationData{State: State{Iterations: 2}})
	if _, _, _, err := Replay([]Event{{Type: EventIteration, Iteration: 2, Data: d}}); err == nil {
		t.Error("an iteration 2 with no iteration 1 was accepted")
	}
}

// An agent that fixes the code and says "DONE" again is judged by the
// guards, not stopped as a repetition.
func TestSameDoneAfterARefusalIsJudgedByTheGuards(t *testing.T) {
	calls := 0
	gate := guardFunc(func(string) *Refusal {
		calls++
		if calls < 3 {
			return &Refusal{Guard: "checks", Details: "go test failed", Prompt: "fix it"}
		}
		return nil
	})
	res := Run(context.Background(), &fakeAgent{replies: texts("DONE", "DONE", "DONE")}, opts(func(o *Options) { o.Guards = []Guard{gate} }))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("%s after %d: %s", res.Status, res.Iterations, res.Details)
	}
}

// The same "DONE" refused the same way noProgressLimit times is no progress.
func TestSameDoneRefusedTheSameWayIsNoProgress(t *testing.T) {
	gate := guardFunc(func(string) *Refusal {
		return &Refusal{Guard: "checks", Details: "go test failed", Prompt: "fix it"}
	})
	res := Run(context.Background(), &fakeAgent{replies: texts("DONE", "DONE", "DONE", "DONE")}, opts(func(o *Options) { o.Guards = []Guard{gate} }))
	if res.Status != StatusNoProgress || res.Iterations != 3 || !res.GateFailed {
		t.Fatalf("%s after %d (gateFailed %v): %s", res.Status, res.Iterations, res.GateFailed, res.Details)
	}
}

func TestSoftRefusalsAreHeededTwiceInARow(t *testing.T) {
	soft := guardFunc(func(string) *Refusal {
		return &Refusal{Guard: "premature-stop", Details: "next steps", Prompt: "do them now", Soft: true}
	})
	j := &memJournal{}
	res := Run(context.Background(), &fakeAgent{replies: texts("a\nDONE", "b\nDONE", "c\nDONE")}, opts(func(o *Options) {
		o.Guards = []Guard{soft}
		o.Journal = j
	}))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	// Resumed after the two refusals, the next claim is accepted too: the
	// count is in the state.
	st, tr, _, _ := Replay(j.events[:3]) // start + 2 iterations
	if st.SoftRefusals != 2 {
		t.Fatalf("soft refusals %d", st.SoftRefusals)
	}
	res = Run(context.Background(), &fakeAgent{replies: texts("c\nDONE")}, opts(func(o *Options) {
		o.Guards = []Guard{soft}
		o.Resume = &Resume{State: st, Transcript: tr}
	}))
	if res.Status != StatusDone || res.Iterations != 3 {
		t.Fatalf("resumed: %s after %d", res.Status, res.Iterations)
	}
}

// Ctrl-C while the guards verify a done: resume verifies that reply again
// before it calls the agent.
func TestInterruptedVerificationIsResumedFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	blocking := guardFunc(func(string) *Refusal {
		cancel()
		return &Refusal{Guard: "checks", Details: "interrupted", Prompt: "x"}
	})
	j := &memJournal{}
	res := Run(ctx, &fakeAgent{replies: texts(`{"status":"done","summary":"all good"}`)}, opts(func(o *Options) {
		o.Guards = []Guard{blocking}
		o.Journal = j
		o.Completion = "json"
	}))
	if res.Status != StatusInterrupted || res.Iterations != 1 {
		t.Fatalf("%s after %d", res.Status, res.Iterations)
	}
	st, tr, _, _ := Replay(j.events)
	if !st.Unverified {
		t.Fatal("the state does not say the last reply is unverified")
	}
	passing := guardFunc(func(string) *Refusal { return nil })
	a := &fakeAgent{}
	res = Run(context.Background(), a, opts(func(o *Options) {
		o.Guards = []Guard{passing}
		o.Resume = &Resume{State: st, Transcript: tr}
		o.Completion = "json"
	}))
	if res.Status != StatusDone || res.Iterations != 1 || res.Summary != "all good" || len(a.reqs) != 0 {
		t.Fatalf("%s after %d, summary %q, %d agent calls", res.Status, res.Iterations, res.Summary, len(a.reqs))
	}
	// Refused on resume: the agent is called with the refusal.
	refusing := guardFunc(func(string) *Refusal {
		return &Refusal{Guard: "checks", Details: "tests fail", Prompt: "FIX THE TESTS"}
	})
	a = &fakeAgent{replies: texts(`{"status":"continue"}`)}
	Run(context.Background(), a, opts(func(o *Options) {
		o.Guards = []Guard{refusing}
		o.Resume = &Resume{State: st, Transcript: tr}
		o.Completion = "json"
		o.MaxIterations = 2
	}))
	if len(a.reqs) != 1 || !strings.Contains(a.reqs[0].Prompt, "FIX THE TESTS") {
		t.Fatalf("requests %+v", a.reqs)
	}
}

// TestNotStopped: a loop that has not stopped reads live or killed when
// its reader knows, both only when it cannot tell.
func TestNotStopped(t *testing.T) {
	for _, tc := range []struct {
		live, known bool
		want        string
	}{
		{true, true, "live: the run has not stopped after 2 iterations"},
		{false, true, "killed after 2 iterations: no process runs it; resume continues it"},
		{false, false, "the run has not stopped after 2 iterations: it is live, or it was killed and can be resumed"},
	} {
		if got := NotStopped(2, tc.live, tc.known); got != tc.want {
			t.Errorf("NotStopped(2, %v, %v) = %q, want %q", tc.live, tc.known, got, tc.want)
		}
	}
}
