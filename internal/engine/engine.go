package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Session says how a loop's iterations use the agent's sessions.
type Session string

// The sessions.
const (
	// SessionFresh starts a new agent session each iteration.
	SessionFresh Session = "fresh"
	// SessionContinue resumes the agent's own session each iteration.
	SessionContinue Session = "continue"
)

// Sessions are the values of Session.
var Sessions = []Session{SessionFresh, SessionContinue}

// Options are the resolved settings of one run.
type Options struct {
	// RunID names the run.
	RunID string
	// Prompt is the task: the first prompt.
	Prompt string
	// Once makes a single call whose success is done, without completion
	// parsing (the `run` command).
	Once bool
	// Model, Dir and Env are passed to every call.
	Model string
	Dir   string
	Env   []string
	// Box is the sandbox every call runs in (agent.Request.Box); nil:
	// none.
	Box *sandbox.Box
	// MaxIterations bounds the number of calls (at least 1).
	MaxIterations int
	// Timeout bounds the active time of the run; each call gets the time
	// that is left.
	Timeout time.Duration
	// Completion and Marker say how done is signalled.
	Completion completion.Mode
	Marker     string
	// NoProgressLimit stops the run after that many identical consecutive
	// replies; 0 disables the check.
	NoProgressLimit int
	// StallTimeout stops a call whose agent prints nothing that long; the
	// iteration counts and the next one retries. 0 disables it.
	StallTimeout time.Duration
	// MaxWait bounds the total time spent waiting for rate limits to reset;
	// 0 means a rate limit stops the run at once.
	MaxWait time.Duration
	// WindowLimits hold back a call while a subscription window of the
	// agent's backend is at or above its limit: the run waits for the
	// window's reset like for a rate limit's (within MaxWait), or stops
	// rate-limited. None: no limit.
	WindowLimits WindowLimits
	// Windows, when set, is shared with other runs of the process (a
	// batch's tasks): what one learns holds back the others.
	Windows *WindowBook
	// Session is SessionFresh (default) or SessionContinue.
	Session Session
	// Handoff wraps the prompt of each fresh session after the first in a
	// handoff: the task, the next step, the progress notes and the last
	// refusal. Off (the seed's behaviour), every call sends exactly the
	// current prompt: the user's, or the last reply's next in json mode,
	// followed by the refusal of the guards of done when there is one.
	Handoff bool
	// ProgressFile, when set with Handoff, is where the agent keeps its
	// progress notes; fresh sessions are told to read and update it.
	ProgressFile string
	// Guards may refuse a reply that claims done, in order.
	Guards []Guard
	// CallGuards may refuse any call's iteration, in order, before Guards.
	CallGuards []CallGuard
	// Journal, when set, keeps the run durable.
	Journal Journal
	// Resume, when set, continues a run from its journal.
	Resume *Resume
	// Observer is told of each iteration; nil: nobody.
	Observer Observer
	// Now and Sleep are the clock; nil: the real one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// HeartbeatEvery is how often a live run's checkpoint is refreshed
	// during a call; 0: every 10 seconds.
	HeartbeatEvery time.Duration
}

// Resume is where a run continues from.
type Resume struct {
	State      State
	Transcript []Entry
}

// MaxSoftRefusals is how many soft refusals in a row the loop heeds.
const MaxSoftRefusals = 2

// Guard may refuse a reply that claims done.
type Guard interface {
	// Check returns nil to accept done, or why it is refused.
	Check(ctx context.Context, reply string) *Refusal
}

// CallGuard judges every call, whatever its reply claims: a refusal from
// CheckCall refuses the iteration as a guard's refusal of done does (the
// next prompt says why, the iteration's verdict is "refused"), even when
// the reply claimed no more than progress. It is asked before the reply is
// read (a call that failed is not asked).
type CallGuard interface {
	CheckCall(ctx context.Context) *Refusal
}

// Noter is a Guard with something to report when it accepts done (checks
// that fail as they did in the baseline); the note becomes the details of
// the done result.
type Noter interface {
	Note() string
}

// Observer follows a run as it goes.
type Observer interface {
	// IterationStarted is called before each call to the agent.
	IterationStarted(iteration, max int, started time.Time)
	// IterationDone is called after each call, once its entry is recorded.
	IterationDone(e Entry, r *Result)
}

// AgentObserver is an Observer or a taskengine.Observer that is also shown, as
// they come, the agent's own lines that say it retries or fails (agent
// Request.Notice): a call the CLI retries in silence shows why it lasts.
type AgentObserver interface {
	AgentLine(line string)
}

// WaitObserver is an Observer or a taskengine.Observer that is also told when the
// run waits for a subscription window to reset before a call: until when,
// and why (the window, its use, its reset).
type WaitObserver interface {
	Waiting(until time.Time, reason string)
}

// RefusalObserver is an Observer that is also told when a guard refuses
// done: called before IterationDone of the iteration whose reply claimed
// it.
type RefusalObserver interface {
	Refused(iteration int, ref Refusal)
}

const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// run is one execution of the loop.
type run struct {
	o   Options
	a   agent.Agent
	now func() time.Time

	mu  sync.Mutex // guards st and res for the heartbeat
	st  State
	res Result
	// began is when this process started (or resumed) the run; base is the
	// active time used before.
	began time.Time
	base  millis.Duration
	// journalErr is the first error of the journal: the run goes on and
	// its result says so.
	journalErr error
}

// Run drives a through the loop and returns the result; it never panics on
// an agent's failure and always returns a Result whose ExitCode follows the
// contract.
func Run(ctx context.Context, a agent.Agent, o Options) Result {
	r := &run{o: o, a: a, now: o.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.o.Sleep == nil {
		r.o.Sleep = Sleep
	}
	if r.o.Session == "" {
		r.o.Session = SessionFresh
	}
	r.began = r.now()
	r.res = Result{Backend: a.Name(), RunID: o.RunID, Transcript: []Entry{}}
	r.st = State{Prompt: o.Prompt}
	if o.Resume != nil {
		r.st = o.Resume.State
		if r.st.Prompt == "" { // stopped before its first iteration
			r.st.Prompt = o.Prompt
		}
		for _, e := range o.Resume.Transcript {
			r.res.add(e, agent.Usage{InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUSD: e.CostUSD, CostKnown: e.CostKnown})
		}
		r.record(Event{Type: EventResume, Time: r.began})
	} else {
		r.record(Event{Type: EventStart, Time: r.began})
	}
	r.res.Windows = r.st.Windows
	r.base = r.st.ElapsedMs
	r.loop(ctx)
	r.res.DurationMs = r.elapsed()
	r.st.ElapsedMs = r.res.DurationMs
	data, _ := json.Marshal(StopData{Status: r.res.Status, ExitCode: r.res.ExitCode, Details: r.res.Details,
		Summary: r.res.Summary, Text: r.res.Text, DurationMs: r.res.DurationMs, Failure: r.res.Failure, GateFailed: r.res.GateFailed})
	r.record(Event{Type: EventStop, Time: r.now(), Data: data})
	r.checkpoint(r.res.Status, false)
	if r.journalErr != nil {
		r.res.Details = strings.TrimPrefix(r.res.Details+"; ", "; ") + "the run's journal failed: " + r.journalErr.Error()
	}
	return r.res
}

// elapsed is the active time of the run, in milliseconds.
func (r *run) elapsed() millis.Duration { return r.base + millis.Of(r.now().Sub(r.began)) }

func (r *run) loop(ctx context.Context) {
	if r.st.Accepted && len(r.res.Transcript) > 0 {
		// Killed once its last reply was accepted, before its stop was
		// recorded: it is done, whatever its limits say now.
		last := r.res.Transcript[len(r.res.Transcript)-1]
		r.res.Summary = completion.Parse(last.Response, r.o.Completion, r.o.Marker).Summary
		r.stop(StatusDone, "")
		return
	}
	if s, details := Unavailable(r.a.Check(ctx)); s != "" {
		r.stop(s, details)
		r.res.Text = details
		return
	}
	maxIter := r.o.MaxIterations
	if r.o.Once || maxIter < 1 {
		maxIter = 1
	}
	if r.st.Unverified && len(r.res.Transcript) > 0 && !r.reverify(ctx) {
		return
	}
	for {
		if ctx.Err() != nil {
			r.stop(StatusInterrupted, fmt.Sprintf("interrupted after %s", plural.N(r.st.Iterations, "iteration")))
			return
		}
		if r.st.Iterations >= maxIter {
			r.stop(StatusMaxIterations, fmt.Sprintf("reached the limit of %s without completion", plural.N(maxIter, "iteration")))
			return
		}
		left := r.o.Timeout - r.elapsed().Duration()
		if r.o.Timeout > 0 && left <= 0 {
			r.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached after %s", r.o.Timeout, plural.N(r.st.Iterations, "iteration")))
			return
		}
		if hold, ok := r.windowHold(ctx); !ok {
			return
		} else if hold {
			continue
		}
		if !r.iterate(ctx, maxIter, left) {
			return
		}
	}
}

// iterate makes one call and decides; false when the run stops.
func (r *run) iterate(ctx context.Context, maxIter int, left time.Duration) bool {
	i := r.st.Iterations + 1
	began := r.now()
	if r.o.Observer != nil {
		r.o.Observer.IterationStarted(i, maxIter, began)
	}
	prompt := r.prompt(i)
	req := agent.Request{Prompt: prompt, Model: r.o.Model, Dir: r.o.Dir, Env: r.o.Env, StallTimeout: r.o.StallTimeout, Box: r.o.Box}
	if r.o.Session == SessionContinue {
		req.SessionID = r.st.SessionID
	}
	out := r.output(i)
	if out != nil {
		req.Output = func(p []byte) { out.Write(p) }
	}
	if o, ok := r.o.Observer.(AgentObserver); ok {
		req.Notice = o.AgentLine
	}
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if r.o.Timeout > 0 {
		callCtx, cancel = context.WithTimeoutCause(ctx, left, fmt.Errorf("global timeout of %s reached", r.o.Timeout))
	}
	stopBeat := r.heartbeat()
	resp, err := r.a.Run(callCtx, req)
	stopBeat()
	cancel()
	if out != nil {
		out.Close()
	}
	if err != nil {
		s := StatusError
		if errors.Is(err, proc.ErrNotFound) {
			s = StatusBackendMissing
		} else if errors.Is(err, agent.ErrPromptTooLong) {
			s = StatusBackendUnsupported
		}
		r.stop(s, err.Error())
		return false
	}
	if len(resp.Windows) > 0 {
		r.mu.Lock()
		r.st.Windows = r.st.Windows.Note(r.a.Name(), r.now().UTC(), resp.Windows)
		r.res.Windows = r.st.Windows
		r.mu.Unlock()
		if r.o.Windows != nil {
			r.o.Windows.Merge(r.st.Windows)
		}
	}
	f := resp.Failure
	if f == nil && resp.ExitCode != 0 {
		f = &agent.Failure{Kind: agent.FailCrash, Message: fmt.Sprintf("the agent exited with status %d", resp.ExitCode)}
	}
	// An interrupted call is not an iteration: it is made again on resume.
	if f != nil && f.Kind == agent.FailTimeout && ctx.Err() != nil {
		r.res.Text = resp.Text // what it said so far, for the user
		r.stop(StatusInterrupted, fmt.Sprintf("interrupted during iteration %d", i))
		return false
	}
	// A rate limit costs no iteration: wait for its reset and call again.
	if f != nil && f.Kind == agent.FailRateLimit {
		return r.waitRateLimit(ctx, f)
	}

	e := Entry{
		Iteration:    i,
		StartedAt:    began.Format(timestampLayout),
		Prompt:       prompt,
		Response:     resp.Text,
		DurationMs:   millis.Of(r.now().Sub(began)),
		ExitCode:     resp.ExitCode,
		SessionID:    resp.SessionID,
		InputTokens:  resp.Usage.InputTokens,
		OutputTokens: resp.Usage.OutputTokens,
		CostUSD:      resp.Usage.CostUSD,
		CostKnown:    resp.Usage.CostKnown,
		Truncated:    resp.Truncated,
		Failure:      f,
		Windows:      resp.Windows,
	}
	// Guards (checks) run within the time that is left too.
	gctx, gcancel := r.guardContext(ctx)
	verdict, refusal, stop := r.decide(ctx, gctx, i, resp, f)
	gcancel()

	r.mu.Lock()
	withRefusal := e
	withRefusal.Refusal = refusal
	r.res.add(withRefusal, resp.Usage)
	r.st.Iterations = i
	r.st.ElapsedMs = r.elapsed()
	if resp.SessionID != "" {
		r.st.SessionID = resp.SessionID
	}
	if f != nil && f.Kind == agent.FailContext {
		r.st.SessionID = "" // the session is full: the next one starts fresh
	}
	r.mu.Unlock()

	data, _ := json.Marshal(IterationData{Entry: e, Verdict: verdict, Refusal: refusal, State: r.st})
	r.record(Event{Type: EventIteration, Iteration: i, Time: r.now(), Data: data})
	r.checkpoint(StatusRunning, true)
	if o, ok := r.o.Observer.(RefusalObserver); ok && refusal != nil {
		o.Refused(i, *refusal)
	}
	if r.o.Observer != nil {
		r.o.Observer.IterationDone(e, &r.res)
	}
	if stop != nil {
		stop()
		return false
	}
	return true
}

// decide reads one reply and updates the state for the next iteration. It
// returns the verdict recorded with the iteration, the refusal of done if
// any, and, when the run stops here, the function that ends it.
func (r *run) decide(ctx, gctx context.Context, i int, resp agent.Response, f *agent.Failure) (string, *Refusal, func()) {
	if f != nil {
		switch f.Kind {
		case agent.FailStall:
			// The iteration counts; the next one tries again.
			return "stalled", nil, nil
		case agent.FailContext:
			return "session-full", nil, nil
		}
		return "failed", nil, func() { r.failed(f, resp.ExitCode) }
	}
	if r.o.Once {
		return VerdictDone, nil, func() { r.stop(StatusDone, "") }
	}
	prevRefused := r.st.Refused
	r.st.Unverified = false
	same := i > 1 && len(r.res.Transcript) > 0 && resp.Text == r.res.Transcript[len(r.res.Transcript)-1].Response
	v := completion.Parse(resp.Text, r.o.Completion, r.o.Marker)
	claimsDone := v.Status == completion.Done && len(r.o.Guards) > 0

	if ref := r.callRefusal(gctx); ref != nil {
		r.refused(ref)
		if r.o.NoProgressLimit > 0 {
			sameRefusal := prevRefused != nil && prevRefused.Guard == ref.Guard && prevRefused.Details == ref.Details
			if stop := r.countRepeat(same && sameRefusal); stop != nil {
				return "no-progress", ref, stop
			}
		}
		return "refused", ref, nil
	}
	// No progress: checked after the entry is recorded, before the
	// completion is parsed (seed 000). A reply that claims done before
	// guards is the exception: the guards judge it first (the agent may
	// have fixed the code and said "DONE" again), and it counts as a
	// repetition only when it is refused the same way as the last one.
	if r.o.NoProgressLimit > 0 && !claimsDone {
		if stop := r.countRepeat(same); stop != nil {
			return "no-progress", nil, stop
		}
	}
	switch v.Status {
	case completion.Invalid:
		return "invalid-json", nil, func() { r.stop(StatusInvalidJSON, v.Reason) }
	case completion.Continue:
		if v.Next != "" {
			r.st.Prompt = v.Next
		}
		r.st.Feedback, r.st.Refused, r.st.SoftRefusals = "", nil, 0
		return "continue", nil, nil
	}
	ref, cut := r.runGuards(ctx, gctx, resp.Text)
	switch cut {
	case StatusInterrupted:
		// Its verdict is not one: resume verifies this reply again.
		r.st.Unverified = true
		return "interrupted", nil, func() {
			r.stop(StatusInterrupted, fmt.Sprintf("interrupted while verifying iteration %d", i))
		}
	case StatusTimeout:
		return "timeout", nil, func() {
			r.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached while verifying iteration %d", r.o.Timeout, i))
		}
	}
	if ref != nil {
		r.refused(ref)
		if r.o.NoProgressLimit > 0 {
			sameRefusal := prevRefused != nil && prevRefused.Guard == ref.Guard && prevRefused.Details == ref.Details
			if stop := r.countRepeat(same && sameRefusal); stop != nil {
				return "no-progress", ref, stop
			}
		}
		return "refused", ref, nil
	}
	r.st.Feedback, r.st.Refused, r.st.SoftRefusals = "", nil, 0
	summary := v.Summary
	return VerdictDone, nil, func() {
		r.res.Summary = summary
		r.stop(StatusDone, r.guardNotes())
	}
}

// runGuards runs the guards on a reply that claims done, in order. It
// returns the first refusal (nil: done is accepted), or, when the guards were
// cut short by Ctrl-C or the timeout, the status that stops the run.
func (r *run) runGuards(ctx, gctx context.Context, reply string) (*Refusal, Status) {
	for _, g := range r.o.Guards {
		ref := g.Check(gctx, reply)
		if ref != nil && ref.Soft && r.st.SoftRefusals >= MaxSoftRefusals && gctx.Err() == nil {
			ref = nil // heeded enough times in a row: let it through
		}
		if ref == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil, StatusInterrupted
		}
		if gctx.Err() != nil {
			return nil, StatusTimeout
		}
		return ref, ""
	}
	return nil, ""
}

// callRefusal is the first refusal of the guards that judge every call
// (CallGuard), nil when none refuses.
func (r *run) callRefusal(ctx context.Context) *Refusal {
	for _, g := range r.o.CallGuards {
		if ref := g.CheckCall(ctx); ref != nil {
			return ref
		}
	}
	return nil
}

// refused records a refusal of done in the state.
func (r *run) refused(ref *Refusal) {
	r.st.Feedback, r.st.Refused, r.st.Unverified = ref.Prompt, ref, false
	if ref.Soft {
		r.st.SoftRefusals++
	} else {
		r.st.SoftRefusals = 0
	}
}

// reverify judges again the last reply of a resumed run, whose verification
// was cut short; it returns whether the loop goes on.
func (r *run) reverify(ctx context.Context) bool {
	last := r.res.Transcript[len(r.res.Transcript)-1]
	gctx, cancel := r.guardContext(ctx)
	ref, cut := r.runGuards(ctx, gctx, last.Response)
	cancel()
	switch {
	case cut == StatusInterrupted:
		r.stop(StatusInterrupted, fmt.Sprintf("interrupted while verifying iteration %d", last.Iteration))
		return false
	case cut == StatusTimeout:
		r.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached while verifying iteration %d", r.o.Timeout, last.Iteration))
		return false
	case ref != nil:
		r.refused(ref)
		return true
	}
	r.st.Feedback, r.st.Refused, r.st.SoftRefusals, r.st.Unverified = "", nil, 0, false
	r.res.Summary = completion.Parse(last.Response, r.o.Completion, r.o.Marker).Summary
	r.stop(StatusDone, r.guardNotes())
	return false
}

// guardNotes joins what the guards that accepted done have to report.
func (r *run) guardNotes() string {
	var notes []string
	for _, g := range r.o.Guards {
		if n, ok := g.(Noter); ok && n.Note() != "" {
			notes = append(notes, n.Note())
		}
	}
	return strings.Join(notes, "; ")
}

// guardContext bounds the guards by the time left of the global timeout.
func (r *run) guardContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.o.Timeout <= 0 {
		return ctx, func() {}
	}
	rest := r.o.Timeout - r.elapsed().Duration()
	return context.WithTimeoutCause(ctx, max(rest, 0), fmt.Errorf("global timeout of %s reached", r.o.Timeout))
}

// countRepeat counts a reply identical to the last one (or restarts the
// count) and returns the stop of the run when noProgressLimit is reached.
func (r *run) countRepeat(same bool) func() {
	if same {
		r.st.Repeats++
	} else {
		r.st.Repeats = 1
	}
	if r.st.Repeats < r.o.NoProgressLimit {
		return nil
	}
	n := r.st.Repeats
	return func() { r.stop(StatusNoProgress, fmt.Sprintf("stopped after %d identical consecutive replies", n)) }
}

// waitRateLimit waits for a rate limit to reset when MaxWait allows it and
// returns whether the loop goes on.
func (r *run) waitRateLimit(ctx context.Context, f *agent.Failure) bool {
	now := r.now()
	wait, details, ok := RateLimitWait(now, f, r.st.WaitedMs.Duration(), r.o.MaxWait)
	if !ok {
		r.res.Failure = f
		r.stop(StatusRateLimited, details)
		return false
	}
	until := now.Add(wait)
	r.mu.Lock()
	r.st.WaitedMs += millis.Of(wait)
	r.mu.Unlock()
	data, _ := json.Marshal(WaitData{Until: until, WaitMs: millis.Of(wait), Message: f.Message, State: r.st})
	r.record(Event{Type: EventWait, Iteration: r.st.Iterations + 1, Time: now, Data: data})
	// Waiting is not active time: the timeout does not run meanwhile.
	waitStart := r.now()
	err := r.o.Sleep(ctx, wait)
	r.began = r.began.Add(r.now().Sub(waitStart))
	if err != nil {
		r.stop(StatusInterrupted, "interrupted while waiting for a rate limit to reset")
		return false
	}
	return true
}

// windowHold waits for the reset of a subscription window over its limit
// before a call: held is true when it waited (the caller checks again), ok
// false when the run stopped (the wait would pass MaxWait, or was
// interrupted).
func (r *run) windowHold(ctx context.Context) (held, ok bool) {
	known := r.st.Windows
	if r.o.Windows != nil {
		known = r.o.Windows.Merge(known)
	}
	now := r.now()
	h := WindowWait(now, known, r.a.Name(), r.o.WindowLimits, r.st.WaitedMs.Duration(), r.o.MaxWait)
	if h == nil {
		return false, true
	}
	if !h.OK {
		r.stop(StatusRateLimited, h.Details)
		return false, false
	}
	until := now.Add(h.Wait)
	r.mu.Lock()
	r.st.WaitedMs += millis.Of(h.Wait)
	r.mu.Unlock()
	w := h.Window
	data, _ := json.Marshal(WaitData{Until: until, WaitMs: millis.Of(h.Wait), Message: h.Details, Window: &w, State: r.st})
	r.record(Event{Type: EventWait, Iteration: r.st.Iterations + 1, Time: now, Data: data})
	r.checkpoint(StatusRunning, true)
	if o, ok := r.o.Observer.(WaitObserver); ok {
		o.Waiting(until, h.Details)
	}
	waitStart := r.now()
	err := r.o.Sleep(ctx, h.Wait)
	r.began = r.began.Add(r.now().Sub(waitStart)) // waiting is not active time
	if err != nil {
		r.stop(StatusInterrupted, "interrupted while waiting for a subscription window to reset")
		return false, false
	}
	return true, true
}

// prompt builds the prompt of iteration i.
func (r *run) prompt(i int) string {
	st := r.st
	if r.o.Once {
		return st.Prompt
	}
	if r.o.Session == SessionContinue && st.SessionID != "" {
		// The agent has the context: say only what is new.
		if st.Feedback != "" {
			return st.Feedback
		}
		return st.Prompt
	}
	if !r.o.Handoff {
		// A fresh session: the current prompt as it is, and the refusal
		// of done the guards gave, which the user asked for by setting
		// them.
		if st.Feedback != "" {
			return st.Prompt + "\n\n" + st.Feedback
		}
		return st.Prompt
	}
	if i == 1 {
		if r.o.ProgressFile == "" {
			return st.Prompt
		}
		return st.Prompt + "\n\n" + progressNote(r.o.ProgressFile)
	}
	if r.o.ProgressFile == "" && st.Feedback == "" {
		return st.Prompt
	}
	return handoff(r.o.Prompt, st.Prompt, r.o.ProgressFile, st.Feedback)
}

// output opens the journal's file for the raw output of iteration i, or nil.
func (r *run) output(i int) io.WriteCloser {
	if r.o.Journal == nil {
		return nil
	}
	return r.o.Journal.Output(i)
}

func (r *run) record(ev Event) {
	if r.o.Journal == nil {
		return
	}
	if err := r.o.Journal.Record(ev); err != nil && r.journalErr == nil {
		r.journalErr = err
	}
}

// checkpoint writes the run's checkpoint with status s; journaled says
// that it follows an event that holds everything it says
// (store.Progress.Journaled).
func (r *run) checkpoint(s Status, journaled bool) {
	if r.o.Journal == nil {
		return
	}
	r.mu.Lock()
	cp := Checkpoint{RunID: r.o.RunID, State: r.st, Progress: store.Progress{Status: string(s), Iterations: r.st.Iterations,
		CostUSD: r.res.CostUSD, CostKnown: r.res.CostKnown, Heartbeat: r.now().UTC(), Windows: r.st.Windows, Journaled: journaled}}
	r.mu.Unlock()
	cp.State.ElapsedMs = r.elapsed()
	cp.DurationMs = cp.State.ElapsedMs
	_ = r.o.Journal.Checkpoint(cp)
}

// heartbeat refreshes the checkpoint while a call runs; the returned
// function stops it.
func (r *run) heartbeat() func() {
	if r.o.Journal == nil {
		return func() {}
	}
	return Beat(r.o.HeartbeatEvery, func() { r.checkpoint(StatusRunning, false) })
}

func (r *run) stop(s Status, details string) {
	r.res.stop(s, details)
	if ref := r.st.Refused; ref != nil && s != StatusDone {
		r.res.GateFailed = true
		r.res.Details += fmt.Sprintf("; the last done was refused by %s: %s", ref.Guard, ref.Details)
	}
}

// Unavailable maps a failed Check to a status and its details; "" when the
// agent is available.
func Unavailable(av agent.Availability) (Status, string) {
	switch av.Status {
	case agent.Missing:
		return StatusBackendMissing, av.Details
	case agent.Unauthenticated:
		return StatusBackendUnauthenticated, av.Details
	case agent.Unsupported:
		return StatusBackendUnsupported, av.Details
	}
	return "", ""
}

// failed ends the run for a call that failed.
func (r *run) failed(f *agent.Failure, exitCode int) {
	r.res.Failure = f
	switch f.Kind {
	case agent.FailTimeout:
		r.stop(StatusTimeout, fmt.Sprintf("global timeout of %s reached during iteration %d; the agent was stopped", r.o.Timeout, r.st.Iterations))
	case agent.FailAuth:
		r.stop(StatusBackendUnauthenticated, "the agent is not authenticated: "+f.Message)
	default:
		r.stop(StatusError, fmt.Sprintf("the agent failed (%s): %s", f.Kind, f.Message))
		if exitCode != 0 {
			r.res.ExitCode = exitCode // passed through (seed 001)
		}
	}
}

// progressNote asks the agent to keep its progress notes.
func progressNote(file string) string {
	return fmt.Sprintf("Keep short progress notes in %s: what is done, what is left, what to try next. Update them before you end your reply; a later session may continue from them.", file)
}

// handoff is the prompt of a fresh session after the first: the task, the
// current step, the progress notes and the last refusal.
func handoff(task, current, progressFile, feedback string) string {
	var b strings.Builder
	b.WriteString("You are continuing a task that earlier sessions worked on; their work is in the working directory.\n\n## Task\n\n")
	b.WriteString(task)
	if current != task {
		b.WriteString("\n\n## Next step\n\n")
		b.WriteString(current)
	}
	if progressFile != "" {
		b.WriteString("\n\n## Progress\n\nRead the progress notes in ")
		b.WriteString(progressFile)
		b.WriteString(" first (it may not exist yet). ")
		b.WriteString(progressNote(progressFile))
	}
	if feedback != "" {
		b.WriteString("\n\n## Your last \"done\" was not accepted\n\n")
		b.WriteString(feedback)
	}
	return b.String()
}
