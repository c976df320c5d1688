package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// NewTask is a task to start.
type NewTask struct {
	// Prompt is the task.
	Prompt string
	// Spec is what it runs with; Spec.Repo is the repository, or a
	// directory in it. Worktree and DirtyLeftOut are filled here.
	Spec TaskSpec
	// Repo is that repository as the caller opened it (OpenRepo), so
	// that it is not opened again; nil: StartTask opens Spec.Repo.
	Repo *git.Repo
	// Base is the ref the task branch starts from; "": HEAD.
	Base string
	// IncludeDirty brings the uncommitted changes of the user's tree in as
	// the branch's first commit.
	IncludeDirty bool
	// StateDir overrides where runs are kept; "": the default.
	StateDir string
	// ID is the run's id; "": a new one. A batch journals it before the
	// run exists, so that it resumes the run after a crash.
	ID string
	// Parent is the batch run that starts the task ("" for none), kept in
	// the run's meta.json.
	Parent string
	// Prior, for a batch's second run of a task whose first run's change
	// could not land, is that run: the new run starts at the tier that
	// passed there and is told its attempts (taskengine.Prior); its meta.json
	// names it (RerunOf).
	Prior *taskengine.Prior
}

// StartTask checks that the task can run (a repository with a commit,
// agents that are installed, checks to judge with, a clean tree for direct
// commits) before it creates anything, then creates its run and worktree and
// runs it to its end. A task whose agents cannot run is a result, not an
// error; a task that cannot start as asked is a UsageError.
func StartTask(ctx context.Context, t NewTask, p Parts) (taskengine.Result, error) {
	s := t.Spec
	repo := t.Repo
	if repo == nil {
		var err error
		if repo, err = OpenRepo(ctx, s.Repo); err != nil {
			return taskengine.Result{}, err
		}
	}
	s.Repo = repo.Dir
	// Nothing is created for a task that cannot run.
	tiers, planner, bad, err := s.preflight(ctx, p, nil, "", TaskChecksHint)
	if err != nil {
		return taskengine.Result{}, err
	}
	if bad != nil {
		return *bad, nil
	}
	dirty, err := repo.Dirty(ctx)
	if err != nil {
		return taskengine.Result{}, err
	}
	if s.Commit == git.CommitDirect {
		// Direct commits land on the checked-out branch: it must be where
		// the task starts, with no change to tracked files.
		cur, err := repo.CurrentBranch(ctx)
		switch {
		case err != nil:
			return taskengine.Result{}, err
		case cur == "":
			return taskengine.Result{}, exit.Usagef("check out the branch the commits should land on", "--commit direct needs a checked-out branch; HEAD is detached in %s", repo.Dir)
		case t.Base != "" || t.IncludeDirty:
			return taskengine.Result{}, exit.Usagef("", "--commit direct commits on the current branch: it takes neither --base nor --include-dirty")
		}
		if err := refuseChanges(ctx, repo, cur, exit.Usagef("commit or stash them first, or use --commit branch (the default), which leaves your tree alone",
			"--commit direct refuses to start: %s has uncommitted changes", repo.Dir)); err != nil {
			return taskengine.Result{}, err
		}
	}
	root, err := StateRoot(p, repo.Dir, t.StateDir)
	if err != nil {
		return taskengine.Result{}, err
	}
	// The run is recorded with the worktree it will have before git makes
	// it: a kill while it is made leaves a run that owns what git made,
	// and its resume makes it whole (git.Worktree.Reopen).
	id := cmp.Or(t.ID, store.NewRunID(time.Now()))
	wt, err := repo.PlanWorktree(ctx, id, t.Prompt, t.Base, t.IncludeDirty)
	if t.Base != "" && errors.Is(err, git.ErrNotCommit) {
		return taskengine.Result{}, exit.Usagef("name a branch, tag or commit of this repository", "--base %s: %v in %s", t.Base, err, repo.Dir)
	}
	if err != nil {
		return taskengine.Result{}, fmt.Errorf("create the task's worktree: %w", err)
	}
	box, confined, err := Confine(s.Sandbox, p, taskSite(root, wt.Path, id))
	if err != nil {
		return taskengine.Result{}, err
	}
	s.Worktree = *wt
	s.DirtyLeftOut = dirty && !wt.DirtyIncluded
	opts, _ := json.Marshal(s.Recorded())
	meta := store.Meta{Command: "task", Backend: s.Tiers[0].Backend, Prompt: t.Prompt, Options: opts, Cwd: repo.Dir, Parent: t.Parent, Sandbox: &confined}
	if t.Prior != nil && t.Prior.Needs == "" {
		meta.RerunOf = t.Prior.RunID // a round of a pull request is no re-run: its parent is the pull request's run
	}
	run, err := store.Create(root, id, meta)
	if err != nil {
		return taskengine.Result{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	if err := wt.Create(ctx); err != nil {
		if ctx.Err() != nil {
			// What git was making is made whole by the resume.
			res := Failure(engine.Result{Status: engine.StatusInterrupted, ExitCode: engine.StatusInterrupted.ExitCode(),
				Backend: s.Tiers[0].Backend, Details: "interrupted while its worktree was made"})
			res.RunID, res.Task = id, t.Prompt
			p.notice("%s", StoppedTask(id, t.Parent, res.Status))
			// Its journal is not open yet: its hooks are told here.
			h := hookRun{d: p.Hooks, run: run}
			h.recorded(engine.Event{Type: engine.EventStart})
			h.taskEnded(res)
			return res, nil
		}
		return taskengine.Result{}, fmt.Errorf("create the task's worktree: %w (run %s keeps the task: jlgcli resume %s once this is fixed)", err, id, id)
	}
	p.progress("task %s on branch %s (worktree %s)", id, wt.Branch, relTo(repo.Dir, wt.Path))
	// A batch refuses changes to tracked files: only untracked ones can be
	// left out of its tasks, and it does not take them.
	if s.DirtyLeftOut && t.Parent == "" {
		what := "uncommitted changes"
		if changed, err := repo.Changed(ctx); err == nil && !changed {
			what = "untracked files" // and no change to a tracked file
		}
		p.progress("your working tree has %s; the task starts from %s without them (--include-dirty brings them in)", what, git.ShortSHA(wt.Base))
	}
	j := openJournal(p, root, run)
	defer j.close()
	return s.run(ctx, p, run, j, t.Prompt, tiers, planner, nil, t.Prior, true, box)
}

// refuseChanges returns refusal when branch, which a run's commits land
// on, is checked out in repo with changes to tracked files: the landing
// would refuse them. Untracked files do not count (the sheets of a batch
// often are): landing never overwrites one, and stops, naming it, when one
// is in the way.
func refuseChanges(ctx context.Context, repo *git.Repo, branch string, refusal error) error {
	if cur, err := repo.CurrentBranch(ctx); err != nil || cur != branch {
		return err
	}
	if changed, err := repo.Changed(ctx); err != nil || changed {
		return cmp.Or(err, refusal)
	}
	return nil
}

// preflight is what a task checks before anything is made for it, alone
// or in a batch: its agents known and installed (with its planner's when
// it plans; a backend in seen, by backend and environment, was checked
// before and is not checked again; seen may be nil), and checks to judge
// it with, its own or those the project in s.Repo calls for (DefaultChecks,
// with who and hint). When its agents cannot run, bad says why; it is a
// result, not an error.
func (s *TaskSpec) preflight(ctx context.Context, p Parts, seen map[string]bool, who, hint string) (tiers []taskengine.Tier, planner *taskengine.Tier, bad *taskengine.Result, err error) {
	tiers, planner, bad = s.agents(p)
	if bad != nil {
		return nil, nil, bad, nil
	}
	all := tiers
	if s.Plan && planner != nil {
		all = append(slices.Clip(all), *planner)
	}
	if rv, _ := s.reviewer(p); rv != nil {
		all = append(slices.Clip(all), *rv)
	}
	if seen != nil {
		all = slices.DeleteFunc(slices.Clone(all), func(tr taskengine.Tier) bool {
			key := tr.Backend + "\x00" + strings.Join(tr.Env, "\x00")
			checked := seen[key]
			seen[key] = true
			return checked
		})
	}
	if st, details := taskengine.CheckTiers(ctx, all); st != "" {
		r := Failure(engine.Result{Status: st, ExitCode: st.ExitCode(), Backend: s.Tiers[0].Backend, Details: details, Text: details})
		return nil, nil, &r, nil
	}
	if len(s.Checks) == 0 {
		if s.Checks, err = DefaultChecks(s.Repo, who, hint); err != nil {
			return nil, nil, nil, err
		}
	}
	return tiers, planner, nil, nil
}

// Hints of a task's and a batch's refusal when no check can be detected.
const (
	TaskChecksHint  = "give the gate's commands with --check 'CMD' (repeatable) or [[checks]] in jlgcli.toml"
	BatchChecksHint = "give the gate's commands with --check 'CMD', checks: in the sheet's front matter, or [[checks]] in jlgcli.toml"
)

// DefaultChecks are the gate of a task that configures no check: those
// the project in dir calls for (gate.DetectDefaults); when it calls for
// none, a UsageError whose message starts with who and whose hint is hint.
// A local task or batch and one sent to Temporal make this pre-flight.
func DefaultChecks(dir, who, hint string) ([]gate.Check, error) {
	checks := gate.DetectDefaults(dir)
	if len(checks) == 0 {
		return nil, exit.Usagef(hint, "%sno checks to judge the work with: none configured, and no go.mod, package.json test script, Python or Cargo project found in %s", who, dir)
	}
	return checks, nil
}

// OpenRepo opens the repository a task works on, at dir or above it; a
// UsageError when there is none or it has no commit yet.
func OpenRepo(ctx context.Context, dir string) (*git.Repo, error) {
	repo, err := git.Open(ctx, dir)
	if err != nil {
		if errors.Is(err, git.ErrNotRepository) {
			return nil, exit.Usagef("run 'git init' and commit your code first, or use 'jlgcli loop'",
				"jlgcli task works on a git repository: %s is not in one", dir)
		}
		return nil, err
	}
	if _, err := repo.Head(ctx); errors.Is(err, git.ErrNoCommits) {
		return nil, exit.Usagef("commit your code first: the task branch starts from a commit", "the repository %s has no commit yet", repo.Dir)
	}
	return repo, nil
}

// ResumeTask continues a task run where it stopped: its worktree is checked
// out again, the tree is put back where the next attempt starts, and the
// engine goes on from the journal's state. A task stopped by a limit of its
// tiers (a loop, its attempts, its budget) gets a new turn of its current
// tier: resuming it is asking for more attempts. The caller holds the run's
// lock. A task already done is returned as it is, with done true (nothing
// was resumed); one done but killed before its end gets that end now, and
// done is false (it was resumed to its end).
func ResumeTask(ctx context.Context, root string, run *store.Run, events []engine.Event, limits Limits, p Parts) (res taskengine.Result, done bool, err error) {
	j, err := taskengine.Replay(events)
	if err != nil {
		return taskengine.Result{}, false, fmt.Errorf("run %s: %w", run.ID, err)
	}
	if j.Stop != nil && j.Stop.Status == engine.StatusDone {
		res, ended, err := doneResult(ctx, run, events, p)
		if err == nil {
			// Killed after its stop was journaled, before its last
			// checkpoint: the checkpoint and the index say so now.
			cp := taskengine.Checkpoint{RunID: run.ID, State: j.Resume.State, Plan: res.Plan, Progress: store.Progress{
				Status: string(res.Status), Iterations: len(res.Attempts), CostUSD: res.CostUSD, CostKnown: res.CostKnown,
				DurationMs: res.DurationMs, Heartbeat: time.Now().UTC()}}
			for _, t := range res.Tiers {
				cp.Tiers = append(cp.Tiers, taskengine.TierStat{Name: t.Name, Attempts: t.Attempts, CostUSD: t.CostUSD, CostKnown: t.CostKnown, Passed: t.Passed})
			}
			jl := openJournal(p, root, run)
			err = jl.CheckpointTask(cp)
			jl.close()
		}
		return res, !ended, err
	}
	var s TaskSpec
	if err := settings(run, &s, p); err != nil {
		return taskengine.Result{}, false, err
	}
	limits.ApplyTask(&s)
	box, _, err := Confine(s.Sandbox, p, taskSite(root, s.Worktree.Path, run.ID))
	if err != nil {
		return taskengine.Result{}, false, err
	}
	st := j.Resume.State
	var cp taskengine.Checkpoint
	if run.ReadCheckpoint(&cp) == nil && cp.State.Attempts == st.Attempts && cp.State.ElapsedMs > st.ElapsedMs {
		st.ElapsedMs = cp.State.ElapsedMs
	}
	st = s.Policy(run.Meta.Prompt).Resumed(st, j.Stop)
	if st.Start == "" {
		st.Start = s.Worktree.Base // nothing was recorded yet: the task's start
	}
	j.Resume.State = st
	tiers, planner, bad := s.agents(p)
	if bad != nil {
		return *bad, false, nil
	}
	wt := s.Worktree
	if err := wt.Reopen(ctx); err != nil {
		return taskengine.Result{}, false, fmt.Errorf("run %s: check out its branch %s again: %w", run.ID, wt.Branch, err)
	}
	p.progress("resuming task %s after %s (%s used) in %s", run.ID, plural.N(st.Attempts, "attempt"),
		st.ElapsedMs.Duration().Round(time.Second), relTo(s.Repo, wt.Path))
	jl := openJournal(p, root, run)
	defer jl.close()
	jl.running()
	res, err = s.run(ctx, p, run, jl, run.Meta.Prompt, tiers, planner, &j.Resume, nil, false, box)
	return res, false, err
}

// doneResult is the result of a task whose journal says done. One killed
// after that stop was journaled, before its end (merge, push, pull request,
// report: the report is written last), is ended now as it would have been,
// and ended is true.
func doneResult(ctx context.Context, run *store.Run, events []engine.Event, p Parts) (res taskengine.Result, ended bool, err error) {
	var saved taskengine.Result
	if found, err := run.ReadReport(&saved); err != nil || found {
		res, err := TaskResultOf(run, events, p)
		return res, false, err
	}
	var s TaskSpec
	if err := settings(run, &s, p); err != nil {
		return taskengine.Result{}, false, err
	}
	res, err = taskResultOf(run, events)
	if err != nil {
		return taskengine.Result{}, false, err
	}
	p.progress("task %s is done but was stopped before its end: ending it on %s", run.ID, s.Worktree.Branch)
	s.finish(ctx, p, run, &res)
	return res, true, nil
}

// EventTaskBaseline is the journal event that holds the gate's baseline.
const EventTaskBaseline = "gate-baseline"

// run runs (or resumes) a task on its journal, its agents' calls and its
// checks in its sandbox box (nil: none), then ends it: the WIP commit of a
// failure, the worktree removed, the merge of a success, the report.
func (s TaskSpec) run(ctx context.Context, p Parts, run *store.Run, j journal, prompt string,
	tiers []taskengine.Tier, planner *taskengine.Tier, resume *taskengine.Resume, prior *taskengine.Prior, checked bool, box *sandbox.Box) (taskengine.Result, error) {
	ctx, unwatch := watchStop(ctx, run)
	defer unwatch()
	wt := s.Worktree
	env := append(slices.Clip(s.Env), RunTag(run.ID))

	// The baseline of the gate: how the checks fare before any change.
	baseline, err := s.baseline(ctx, p, run, j, env, box)
	if err != nil {
		return taskengine.Result{}, err
	}
	watch, err := taskWatch(ctx, &wt, j, p)
	if err != nil {
		return taskengine.Result{}, err
	}
	o := s.options(p, run.ID, prompt, &wt, baseline, tiers, watch, box)
	o.Plan, o.Planner, o.Journal, o.Resume, o.Prior, o.Checked, o.Observer = s.Plan, watch.planner(planner), j, resume, prior, checked, p.TaskObserver
	o.Inbox = p.Inbox
	o.Windows = p.windowBook(o.WindowLimits, j)
	res := taskengine.Run(ctx, o)
	res.Baseline = baseline
	if c, ok := p.TaskObserver.(interface{ Close() }); ok {
		c.Close() // the live line goes before the messages of the end
	}
	done := res.Status == engine.StatusDone
	s.finish(ctx, p, run, &res)
	if done && res.Status != engine.StatusDone {
		// The landing was held: the index and the checkpoint say so too.
		var cp taskengine.Checkpoint
		if err := run.ReadCheckpoint(&cp); err == nil {
			cp.Progress.Status = string(res.Status)
			if err := j.CheckpointTask(cp); err != nil {
				p.warn("checkpoint: %v", err)
			}
		}
	}
	endCaches(box, Resumable(res.Status))
	if Resumable(res.Status) || res.Status == engine.StatusBudgetExceeded {
		p.notice("%s", StoppedTask(run.ID, run.Meta.Parent, res.Status))
	}
	j.hooks.taskEnded(res)
	return res, nil
}

// options are the engine's options of the task in wt, without journal,
// plan or observer; its agents' calls and its checks run in box (nil:
// none), and watch checks git's control files around them.
func (s TaskSpec) options(p Parts, runID, prompt string, wt *git.Worktree, baseline *gate.Report, tiers []taskengine.Tier, watch *controlWatch, box *sandbox.Box) taskengine.Options {
	loops := detect.LoopDetector{Similarity: s.Similarity, SameErrorCount: s.SameErrors}
	if e := s.Embeddings; e != nil {
		key := ""
		if e.APIKeyEnv != "" {
			key = p.getenv(e.APIKeyEnv)
		}
		loops.Embedder = detect.OpenAIEmbedder{BaseURL: e.URL, Model: e.Model, APIKey: key}
		loops.EmbeddingThreshold = e.Threshold
	}
	env := append(slices.Clip(s.Env), RunTag(runID))
	policy := s.Policy(prompt)
	policy.Tiers = nil
	for _, t := range tiers {
		policy.Tiers = append(policy.Tiers, watch.tier(t)) // with their agents
	}
	reviewer, _ := s.reviewer(p) // known: agents checked it
	if reviewer != nil {
		reviewer = watch.planner(reviewer)
	}
	return taskengine.Options{
		RunID: runID, Policy: policy, Reviewer: reviewer,
		Workspace: worktreeSpace{wt},
		Tester:    &tester{dir: wt.Path, env: env, checks: s.Checks, baseline: baseline, gaming: s.AntiGaming, editTests: s.EditTests, watch: watch, ws: wt, box: box},
		Loops:     loops, Prices: cost.DefaultTable().Merge(s.Prices),
		StallTimeout: s.StallTimeoutMs.Duration(), MaxWait: s.MaxWaitMs.Duration(),
		WindowLimits: s.WindowLimits,
		Env:          []string{RunTag(runID)},
		Box:          box,
	}
}

// Policy is what the task's decisions depend on besides its history: the
// one place a Policy is made, for a task run here (with its tiers' agents
// set by options) and for the workflow (tiers without agents).
func (s TaskSpec) Policy(task string) taskengine.Policy {
	p := taskengine.Policy{Task: task, BudgetUSD: s.BudgetUSD, Timeout: s.TimeoutMs.Duration(), EscalateFrom: s.EscalateFrom}
	for _, t := range s.Tiers {
		p.Tiers = append(p.Tiers, t.tier(nil))
	}
	if p.EscalateFrom == "" {
		p.EscalateFrom = taskengine.EscalateFromBase
	}
	return p
}

// Attempt makes attempt next of the task whose history is h, in wt, as a
// worker does for a task submitted to Temporal: with the worker's agents
// (s.Commands) and prices, the gate against baseline, the loop rules. It
// decides nothing. j (nil: none) is told of its events as a task's journal
// is (a wait for a rate limit).
func (s TaskSpec) Attempt(ctx context.Context, p Parts, runID, task string, wt *git.Worktree, baseline *gate.Report,
	h taskengine.History, next taskengine.Next, j taskengine.Recorder) taskengine.AttemptOutcome {
	tiers, _, bad := s.agents(p)
	if bad != nil {
		return taskengine.AttemptOutcome{Stop: &engine.StopData{Status: bad.Status, ExitCode: bad.ExitCode, Details: bad.Details}}
	}
	box, confined, err := Confine(s.Sandbox, p, taskSite("", wt.Path, runID))
	if err != nil {
		return taskengine.AttemptOutcome{Stop: &engine.StopData{Status: engine.StatusError, ExitCode: exit.Usage, Details: err.Error()}}
	}
	watch, err := taskWatch(ctx, wt, j, p)
	if err != nil {
		return taskengine.AttemptOutcome{Stop: &engine.StopData{Status: engine.StatusError, ExitCode: exit.Error, Details: err.Error()}}
	}
	o := s.options(p, runID, task, wt, baseline, tiers, watch, box)
	o.Journal, o.Observer = j, p.TaskObserver
	out := taskengine.RunAttempt(ctx, o, h, next)
	out.Sandbox = &confined
	return out
}

// AskPlanner asks the task's planner (its [planner], else its first tier)
// for its steps in wt, as a worker does for a task submitted to Temporal
// with --plan. It decides nothing (taskengine.Policy.Planned does).
func (s TaskSpec) AskPlanner(ctx context.Context, p Parts, runID, task string, wt *git.Worktree, h taskengine.History) (taskengine.Attempt, []string, millis.Duration, *engine.StopData) {
	tiers, planner, bad := s.agents(p)
	if bad != nil {
		return taskengine.Attempt{}, nil, 0, &engine.StopData{Status: bad.Status, ExitCode: bad.ExitCode, Details: bad.Details}
	}
	box, _, err := Confine(s.Sandbox, p, taskSite("", wt.Path, runID))
	if err != nil {
		return taskengine.Attempt{}, nil, 0, &engine.StopData{Status: engine.StatusError, ExitCode: exit.Usage, Details: err.Error()}
	}
	watch, err := taskWatch(ctx, wt, nil, p)
	if err != nil {
		return taskengine.Attempt{}, nil, 0, &engine.StopData{Status: engine.StatusError, ExitCode: exit.Error, Details: err.Error()}
	}
	o := s.options(p, runID, task, wt, nil, tiers, watch, box)
	o.Plan, o.Planner = true, watch.planner(planner)
	return taskengine.RunPlanner(ctx, o, h)
}

// PlannerBackend is the backend of the task's planner.
func (s TaskSpec) PlannerBackend() string {
	if s.Planner != nil && s.Planner.Backend != "" {
		return s.Planner.Backend
	}
	if len(s.Tiers) > 0 {
		return s.Tiers[0].Backend
	}
	return ""
}

// Baseline is how the checks fare on the tree in dir before any change,
// run confined as the task's attempts are; the error is the confinement's
// (a sandbox asked for that this machine cannot give): no check is run
// unconfined, and no task is judged without its baseline.
func (s TaskSpec) Baseline(ctx context.Context, runID, dir string) (*gate.Report, error) {
	box, _, err := Confine(s.Sandbox, Parts{}, taskSite("", dir, runID))
	if err != nil {
		return nil, err
	}
	scratch, done := scratchDir(dir)
	defer done()
	o := gate.BaselineOptions(scratch)
	o.Box = box
	r := gate.Test(ctx, dir, append(slices.Clip(s.Env), RunTag(runID)), s.Checks, o)
	return &r, nil
}

// baseline takes (or reads back) the gate's report before any change, its
// checks in the task's sandbox box (nil: none).
func (s TaskSpec) baseline(ctx context.Context, p Parts, run *store.Run, j journal, env []string, box *sandbox.Box) (*gate.Report, error) {
	if r, err := s.loggedBaseline(run); err != nil || r != nil {
		return r, err
	}
	p.progress("running %s on the starting point for the baseline", plural.N(len(s.Checks), "check"))
	scratch, done := scratchDir(s.Worktree.Path)
	o := gate.BaselineOptions(scratch)
	o.Box = box
	rep := gate.Test(ctx, s.Worktree.Path, env, s.Checks, o)
	done()
	r := &rep
	// What the checks wrote is no part of the task's start.
	wt := s.Worktree
	if err := wt.Restore(context.WithoutCancel(ctx), wt.Base); err != nil {
		return nil, fmt.Errorf("put the worktree back after the baseline: %w", err)
	}
	if r.Interrupted || ctx.Err() != nil {
		return nil, nil
	}
	if w := UncountedWarning(r.Uncounted); w != "" {
		p.warn("%s", w)
	}
	data, _ := json.Marshal(r)
	if err := j.Record(engine.Event{Type: EventTaskBaseline, Time: time.Now(), Data: data}); err != nil {
		return nil, fmt.Errorf("record the baseline: %w", err)
	}
	return r, nil
}

// TaskResultOf is the result of a task run: the one it wrote when it
// stopped, unless its journal went further since (a resumed task killed
// before it stopped again), or the one its journal tells.
func TaskResultOf(run *store.Run, events []engine.Event, p Parts) (taskengine.Result, error) {
	var saved taskengine.Result
	found, err := run.ReadReport(&saved)
	if err != nil {
		return taskengine.Result{}, err
	}
	if found && len(events) == 0 {
		return saved, nil
	}
	res, err := taskResultOf(run, events)
	switch {
	case !found && err != nil:
		return taskengine.Result{}, err
	case !found:
		return res, nil
	case err != nil || len(res.Attempts) <= len(saved.Attempts):
		return saved, nil
	}
	p.notice("run %s went on after it wrote %s (%s, the journal has %d): the report is made from the journal, without git details",
		run.ID, filepath.Base(run.ReportPath()), plural.N(len(saved.Attempts), "attempt"), len(res.Attempts))
	return res, nil
}

// taskResultOf is the result of task run as its journal holds it, with
// the baseline it recorded.
func taskResultOf(run *store.Run, events []engine.Event) (taskengine.Result, error) {
	res, err := taskengine.ResultOf(run.ID, events)
	if err != nil {
		return taskengine.Result{}, fmt.Errorf("run %s: %w", run.ID, err)
	}
	res.Baseline, err = baselineIn(run.ID, events)
	return res, err
}

// StateRoot is where runs are kept for a run in dir, unless override says.
func StateRoot(p Parts, dir, override string) (string, error) {
	root, err := store.StateDir(dir, p.getenv, override)
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return root, nil
}

// worktreeSpace is a git worktree as the engine's Workspace; it reads the
// attempts' snapshots for the same-fix loop rule (git.Worktree.ReadFiles).
type worktreeSpace struct{ *git.Worktree }

var _ taskengine.SnapshotReader = worktreeSpace{}

func (w worktreeSpace) Dir() string { return w.Path }

// tester is the gate of a task: gate.Test over the checks, against the
// baseline.
type tester struct {
	dir      string
	env      []string
	checks   []gate.Check
	baseline *gate.Report
	gaming   gate.Gaming
	// editTests: the task is meant to change its tests (TaskSpec.EditTests).
	editTests bool
	// watch checks git's control files around the agent's calls and the
	// checks (nil: not checked).
	watch *controlWatch
	// ws is the worktree: the base's tests are laid over it, and it is put
	// back after the checks (nil: neither).
	ws *git.Worktree
	// box is the task's sandbox, where the checks run (nil: none).
	box *sandbox.Box
}

// Test runs the gate on the tree; the change's deleted test files, and
// the test files of the base whose lines it removes or alters (unless the
// task is meant to edit its tests), are anti-gaming findings. A change that
// passes its own checks is judged by the tests as they stood at the base
// too (baseTests). The tree is put back as it was after the checks.
func (t *tester) Test(ctx context.Context, change git.Change) gate.Report {
	o := gate.TestOptions{Baseline: t.baseline, DeletedTestFiles: change.DeletedTests, Gaming: t.gaming}
	if !t.editTests {
		for _, w := range change.WeakenedTests {
			o.WeakenedTests = append(o.WeakenedTests, gate.WeakenedTest{File: w.Path, Count: w.Count, Lines: w.Removed})
		}
	}
	o.Box = t.watch.confine(t.box)
	if t.ws != nil {
		o.BaseTests = t.baseTests(change)
	}
	scratch, done := scratchDir(t.dir)
	defer done()
	o.Scratch = scratch
	rep := t.watch.test(t.checks, func() gate.Report { return gate.Test(ctx, t.dir, t.env, t.checks, o) })
	t.putBack(ctx, change.Tree, &rep)
	return rep
}

// StoppedTask is the notice of task id stopped with status: what to resume
// to continue it, the batch that started it (parent) if any, so that the
// user stays in the batch, which merges the task and starts its dependents.
func StoppedTask(id, parent string, status engine.Status) string {
	if parent != "" {
		return fmt.Sprintf("task %s stopped (%s); continue it with its batch: jlgcli resume %s", id, status, parent)
	}
	return fmt.Sprintf("task %s stopped (%s); continue it with: jlgcli resume %s", id, status, id)
}
