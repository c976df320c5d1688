// Package taskengine is jlgcli's task engine, behind `task` and each task
// of a `batch` (seed 003): plan → develop → test → commit through tiers of
// agents (task.go: Run, RunAttempt; taskprompt.go: RunPlanner, the
// prompts), its state and journal events (taskstate.go, taskreplay.go:
// Replay, ResultOf), its decisions pure functions of its history
// (decide.go: Policy) that a local run and a Temporal workflow both call,
// the reviewer (review.go) and a task run again after an earlier run of it
// (prior.go). Like the loop engine it does no I/O of its own: the agents,
// the workspace, the tester, the clock, the journal and the progress sink
// are given to it.
//
// The loop engine, behind `run` and `loop`, is package engine; this one
// takes from it what the two share (the statuses, the journal's events and
// stop, the subscription windows, the rate-limit wait), and engine never
// imports it.
package taskengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
)

// EscalateFrom is where a tier that takes over a task starts.
type EscalateFrom string

// The starting points of escalation.
const (
	// EscalateFromBase: a tier that takes over starts from the step's
	// starting point; the failed tier's tree is kept in its snapshots.
	EscalateFromBase EscalateFrom = "base"
	// EscalateFromLast: a tier that takes over starts from the failed
	// tier's last tree.
	EscalateFromLast EscalateFrom = "last"
)

// EscalateFroms are the values of EscalateFrom.
var EscalateFroms = []EscalateFrom{EscalateFromBase, EscalateFromLast}

// DefaultTimeout is the global time limit of a task (seed 003).
const DefaultTimeout = 30 * time.Minute

// Tier is one developer tier of a task: an agent, a model, its own
// environment, and how many attempts it gets per step.
type Tier struct {
	Name     string      `json:"name"`
	Backend  string      `json:"backend"`
	Model    string      `json:"model,omitempty"`
	Env      []string    `json:"env,omitempty"`
	Attempts int         `json:"attempts"`
	Agent    agent.Agent `json:"-"`
}

// MarshalJSON records a tier (the journal's task start) with the names of
// its environment, never their values (EnvNames).
func (t Tier) MarshalJSON() ([]byte, error) {
	type plain Tier
	p := plain(t)
	p.Env = engine.EnvNames(t.Env)
	return json.Marshal(p)
}

// Workspace is the working tree a task changes: the task's git worktree.
type Workspace interface {
	// Dir is where the agent and the checks run.
	Dir() string
	// Snapshot saves the tree's whole state under name and returns its
	// commit; it changes nothing in the tree.
	Snapshot(ctx context.Context, name string) (string, error)
	// Measure reads the tree's state once: its change against the task's
	// base, its change since each commit of from, and its snapshot under
	// name (as Snapshot saves it). It changes nothing in the tree.
	Measure(ctx context.Context, name string, from ...string) (git.Measured, error)
	// Restore makes the tree's files those of commit.
	Restore(ctx context.Context, commit string) error
	// Commit commits the tree on the task branch; false when there was
	// nothing to commit.
	Commit(ctx context.Context, message string) (string, bool, error)
}

// Tester is the gate: it runs the project's checks on the tree.
type Tester interface {
	// Test judges the tree; change is the tree's change against the task's
	// base, whose deleted and weakened test files (DeletedTests,
	// WeakenedTests) are anti-gaming findings.
	Test(ctx context.Context, change git.Change) gate.Report
}

// LoopChecker finds a developer going round in circles (detect.LoopDetector):
// Check in the attempts of a step, CheckEarlier in an attempt against the
// changes earlier runs put in place (EarlierChanges).
type LoopChecker interface {
	Check(ctx context.Context, history []detect.Attempt) (detect.Detection, bool)
	CheckEarlier(ctx context.Context, last detect.Attempt, earlier []detect.Attempt) (detect.Detection, bool)
}

// SnapshotReader is what a Workspace may offer the loop rules besides: the
// files of a saved state (an attempt's Result), which the same-fix rule
// reads to compare Go code as syntax trees. Without it the rule compares
// the attempts' diffs only.
type SnapshotReader interface {
	// ReadFiles returns the contents of paths in commit's tree; a path
	// that is not there is absent from the map.
	ReadFiles(ctx context.Context, commit string, paths []string) (map[string][]byte, error)
}

// Recorder keeps a task durable, as engine.Journal does a loop.
type Recorder interface {
	Record(ev engine.Event) error
	CheckpointTask(cp Checkpoint) error
	// Output returns where the raw output of attempt n goes, or nil.
	Output(n int) io.WriteCloser
}

// Observer follows a task as it goes.
type Observer interface {
	// AttemptStarted is called before each call to a developer agent;
	// Phase when the attempt moves on ("gate"); AttemptDone once the
	// attempt is recorded.
	AttemptStarted(p Progress)
	Phase(p Progress, phase string)
	AttemptDone(p Progress, a Attempt)
}

// Progress is where a task is, for a live status line.
type Progress struct {
	Step, Steps      int // from 1; Steps is 1 without a plan
	Tier             string
	TierIndex, Tiers int
	InTier, Attempts int // the tier's attempt (from 1) and its allowance
	Number           int // the task's attempt number
	CostUSD          float64
	Estimated        bool
	CostKnown        bool // false: no agent reported a cost and none could be estimated
	BudgetUSD        float64
	LastGate         string // the last gate status, "" before the first
	// Windows are the subscription windows the agents last reported.
	Windows engine.Windows
}

// Options are the resolved settings of one task.
type Options struct {
	RunID string
	// Policy is what the decisions depend on: the task, its developer
	// tiers (cheapest first, at least one, with their agents), the budget
	// (0: none), the time limit of the task's active time (0: none) and
	// where a tier that takes over starts (default EscalateFromBase). The
	// decisions are made with it as given.
	Policy
	// Plan asks Planner (or the first tier) for steps before developing.
	Plan    bool
	Planner *Tier
	// Reviewer, when set, reads each attempt whose checks pass: the change
	// lands only when it approves; the changes it asks for are the next
	// attempt's feedback.
	Reviewer *Tier
	// Workspace, Tester and Loops are the tree, the gate and the loop rules.
	Workspace Workspace
	Tester    Tester
	Loops     LoopChecker
	// Prices estimate the cost of calls whose CLI reports none.
	Prices cost.Table
	// StallTimeout, MaxWait, WindowLimits and Windows are as in engine.Options;
	// the limit of a tier's backend holds back its calls.
	StallTimeout time.Duration
	MaxWait      time.Duration
	WindowLimits engine.WindowLimits
	Windows      *engine.WindowBook
	// Env is added to every call's environment (after the tier's).
	Env []string
	// Box is the sandbox every call runs in (agent.Request.Box); nil:
	// none. The gate's checks run in the Tester's.
	Box *sandbox.Box
	// CommitMessage makes the message of a passing attempt's commit; nil:
	// "feat: <task> (tier <name>, attempt <n>)".
	CommitMessage func(a Attempt) string
	Journal       Recorder
	Resume        *Resume
	Observer      Observer
	Now           func() time.Time
	Sleep         func(ctx context.Context, d time.Duration) error
	// HeartbeatEvery is how often the checkpoint is refreshed during a
	// call; 0: every 10 seconds.
	HeartbeatEvery time.Duration
	// Checked: the caller has checked the tiers' agents (CheckTiers).
	Checked bool
	// Inbox, when set, gives what people wrote to the developer while the
	// task runs (the comments of the issue it came from): each note is
	// told to the next attempt that starts, once.
	Inbox Inbox
	// Prior, for a task run anew after an earlier run of it (not resumed:
	// Resume holds its own), is that run: its attempts are told in every
	// developer prompt, and the run starts at the tier that passed there
	// (Prior.StartTier).
	Prior *Prior
}

// Resume is where a task continues from: what its journal holds.
type Resume struct {
	State    State
	Attempts []Attempt
	// Planned: the plan was made (Plan holds its steps, Planner its call).
	Planned bool
	Plan    []string
	Planner *Attempt
	// Prior is the earlier run of the task that this one follows (from
	// its start event).
	Prior *Prior
}

// task is one execution of a task.
type task struct {
	o          Options
	now        func() time.Time
	began      time.Time
	base       millis.Duration // active time before this process
	mu         sync.Mutex
	st         State
	attempts   []Attempt
	plan       []string
	planner    *Attempt
	prior      *Prior
	stop       *engine.StopData
	journalErr error
	// files are the files of saved states the loop rules read.
	files fileCache
}

// Run develops the task through its tiers until a change passes the gate
// (every step of the plan, with Plan), a loop or the attempts of the last
// tier end it, or the budget, the timeout or the user stops it. It never
// panics on an agent's failure and returns a result whose ExitCode follows
// the contract.
func Run(ctx context.Context, o Options) Result {
	t := newTask(o)
	if r := o.Resume; r != nil {
		t.st, t.attempts, t.planner, t.prior = r.State, slices.Clone(r.Attempts), r.Planner, r.Prior
		if r.Planned {
			t.plan = slices.Clone(r.Plan)
		}
		t.record(engine.EventResume, 0, TaskStart{Task: o.Task, Tiers: o.Tiers, BudgetUSD: o.BudgetUSD, State: t.st})
	} else {
		if t.prior = o.Prior; t.prior != nil {
			t.st.Tier = t.prior.StartTier(len(o.Tiers))
		}
		t.record(engine.EventStart, 0, TaskStart{Task: o.Task, Tiers: o.Tiers, BudgetUSD: o.BudgetUSD, State: t.st, Prior: t.prior})
	}
	t.base = t.st.ElapsedMs
	t.run(ctx)
	t.st.ElapsedMs = t.elapsed()
	t.stop.DurationMs = t.st.ElapsedMs
	t.record(engine.EventStop, 0, t.stop)
	res := t.result()
	t.checkpoint(res.Status, false)
	if t.journalErr != nil {
		res.Details = strings.TrimPrefix(res.Details+"; ", "; ") + "the run's journal failed: " + t.journalErr.Error()
	}
	return res
}

func newTask(o Options) *task {
	t := &task{o: o, now: o.Now}
	if t.now == nil {
		t.now = time.Now
	}
	if t.o.Sleep == nil {
		t.o.Sleep = engine.Sleep
	}
	if t.o.EscalateFrom == "" {
		t.o.EscalateFrom = EscalateFromBase
	}
	t.began = t.now()
	return t
}

// AttemptOutcome is what RunAttempt left.
type AttemptOutcome struct {
	// Attempt is the attempt as made, without what Decide adds (Action,
	// Detection); Detection is what the loop rules found.
	Attempt   Attempt           `json:"attempt"`
	Detection *detect.Detection `json:"detection,omitempty"`
	// WaitedMs is the time the task has waited for rate limits, this
	// attempt's waits included.
	WaitedMs millis.Duration `json:"waitedMs"`
	// Stop, when set, says why the attempt could not be made or judged: the
	// agent missing or unauthenticated, a rate limit beyond the allowance,
	// the time limit, an interruption, git failing. Attempt is then empty.
	Stop *engine.StopData `json:"stop,omitempty"`
	// Windows are the subscription windows known after the attempt: the
	// history's, with what its calls reported (a workflow carries them to
	// the next attempt, for the window limits).
	Windows engine.Windows `json:"windows,omitempty"`
	// Sandbox is how the attempt's agent and checks were confined (set by
	// the runner that made it; nil: not said).
	Sandbox *sandbox.Record `json:"sandbox,omitempty"`
}

// RunAttempt makes attempt next of the task whose history is h exactly as
// Run makes it, with o's tier agents, workspace, gate, loop rules and
// limits, and reports what it left without deciding anything: the caller
// (a Temporal workflow) decides with Policy.Decide. o.Journal and
// o.Observer may be nil.
func RunAttempt(ctx context.Context, o Options, h History, next Next) AttemptOutcome {
	t := newTask(o)
	t.st, t.attempts, t.plan, t.prior = h.State, h.Attempts, h.Plan, h.Prior
	t.base = h.State.ElapsedMs
	a, det, ok := t.execute(ctx, next)
	out := AttemptOutcome{WaitedMs: t.st.WaitedMs, Stop: t.stop, Windows: t.st.Windows}
	if ok {
		out.Attempt, out.Detection = a, det
	}
	return out
}

// Result is the task's result after history h, ended by stop (nil: still
// running), as Run returns it.
func (p Policy) Result(runID string, h History, stop *engine.StopData) Result {
	return buildTaskResult(runID, p.Task, p.Tiers, p.BudgetUSD, h.Plan, h.Planner, h.Prior, h.Attempts, h.State, stop)
}

func (t *task) elapsed() millis.Duration { return t.base + millis.Of(t.now().Sub(t.began)) }

// end stops the task with status s.
func (t *task) end(s engine.Status, details string, f *agent.Failure) {
	t.stop = &engine.StopData{Status: s, ExitCode: s.ExitCode(), Details: details, Failure: f}
}

func (t *task) run(ctx context.Context) {
	if len(t.o.Tiers) == 0 {
		t.end(engine.StatusError, "no tier to develop with", nil)
		return
	}
	// Every tier's agent must be usable before any money is spent on the
	// first.
	if !t.o.Checked {
		if s, details := CheckTiers(ctx, t.allTiers()); s != "" {
			t.end(s, details, nil)
			return
		}
	}
	if t.o.Plan && t.plan == nil {
		if !t.makePlan(ctx) {
			return
		}
	}
	for {
		if ctx.Err() != nil {
			t.end(engine.StatusInterrupted, fmt.Sprintf("interrupted after %s", plural.N(t.st.Attempts, "attempt")), nil)
			return
		}
		next, stop := t.o.Policy.Begin(t.withNotes(ctx, t.history()), t.elapsed().Duration())
		if stop != nil {
			t.stop = stop
			return
		}
		if !t.attempt(ctx, next) {
			return
		}
	}
}

// history is the task as far as it went.
func (t *task) history() History {
	t.mu.Lock()
	defer t.mu.Unlock()
	return History{Plan: t.plan, State: t.st, Attempts: t.attempts, Planner: t.planner, Prior: t.prior}
}

// withNotes is h with the notes of the task's inbox that no attempt was
// told yet.
func (t *task) withNotes(ctx context.Context, h History) History {
	if t.o.Inbox == nil {
		return h
	}
	h.Notes = h.Unread(t.o.Inbox(ctx))
	return h
}

// CheckTiers checks that the agent of every tier is installed and usable;
// it returns the status that stops a task when one is not ("" when all are)
// and why.
func CheckTiers(ctx context.Context, tiers []Tier) (engine.Status, string) {
	for _, tr := range tiers {
		if s, details := engine.Unavailable(tr.Agent.Check(ctx)); s != "" {
			return s, fmt.Sprintf("tier %s: %s", tr.Name, details)
		}
	}
	return "", ""
}

func (t *task) allTiers() []Tier {
	tiers := slices.Clone(t.o.Tiers)
	if t.o.Plan && t.o.Planner != nil {
		tiers = append(tiers, *t.o.Planner)
	}
	if t.o.Reviewer != nil {
		tiers = append(tiers, *t.o.Reviewer)
	}
	return tiers
}

// steps is the number of steps of the task: those of the plan, or 1.
func (t *task) steps() int {
	if len(t.plan) > 0 {
		return len(t.plan)
	}
	return 1
}

// callCtx bounds a call or a gate by the time left.
func (t *task) callCtx(ctx context.Context, left time.Duration) (context.Context, context.CancelFunc) {
	if t.o.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, left, fmt.Errorf("global timeout of %s reached", t.o.Timeout))
}

// call runs one agent call of tier, waiting for rate limits within MaxWait.
// It returns the response, or false with the task stopped.
func (t *task) call(ctx context.Context, tier Tier, prompt string, n int) (agent.Response, *agent.Failure, bool) {
	return t.callLogged(ctx, tier, prompt, n, true)
}

// callLogged is call; logged: the agent's raw output is attempt n's log
// (a reviewer's is not: its reply is in the attempt's record).
func (t *task) callLogged(ctx context.Context, tier Tier, prompt string, n int, logged bool) (agent.Response, *agent.Failure, bool) {
	var output func([]byte)
	if t.o.Journal != nil && logged {
		if out := t.o.Journal.Output(n); out != nil {
			output = func(p []byte) { out.Write(p) }
			defer out.Close()
		}
	}
	for {
		left := t.o.Timeout - t.elapsed().Duration()
		if t.o.Timeout > 0 && left <= 0 {
			t.end(engine.StatusTimeout, fmt.Sprintf("global timeout of %s reached during attempt %d", t.o.Timeout, n), nil)
			return agent.Response{}, nil, false
		}
		if held, ok := t.windowHold(ctx, tier, n); !ok {
			return agent.Response{}, nil, false
		} else if held {
			continue
		}
		env := append(slices.Clip(tier.Env), t.o.Env...)
		req := agent.Request{Prompt: prompt, Model: tier.Model, Dir: t.o.Workspace.Dir(), Env: env, StallTimeout: t.o.StallTimeout, Output: output, Box: t.o.Box}
		if o, ok := t.o.Observer.(engine.AgentObserver); ok {
			req.Notice = o.AgentLine
		}
		cctx, cancel := t.callCtx(ctx, left)
		stopBeat := t.heartbeat()
		resp, err := tier.Agent.Run(cctx, req)
		stopBeat()
		cancel()
		if err != nil {
			s := engine.StatusError
			if errors.Is(err, proc.ErrNotFound) {
				s = engine.StatusBackendMissing
			} else if errors.Is(err, agent.ErrPromptTooLong) {
				s = engine.StatusBackendUnsupported
			}
			t.end(s, fmt.Sprintf("tier %s: %v", tier.Name, err), nil)
			return resp, nil, false
		}
		if len(resp.Windows) > 0 {
			t.mu.Lock()
			t.st.Windows = t.st.Windows.Note(tier.Agent.Name(), t.now().UTC(), resp.Windows)
			t.mu.Unlock()
			if t.o.Windows != nil {
				t.o.Windows.Merge(t.st.Windows)
			}
		}
		f := resp.Failure
		if f == nil && resp.ExitCode != 0 {
			f = &agent.Failure{Kind: agent.FailCrash, Message: fmt.Sprintf("the agent exited with status %d", resp.ExitCode)}
		}
		if f != nil && f.Kind == agent.FailTimeout {
			if ctx.Err() != nil {
				t.end(engine.StatusInterrupted, fmt.Sprintf("interrupted during attempt %d", n), nil)
			} else {
				t.end(engine.StatusTimeout, fmt.Sprintf("global timeout of %s reached during attempt %d; the agent was stopped", t.o.Timeout, n), f)
			}
			return resp, f, false
		}
		if f != nil && f.Kind == agent.FailAuth {
			t.end(engine.StatusBackendUnauthenticated, fmt.Sprintf("tier %s: the agent is not authenticated: %s", tier.Name, f.Message), f)
			return resp, f, false
		}
		if f != nil && f.Kind == agent.FailRateLimit {
			wait, details, ok := engine.RateLimitWait(t.now(), f, t.st.WaitedMs.Duration(), t.o.MaxWait)
			if !ok {
				t.end(engine.StatusRateLimited, fmt.Sprintf("tier %s: %s", tier.Name, details), f)
				return resp, f, false
			}
			t.mu.Lock()
			t.st.WaitedMs += millis.Of(wait)
			t.mu.Unlock()
			t.record(engine.EventWait, n, TaskWait{Until: t.now().Add(wait), WaitMs: millis.Of(wait), Message: f.Message, State: t.st})
			waitStart := t.now()
			err := t.o.Sleep(ctx, wait)
			t.began = t.began.Add(t.now().Sub(waitStart)) // waiting is not active time
			if err != nil {
				t.end(engine.StatusInterrupted, "interrupted while waiting for a rate limit to reset", nil)
				return resp, f, false
			}
			continue
		}
		return resp, f, true
	}
}

// windowHold waits for the reset of a window of tier's backend over its
// limit before a call of attempt n: held is true when it waited (the caller
// checks again), ok false when the task stopped.
func (t *task) windowHold(ctx context.Context, tier Tier, n int) (held, ok bool) {
	known := t.st.Windows
	if t.o.Windows != nil {
		known = t.o.Windows.Merge(known)
	}
	now := t.now()
	h := engine.WindowWait(now, known, tier.Agent.Name(), t.o.WindowLimits, t.st.WaitedMs.Duration(), t.o.MaxWait)
	if h == nil {
		return false, true
	}
	if !h.OK {
		t.end(engine.StatusRateLimited, fmt.Sprintf("tier %s: %s", tier.Name, h.Details), nil)
		return false, false
	}
	until := now.Add(h.Wait)
	t.mu.Lock()
	t.st.WaitedMs += millis.Of(h.Wait)
	t.mu.Unlock()
	w := h.Window
	t.record(engine.EventWait, n, TaskWait{Until: until, WaitMs: millis.Of(h.Wait), Message: h.Details, Window: &w, State: t.st})
	t.checkpoint(engine.StatusRunning, true)
	if o, ok := t.o.Observer.(engine.WaitObserver); ok {
		o.Waiting(until, h.Details)
	}
	waitStart := t.now()
	err := t.o.Sleep(ctx, h.Wait)
	t.began = t.began.Add(t.now().Sub(waitStart)) // waiting is not active time
	if err != nil {
		t.end(engine.StatusInterrupted, "interrupted while waiting for a subscription window to reset", nil)
		return false, false
	}
	return true, true
}

// attempt makes attempt next and decides; false when the task stops.
func (t *task) attempt(ctx context.Context, next Next) bool {
	a, det, ok := t.execute(ctx, next)
	if !ok {
		return false
	}
	d := t.o.Policy.Decide(t.history(), a, det)
	a.Action, a.Detection = d.Action, d.Detection
	p := t.progress(a)
	t.mu.Lock()
	t.attempts = append(t.attempts, a)
	t.st = d.State
	t.st.ElapsedMs = t.elapsed()
	t.mu.Unlock()
	t.stop = d.Stop
	t.record(EventAttempt, a.Number, AttemptData{Attempt: a, State: t.st})
	t.checkpoint(engine.StatusRunning, true)
	if t.o.Observer != nil {
		p.LastGate = a.Gate.Status
		p.CostUSD, p.Estimated, p.CostKnown = t.st.Ledger.Spent(), t.st.Ledger.Estimated(), t.costKnown()
		t.o.Observer.AttemptDone(p, a)
	}
	return d.Stop == nil
}

// execute makes attempt next: the tree is restored to its starting point
// and saved, the agent called, the change measured and saved, the checks
// run, and, when they pass, the change committed on the task branch; when
// they fail, the loop rules read the step's attempts. It decides nothing:
// false when the task stops (t.stop says why).
func (t *task) execute(ctx context.Context, next Next) (Attempt, *detect.Detection, bool) {
	ws := t.o.Workspace
	tier := t.o.Tiers[next.TierIndex]
	n := next.Number
	fail := func(what string, err error) (Attempt, *detect.Detection, bool) {
		if ctx.Err() != nil {
			// Ctrl-C stopped git under it: the attempt is made again on
			// resume.
			t.end(engine.StatusInterrupted, fmt.Sprintf("interrupted during attempt %d (%s)", n, what), nil)
			return Attempt{}, nil, false
		}
		t.end(engine.StatusError, fmt.Sprintf("attempt %d: %s: %v", n, what, err), nil)
		return Attempt{}, nil, false
	}
	if next.Start != "" {
		if err := ws.Restore(ctx, next.Start); err != nil {
			return fail("restore the starting point", err)
		}
	}
	start, err := ws.Snapshot(ctx, strconv.Itoa(n))
	if err != nil {
		return fail("save the state before it", err)
	}
	stepBase := t.st.StepBase
	if stepBase == "" {
		stepBase = start
	}
	a := Attempt{Number: n, Step: next.Step, Tier: tier.Name, TierIndex: next.TierIndex, InTier: next.InTier, Backend: tier.Backend,
		Model: tier.Model, StartedAt: t.now().UTC(), Nudged: next.Nudged, Notes: next.Notes, Start: start, Prompt: next.Prompt}
	p := t.progress(a)
	if t.o.Observer != nil {
		t.o.Observer.AttemptStarted(p)
	}
	began := t.now()
	resp, f, ok := t.call(ctx, tier, a.Prompt, n)
	if !ok {
		return Attempt{}, nil, false
	}
	a.Response, a.ExitCode, a.Failure, a.SessionID = resp.Text, resp.ExitCode, f, resp.SessionID
	a.InputTokens, a.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	a.CostUSD, a.CostEstimated, a.CostKnown = t.costOf(tier, resp.Usage)

	// What it changed against the base, since it started and since its
	// step started, and the state it left, saved.
	m, err := ws.Measure(ctx, strconv.Itoa(n)+"-result", start, stepBase)
	if err != nil {
		return fail("measure and save the state it left", err)
	}
	change, own, fromStep := m.Change, m.From[0], m.From[1]
	a.Unchanged = fromStep.Empty
	a.Result = m.Snapshot
	a.Change = ChangeOf(change)
	a.AttemptDiff, _ = bound(own.Text, MaxKeptDiff)

	if t.o.Observer != nil {
		t.o.Observer.Phase(p, "gate")
	}
	gctx, cancel := t.callCtx(ctx, t.o.Timeout-t.elapsed().Duration())
	rep := t.o.Tester.Test(gctx, change)
	cancel()
	if rep.Interrupted || ctx.Err() != nil {
		// The gate's verdict says nothing of the code: the attempt is made
		// again on resume.
		if ctx.Err() != nil {
			t.end(engine.StatusInterrupted, fmt.Sprintf("interrupted while the checks judged attempt %d", n), nil)
		} else {
			t.end(engine.StatusTimeout, fmt.Sprintf("global timeout of %s reached while the checks judged attempt %d", t.o.Timeout, n), nil)
		}
		return Attempt{}, nil, false
	}
	a.Gate = rep
	a.DurationMs = millis.Of(t.now().Sub(began))

	if rep.OK() {
		// A round of a pull request's loop that makes again a change
		// pushed before does not pass, whatever the local checks say: the
		// pull request's own found it wanting already.
		if det := t.earlierLoop(ctx, a); det != nil {
			a.Repeats = true
			return a, det, true
		}
	}
	if rep.OK() && t.o.Reviewer != nil {
		if !t.review(ctx, &a, change) {
			return Attempt{}, nil, false
		}
		a.DurationMs = millis.Of(t.now().Sub(began))
		if !a.Review.Approved() {
			return a, sameReview(t.history(), a), true
		}
	}
	if rep.OK() {
		sha, committed, err := ws.Commit(ctx, t.commitMessage(a))
		if err != nil {
			t.end(engine.StatusError, fmt.Sprintf("attempt %d passed the checks but could not be committed: %v", n, err), nil)
			return Attempt{}, nil, false
		}
		if committed {
			a.Commit = sha
		}
		return a, nil, true
	}
	if t.o.Loops != nil {
		if det, found := t.o.Loops.Check(ctx, t.loopHistory(t.history(), a)); found {
			return a, &det, true
		}
	}
	return a, t.earlierLoop(ctx, a), true
}

// earlierLoop is the loop that the rules across runs find in attempt a
// (nil: none, or no earlier change to compare it with): in a round of a
// pull request's loop, a made again a change a run before it pushed.
func (t *task) earlierLoop(ctx context.Context, a Attempt) *detect.Detection {
	earlier := EarlierChanges(t.prior)
	if t.o.Loops == nil || len(earlier) == 0 {
		return nil
	}
	if det, found := t.o.Loops.CheckEarlier(ctx, loopAttempt(a), earlier); found {
		return &det
	}
	return nil
}

// loopHistory is LoopHistory with each attempt's tree, read through the
// workspace when it can (SnapshotReader): the files the rules read are
// kept until the next check, which compares the attempt just made with the
// one after it, so that no file is read twice.
func (t *task) loopHistory(h History, a Attempt) []detect.Attempt {
	hist := LoopHistory(h, a)
	r, ok := t.o.Workspace.(SnapshotReader)
	if !ok {
		return hist
	}
	results := map[int]string{}
	for _, x := range append(slices.Clip(h.Attempts), a) {
		results[x.Number] = x.Result
	}
	keep := map[string]bool{}
	for i := range hist {
		if c := results[hist[i].Number]; c != "" {
			hist[i].Tree = &snapshotTree{r: r, commit: c, cache: &t.files}
			if i >= len(hist)-2 {
				keep[c] = true
			}
		}
	}
	t.files.retain(keep)
	return hist
}

// snapshotTree is the tree of one saved state, as the loop rules read it.
type snapshotTree struct {
	r      SnapshotReader
	commit string
	cache  *fileCache
}

func (s *snapshotTree) ReadFiles(ctx context.Context, paths []string) (map[string][]byte, error) {
	out, missing := s.cache.get(s.commit, paths)
	if len(missing) == 0 {
		return out, nil
	}
	got, err := s.r.ReadFiles(ctx, s.commit, missing)
	if err != nil {
		return nil, err
	}
	s.cache.put(s.commit, missing, got)
	for p, c := range got {
		out[p] = c
	}
	return out, nil
}

// fileCache keeps the files read from saved states, absent ones too.
type fileCache struct {
	mu sync.Mutex
	m  map[string]map[string][]byte // commit → path → content (nil: absent)
}

func (c *fileCache) get(commit string, paths []string) (map[string][]byte, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]byte{}
	var missing []string
	for _, p := range paths {
		content, ok := c.m[commit][p]
		switch {
		case !ok:
			missing = append(missing, p)
		case content != nil:
			out[p] = content
		}
	}
	return out, missing
}

func (c *fileCache) put(commit string, paths []string, got map[string][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]map[string][]byte{}
	}
	if c.m[commit] == nil {
		c.m[commit] = map[string][]byte{}
	}
	for _, p := range paths {
		c.m[commit][p] = got[p] // nil when absent
	}
}

// retain drops the files of the states not in keep.
func (c *fileCache) retain(keep map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !keep[k] {
			delete(c.m, k)
		}
	}
}

// gateError identifies how the gate failed, for the same-error rule: the
// fingerprints of the checks that failed (each independent of the order of
// the output's lines) and the anti-gaming rules that fired. "" when it
// passed.
func gateError(r gate.Report) string {
	if r.OK() {
		return ""
	}
	var parts []string
	for _, c := range r.Checks {
		if !c.Passed {
			parts = append(parts, c.Name+"="+c.Fingerprint)
		}
	}
	for _, g := range r.Gaming {
		parts = append(parts, "gaming="+g.Rule+":"+g.File+g.Check)
	}
	if len(parts) == 0 {
		parts = append(parts, "status="+r.Status+"/"+r.Recommendation)
	}
	return strings.ReplaceAll(strings.Join(parts, "+"), " ", "_")
}

func (t *task) commitMessage(a Attempt) string {
	if t.o.CommitMessage != nil {
		return t.o.CommitMessage(a)
	}
	return DefaultCommitMessage(t.o.Task, a, t.steps())
}

// DefaultCommitMessage is the message of a passing attempt's commit:
// "feat: <task> (tier <name>, attempt <n>)", n the attempt's number in the
// task (as its refs, the report and show number it: a tier's turn given by
// a resume, or a tier that takes over, does not start again from 1), with
// the step when the task has a plan; the task cut so that the line fits in
// SubjectWidth columns (SubjectLine).
func DefaultCommitMessage(task string, a Attempt, steps int) string {
	where := fmt.Sprintf("tier %s, attempt %d", a.Tier, a.Number)
	if a.Step > 0 && steps > 1 {
		where = fmt.Sprintf("step %d/%d, ", a.Step, steps) + where
	}
	return SubjectLine("feat: ", task, " ("+where+")")
}

// SubjectWidth is git's customary width of a commit's subject line.
const SubjectWidth = 72

// Subject is a task as the subject of a commit message: its first line
// (without the #s of a Markdown heading), at most SubjectWidth characters,
// cut at a word with "…"; "task" for none.
func Subject(task string) string { return SubjectLine("", task, "") }

// SubjectLine is prefix, the task's subject (Subject) and suffix on one
// line of at most SubjectWidth characters: the subject is cut at the end
// of a word, with "…", to make room (a word longer than the room is cut
// where it must).
func SubjectLine(prefix, task, suffix string) string {
	s := strings.TrimSpace(task)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	s = strings.TrimSpace(strings.TrimLeft(s, "#")) // a Markdown heading, as task sheets start
	if s == "" {
		s = "task"
	}
	room := max(SubjectWidth-utf8.RuneCountInString(prefix+suffix), 16)
	return prefix + cutAtWord(s, room) + suffix
}

// cutAtWord is s in at most n characters: whole, or cut after its last
// word that fits, with "…" (cut within a word only when the first does not
// fit in half of n).
func cutAtWord(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := r[:n-1] // room for the ellipsis
	cut := len(head)
	if !unicode.IsSpace(r[n-1]) {
		// The character after head goes on a word: back to its start.
		for cut > 0 && !unicode.IsSpace(head[cut-1]) {
			cut--
		}
		if cut < n/2 {
			cut = len(head)
		}
	}
	out := strings.TrimRightFunc(string(head[:cut]), func(c rune) bool { return unicode.IsSpace(c) || strings.ContainsRune(",;:-–—", c) })
	return out + "…"
}

// costOf is what a call cost: what the CLI reported, else an estimate from
// its tokens.
func (t *task) costOf(tier Tier, u agent.Usage) (usd float64, estimated, known bool) {
	if u.CostKnown {
		return u.CostUSD, false, true
	}
	usd, estimated, known = cost.Estimate(u, tier.Backend, tier.Model, t.o.Prices)
	return usd, estimated, known
}

func (t *task) progress(a Attempt) Progress {
	tier := t.o.Tiers[a.TierIndex]
	p := Progress{Step: t.st.Step + 1, Steps: t.steps(), Tier: tier.Name, TierIndex: a.TierIndex, Tiers: len(t.o.Tiers),
		InTier: a.InTier, Attempts: tier.Attempts, Number: a.Number, CostUSD: t.st.Ledger.Spent(),
		Estimated: t.st.Ledger.Estimated(), CostKnown: t.costKnown(), BudgetUSD: t.o.BudgetUSD, Windows: t.st.Windows}
	if len(t.attempts) > 0 {
		p.LastGate = t.attempts[len(t.attempts)-1].Gate.Status
	}
	return p
}

func (t *task) record(typ string, n int, v any) {
	if t.o.Journal == nil {
		return
	}
	data, _ := json.Marshal(v)
	if err := t.o.Journal.Record(engine.Event{Type: typ, Iteration: n, Time: t.now(), Data: data}); err != nil && t.journalErr == nil {
		t.journalErr = err
	}
}

// checkpoint writes the task's checkpoint with status s; journaled says
// that it follows an event that holds everything it says
// (store.Progress.Journaled).
func (t *task) checkpoint(s engine.Status, journaled bool) {
	if t.o.Journal == nil {
		return
	}
	t.mu.Lock()
	st := t.st
	st.ElapsedMs = t.elapsed()
	cp := Checkpoint{RunID: t.o.RunID, State: st, Plan: t.plan, Progress: store.Progress{Status: string(s),
		Iterations: st.Attempts, CostUSD: st.Ledger.Spent(), CostKnown: t.costKnown(), DurationMs: st.ElapsedMs,
		Heartbeat: t.now().UTC(), Tiers: tierStats(t.o.Tiers, t.attempts), Windows: st.Windows, Journaled: journaled}}
	if n := len(t.attempts); n > 0 {
		cp.Backend, cp.Model = t.attempts[n-1].Backend, t.attempts[n-1].Model
	}
	t.mu.Unlock()
	_ = t.o.Journal.CheckpointTask(cp)
}

func (t *task) costKnown() bool {
	for _, a := range t.attempts {
		if a.CostKnown {
			return true
		}
	}
	return t.planner != nil && t.planner.CostKnown
}

// heartbeat refreshes the checkpoint while a call runs.
func (t *task) heartbeat() func() {
	if t.o.Journal == nil {
		return func() {}
	}
	return engine.Beat(t.o.HeartbeatEvery, func() { t.checkpoint(engine.StatusRunning, false) })
}

// tierStats sums the attempts per tier, in the tiers' order.
func tierStats(tiers []Tier, attempts []Attempt) []TierStat {
	out := make([]TierStat, 0, len(tiers))
	for _, tr := range tiers {
		s := TierStat{Name: tr.Name}
		for _, a := range attempts {
			if a.Tier == tr.Name {
				s.Attempts++
				s.CostUSD += a.CostUSD
				s.CostKnown = s.CostKnown || a.CostKnown
				if a.Action == ActionPass {
					s.Passed++
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// result is the task's result as it stands.
func (t *task) result() Result {
	return buildTaskResult(t.o.RunID, t.o.Task, t.o.Tiers, t.o.BudgetUSD, t.plan, t.planner, t.prior, t.attempts, t.st, t.stop)
}

// buildTaskResult assembles a result from what a task's journal holds.
func buildTaskResult(runID, taskText string, tiers []Tier, budget float64, plan []string, planner *Attempt, prior *Prior,
	attempts []Attempt, st State, stop *engine.StopData) Result {
	r := Result{RunID: runID, Task: taskText, Iterations: len(attempts), BudgetUSD: budget, Plan: plan,
		Tiers: []TierSummary{}, Attempts: attempts, Detections: []Detection{}, Flaky: []string{}, Commits: st.Commits,
		DurationMs: st.ElapsedMs, Windows: st.Windows, RerunOf: rerunOf(prior)}
	if r.Attempts == nil {
		r.Attempts = []Attempt{}
	}
	if r.Commits == nil {
		r.Commits = []string{}
	}
	if len(tiers) > 0 {
		r.Backend = tiers[0].Backend
	}
	add := func(a Attempt) {
		r.CostUSD += a.CostUSD
		r.CostKnown = r.CostKnown || a.CostKnown
		r.CostEstimated = r.CostEstimated || a.CostEstimated
		r.InputTokens += a.InputTokens
		r.OutputTokens += a.OutputTokens
	}
	if planner != nil {
		add(*planner)
	}
	for i := range attempts {
		a := attempts[i]
		add(a)
		if rv := a.Review; rv != nil {
			add(Attempt{CostUSD: rv.CostUSD, CostKnown: rv.CostKnown, CostEstimated: rv.CostEstimated,
				InputTokens: rv.InputTokens, OutputTokens: rv.OutputTokens})
			r.Review = reviewSummary(r.Review, *rv)
		}
		r.Backend = a.Backend
		if a.Detection != nil {
			r.Detections = append(r.Detections, Detection{Detection: *a.Detection, Step: a.Step, Tier: a.Tier, Action: a.Action})
		}
		for _, f := range a.Gate.Flaky {
			if !slices.Contains(r.Flaky, f) {
				r.Flaky = append(r.Flaky, f)
			}
		}
		r.Gate = &attempts[i].Gate
		r.Text = a.Response
	}
	for _, tr := range tiers {
		s := TierSummary{Name: tr.Name, Backend: tr.Backend, Model: tr.Model, Outcome: "unused"}
		for _, a := range attempts {
			if a.Tier != tr.Name {
				continue
			}
			s.Attempts++
			s.CostUSD += a.CostUSD
			s.CostKnown = s.CostKnown || a.CostKnown
			s.CostEstimated = s.CostEstimated || a.CostEstimated
			if a.Action == ActionPass {
				s.Passed++
			}
		}
		if o, ok := st.Outcomes[tr.Name]; ok {
			s.Outcome = o
		} else if s.Attempts > 0 {
			s.Outcome = "stopped"
		}
		r.Tiers = append(r.Tiers, s)
	}
	if stop == nil {
		r.Status, r.ExitCode = engine.StatusRunning, -1
		return r
	}
	r.Status, r.ExitCode, r.Details, r.Failure = stop.Status, stop.ExitCode, stop.Details, stop.Failure
	if stop.Text != "" {
		r.Text = stop.Text
	}
	r.Summary = taskSummary(r)
	return r
}

// taskSummary says in one line how the task ended.
func taskSummary(r Result) string {
	c := cost.Phrase(r.CostUSD, r.CostKnown, r.CostEstimated)
	switch r.Status {
	case engine.StatusDone:
		last := r.Attempts[len(r.Attempts)-1]
		return fmt.Sprintf("done: tier %s passed the checks at attempt %d (%s in all); %s", last.Tier, last.Number, plural.N(len(r.Attempts), "attempt"), c)
	default:
		return fmt.Sprintf("%s after %s; %s", r.Status, plural.N(len(r.Attempts), "attempt"), c)
	}
}
