package taskengine

import (
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// Prior is an earlier run of the same task that a new run follows: a batch
// runs a task again from its base as it has become when the change of the
// task's first run passed its checks but could not land there (it
// conflicted with work merged meanwhile, or the checks failed on it laid on
// that work). The new run is told what the earlier one tried, as a tier
// that takes over is told of the tiers before it (the attempts' lines, each
// one's diff, reply and failure, in the developer's prompt), and starts at
// the tier that passed there (StartTier): the cheaper tiers failed already
// and their failures are known.
type Prior struct {
	// RunID is the earlier run; Reason says why its change did not land
	// ("a conflict with p: main has moved since the task started and
	// conflicts with it in answer.txt").
	RunID  string `json:"runId"`
	Reason string `json:"reason,omitempty"`
	// Checks is the report of the checks run on the earlier run's change
	// laid on the base as it had become, when they failed there (nil: it
	// conflicted, or they were not run).
	Checks *gate.Report `json:"checks,omitempty"`
	// CostUSD, CostKnown, CostEstimated and DurationMs are the earlier
	// run's in all: what the task cost before this run.
	CostUSD       float64         `json:"costUsd"`
	CostKnown     bool            `json:"costKnown"`
	CostEstimated bool            `json:"costEstimated,omitempty"`
	DurationMs    millis.Duration `json:"durationMs"`
	// Attempts are the earlier run's attempts, without their prompts
	// (PriorOf): what the new run's prompts tell.
	Attempts []Attempt `json:"attempts"`
	// Needs, for a round of a pull request's loop (jlgcli pr, task
	// --until), is what the pull request needs, as its prompt section
	// (pull.Needs.Prompt). That run starts from the pull request's head,
	// which holds the earlier runs' change: Attempts are theirs, told as
	// this pull request's history, not as a change to make again.
	Needs string `json:"needs,omitempty"`
	// Pushed, for such a round, are the changes the runs before it put on
	// the pull request's branch, oldest first: that of the task that opened
	// it, then that of each round that pushed. A round's attempt that makes
	// one of them again is a loop (EarlierChanges).
	Pushed []PushedChange `json:"pushed,omitempty"`
}

// PushedChange is a change that a run of a pull request's loop put on its
// branch: the passing attempt that made it (its last step's, with a plan),
// with its whole change against where that run started.
type PushedChange struct {
	// RunID is the run; Round the round of the loop it was (from 1), 0 for
	// the task that opened the pull request.
	RunID   string `json:"runId"`
	Round   int    `json:"round,omitempty"`
	Attempt int    `json:"attempt"`
	Change  Change `json:"change"`
}

// PushedOf is the change that the ended task run res put on a pull
// request's branch when it was pushed, as round (0: the task that opened
// it); false when no attempt of it passed.
func PushedOf(res Result, round int) (PushedChange, bool) {
	for i := len(res.Attempts) - 1; i >= 0; i-- {
		if a := res.Attempts[i]; a.Action == ActionPass {
			return PushedChange{RunID: res.RunID, Round: round, Attempt: a.Number, Change: a.Change}, true
		}
	}
	return PushedChange{}, false
}

// Label names the change's attempt in a later round's detections.
func (c PushedChange) Label() string {
	if c.Round == 0 {
		return fmt.Sprintf("attempt %d of the task that opened the pull request (run %s)", c.Attempt, c.RunID)
	}
	return fmt.Sprintf("attempt %d of round %d (run %s)", c.Attempt, c.Round, c.RunID)
}

// ForAttempt is what an attempt made apart from its task's history (an
// activity on a worker) needs of p: what the loop rules compare it with
// (Needs and Pushed), without the attempts its prompt told already; nil
// when they compare it with nothing.
func (p *Prior) ForAttempt() *Prior {
	if p == nil || p.Needs == "" || len(p.Pushed) == 0 {
		return nil
	}
	return &Prior{RunID: p.RunID, Needs: p.Needs, Pushed: p.Pushed}
}

// PriorOf is the Prior of the ended task run res, which could not land
// for reason; checks, when not nil, is the report of the checks that
// failed on its change laid on the base as it had become.
func PriorOf(res Result, reason string, checks *gate.Report) *Prior {
	p := &Prior{RunID: res.RunID, Reason: reason, Checks: checks, CostUSD: res.CostUSD, CostKnown: res.CostKnown,
		CostEstimated: res.CostEstimated, DurationMs: res.DurationMs, Attempts: make([]Attempt, 0, len(res.Attempts))}
	for _, a := range res.Attempts {
		a.Prompt = "" // long, and told again by nothing: the prompt shows replies, diffs and failures
		p.Attempts = append(p.Attempts, a)
	}
	return p
}

// StartTier is the tier (index among tiers of a task of n tiers) that a run
// following p starts at: the tier of the earlier run's last passing attempt
// (its last step's, with a plan), else of its last attempt; 0 when it made
// none. A tier past the last is the last.
func (p *Prior) StartTier(n int) int {
	if p == nil || len(p.Attempts) == 0 || n <= 0 {
		return 0
	}
	t := p.Attempts[len(p.Attempts)-1].TierIndex
	for i := len(p.Attempts) - 1; i >= 0; i-- {
		if a := p.Attempts[i]; a.Action == ActionPass || (a.Gate.OK() && !a.Repeats) {
			t = a.TierIndex
			break
		}
	}
	return min(max(t, 0), n-1)
}

// ledger is own, a run's ledger, after the earlier run's attempts.
func (p *Prior) ledger(own cost.Ledger) cost.Ledger {
	var l cost.Ledger
	for _, a := range p.Attempts {
		l.Add(a.Tier, a.CostUSD, a.CostEstimated)
	}
	l.Entries = append(l.Entries, own.Entries...)
	return l
}

// spent is what the earlier run's attempts cost.
func (p *Prior) spent() float64 {
	var l cost.Ledger
	for _, a := range p.Attempts {
		l.Add(a.Tier, a.CostUSD, a.CostEstimated)
	}
	return l.Spent()
}

// passed is the earlier run's last passing attempt, nil when none passed.
func (p *Prior) passed() *Attempt {
	for i := len(p.Attempts) - 1; i >= 0; i-- {
		if a := &p.Attempts[i]; a.Action == ActionPass || (a.Gate.OK() && !a.Repeats) {
			return a
		}
	}
	return nil
}

// MaxPriorDetail bounds what the prompt shows in detail of an earlier run's
// attempts (beside MaxAttemptsDetail for the run's own).
const MaxPriorDetail = 12 << 10

// priorSection tells a developer what the earlier run p of the task tried:
// why its change is not in the tree, a line per attempt, and the attempts in
// detail, the most recent (the one that passed) first.
func priorSection(p *Prior) string {
	if p != nil && p.Needs != "" {
		return pullSection(p)
	}
	if p == nil || len(p.Attempts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## An earlier run of this task\n\n")
	who := "Its change"
	if a := p.passed(); a != nil {
		who = fmt.Sprintf("Its attempt %d (tier %s) passed the checks, but its change", a.Number, a.Tier)
	}
	why := "could not be merged"
	if p.Reason != "" {
		why += " after " + strings.TrimSuffix(p.Reason, ".")
	}
	fmt.Fprintf(&b, "An earlier run of this task (run %s) made %s. %s %s. That change is not in your working tree: "+
		"build on what passed, make it fit the tree as it is now, and do not repeat what failed.\n\n",
		p.RunID, plural.N(len(p.Attempts), "attempt"), who, why)
	from := max(0, len(p.Attempts)-MaxHistory)
	if from > 0 {
		fmt.Fprintf(&b, "(%d earlier attempts of that run not shown)\n", from)
	}
	for _, x := range p.Attempts[from:] {
		b.WriteString("- ")
		b.WriteString(attemptLine(x))
		b.WriteString("\n")
	}
	if p.Checks != nil {
		fmt.Fprintf(&b, "\nWhat the checks said of that change laid on the work merged since:\n\n%s",
			fenced(headLines(GateDigest(*p.Checks, MaxGateDigest), -1, MaxGateDigest), ""))
	}
	if a := p.passed(); a != nil && a.Change.Diff != "" && a.Change.Diff != a.AttemptDiff {
		fmt.Fprintf(&b, "\nThe change that passed, whole (against the tree that run started from):\n\n%s",
			fenced(headLines(a.Change.Diff, -1, 2*MaxAttemptDiff), "diff"))
	}
	b.WriteString(attemptsDetailOf(p.Attempts, nil, "\n## That run's attempts in detail (most recent first)\n", MaxPriorDetail, false))
	return b.String()
}

// pullSection tells the developer of a pull request's round what the pull
// request needs, then the attempts that made its change so far (their
// lines, the latest in detail): its history, in the tree already.
func pullSection(p *Prior) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(p.Needs, "\n"))
	b.WriteString("\n")
	if len(p.Attempts) == 0 {
		return b.String()
	}
	b.WriteString("\n## How the pull request's change was made so far\n\n")
	runs := runNumbers(p.Attempts)
	if runs != nil {
		fmt.Fprintf(&b, "%d runs made it, one after the other (run 1 the earliest), each numbering its attempts from 1.\n\n", runs[len(runs)-1])
	}
	from := max(0, len(p.Attempts)-MaxHistory)
	if from > 0 {
		fmt.Fprintf(&b, "(%d earlier attempts not shown)\n", from)
	}
	for i, x := range p.Attempts[from:] {
		b.WriteString("- ")
		b.WriteString(attemptLineAs(x, attemptName(x, runs, from+i)))
		b.WriteString("\n")
	}
	b.WriteString(attemptsDetailOf(p.Attempts, runs, "\n## Those attempts in detail (most recent first)\n", MaxPriorDetail, false))
	return b.String()
}
