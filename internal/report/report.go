// Package report makes the final report of a task (seed 003: status, total
// attempts, tiers used, unique errors, last diff, recommendation) from its
// result, and renders it as JSON, Markdown or one self-contained HTML page.
// Stats computes the metrics the seed asks to track across task runs.
//
// Everything here is a pure function of its input: no clock, no file, no
// environment, so that the same result always gives the same bytes.
package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// Bounds of a report.
const (
	// MaxUniqueErrors bounds UniqueErrors; the errors left out are counted
	// in UniqueErrorsLeftOut.
	MaxUniqueErrors = 50
	// MaxErrorBytes bounds each unique error.
	MaxErrorBytes = 300
	// MaxDiff bounds LastDiff (the note that says it was cut included).
	MaxDiff = 16 << 10
)

// Report is the final report of a task. Its JSON has the seed's snake_case
// names.
type Report struct {
	// Status is the task's status (done, no-progress, max-iterations,
	// budget-exceeded, timeout, interrupted...), ExitCode its exit code.
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	RunID    string `json:"run_id"`
	Task     string `json:"task"`
	Backend  string `json:"backend,omitempty"`
	// Sandbox is the confinement its agents and checks had
	// (sandbox.Record's line: "bubblewrap 0.8.0", "off (unconfined, as
	// asked)", "none (why)"); "" for a run that recorded none.
	Sandbox string `json:"sandbox,omitempty"`
	// Details says why the task stopped, in the engine's words.
	Details string `json:"details,omitempty"`
	// Failure is the agent's failure that stopped the task, if any.
	Failure *Failure `json:"failure,omitempty"`
	// StartedAt is when the first attempt started (zero without attempts).
	StartedAt time.Time `json:"started_at,omitzero"`

	TotalAttempts int `json:"total_attempts"`
	// TiersUsed are the tiers that made attempts, in the order of the
	// escalation; TiersUnused names the others.
	TiersUsed   []Tier   `json:"tiers_used"`
	TiersUnused []string `json:"tiers_unused,omitempty"`
	// Reviewer is what the reviewer did (nil: the task had none, or no
	// attempt reached it): Attempts counts its reviews, Passed its
	// approvals, Outcome is its last verdict.
	Reviewer *Tier `json:"reviewer,omitempty"`
	// UniqueErrors are the distinct gate failures of all the attempts, in
	// the order they were first seen: syntax, import and runtime errors,
	// and test failures as "test: error". Two errors are the same when
	// they are once normalized (gate.Normalize: no timestamps, durations,
	// addresses, temporary paths...); the text kept is the first one's,
	// on one line, cut to MaxErrorBytes. At most MaxUniqueErrors are kept;
	// UniqueErrorsLeftOut counts the others.
	UniqueErrors        []string `json:"unique_errors"`
	UniqueErrorsLeftOut int      `json:"unique_errors_left_out,omitempty"`
	// LastDiff is the last attempt's change against the task's base, cut
	// to MaxDiff; LastDiffNote says when and where the whole change is.
	LastDiff     string `json:"last_diff"`
	LastDiffNote string `json:"last_diff_note,omitempty"`

	Attempts    []Attempt    `json:"attempts"`
	Detections  []Detection  `json:"detections"`
	GateResults []GateResult `json:"gate_results"`
	FlakyTests  []string     `json:"flaky_tests"`
	// TestsJudged says how the tests judged the change: whether the tests
	// as they stood at the task's base ran against it (or were set aside,
	// and why), and which checks' tests could not be counted (the rules
	// that were off for them).
	TestsJudged []string `json:"tests_judged,omitempty"`

	DurationMs millis.Duration `json:"duration_ms"`
	// CostUSD is the task's cost; CostKnown false means no agent reported
	// one (CostUSD is then 0, not free); CostEstimated that part of it was
	// computed from tokens. BudgetUSD is the budget (0: none).
	CostUSD       float64 `json:"cost_usd"`
	CostKnown     bool    `json:"cost_known"`
	CostEstimated bool    `json:"cost_estimated"`
	BudgetUSD     float64 `json:"budget_usd"`
	InputTokens   int64   `json:"input_tokens"`
	OutputTokens  int64   `json:"output_tokens"`
	// RerunOf, for a batch's second run of a task whose first run's change
	// could not land, is that first run: why, its attempts and cost (the
	// figures above are this run's own); RerunAs, for a first run, the
	// second run the batch made, and whether it landed.
	RerunOf *RerunOf `json:"rerun_of,omitempty"`
	RerunAs *RerunAs `json:"rerun_as,omitempty"`
	// Windows are the last known use of the subscription windows the
	// agents reported (none when they report none).
	Windows []Window `json:"windows,omitempty"`

	// Plan are the planner's steps, if the task was planned.
	Plan []string `json:"plan,omitempty"`
	// Git is where the work is; nil when the task ran without git.
	Git *Git `json:"git,omitempty"`
	// Recommendation is what to do now, in one sentence.
	Recommendation string `json:"recommendation"`
}

// Window is the use of one subscription window of a backend, as its agent
// last reported it: Used 0..1, its reset, when it was reported.
type Window struct {
	Backend    string    `json:"backend"`
	Kind       string    `json:"kind"`
	Used       float64   `json:"used"`
	ResetsAt   time.Time `json:"resets_at,omitzero"`
	ReportedAt time.Time `json:"reported_at,omitzero"`
}

// windowsLine is the windows for the summary: "claude 5h 92% (resets
// 2026-11-22 14:05 UTC)", "" when there are none.
func (r Report) windowsLine() string {
	var parts []string
	for _, w := range r.Windows {
		s := w.Backend + " " + w.Kind + " " + engine.Percent(w.Used)
		if !w.ResetsAt.IsZero() {
			s += " (resets " + w.ResetsAt.UTC().Format("2006-01-02 15:04 MST") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Failure is an agent's failure.
type Failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Tier is what one tier did.
type Tier struct {
	Name     string `json:"name"`
	Backend  string `json:"backend"`
	Model    string `json:"model,omitempty"`
	Attempts int    `json:"attempts"`
	// Passed counts the attempts whose gate passed.
	Passed  int     `json:"passed"`
	CostUSD float64 `json:"cost_usd"`
	// CostKnown: an attempt of the tier had a cost reported or estimated.
	CostKnown     bool `json:"cost_known"`
	CostEstimated bool `json:"cost_estimated"`
	// Outcome is how its last turn ended: passed, loop, spent, stopped.
	Outcome string `json:"outcome"`
}

// Attempt is one line of the attempts table.
type Attempt struct {
	Number int `json:"number"`
	// Step is the plan step (from 1); 0 without a plan.
	Step      int    `json:"step,omitempty"`
	Tier      string `json:"tier"`
	TierIndex int    `json:"tier_index"`
	// InTier counts the tier's attempts in the step, from 1.
	InTier     int             `json:"in_tier"`
	Backend    string          `json:"backend"`
	Model      string          `json:"model,omitempty"`
	StartedAt  time.Time       `json:"started_at,omitzero"`
	DurationMs millis.Duration `json:"duration_ms"`
	// Nudged: the agent was told a loop was found and to step back.
	Nudged        bool    `json:"nudged,omitempty"`
	CostUSD       float64 `json:"cost_usd"`
	CostKnown     bool    `json:"cost_known"`
	CostEstimated bool    `json:"cost_estimated,omitempty"`
	// GateStatus is pass, fail, warning, or not-run (the agent failed
	// before the gate).
	GateStatus string `json:"gate_status"`
	// Action is what the task did next: pass, retry, nudge, escalate,
	// stop.
	Action string `json:"action"`
	// FilesChanged, LinesAdded and LinesDeleted measure the state the
	// attempt left against the task's base (binary files count no line).
	FilesChanged int `json:"files_changed"`
	LinesAdded   int `json:"lines_added"`
	LinesDeleted int `json:"lines_deleted"`
	// Detection is the rule of the loop found at this attempt, if any.
	Detection string   `json:"detection,omitempty"`
	Commit    string   `json:"commit,omitempty"`
	Failure   *Failure `json:"failure,omitempty"`
	// Review is the reviewer's reading of the attempt, when its checks
	// passed and the task had a reviewer.
	Review *Review `json:"review,omitempty"`
}

// Review is a reviewer's reading of one attempt.
type Review struct {
	Tier    string `json:"tier"`
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	// Verdict is approve, changes or unreadable.
	Verdict  string                     `json:"verdict"`
	Summary  string                     `json:"summary,omitempty"`
	Comments []taskengine.ReviewComment `json:"comments"`
	// Error says why its answer could not be read.
	Error string `json:"error,omitempty"`
	// Discarded are the files the reviewer changed, put back.
	Discarded     []string `json:"discarded,omitempty"`
	CostUSD       float64  `json:"cost_usd"`
	CostKnown     bool     `json:"cost_known"`
	CostEstimated bool     `json:"cost_estimated,omitempty"`
}

// reviewOf is a's review as the report keeps it (nil: none).
func reviewOf(a taskengine.Attempt) *Review {
	rv := a.Review
	if rv == nil {
		return nil
	}
	return &Review{Tier: rv.Tier, Backend: rv.Backend, Model: rv.Model, Verdict: rv.Verdict, Summary: rv.Summary,
		Comments: nonNil(rv.Comments), Error: rv.Error, Discarded: rv.Discarded, CostUSD: rv.CostUSD,
		CostKnown: rv.CostKnown || rv.CostUSD != 0, CostEstimated: rv.CostEstimated}
}

// Detection is a loop found during the task.
type Detection struct {
	// Rule is the first rule that fired; Rules, when several fired on the
	// attempt, all of them in the order the rules apply.
	Rule     string   `json:"rule"`
	Rules    []string `json:"rules,omitempty"`
	Attempts []int    `json:"attempts"`
	Step     int      `json:"step,omitempty"`
	Tier     string   `json:"tier"`
	Action   string   `json:"action"`
	Details  string   `json:"details"`
}

// Names are the rules that fired, for people.
func (d Detection) Names() string {
	return detect.Detection{Rule: d.Rule, Rules: d.Rules}.Names()
}

// GateResult is the gate's verdict on one attempt.
type GateResult struct {
	Number         int    `json:"number"`
	Tier           string `json:"tier"`
	Status         string `json:"status"`
	Recommendation string `json:"recommendation"`
	// Summary is one line: gate.Report.Summary.
	Summary string `json:"summary"`
}

// Git says where the work of the task is: the result's record of it
// (taskengine.GitInfo) and the commits of its passing attempts. Its JSON has
// the report's snake_case names (gitJSON): wip_commit, worktree_removed...
type Git struct {
	taskengine.GitInfo
	// Commits are the commits of passing attempts on the branch.
	Commits []string
}

// gitJSON is Git as the report's JSON spells it (without GitInfo.Discarded).
type gitJSON struct {
	Mode            string                `json:"mode,omitempty"`
	Repo            string                `json:"repo,omitempty"`
	Branch          string                `json:"branch"`
	Base            string                `json:"base"`
	BaseBranch      string                `json:"base_branch,omitempty"`
	Worktree        string                `json:"worktree,omitempty"`
	WorktreeRemoved bool                  `json:"worktree_removed,omitempty"`
	Refs            string                `json:"refs"`
	Commits         []string              `json:"commits"`
	WIP             string                `json:"wip_commit,omitempty"`
	DirtyIncluded   bool                  `json:"dirty_included,omitempty"`
	DirtyLeftOut    bool                  `json:"dirty_left_out,omitempty"`
	Merge           *taskengine.MergeInfo `json:"merge,omitempty"`
	Pushed          bool                  `json:"pushed"`
	Remote          string                `json:"remote,omitempty"`
	PR              string                `json:"pr,omitempty"`
	Warnings        []string              `json:"warnings,omitempty"`
}

// MarshalJSON writes g with the report's names.
func (g Git) MarshalJSON() ([]byte, error) {
	return json.Marshal(gitJSON{Mode: g.Mode, Repo: g.Repo, Branch: g.Branch, Base: g.Base, BaseBranch: g.BaseBranch,
		Worktree: g.Worktree, WorktreeRemoved: g.Removed, Refs: g.Refs, Commits: g.Commits, WIP: g.WIP,
		DirtyIncluded: g.DirtyIncluded, DirtyLeftOut: g.DirtyLeftOut, Merge: g.Merge, Pushed: g.Pushed, Remote: g.Remote,
		PR: g.PR, Warnings: g.Warnings})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *Git) UnmarshalJSON(data []byte) error {
	var v gitJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*g = Git{GitInfo: taskengine.GitInfo{Mode: v.Mode, Repo: v.Repo, Branch: v.Branch, Base: v.Base, BaseBranch: v.BaseBranch,
		Worktree: v.Worktree, Removed: v.WorktreeRemoved, Refs: v.Refs, WIP: v.WIP, DirtyIncluded: v.DirtyIncluded,
		DirtyLeftOut: v.DirtyLeftOut, Merge: v.Merge, Pushed: v.Pushed, Remote: v.Remote, PR: v.PR, Warnings: v.Warnings},
		Commits: v.Commits}
	return nil
}

// gateNotRun is the gate status of an attempt whose gate did not run.
const gateNotRun = "not-run"

// New makes the report of a task from its result.
// RerunOf is the first run of a task that a report's run follows.
type RerunOf struct {
	RunID     string  `json:"run_id"`
	Reason    string  `json:"reason,omitempty"`
	Attempts  int     `json:"attempts"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
}

// RerunAs is the second run a batch made of a report's task.
type RerunAs struct {
	RunID  string `json:"run_id"`
	Landed bool   `json:"landed"`
	Said   string `json:"said"`
}

func New(res taskengine.Result) Report {
	r := Report{
		Status: string(res.Status), ExitCode: res.ExitCode, RunID: res.RunID, Task: res.Task, Backend: res.Backend,
		Details: res.Details, Failure: failureOf(res.Failure), TotalAttempts: len(res.Attempts),
		DurationMs: res.DurationMs, CostUSD: res.CostUSD, CostKnown: res.CostKnown || res.CostUSD != 0,
		CostEstimated: res.CostEstimated, BudgetUSD: res.BudgetUSD, InputTokens: res.InputTokens,
		OutputTokens: res.OutputTokens, Plan: res.Plan,
		TiersUsed: []Tier{}, UniqueErrors: []string{}, Attempts: []Attempt{}, Detections: []Detection{},
		GateResults: []GateResult{}, FlakyTests: []string{},
	}
	if r.Status == "" {
		r.Status = string(engine.StatusError)
	}
	if o := res.RerunOf; o != nil {
		r.RerunOf = &RerunOf{RunID: o.RunID, Reason: o.Reason, Attempts: o.Attempts, CostUSD: o.CostUSD, CostKnown: o.CostKnown || o.CostUSD != 0}
	}
	if a := res.RerunAs; a != nil {
		r.RerunAs = &RerunAs{RunID: a.RunID, Landed: a.Landed, Said: a.Said}
	}
	for _, w := range res.Windows {
		r.Windows = append(r.Windows, Window{Backend: w.Backend, Kind: w.Kind, Used: w.Used, ResetsAt: w.ResetsAt, ReportedAt: w.At})
	}
	if len(res.Attempts) > 0 {
		r.StartedAt = res.Attempts[0].StartedAt
	}
	r.tiers(res)
	if t := res.Review; t != nil {
		r.Reviewer = &Tier{Name: t.Name, Backend: t.Backend, Model: t.Model, Attempts: t.Attempts, Passed: t.Passed,
			CostUSD: t.CostUSD, CostKnown: t.CostKnown || t.CostUSD != 0, CostEstimated: t.CostEstimated, Outcome: t.Outcome}
	}
	detected := map[int]string{}
	for _, d := range res.Detections {
		r.Detections = append(r.Detections, Detection{Rule: d.Rule, Rules: d.Rules, Attempts: nonNil(d.Attempts), Step: d.Step,
			Tier: d.Tier, Action: d.Action, Details: taskengine.DetectionText(d.Detection)})
		if n := len(d.Attempts); n > 0 {
			detected[d.Attempts[n-1]] = d.Names()
		}
	}
	errs := newErrorSet()
	flaky := newStringSet(res.Flaky)
	for _, a := range res.Attempts {
		row := Attempt{Number: a.Number, Step: a.Step, Tier: a.Tier, TierIndex: a.TierIndex, InTier: a.InTier,
			Backend: a.Backend, Model: a.Model, StartedAt: a.StartedAt, DurationMs: a.DurationMs, Nudged: a.Nudged,
			CostUSD: a.CostUSD, CostKnown: a.CostKnown || a.CostUSD != 0, CostEstimated: a.CostEstimated,
			GateStatus: gateStatus(a), Action: a.Action, FilesChanged: len(a.Change.Files), Commit: a.Commit,
			Failure: failureOf(a.Failure), Review: reviewOf(a)}
		for _, f := range a.Change.Files {
			row.LinesAdded += max(f.Added, 0)
			row.LinesDeleted += max(f.Deleted, 0)
		}
		row.Detection = detected[a.Number]
		if row.Detection == "" && a.Detection != nil {
			row.Detection = a.Detection.Names()
		}
		r.Attempts = append(r.Attempts, row)
		r.GateResults = append(r.GateResults, gateResult(a))
		errs.addReport(a.Gate)
		flaky.add(a.Gate.Flaky...)
	}
	if res.Gate != nil {
		flaky.add(res.Gate.Flaky...)
	}
	r.UniqueErrors, r.UniqueErrorsLeftOut = errs.list, errs.leftOut
	r.FlakyTests = flaky.list
	r.TestsJudged = testsJudged(res)
	if n := len(res.Attempts); n > 0 {
		r.lastDiff(res.Attempts[n-1], res.Git)
	}
	r.Git = gitOf(res)
	r.Recommendation = recommend(res, r)
	return r
}

// tiers fills TiersUsed and TiersUnused, from the result's tiers or, when
// it has none, from the attempts.
func (r *Report) tiers(res taskengine.Result) {
	for _, t := range res.Tiers {
		if t.Attempts == 0 {
			r.TiersUnused = append(r.TiersUnused, t.Name)
			continue
		}
		r.TiersUsed = append(r.TiersUsed, Tier{Name: t.Name, Backend: t.Backend, Model: t.Model, Attempts: t.Attempts,
			Passed: t.Passed, CostUSD: t.CostUSD, CostKnown: t.CostKnown || t.CostUSD != 0, CostEstimated: t.CostEstimated, Outcome: t.Outcome})
	}
	if len(res.Tiers) > 0 {
		return
	}
	at := map[string]int{}
	for _, a := range res.Attempts {
		i, ok := at[a.Tier]
		if !ok {
			i = len(r.TiersUsed)
			at[a.Tier] = i
			r.TiersUsed = append(r.TiersUsed, Tier{Name: a.Tier, Backend: a.Backend, Model: a.Model})
		}
		t := &r.TiersUsed[i]
		t.Attempts++
		t.CostUSD += a.CostUSD
		t.CostKnown = t.CostKnown || a.CostKnown || a.CostUSD != 0
		t.CostEstimated = t.CostEstimated || a.CostEstimated
		if a.Action == taskengine.ActionPass { // as the engine counts a tier's (a repeat of a pushed change does not pass)
			t.Passed++
		}
	}
}

// lastDiff keeps the diff of the last attempt, within MaxDiff.
func (r *Report) lastDiff(a taskengine.Attempt, g *taskengine.GitInfo) {
	diff, cut := bound(a.Change.Diff, MaxDiff)
	r.LastDiff = diff
	if !cut && !a.Change.Truncated {
		return
	}
	r.LastDiffNote = fmt.Sprintf("the diff of attempt %d was cut (the whole change is %d bytes)", a.Number, a.Change.Size)
	if a.Change.Size <= 0 {
		r.LastDiffNote = fmt.Sprintf("the diff of attempt %d was cut", a.Number)
	}
	if g != nil && g.Refs != "" && g.Base != "" {
		r.LastDiffNote += fmt.Sprintf("; see it whole with: git diff %s %s%d-result", g.Base, g.Refs, a.Number)
	}
}

// bound cuts s to at most n bytes (its note included) at a line end.
func bound(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	// The note is never longer than this one.
	keep := n - len(fmt.Sprintf("[jlgcli: diff cut: %d bytes left out]\n", len(s)))
	cut := s[:keep]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	} else {
		cut = validUTF8Prefix(cut) + "\n"
	}
	return cut + fmt.Sprintf("[jlgcli: diff cut: %d bytes left out]\n", len(s)-len(cut)), true
}

// validUTF8Prefix drops a rune cut in two at the end of s.
func validUTF8Prefix(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		if s[i]&0xC0 != 0x80 { // the start of the last rune
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

func gateStatus(a taskengine.Attempt) string {
	if a.Gate.Status == "" {
		return gateNotRun
	}
	return a.Gate.Status
}

func gateResult(a taskengine.Attempt) GateResult {
	g := GateResult{Number: a.Number, Tier: a.Tier, Status: gateStatus(a), Recommendation: a.Gate.Recommendation}
	switch {
	case a.Gate.Status != "":
		g.Summary = a.Gate.Summary()
	case a.Failure != nil:
		g.Summary = fmt.Sprintf("not run: the agent failed (%s: %s)", a.Failure.Kind, oneLine(a.Failure.Message, 200))
	default:
		g.Summary = "not run"
	}
	return g
}

func failureOf(f *agent.Failure) *Failure {
	if f == nil {
		return nil
	}
	return &Failure{Kind: string(f.Kind), Message: f.Message}
}

func gitOf(res taskengine.Result) *Git {
	if res.Git == nil {
		return nil
	}
	return &Git{GitInfo: *res.Git, Commits: nonNil(res.Commits)}
}

// Alive says whether a process runs the task now, when r is of a task that
// has not stopped: its recommendation then says which it is (live, or
// killed and resumable) instead of both.
func (r *Report) Alive(live bool) {
	if r.Status != string(engine.StatusRunning) {
		return
	}
	if live {
		r.Recommendation = "the task is running: 'jlgcli logs -f " + r.RunID + "' follows its agent"
		return
	}
	r.Recommendation = "the task was killed before it stopped: 'jlgcli resume " + r.RunID + "' continues it"
}

// recommend says what to do now, in one sentence.
func recommend(res taskengine.Result, r Report) string {
	g := res.Git
	if res.Status == engine.StatusDone {
		switch {
		case g == nil:
			return "done: the change is in the working tree (the task ran without git); review it and commit it"
		case g.PR != "":
			return "review and merge pull request " + g.PR
		case g.Merge != nil && g.Merge.Status.Landed():
			into := g.Merge.Into
			if into == "" {
				into = g.BaseBranch
			}
			if into == "" {
				into = "the base branch"
			}
			if g.Merge.Commit == "" {
				// A batch merged it, and its branch held no change for
				// the base branch as it was.
				return fmt.Sprintf("nothing merged into %s: the task's branch holds no change for it", into)
			}
			if g.Merge.Status == git.MergeFastForwarded {
				return fmt.Sprintf("committed on %s, fast-forwarded to %s", into, short(g.Merge.Commit))
			}
			return fmt.Sprintf("merged into %s as %s", into, short(g.Merge.Commit))
		case g.Merge != nil && g.Merge.Command != "":
			return "merge the branch: " + g.Merge.Command
		case g.Merge != nil && g.Merge.Status == git.MergeNothing:
			return "nothing to merge: the task left no change"
		case g.Mode == "direct" && len(res.Commits) > 0:
			return fmt.Sprintf("committed on %s as %s", g.Branch, short(res.Commits[len(res.Commits)-1]))
		}
		return "review and merge branch " + g.Branch
	}

	var s string
	switch {
	case res.Status == engine.StatusRunning:
		s = "the task has not stopped: it is running, or it was killed"
		if res.RunID != "" {
			s += " ('jlgcli resume " + res.RunID + "' continues it)"
		}
		return s
	case len(res.Attempts) == 0:
		s = fmt.Sprintf("the task stopped before its first attempt (%s)", r.Status)
		if d := oneLine(res.Details, 300); d != "" {
			s += ": " + d
		}
		return s
	case res.Status == engine.StatusInterrupted && res.RunID != "":
		s = "interrupted: continue it with: jlgcli resume " + res.RunID
		if g != nil && g.Branch != "" {
			s += "; the work so far is on branch " + g.Branch
		}
		return s
	case g != nil && g.Branch != "":
		s = "manual intervention required: review branch " + g.Branch
		if g.WIP != "" {
			s += fmt.Sprintf(" (WIP commit %s)", short(g.WIP))
		}
		if g.Refs != "" {
			s += "; the attempts are under " + g.Refs
		}
	default:
		s = "manual intervention required: review the changes left in the working tree"
	}
	if said := lastGate(res); said != "" {
		s += "; the last gate said: " + said
	} else if d := oneLine(res.Details, 200); d != "" {
		s += "; " + d
	}
	return s
}

// lastGate is what the last gate said: its summary and its first error.
func lastGate(res taskengine.Result) string {
	var g *gate.Report
	if res.Gate != nil {
		g = res.Gate
	} else {
		for i := len(res.Attempts) - 1; i >= 0 && g == nil; i-- {
			if res.Attempts[i].Gate.Status != "" {
				g = &res.Attempts[i].Gate
			}
		}
	}
	if g == nil || g.Status == "" {
		return ""
	}
	s := g.Summary()
	if errs := reportErrors(*g); len(errs) > 0 {
		s += " (first: " + oneLine(errs[0], 160) + ")"
	}
	return s
}

// short is a commit's abbreviation.
func short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}

// reportErrors are the errors of a gate report, in the seed's order.
func reportErrors(g gate.Report) []string {
	var out []string
	out = append(out, g.SyntaxErrors...)
	out = append(out, g.ImportErrors...)
	for _, f := range g.TestFailures {
		out = append(out, f.Test+": "+f.Error)
	}
	out = append(out, g.RuntimeErrors...)
	return out
}

// errorSet keeps the unique errors.
type errorSet struct {
	seen    map[string]bool
	list    []string
	leftOut int
}

func newErrorSet() *errorSet { return &errorSet{seen: map[string]bool{}, list: []string{}} }

func (e *errorSet) addReport(g gate.Report) {
	for _, s := range reportErrors(g) {
		e.add(s)
	}
}

func (e *errorSet) add(s string) {
	key := squeeze(gate.Normalize(s))
	if key == "" {
		key = squeeze(s)
	}
	if key == "" || e.seen[key] {
		return
	}
	e.seen[key] = true
	if len(e.list) >= MaxUniqueErrors {
		e.leftOut++
		return
	}
	e.list = append(e.list, oneLine(s, MaxErrorBytes))
}

// stringSet keeps strings once, in the order first seen.
type stringSet struct {
	seen map[string]bool
	list []string
}

func newStringSet(init []string) *stringSet {
	s := &stringSet{seen: map[string]bool{}, list: []string{}}
	s.add(init...)
	return s
}

func (s *stringSet) add(items ...string) {
	for _, it := range items {
		if it != "" && !s.seen[it] {
			s.seen[it] = true
			s.list = append(s.list, it)
		}
	}
}

// squeeze puts s on one line, its runs of white space made one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneLine is s squeezed and cut to n bytes (an ellipsis marks the cut).
func oneLine(s string, n int) string {
	s = squeeze(s)
	if len(s) <= n {
		return s
	}
	return validUTF8Prefix(s[:n-len("…")]) + "…"
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// JSON is the report as indented JSON, with a final newline, every
// character a terminal would run escaped (termsafe.JSON: the values are
// unchanged).
func (r Report) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(termsafe.JSON(data), '\n'), nil
}

// testsJudged are the lines of TestsJudged: the last word of the tests of
// the base (the last attempt whose gate asked them), and the checks whose
// tests the baseline could not count.
func testsJudged(res taskengine.Result) []string {
	var out []string
	for i := len(res.Attempts) - 1; i >= 0; i-- {
		bt := res.Attempts[i].Gate.BaseTests
		if bt == nil || bt.Status == gate.BaseNotRun {
			continue
		}
		out = append(out, BaseTestsLine(res.Attempts[i].Number, bt))
		break
	}
	if res.Baseline != nil && len(res.Baseline.Uncounted) > 0 {
		out = append(out, fmt.Sprintf("Tests not counted: %s said neither how many tests ran nor which, so the rules fewer-tests-run, more-tests-skipped and the test-by-test comparison with the baseline were off for %s, and the tests of the base judged %s by exit status only.",
			checkList(res.Baseline.Uncounted), them(len(res.Baseline.Uncounted)), them(len(res.Baseline.Uncounted))))
	}
	return out
}

// BaseTestsLine says what the tests as they stood at the task's base said
// of attempt n's change.
func BaseTestsLine(n int, bt *gate.BaseTestsReport) string {
	if bt.Status == gate.BaseSetAside {
		return fmt.Sprintf("Tests of the base: set aside for attempt %d: %s.", n, strings.TrimSuffix(bt.Reason, "."))
	}
	var how []string
	if bt.Rerun {
		if len(bt.Laid) > 0 {
			how = append(how, fmt.Sprintf("%s as the base had them", strings.Join(bt.Laid, ", ")))
		}
		if len(bt.Removed) > 0 {
			how = append(how, fmt.Sprintf("%s of the change left out", strings.Join(bt.Removed, ", ")))
		}
	} else {
		how = append(how, "the change touches no test file: its own run was theirs")
	}
	if bt.Counts != nil {
		c := fmt.Sprintf("%d run: %d passed, %d failed", bt.Counts.Run, bt.Counts.Passed, bt.Counts.Failed)
		if bt.Counts.Skipped > 0 {
			c += fmt.Sprintf(", %d not run (skipped)", bt.Counts.Skipped)
		}
		how = append(how, c)
	}
	if len(bt.ByExitStatus) > 0 {
		how = append(how, "judged by exit status only: "+checkList(bt.ByExitStatus))
	}
	verdict := "passed"
	if bt.Status == gate.BaseFail {
		verdict = "failed"
	}
	return fmt.Sprintf("Tests of the base: the tests as they stood at the task's base %s on attempt %d (%s).", verdict, n, strings.Join(how, "; "))
}

func checkList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("check %q", n)
	}
	return strings.Join(q, ", ")
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
