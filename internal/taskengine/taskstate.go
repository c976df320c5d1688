package taskengine

import (
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Event types of a task's journal (beside EventStart, EventResume, EventWait
// and EventStop, which a task writes too).
const (
	EventPlan    = "plan"
	EventAttempt = "attempt"
)

// Actions: what the task did after an attempt.
const (
	// ActionPass: the gate passed; the step (or the task) is done.
	ActionPass = "pass"
	// ActionRetry: the same tier tries again.
	ActionRetry = "retry"
	// ActionNudge: a loop was detected for the first time in the tier; the
	// same tier tries again, told to step back.
	ActionNudge = "nudge"
	// ActionEscalate: the tier looped again or spent its attempts; the next
	// tier takes over.
	ActionEscalate = "escalate"
	// ActionStop: the task stops after this attempt (last tier, budget).
	ActionStop = "stop"
)

// Attempt is one developer attempt of a task: what the agent was asked and
// did, what it cost, the change it left, the gate's verdict, and what the
// task decided.
type Attempt struct {
	// Number counts the task's attempts from 1; it names the snapshot
	// refs/jlgcli/<run>/<Number> of the state the attempt started from.
	Number int `json:"number"`
	// Step is the plan step (from 1), 0 without a plan.
	Step int `json:"step,omitempty"`
	// Tier is the tier's name, TierIndex its place (from 0); InTier counts
	// the tier's attempts in this step, from 1.
	Tier      string `json:"tier"`
	TierIndex int    `json:"tierIndex"`
	InTier    int    `json:"inTier"`
	Backend   string `json:"backend"`
	Model     string `json:"model,omitempty"`

	StartedAt  time.Time       `json:"startedAt"`
	DurationMs millis.Duration `json:"durationMs"`
	// Nudged: the prompt told the agent to step back (a loop was found).
	Nudged bool `json:"nudged,omitempty"`
	// Notes are what people wrote that its prompt told (Next.Notes).
	Notes []Note `json:"notes,omitempty"`

	Prompt    string         `json:"prompt"`
	Response  string         `json:"response"`
	ExitCode  int            `json:"exitCode"`
	Failure   *agent.Failure `json:"failure,omitempty"`
	SessionID string         `json:"sessionId,omitempty"`

	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
	CostUSD      float64 `json:"costUsd"`
	// CostEstimated: the CLI reported no cost; CostUSD was computed from
	// the tokens and the price table. CostKnown is false when neither was
	// possible (CostUSD is then 0).
	CostEstimated bool `json:"costEstimated,omitempty"`
	CostKnown     bool `json:"costKnown"`

	// Start is the commit of the state the attempt started from (the
	// snapshot refs/jlgcli/<run>/<Number>); Result that of the state it
	// left (refs/jlgcli/<run>/<Number>-result).
	Start  string `json:"start"`
	Result string `json:"result"`
	// Change is the state it left, against the task's base.
	Change Change `json:"change"`
	// Unchanged: the tree is where the step started (the no-change rule).
	Unchanged bool `json:"unchanged,omitempty"`
	// AttemptDiff is the change the attempt itself made (from Start),
	// bounded; the similar-diff rule compares it.
	AttemptDiff string `json:"attemptDiff,omitempty"`

	Gate gate.Report `json:"gate"`
	// Repeats: in a round of a pull request's loop, its checks passed but
	// it made again a change that a run before it pushed (the loop rules
	// across rounds found it; Detection says how): it does not pass, and
	// is neither reviewed nor committed.
	Repeats bool `json:"repeats,omitempty"`
	// Review is the reviewer's reading of the attempt when its checks
	// passed and the task has a reviewer.
	Review    *Review           `json:"review,omitempty"`
	Detection *detect.Detection `json:"detection,omitempty"`
	Action    string            `json:"action"`
	// Commit is the commit made on the task branch when the gate passed.
	Commit string `json:"commit,omitempty"`
}

// Change is an attempt's change against the task's base, as the report
// keeps it.
type Change struct {
	Hash         string           `json:"hash"`
	Empty        bool             `json:"empty"`
	Files        []git.FileChange `json:"files"`
	DeletedTests []string         `json:"deletedTests,omitempty"`
	// WeakenedTests are the test files of the base whose lines it removes
	// or alters.
	WeakenedTests []git.WeakenedTest `json:"weakenedTests,omitempty"`
	Size          int64              `json:"size"`
	// Diff is the diff, cut to MaxKeptDiff bytes.
	Diff      string `json:"diff,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// MaxKeptDiff bounds each diff kept in an attempt's record.
const MaxKeptDiff = 16 << 10

// Paths are the paths of the change's files, in its order.
func (c Change) Paths() []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path)
	}
	return out
}

// ChangeOf is the change c as a record keeps it: its diff cut to
// MaxKeptDiff bytes.
func ChangeOf(c git.Change) Change {
	files := c.Files
	if files == nil {
		files = []git.FileChange{}
	}
	text, cut := bound(c.Text, MaxKeptDiff)
	return Change{Hash: c.Hash, Empty: c.Empty, Files: files, DeletedTests: c.DeletedTests, WeakenedTests: c.WeakenedTests, Size: c.Size,
		Diff: text, Truncated: c.Truncated || cut}
}

// bound cuts s to at most n bytes at a line end.
func bound(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := s[:n]
	for i := len(cut) - 1; i > 0; i-- {
		if cut[i] == '\n' {
			cut = cut[:i+1]
			break
		}
	}
	return cut + fmt.Sprintf("[jlgcli: cut: %d of %d bytes kept]\n", len(cut), len(s)), true
}

// Detection is a loop found during a task, with where and what was done.
type Detection struct {
	detect.Detection
	Step   int    `json:"step,omitempty"`
	Tier   string `json:"tier"`
	Action string `json:"action"`
}

// TierSummary is what one tier did in a task.
type TierSummary struct {
	Name     string  `json:"name"`
	Backend  string  `json:"backend"`
	Model    string  `json:"model,omitempty"`
	Attempts int     `json:"attempts"`
	CostUSD  float64 `json:"costUsd"`
	// CostKnown: an attempt of the tier reported a cost or had one
	// estimated.
	CostKnown bool `json:"costKnown"`
	// CostEstimated: part of the cost was estimated from tokens.
	CostEstimated bool `json:"costEstimated,omitempty"`
	// Passed counts the attempts whose gate passed.
	Passed int `json:"passed"`
	// Outcome is how the tier's last turn ended: "passed", "loop",
	// "spent" (its attempts), "stopped" (the task stopped meanwhile), or
	// "unused".
	Outcome string `json:"outcome"`
}

// State is what a task carries from one attempt to the next: enough to
// continue it exactly where it stopped. Every attempt event holds the state
// after it.
type State struct {
	// Attempts is the number of recorded attempts.
	Attempts int `json:"attempts"`
	// Step is the plan step under way (from 0).
	Step int `json:"step"`
	// Tier is the tier under way (index); InTier its attempts in this step;
	// Detections the loops found in its current turn.
	Tier       int `json:"tier"`
	InTier     int `json:"inTier"`
	Detections int `json:"detections"`
	// Nudge, when set, is told to the next attempt.
	Nudge string `json:"nudge,omitempty"`
	// Start is the commit the next attempt starts from; StepBase the commit
	// the current step started from (a tier that takes over starts there).
	Start    string `json:"start"`
	StepBase string `json:"stepBase"`
	// ElapsedMs is the active time used against the timeout; WaitedMs the
	// time spent waiting for rate limits.
	ElapsedMs millis.Duration `json:"elapsedMs"`
	WaitedMs  millis.Duration `json:"waitedMs"`
	// Ledger holds each attempt's cost, for the budget.
	Ledger cost.Ledger `json:"ledger"`
	// Commits are the commits made on the task branch, in order.
	Commits []string `json:"commits,omitempty"`
	// Outcomes is how each tier's last turn ended (see TierSummary).
	Outcomes map[string]string `json:"outcomes,omitempty"`
	// Windows are the last known use of the subscription windows the
	// tiers' agents reported, per backend.
	Windows engine.Windows `json:"windows,omitempty"`
}

// AttemptData is the payload of an attempt event.
type AttemptData struct {
	Attempt Attempt `json:"attempt"`
	State   State   `json:"state"`
}

// PlanData is the payload of a plan event: the steps the planner gave.
type PlanData struct {
	Steps []string `json:"steps"`
	// Attempt is the planner's call, for its cost and reply.
	Planner Attempt `json:"planner"`
	State   State   `json:"state"`
}

// TaskStart is the payload of a task's start and resume events: what the
// task was started with, and its state.
type TaskStart struct {
	Task      string  `json:"task"`
	Tiers     []Tier  `json:"tiers"`
	BudgetUSD float64 `json:"budgetUsd"`
	State     State   `json:"state"`
	// Prior is the earlier run of the task that this run follows (its
	// start event only).
	Prior *Prior `json:"prior,omitempty"`
}

// TaskWait is the payload of a task's rate-limit wait event.
type TaskWait struct {
	Until   time.Time       `json:"until"`
	WaitMs  millis.Duration `json:"waitMs"`
	Message string          `json:"message"`
	// Window, when set, is the window over --window-limit waited for.
	Window *engine.Window `json:"window,omitempty"`
	State  State          `json:"state"`
}

// Checkpoint is a task's checkpoint: the progress the run index reads
// (status, iterations, cost, duration, heartbeat, tiers) and the state.
type Checkpoint struct {
	store.Progress
	RunID string   `json:"runId"`
	State State    `json:"state"`
	Plan  []string `json:"plan,omitempty"`
}

// TierStat is a tier's line in the run index, for stats.
type TierStat = store.TierStat

// Result is the outcome of a task, with the loop's field names and what
// the task adds: the plan, each tier's attempts and cost, the attempts, the
// detections and the last gate report.
type Result struct {
	ExitCode   int             `json:"exitCode"`
	Status     engine.Status   `json:"status"`
	Text       string          `json:"text"`
	Backend    string          `json:"backend"`
	RunID      string          `json:"runId"`
	Task       string          `json:"task"`
	Iterations int             `json:"iterations"`
	DurationMs millis.Duration `json:"durationMs"`
	Summary    string          `json:"summary,omitempty"`
	Details    string          `json:"details,omitempty"`

	CostUSD       float64 `json:"costUsd"`
	CostKnown     bool    `json:"costKnown"`
	CostEstimated bool    `json:"costEstimated,omitempty"`
	BudgetUSD     float64 `json:"budgetUsd"`
	InputTokens   int64   `json:"inputTokens"`
	OutputTokens  int64   `json:"outputTokens"`

	Plan  []string      `json:"plan,omitempty"`
	Tiers []TierSummary `json:"tiers"`
	// Review sums the reviewer's rounds (nil: the task has no reviewer or
	// no attempt reached it): Attempts counts its reviews, Passed its
	// approvals, Outcome is its last verdict.
	Review     *TierSummary `json:"review,omitempty"`
	Attempts   []Attempt    `json:"attempts"`
	Detections []Detection  `json:"detections"`
	// Gate is the last gate report (nil before the first attempt's).
	Gate *gate.Report `json:"gate"`
	// Baseline is the gate's baseline: how the checks fared where the task
	// started, before any change (nil: none was taken). A batch judges the
	// change laid on a moved base against it, as the task's gate did.
	Baseline *gate.Report `json:"baseline,omitempty"`
	// Flaky are the tests that failed then passed on a rerun, over the
	// whole task.
	Flaky []string `json:"flaky"`
	// Commits are the commits made on the task branch for passing attempts.
	Commits []string       `json:"commits"`
	Failure *agent.Failure `json:"failure,omitempty"`
	// Windows are the last known use of the subscription windows the
	// agents reported (none when they report none).
	Windows engine.Windows `json:"windows,omitempty"`

	// Git is where the work is, filled in by the caller (branch, commits,
	// merge, push); nil when the task ran without git.
	Git *GitInfo `json:"git,omitempty"`

	// RerunOf, for a run that follows an earlier run of the same task (a
	// batch ran the task again because that run's change could not land),
	// is that run; nil otherwise. The fields above are this run's own.
	RerunOf *RerunOf `json:"rerunOf,omitempty"`
	// RerunAs, for a run whose batch ran its task again because this run's
	// change could not land, is that second run, filled in from the
	// batch's record (as Git.Merge is); nil otherwise.
	RerunAs *RerunAs `json:"rerunAs,omitempty"`
}

// RerunAs is the second run a batch made of a task after this run: its id,
// whether it landed, and the batch's words ("re-run as Z after a conflict
// with p, which landed").
type RerunAs struct {
	RunID  string `json:"runId"`
	Landed bool   `json:"landed"`
	Said   string `json:"said"`
}

// RerunOf is the earlier run of a task that a run follows: its id, why its
// change did not land, and what it made and cost, which the task's cost
// in all counts besides the run's own.
type RerunOf struct {
	RunID         string          `json:"runId"`
	Reason        string          `json:"reason,omitempty"`
	Attempts      int             `json:"attempts"`
	CostUSD       float64         `json:"costUsd"`
	CostKnown     bool            `json:"costKnown"`
	CostEstimated bool            `json:"costEstimated,omitempty"`
	DurationMs    millis.Duration `json:"durationMs"`
}

func rerunOf(p *Prior) *RerunOf {
	if p == nil {
		return nil
	}
	return &RerunOf{RunID: p.RunID, Reason: p.Reason, Attempts: len(p.Attempts), CostUSD: p.CostUSD, CostKnown: p.CostKnown,
		CostEstimated: p.CostEstimated, DurationMs: p.DurationMs}
}

// GitInfo says where a task's work is kept.
type GitInfo struct {
	// Mode is the commit strategy: "branch" or "direct".
	Mode string `json:"mode"`
	// Repo is the top of the user's working tree; Worktree the task's
	// (removed when the task ends: Removed).
	Repo     string `json:"repo"`
	Worktree string `json:"worktree,omitempty"`
	Removed  bool   `json:"removed,omitempty"`
	// Discarded: no attempt ran, and the branch, the worktree and the refs
	// were taken away with nothing to keep.
	Discarded bool `json:"discarded,omitempty"`
	// Branch is the task branch; Base the commit it started from;
	// BaseBranch the branch to merge into.
	Branch     string `json:"branch"`
	Base       string `json:"base"`
	BaseBranch string `json:"baseBranch,omitempty"`
	// DirtyIncluded: the user's uncommitted changes were the branch's first
	// commit; DirtyLeftOut: the user had uncommitted changes, not included.
	DirtyIncluded bool `json:"dirtyIncluded,omitempty"`
	DirtyLeftOut  bool `json:"dirtyLeftOut,omitempty"`
	// Refs is the prefix of the attempt snapshots: <Refs><n> is the state
	// before attempt n, <Refs><n>-result the state it left.
	Refs string `json:"refs"`
	// WIP is the commit of the partial work when the task failed.
	WIP string `json:"wip,omitempty"`
	// Merge says what became of the branch on success.
	Merge *MergeInfo `json:"merge,omitempty"`
	// Pushed: the branch was pushed to Remote; PR is the pull request's
	// address.
	Pushed bool   `json:"pushed,omitempty"`
	Remote string `json:"remote,omitempty"`
	PR     string `json:"pr,omitempty"`
	// Warnings are what went wrong after the task ended (a push refused...).
	Warnings []string `json:"warnings,omitempty"`
}

// MergeInfo is the outcome of the squash merge of a successful task.
type MergeInfo struct {
	// Status says what became of the branch; Reason why it was refused,
	// Command how to merge it by hand.
	Status  git.MergeStatus `json:"status"`
	Into    string          `json:"into,omitempty"`
	Commit  string          `json:"commit,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Command string          `json:"command,omitempty"`
}

// HeldForReview reports whether the merge was refused because the change
// touches files that decide what runs on the user's machine
// (git.RefusedReview): the Reason starts with "review: ".
func (m *MergeInfo) HeldForReview() bool {
	return m != nil && m.Status == git.MergeRefused && strings.HasPrefix(m.Reason, string(git.RefusedReview)+": ")
}

// HoldForReview makes a done task whose merge was held for review
// (MergeInfo.HeldForReview) incomplete: its work passed but is not where
// it belongs until the user merged it, which its exit code and details say.
func (r *Result) HoldForReview() {
	if r.Status != engine.StatusDone || r.Git == nil || !r.Git.Merge.HeldForReview() {
		return
	}
	r.Status, r.ExitCode = engine.StatusIncomplete, engine.StatusIncomplete.ExitCode()
	r.Details = strings.TrimPrefix(r.Details+"; ", "; ") + "not merged: kept on branch " + r.Git.Branch + " for your review (" +
		strings.TrimPrefix(r.Git.Merge.Reason, string(git.RefusedReview)+": ") + ")"
}
