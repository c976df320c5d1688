package taskengine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// Policy is what a task's decisions depend on besides its history: the
// task, its tiers and their allowances, the budget, the time limit and where
// a tier that takes over starts. Its methods are pure functions of the
// history they are given: the local runner (Run) and the Temporal
// workflow call the same ones, so that a task decides the same way wherever
// it runs, and a replayed workflow decides again what it decided first.
type Policy struct {
	Task         string        `json:"task"`
	Tiers        []Tier        `json:"tiers"`
	BudgetUSD    float64       `json:"budgetUsd"`
	Timeout      time.Duration `json:"-"`
	EscalateFrom EscalateFrom  `json:"escalateFrom"`
}

// History is a task as far as it went: its plan (nil without one), its
// state and its recorded attempts.
type History struct {
	Plan     []string  `json:"plan,omitempty"`
	State    State     `json:"state"`
	Attempts []Attempt `json:"attempts"`
	// Planner is the planner's call, once the plan was asked for.
	Planner *Attempt `json:"planner,omitempty"`
	// Prior is the earlier run of the task that this one follows (nil:
	// none): its attempts are told in every developer prompt.
	Prior *Prior `json:"prior,omitempty"`
	// Notes are what people wrote to the developer that no attempt was
	// told yet (History.unread of the task's Inbox): the next attempt is.
	Notes []Note `json:"notes,omitempty"`
}

// Next is the attempt a task makes next.
type Next struct {
	// Number counts the task's attempts from 1; Step is the plan step (from
	// 1, 0 without a plan); TierIndex the tier and InTier its attempt in
	// the step (from 1).
	Number    int `json:"number"`
	Step      int `json:"step,omitempty"`
	TierIndex int `json:"tierIndex"`
	InTier    int `json:"inTier"`
	// Start is the commit whose files the tree gets before the attempt;
	// "": the tree as it is.
	Start string `json:"start,omitempty"`
	// Prompt is what the developer is asked; Nudged: it tells the agent to
	// step back.
	Prompt string `json:"prompt"`
	Nudged bool   `json:"nudged,omitempty"`
	// Notes are the notes its prompt tells (History.Notes).
	Notes []Note `json:"notes,omitempty"`
}

// Decision is what a task does after an attempt.
type Decision struct {
	// Action is one of the Action constants; Detection the loop that the
	// rules found, recorded on the attempt.
	Action    string            `json:"action"`
	Detection *detect.Detection `json:"detection,omitempty"`
	// State is the task's state after the attempt.
	State State `json:"state"`
	// Stop, when set, ends the task.
	Stop *engine.StopData `json:"stop,omitempty"`
}

// steps is the number of steps of a task with plan: its steps, or 1.
func steps(plan []string) int {
	if len(plan) > 0 {
		return len(plan)
	}
	return 1
}

// Begin says what the task does next after elapsed active time: the attempt
// to make, or the stop when the last step has passed, the time limit is
// reached or what is left of the budget cannot pay for the tier's next
// attempt.
func (p Policy) Begin(h History, elapsed time.Duration) (Next, *engine.StopData) {
	st := h.State
	if n := len(h.Attempts); n > 0 && h.Attempts[n-1].Action == ActionPass && h.Attempts[n-1].Step >= len(h.Plan) {
		// The last step passed: the task is done (a task killed after
		// that attempt was recorded, before its stop was, is resumed here).
		stop := stopAt(engine.StatusDone, "")
		stop.Text = h.Attempts[n-1].Response
		return Next{}, stop
	}
	if len(p.Tiers) == 0 {
		return Next{}, stopAt(engine.StatusError, "no tier to develop with")
	}
	if p.Timeout > 0 && p.Timeout-elapsed <= 0 {
		return Next{}, stopAt(engine.StatusTimeout, fmt.Sprintf("global timeout of %s reached after %s", p.Timeout, plural.N(st.Attempts, "attempt")))
	}
	tier := p.Tiers[st.Tier]
	ledger, budget := st.Ledger, p.BudgetUSD
	if h.Prior != nil && budget > 0 {
		// A run that follows an earlier run of the task has what that
		// run left of the task's budget: the earlier run's attempts tell
		// what an attempt of the tier costs.
		ledger, budget = h.Prior.ledger(st.Ledger), budget+h.Prior.spent()
	}
	if ok, reason := ledger.CanStart(tier.Name, budget); !ok {
		return Next{}, stopAt(engine.StatusBudgetExceeded, fmt.Sprintf("budget of $%.2f: %s (tier %s)", budget, reason, tier.Name))
	}
	n := Next{Number: st.Attempts + 1, TierIndex: st.Tier, InTier: st.InTier + 1, Start: st.Start, Nudged: st.Nudge != "", Notes: h.Notes}
	if len(h.Plan) > 0 {
		n.Step = st.Step + 1
	}
	n.Prompt = developerPrompt(p.Task, h, n)
	return n, nil
}

// Decide reads attempt a, the gate's verdict on it and det, what the loop
// rules found in the step's attempts up to a (nil: nothing, or not asked
// because the gate passed), and says what the task does next. a's cost is
// entered in the ledger; a passing attempt's commit (a.Commit) in the
// task's commits.
func (p Policy) Decide(h History, a Attempt, det *detect.Detection) Decision {
	st := cloneState(h.State)
	if st.StepBase == "" {
		st.StepBase = a.Start // the task's first attempt
	}
	tier := p.Tiers[st.Tier]
	st.Ledger.Add(tier.Name, a.CostUSD, a.CostEstimated)
	if a.Review != nil {
		st.Ledger.Add(a.Review.Tier, a.Review.CostUSD, a.Review.CostEstimated)
	}
	st.Attempts = a.Number
	st.InTier++
	st.Nudge = ""
	d := Decision{}
	if a.Review != nil && a.Review.Verdict == ReviewUnreadable {
		// Nobody approved the change: it does not land, and asking a
		// developer to change code for an unreadable review would be
		// paying for nothing.
		d.Action, d.State = ActionStop, st
		d.Stop = stopAt(engine.StatusError, fmt.Sprintf("attempt %d passed the checks, but the reviewer's answer could not be read: %s", a.Number, a.Review.Error))
		d.Stop.Text = a.Response
		return d
	}
	if a.Passed() {
		d.Action = ActionPass
		if a.Commit != "" {
			st.Commits = append(st.Commits, a.Commit)
		}
		setOutcome(&st, tier.Name, "passed")
		if st.Step+1 >= steps(h.Plan) {
			d.State, d.Stop = st, stopAt(engine.StatusDone, "")
			d.Stop.Text = a.Response
			return d
		}
		// The next step starts from this one's work, with the first tier.
		st.Step++
		st.Tier, st.InTier, st.Detections = 0, 0, 0
		st.Start, st.StepBase = a.Result, a.Result
		d.State = st
		return d
	}

	// By default the next attempt continues from this one's tree.
	st.Start = a.Result
	spent := st.InTier >= tier.Attempts
	switch {
	case det != nil && st.Detections == 0 && !spent:
		st.Detections++
		d.Detection, d.Action = det, ActionNudge
		st.Nudge = nudgeOf(*det, a)
	case det != nil || spent:
		why, outcome := "spent its attempts", "spent"
		if det != nil {
			st.Detections++
			d.Detection = det
			why, outcome = "looped ("+det.Names()+")", "loop"
		}
		setOutcome(&st, tier.Name, outcome)
		if st.Tier+1 >= len(p.Tiers) {
			status := engine.StatusMaxIterations
			if det != nil {
				status = engine.StatusNoProgress
			}
			d.Action, d.State = ActionStop, st
			d.Stop = stopAt(status, fmt.Sprintf("the last tier, %s, %s after %s: %s", tier.Name, why, plural.N(st.InTier, "attempt"), a.Judged()))
			d.Stop.Text = a.Response
			return d
		}
		d.Action = ActionEscalate
		st.Tier++
		st.InTier, st.Detections = 0, 0
		if p.EscalateFrom == EscalateFromLast {
			st.Start = a.Result
		} else {
			st.Start = st.StepBase
		}
	default:
		d.Action = ActionRetry
	}
	d.State = st
	if st.Ledger.Exceeded(p.BudgetUSD) {
		d.Action = ActionStop
		d.Stop = stopAt(engine.StatusBudgetExceeded, fmt.Sprintf("the budget of $%.2f is spent ($%.4f) after %s", p.BudgetUSD, st.Ledger.Spent(), plural.N(a.Number, "attempt")))
		d.Stop.Text = a.Response
	}
	return d
}

// Planned takes the planner's call and the steps it gave (nil: none, the
// task is then one step, its own text) into the history: its cost is
// entered in the ledger; stop, when set, ends the task because the planner
// spent the budget.
func (p Policy) Planned(h History, planner Attempt, steps []string) (History, *engine.StopData) {
	h.State = cloneState(h.State)
	h.State.Ledger.Add(planner.Tier, planner.CostUSD, planner.CostEstimated)
	if len(steps) == 0 {
		steps = []string{strings.TrimSpace(p.Task)}
	}
	h.Plan, h.Planner = slices.Clone(steps), &planner
	if h.State.Ledger.Exceeded(p.BudgetUSD) {
		return h, stopAt(engine.StatusBudgetExceeded, fmt.Sprintf("the budget of $%.2f was spent by the planner ($%.4f)", p.BudgetUSD, h.State.Ledger.Spent()))
	}
	return h, nil
}

// Resumed is the state a task resumes from after stop: a task stopped by a
// limit of its tiers (a loop, its attempts, its budget) gets a new turn of
// its current tier (resuming it is asking for more attempts), which starts
// where a tier that takes over starts: where the step started, or with
// EscalateFromLast from the last attempt's tree. The tree is restored to
// that start before the turn's first attempt, whose prompt says so.
func (p Policy) Resumed(st State, stop *engine.StopData) State {
	if stop != nil {
		switch stop.Status {
		case engine.StatusNoProgress, engine.StatusMaxIterations, engine.StatusBudgetExceeded:
			st.InTier, st.Detections, st.Nudge = 0, 0, ""
			if p.EscalateFrom != EscalateFromLast && st.StepBase != "" {
				st.Start = st.StepBase
			}
		}
	}
	return st
}

// LoopHistory is what the loop rules see after attempt a: the attempts of
// a's step in h, then a. Each has its own change (AttemptDiff, for
// similar-diff) and its whole change against the task's base (Change, kept
// bounded, with all its files, for same-fix); not its tree, which only the
// task that makes the attempt reads.
func LoopHistory(h History, a Attempt) []detect.Attempt {
	var out []detect.Attempt
	for _, x := range append(slices.Clip(h.Attempts), a) {
		if x.Step != a.Step {
			continue
		}
		out = append(out, loopAttempt(x))
	}
	return out
}

// loopAttempt is what the loop rules know of attempt x.
func loopAttempt(x Attempt) detect.Attempt {
	return detect.Attempt{Number: x.Number, Tier: x.Tier, DiffHash: x.Change.Hash, Diff: x.AttemptDiff,
		Change: x.Change.Diff, ChangeCut: x.Change.Truncated, Files: x.Change.Paths(),
		Empty: x.Unchanged, GateError: gateError(x.Gate)}
}

// EarlierChanges is what the loop rules compare a round of a pull
// request's loop with besides its own attempts (detect's CheckEarlier):
// the changes the runs before it pushed (p.Pushed), each its whole change
// against where its run started, named by its round and run. Only those:
// each is what the forge's checks and reviewers judged and found wanting
// (else there would be no round), and the round starts from the head that
// holds them, so making one again (after undoing it, or the same lines
// once more) is going round in circles; the attempts of earlier runs that
// were not pushed were never judged there, and are told in the prompt. Nil
// for any other run: a batch's run after a conflict (a Prior without
// Needs) is the same task on a new base, and may make the same change
// again.
func EarlierChanges(p *Prior) []detect.Attempt {
	if p == nil || p.Needs == "" {
		return nil
	}
	var out []detect.Attempt
	for _, c := range p.Pushed {
		if c.Change.Empty {
			continue
		}
		out = append(out, detect.Attempt{Number: c.Attempt, Label: c.Label(), DiffHash: c.Change.Hash, Diff: c.Change.Diff,
			Change: c.Change.Diff, ChangeCut: c.Change.Truncated, Files: c.Change.Paths()})
	}
	return out
}

func stopAt(s engine.Status, details string) *engine.StopData {
	return &engine.StopData{Status: s, ExitCode: s.ExitCode(), Details: details}
}

func setOutcome(st *State, tier, o string) {
	st.Outcomes[tier] = o
}

// cloneState copies st so that a decision never writes into the history it
// was given.
func cloneState(st State) State {
	st.Ledger.Entries = slices.Clone(st.Ledger.Entries)
	st.Commits = slices.Clone(st.Commits)
	st.Outcomes = maps.Clone(st.Outcomes)
	st.Windows = slices.Clone(st.Windows)
	if st.Outcomes == nil {
		st.Outcomes = map[string]string{}
	}
	return st
}
