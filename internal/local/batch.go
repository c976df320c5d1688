package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/dag"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/store"
)

// BatchParts are what a batch is given by its caller.
type BatchParts struct {
	// Parts are the batch's own: its messages.
	Parts
	// ForTask returns the parts of one task's run (its messages and
	// progress, told apart by the task's id); nil: the batch's Parts with
	// no observer.
	ForTask func(id string) Parts
	// Observer is told of each event of the scheduler, after the journal;
	// nil: nobody.
	Observer func(batch.Event)
}

func (bp BatchParts) task(id string) Parts {
	if bp.ForTask != nil {
		p := bp.ForTask(id)
		if p.Hooks == nil {
			p.Hooks = bp.Hooks // the batch's tasks tell the batch's hooks
		}
		if p.Windows == nil {
			p.Windows = bp.Windows // the batch's tasks share their windows
		}
		return p
	}
	p := bp.Parts
	p.TaskObserver, p.LoopObserver = nil, nil
	return p
}

// The events of a batch's journal.
const (
	// EventBatchTask holds a task's state after a scheduler event
	// (BatchTaskData).
	EventBatchTask = "batch-task"
	// EventBatchRun holds the run a task started, as soon as it exists
	// (BatchTaskData with the run's id only).
	EventBatchRun = "batch-run"
)

// BatchTaskData is the payload of a batch journal's task events.
type BatchTaskData struct {
	Kind batch.EventKind  `json:"kind"`
	Task batch.TaskResult `json:"task"`
}

// BatchCheckpoint is a batch's checkpoint: the progress the run index reads
// (Iterations counts the tasks done) and every task's state.
type BatchCheckpoint struct {
	store.Progress
	RunID string             `json:"runId"`
	Tasks []batch.TaskResult `json:"tasks"`
}

// StartBatch checks that the batch can run (a base branch of repo, the
// repository the caller opened with OpenRepo, every task's agents
// installed and checks to judge it with) before it creates anything, then
// creates the batch's run and runs its tasks, Jobs at a time, each as
// `jlgcli task` runs one, merging each done task into the base branch in
// turn (Land). Its tasks run in repo, whatever spec.Repo says. A batch
// whose agents cannot run is a result, not an error.
func StartBatch(ctx context.Context, repo *git.Repo, spec BatchSpec, stateDir string, bp BatchParts) (batch.Summary, error) {
	spec.Repo = repo.Dir
	if len(spec.Tasks) == 0 {
		return batch.Summary{}, exit.Usagef("name task sheets (.md files) or folders that hold some", "the batch has no task")
	}
	graph, err := BatchGraph(spec.Tasks)
	if err != nil {
		return batch.Summary{}, &exit.UsageError{Err: err}
	}
	if spec.BaseBranch != "" {
		if _, err := repo.ResolveCommit(ctx, "refs/heads/"+spec.BaseBranch); errors.Is(err, git.ErrNotCommit) {
			return batch.Summary{}, exit.Usagef("name a branch of this repository: the tasks start from it and merge into it",
				"--base %s: no such branch in %s", spec.BaseBranch, repo.Dir)
		} else if err != nil {
			return batch.Summary{}, err
		}
	}
	if spec.BaseBranch == "" {
		if spec.BaseBranch, err = repo.CurrentBranch(ctx); err != nil {
			return batch.Summary{}, err
		}
		if spec.BaseBranch == "" {
			return batch.Summary{}, exit.Usagef("check out the branch the tasks should start from and merge into", "HEAD is detached in %s: a batch needs a base branch", repo.Dir)
		}
	}
	if spec.PR == nil { // through pull requests, nothing merges here
		if err := refuseChanges(ctx, repo, spec.BaseBranch, exit.Usagef("commit or stash them first: the batch merges each task into it as it goes",
			"%s, the batch's base branch, is checked out in %s with uncommitted changes", spec.BaseBranch, repo.Dir)); err != nil {
			return batch.Summary{}, err
		}
	}
	checked := map[string]bool{} // the CLIs checked already, by backend and environment
	var confined *sandbox.Record // the first task's, for the batch's record
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		t.Spec.Repo = repo.Dir
		// A sandbox asked for and not to be had stops the batch before
		// anything is made.
		_, rec, err := Confine(t.Spec.Sandbox, bp.Parts, Site{})
		if err != nil {
			return batch.Summary{}, err
		}
		if confined == nil {
			confined = &rec
		}
		_, _, bad, err := t.Spec.preflight(ctx, bp.Parts, checked, fmt.Sprintf("%s (%s): ", t.ID, t.File), BatchChecksHint)
		if err != nil {
			return batch.Summary{}, err
		}
		if bad != nil {
			return batchFailure(*bad, t.ID), nil
		}
	}
	root, err := StateRoot(bp.Parts, repo.Dir, stateDir)
	if err != nil {
		return batch.Summary{}, err
	}
	opts, _ := json.Marshal(spec.Recorded())
	id := store.NewRunID(time.Now())
	ids := make([]string, len(spec.Tasks))
	for i, t := range spec.Tasks {
		ids[i] = t.ID
	}
	title := fmt.Sprintf("%s: %s", plural.N(len(ids), "task"), strings.Join(ids, ", "))
	if spec.Issues != nil {
		nums := make([]string, 0, len(spec.Tasks))
		for _, t := range spec.Tasks {
			nums = append(nums, fmt.Sprintf("#%d", intake.NumberOf(t.ID)))
		}
		title = fmt.Sprintf("%s matching %s: %s", plural.N(len(ids), "issue"), intake.QueryString(spec.Issues.Query), strings.Join(nums, ", "))
	}
	run, err := store.Create(root, id, store.Meta{Command: "batch", Backend: spec.Tasks[0].Spec.Tiers[0].Backend,
		Prompt: title, Options: opts, Cwd: repo.Dir, Sandbox: confined})
	if err != nil {
		return batch.Summary{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	bp.progress("batch %s: %s, %d at a time, merged into %s", id, plural.N(len(spec.Tasks), "task"), spec.Jobs, spec.BaseBranch)
	return runBatch(ctx, root, run, spec, graph, nil, nil, bp)
}

// ResumeBatch continues a batch where its journal stopped: done tasks are
// not run again, tasks whose run was cut short (interrupted, killed) or
// failed resume through their own run, done ones not merged yet are merged,
// and the rest start. The caller holds the batch run's lock. A batch
// already done is returned as it is, with done true.
func ResumeBatch(ctx context.Context, root string, run *store.Run, events []engine.Event, bp BatchParts) (res batch.Summary, done bool, err error) {
	var spec BatchSpec
	if err := settings(run, &spec, bp.Parts); err != nil {
		return batch.Summary{}, false, err
	}
	if found, err := run.ReadReport(&res); err == nil && found && res.Status == string(batch.BatchDone) {
		return res, true, nil
	}
	graph, err := BatchGraph(spec.Tasks)
	if err != nil {
		return batch.Summary{}, false, err
	}
	initial := ResumeState(replayBatch(events))
	for _, t := range initial {
		runs := []string{t.RunID}
		if t.Rerun != nil {
			runs = append(runs, t.Rerun.RunID)
		}
		for _, id := range runs {
			if id == "" {
				continue
			}
			if n := proc.KillTagged(RunTag(id)); n > 0 {
				bp.notice("killed %s of task %s (run %s)", plural.N(n, "orphaned agent process group"), t.ID, id)
			}
		}
	}
	bp.progress("resuming batch %s: %d of %s done", run.ID, countDone(initial), plural.N(len(spec.Tasks), "task"))
	res, err = runBatch(ctx, root, run, spec, graph, initial, replayPRRuns(events), bp)
	return res, false, err
}

// ResumeState is where a batch whose tasks stood at tasks goes on from
// (the scheduler's initial state): its done tasks are kept, merged or not
// yet; a task whose run was cut short or stopped by a limit of its own goes
// on through that run (a task's resume gives its tier a new turn); the
// others (blocked, never started, not merged) start anew.
func ResumeState(tasks map[string]batch.TaskResult) map[string]batch.TaskResult {
	initial := map[string]batch.TaskResult{}
	for id, t := range tasks {
		switch {
		case t.Status == batch.StatusDone || t.Status == batch.StatusUnmerged:
			initial[id] = t
		case t.RunID != "" && !isMergeFailure(t.Status):
			t.Status = batch.StatusInterrupted
			initial[id] = t
		}
	}
	return initial
}

func isMergeFailure(s batch.Status) bool {
	return s == batch.StatusMergeConflict || s == batch.StatusMergeFailed
}

func countDone(ts map[string]batch.TaskResult) int {
	n := 0
	for _, t := range ts {
		if t.Status == batch.StatusDone {
			n++
		}
	}
	return n
}

// replayBatch is every task's last state in a batch's journal.
func replayBatch(events []engine.Event) map[string]batch.TaskResult {
	tasks := map[string]batch.TaskResult{}
	for _, ev := range events {
		if ev.Type != EventBatchTask && ev.Type != EventBatchRun {
			continue
		}
		var d BatchTaskData
		if json.Unmarshal(ev.Data, &d) != nil || d.Task.ID == "" {
			continue
		}
		if ev.Type == EventBatchRun {
			t := tasks[d.Task.ID]
			t.ID, t.RunID = d.Task.ID, d.Task.RunID
			if t.Status == "" {
				t.Status = batch.StatusRunning
			}
			tasks[d.Task.ID] = t
			continue
		}
		if d.Task.RunID == "" {
			d.Task.RunID = tasks[d.Task.ID].RunID
		}
		tasks[d.Task.ID] = d.Task
	}
	return tasks
}

// BatchGraph is the dependency graph of a batch's tasks; an unknown
// dependency or a cycle is an error that names the ids.
func BatchGraph(tasks []BatchTask) (*dag.Graph, error) {
	nodes := make([]dag.Node, len(tasks))
	for i, t := range tasks {
		nodes[i] = dag.Node{ID: t.ID, Deps: t.Depends}
	}
	return dag.New(nodes)
}

// batchFailure is a batch that could not start because of one task.
func batchFailure(r taskengine.Result, id string) batch.Summary {
	return batch.Summary{Status: string(r.Status), ExitCode: r.ExitCode, Details: fmt.Sprintf("task %s: %s", id, r.Details), Tasks: []batch.TaskSummary{}}
}

// batchRun is one execution of a batch: the scheduler's Runner and Merger.
type batchRun struct {
	root string
	spec BatchSpec
	byID map[string]BatchTask
	bp   BatchParts
	j    journal

	// cpMu makes each checkpoint's snapshot and write one step: the
	// merger tells of a second run from its own goroutine.
	cpMu    sync.Mutex
	mu      sync.Mutex
	results map[string]taskengine.Result // each task's run, by task
	runs    map[string]taskengine.Result // the task runs read or made, by run
	tasks   map[string]batch.TaskResult  // the scheduler's view, for the checkpoint
	landed  []landed                     // the tasks landed, in order
	began   time.Time
	// issues is the batch's conversation with the tracker its tasks came
	// from (nil: a batch of sheets).
	issues *issueLink
	// forge, for a batch landed through pull requests (spec.PR), is their
	// forge; prRuns the pull-request run of each task, journaled before it
	// exists, and prResults what became of those that ran here.
	forge     forge.Forge
	prRuns    map[string]string
	prResults map[string]PRResult
	// repo is the user's checkout the tasks land in, opened once for all
	// of them (checkout).
	repo     *git.Repo
	repoOnce sync.Once
}

// checkout is the user's checkout the batch's tasks land in: the
// repository of its spec, opened by the first landing.
func (b *batchRun) checkout(ctx context.Context) *git.Repo {
	b.repoOnce.Do(func() { b.repo = TaskSpec{Repo: b.spec.Repo}.repo(context.WithoutCancel(ctx)) })
	return b.repo
}

func runBatch(ctx context.Context, root string, run *store.Run, spec BatchSpec, graph *dag.Graph,
	initial map[string]batch.TaskResult, prRuns map[string]string, bp BatchParts) (batch.Summary, error) {
	ctx, unwatch := watchStop(ctx, run)
	defer unwatch()
	b := &batchRun{root: root, spec: spec, bp: bp, j: openJournal(bp.Parts, root, run), byID: map[string]BatchTask{},
		results: map[string]taskengine.Result{}, runs: map[string]taskengine.Result{}, tasks: map[string]batch.TaskResult{}, began: time.Now(),
		prRuns: map[string]string{}, prResults: map[string]PRResult{}}
	for id, r := range prRuns {
		b.prRuns[id] = r
	}
	defer b.j.close()
	limited := slices.ContainsFunc(spec.Tasks, func(t BatchTask) bool { return len(t.Spec.WindowLimits) > 0 })
	if b.bp.Windows == nil && limited {
		// One book for every task: a window one task fills holds back
		// the tasks on its backend, not the others.
		b.bp.Windows = engine.NewWindowBook(KnownWindows(b.j.idx))
	}
	for _, t := range spec.Tasks {
		b.byID[t.ID] = t
		b.tasks[t.ID] = batch.TaskResult{ID: t.ID, Status: batch.StatusPending}
	}
	for id, t := range initial {
		b.tasks[id] = t
	}
	for _, t := range spec.Tasks {
		// The tasks a resumed batch landed before, in no known order: a
		// conflict with their work is named as well.
		if m := b.tasks[t.ID].Merge; m != nil && m.Status == batch.MergeMerged && m.Commit != "" {
			b.landed = append(b.landed, landed{id: t.ID, commit: m.Commit})
		}
	}
	if initial == nil {
		b.record(engine.Event{Type: engine.EventStart, Time: b.began})
	} else {
		b.record(engine.Event{Type: engine.EventResume, Time: b.began})
	}
	b.checkpoint(store.Running)
	if spec.Issues != nil {
		f, err := OpenTracker(ctx, spec.Repo, *spec.Issues, bp.Parts)
		if err == nil {
			b.issues, err = newIssueLink(ctx, f, *spec.Issues, run.ID, spec.Tasks, bp.warn)
		}
		if err != nil {
			return batch.Summary{}, err
		}
	}
	var merger batch.Merger = b
	if spec.PR != nil {
		// Each task lands through its pull request, in its own run: the
		// scheduler has nothing to merge.
		merger = nil
		f, err := OpenForge(ctx, b.checkout(ctx), PRSpec{Remote: spec.PR.Remote, Forge: spec.PR.Forge}, bp.Parts)
		if err != nil {
			return batch.Summary{}, err
		}
		b.forge = f
	}
	s := batch.Scheduler{Graph: graph, Runner: b, Merger: merger, Jobs: max(spec.Jobs, 1), FailFast: spec.FailFast,
		Budget: spec.Budget(), Initial: initial, Observer: b.observe}
	res, err := s.Run(ctx)
	if err != nil {
		return batch.Summary{}, err
	}
	out := b.result(run.ID, graph, res)
	if b.issues != nil {
		b.issues.ended(ctx, res, out)
	}
	data, _ := json.Marshal(engine.StopData{Status: engine.Status(out.Status), ExitCode: out.ExitCode, Details: out.Details, DurationMs: out.DurationMs})
	b.record(engine.Event{Type: engine.EventStop, Time: time.Now(), Data: data})
	b.checkpoint(out.Status)
	if err := run.WriteReport(out, report.BatchMarkdown(out)); err != nil {
		bp.warn("write the report: %v", err)
	}
	if n := StoppedBatch(run.ID, out.Status); n != "" {
		bp.notice("%s", n)
	}
	b.j.hooks.batchEnded(out)
	return out, nil
}

func (b *batchRun) record(ev engine.Event) {
	if err := b.j.Record(ev); err != nil {
		b.bp.warn("batch journal: %v", err)
	}
}

// observe journals a scheduler event, checkpoints, and tells the caller.
func (b *batchRun) observe(e batch.Event) {
	if e.Kind != batch.EventStopped {
		data, _ := json.Marshal(BatchTaskData{Kind: e.Kind, Task: e.Task})
		b.record(engine.Event{Type: EventBatchTask, Time: e.Time, Data: data})
		b.mu.Lock()
		b.tasks[e.Task.ID] = e.Task
		b.mu.Unlock()
		b.checkpoint(store.Running)
		b.j.hooks.batchTask(e)
	}
	if b.bp.Observer != nil {
		b.bp.Observer(e)
	}
}

func (b *batchRun) checkpoint(status string) {
	b.cpMu.Lock()
	defer b.cpMu.Unlock()
	b.mu.Lock()
	cp := BatchCheckpoint{RunID: b.j.run.ID}
	cp.Status, cp.Heartbeat, cp.CostKnown = status, time.Now().UTC(), true
	cp.DurationMs = millis.Of(time.Since(b.began))
	for _, t := range b.spec.Tasks {
		st := b.tasks[t.ID]
		cp.Tasks = append(cp.Tasks, st)
		if st.Status == batch.StatusDone {
			cp.Iterations++
		}
		cp.CostUSD += st.CostUSD
		if !st.CostKnown && st.RunStatus != "" {
			cp.CostKnown = false
		}
	}
	b.mu.Unlock()
	if err := b.j.checkpoint(cp, cp.Progress); err != nil {
		b.bp.warn("batch checkpoint: %v", err)
	}
}

// Run runs one task of the batch (batch.Runner): its own run, worktree and
// branch from the base branch as it is now, merged later by Merge.
func (b *batchRun) Run(ctx context.Context, st batch.Start) batch.Outcome {
	p := b.bp.task(st.ID)
	bctx, endWatch := ctx, func() {}
	if b.issues != nil {
		// The task's issue is claimed first, and watched while it runs.
		tctx, end, skip := b.issues.begin(ctx, st.ID)
		if skip != nil {
			skip.RunID = st.ResumeRunID
			return *skip
		}
		defer end()
		ctx, endWatch = tctx, end
		p.Inbox, p.TaskObserver = b.issues.inbox(st.ID), b.issues.observer(st.ID, p.TaskObserver)
	}
	var res taskengine.Result
	var err error
	if st.ResumeRunID != "" {
		res, err = b.resume(ctx, st, p)
	} else {
		res, err = b.start(ctx, st, p)
	}
	if err != nil {
		code := exit.Error
		if exit.IsUsage(err) {
			code = exit.Usage
		}
		return batch.Outcome{Status: batch.StatusError, ExitCode: code, RunID: st.ResumeRunID, Details: err.Error()}
	}
	b.mu.Lock()
	b.results[st.ID] = res
	b.mu.Unlock()
	b.keep(res)
	o := OutcomeOf(res)
	if b.spec.PR != nil && o.Status == batch.StatusDone {
		// Its pull request is worked under the batch's context: the
		// issue it closes is closed by its merge, which is no reason to
		// stop.
		endWatch()
		o = b.landByPR(bctx, st.ID, res, p)
	}
	if b.issues != nil && o.Status == batch.StatusInterrupted {
		if why := b.issues.steered(st.ID); why != "" {
			o.Details = "stopped: " + why + "; " + o.Details
		}
	}
	return o
}

// start starts a task's run. The batch journals the run's id before the
// run exists: a kill at any point leaves it a run to resume, or none to
// find (resume then starts the task anew).
func (b *batchRun) start(ctx context.Context, st batch.Start, p Parts) (taskengine.Result, error) {
	t := b.byID[st.ID]
	sp := t.Spec
	sp.Merge = git.MergeNone // merged by the batch, in turn
	sp.BudgetUSD = st.BudgetUSD
	base := b.spec.BaseBranch
	if b.spec.PR != nil {
		// The remote's base as it is now: the pull requests merged there
		// (its dependencies') are in it.
		var err error
		if base, err = b.prBase(ctx); err != nil {
			return taskengine.Result{}, err
		}
	}
	id := store.NewRunID(time.Now())
	data, _ := json.Marshal(BatchTaskData{Kind: batch.EventStarted, Task: batch.TaskResult{ID: st.ID, RunID: id}})
	b.record(engine.Event{Type: EventBatchRun, Time: time.Now(), Data: data})
	return StartTask(ctx, NewTask{Prompt: t.Prompt, Spec: sp, Base: base, StateDir: b.root, ID: id, Parent: b.j.run.ID}, p)
}

// resume goes on with a task's run that was cut short or stopped; a run
// the batch journaled but that was never made is started anew.
func (b *batchRun) resume(ctx context.Context, st batch.Start, p Parts) (taskengine.Result, error) {
	run, err := store.Open(b.root, st.ResumeRunID)
	if errors.Is(err, store.ErrNotFound) {
		p.progress("run %s was stopped before it was made: the task starts anew", st.ResumeRunID)
		return b.start(ctx, st, p)
	}
	if err != nil {
		return taskengine.Result{}, err
	}
	defer run.Close()
	events, err := lockedEvents(run)
	if err != nil {
		return taskengine.Result{}, err
	}
	// It runs with the budget the batch gives it, as a task started anew
	// does: its own, bounded by what the batch's leaves it.
	var limits Limits
	if st.BudgetUSD > 0 {
		limits.BudgetUSD = &st.BudgetUSD
	}
	res, _, err := ResumeTask(ctx, b.root, run, events, limits, p)
	return res, err
}

// outcomeOf is a task's result as the scheduler reads it.
// StoppedBatch is the notice of batch id ended with status, when it is
// to be resumed (interrupted, incomplete); "" otherwise.
func StoppedBatch(id, status string) string {
	if status != string(batch.BatchInterrupted) && status != string(batch.BatchIncomplete) {
		return ""
	}
	return fmt.Sprintf("batch %s stopped (%s); continue it with: jlgcli resume %s", id, status, id)
}

// OutcomeOf is a task run's result as the batch scheduler takes it.
func OutcomeOf(res taskengine.Result) batch.Outcome {
	return batch.Outcome{Status: batchStatus(res.Status), ExitCode: res.ExitCode, RunID: res.RunID,
		CostUSD: res.CostUSD, CostKnown: res.CostKnown, Details: res.Details}
}

// batchStatus is a run's status as the batch scheduler takes it.
func batchStatus(s engine.Status) batch.Status {
	switch s {
	case engine.StatusDone:
		return batch.StatusDone
	case engine.StatusInterrupted:
		return batch.StatusInterrupted
	case "":
		return batch.StatusError
	}
	return batch.Status(s)
}

// Merge lands a done task into the base branch (batch.Merger). When its
// change conflicts with the base as it is now, or the checks fail on it
// there, the task gets its second run from the base as it is now
// (batch.Rerun), within what is left of the task's budget: it starts at
// the tier that passed and is told what the first run tried and why its
// change did not land (taskengine.Prior). If that one does not land either,
// the task ends in conflict with its branches kept. The second run is
// journaled before it exists: a batch resumed while it ran goes on with
// it (Resume), then lands it.
func (b *batchRun) Merge(ctx context.Context, id string, o batch.Outcome) batch.MergeOutcome {
	p := b.bp.task(id)
	first, err := b.taskResult(id, o)
	if err != nil {
		return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error()}
	}
	b.mu.Lock()
	rr := cloneRerun(b.tasks[id].Rerun)
	b.mu.Unlock()
	var l Landing
	if rr != nil && !rr.Landed && rr.RunID != first.RunID {
		// A resumed batch: the first run's change was refused, its second
		// run made.
		l = Landing{Status: LandConflict, Details: rr.Details}
		if rr.Why == batch.RerunChecksFailed {
			l.Status = LandGateFailed
		}
		p.progress("going on with run %s, the %s", rr.RunID, rr.Of(first.RunID))
	} else {
		l, err = land(ctx, b.checkout(ctx), b.root, first, b.spec.BaseBranch, p)
		if err != nil {
			return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error()}
		}
		if l.Landed() {
			b.landedNow(id, l.Commit, first)
			return l.Outcome(b.spec.BaseBranch)
		}
		if ctx.Err() != nil {
			return batch.MergeOutcome{Status: batch.MergeInterrupted, Details: l.Details}
		}
		rr = &batch.Rerun{RunID: store.NewRunID(time.Now()), Why: batch.RerunConflict, With: b.metSince(first, l), Details: l.Details}
		if l.Status == LandGateFailed {
			rr.Why = batch.RerunChecksFailed
		}
		if why := b.noRerun(id, first); why != "" {
			return batch.MergeOutcome{Status: batch.MergeConflict, Details: fmt.Sprintf("%s; it is not run again: %s; the work is kept on branch %s",
				l.Details, why, BranchOf(first))}
		}
	}
	again, err := b.again(ctx, id, p, first, rr, l)
	if err != nil {
		rr.Status = batch.StatusError
		return batch.MergeOutcome{Status: batch.MergeConflict, Rerun: rr,
			Details: fmt.Sprintf("%s; its second run %s could not run: %v; the work is kept on branch %s", l.Details, rr.RunID, err, BranchOf(first))}
	}
	if again.Status == engine.StatusInterrupted {
		return batch.MergeOutcome{Status: batch.MergeInterrupted, Details: l.Details, Rerun: RerunOf(rr, l, again, Landing{})}
	}
	var l2 Landing
	if again.Status == engine.StatusDone {
		if l2, err = land(ctx, b.checkout(ctx), b.root, again, b.spec.BaseBranch, p); err != nil {
			return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error(), Rerun: RerunOf(rr, l, again, Landing{})}
		}
		if l2.Landed() {
			b.landedNow(id, l2.Commit, again)
		}
	}
	return AgainOutcome(l, BranchOf(first), b.spec.BaseBranch, again, l2, rr)
}

// again makes (or, for a resumed batch, resumes) rr, the second run of
// task id, whose first run's landing l was refused.
func (b *batchRun) again(ctx context.Context, id string, p Parts, first taskengine.Result, rr *batch.Rerun, l Landing) (taskengine.Result, error) {
	if !rr.StartedAt.IsZero() {
		run, err := store.Open(b.root, rr.RunID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			p.progress("run %s was stopped before it was made: it starts anew", rr.RunID)
		case err != nil:
			return taskengine.Result{}, err
		default:
			defer run.Close()
			events, err := lockedEvents(run)
			if err != nil {
				return taskengine.Result{}, err
			}
			res, _, err := ResumeTask(ctx, b.root, run, events, Limits{}, p)
			b.keep(res)
			return res, err
		}
	}
	t := b.byID[id]
	sp := t.Spec
	sp.Merge = git.MergeNone
	sp.BudgetUSD = b.rerunBudget(id, first)
	prior := SecondRunPrior(first, rr, l)
	rr.StartedAt = time.Now().UTC()
	b.rerunStarted(id, rr)
	p.progress("%s; run %s starts from %s as it is now at tier %s, told what run %s tried", l.Details, rr.RunID,
		b.spec.BaseBranch, tierName(sp, prior), first.RunID)
	res, err := StartTask(ctx, NewTask{Prompt: t.Prompt, Spec: sp, Base: b.spec.BaseBranch, StateDir: b.root, ID: rr.RunID,
		Parent: b.j.run.ID, Prior: prior}, p)
	b.keep(res)
	return res, err
}

// SecondRunPrior is what the second run rr of a task is told of its first
// run, first, whose landing l was refused (rr nil: a second run the caller
// does not record, a batch on Temporal): its attempts, and why its change
// did not land ("a conflict with p: …", what the checks said there).
func SecondRunPrior(first taskengine.Result, rr *batch.Rerun, l Landing) *taskengine.Prior {
	if rr == nil {
		rr = RerunOf(nil, l, taskengine.Result{}, Landing{})
	}
	return taskengine.PriorOf(first, rr.After()+": "+l.Details, l.Gate)
}

func tierName(s TaskSpec, prior *taskengine.Prior) string {
	if i := prior.StartTier(len(s.Tiers)); i < len(s.Tiers) {
		return s.Tiers[i].Name
	}
	return "?"
}

// rerunStarted journals rr, the second run of task id, before it exists,
// and tells the observers (its live line).
func (b *batchRun) rerunStarted(id string, rr *batch.Rerun) {
	b.mu.Lock()
	t := b.tasks[id]
	b.mu.Unlock()
	t.SetRerun(rr)
	b.observe(batch.Event{Kind: batch.EventRerunStarted, Time: time.Now(), Task: t})
}

// noRerun says why task id, whose first run first could not land, is not
// run again: its budget is spent, or the batch's; "" when it can be.
func (b *batchRun) noRerun(id string, first taskengine.Result) string {
	own := b.byID[id].Spec.BudgetUSD
	if own > 0 && first.CostKnown && own-first.CostUSD < 0.005 {
		return fmt.Sprintf("its budget of $%.2f is spent by its first run ($%.4f)", own, first.CostUSD)
	}
	if b.spec.BudgetUSD > 0 && b.batchLeft() < 0.005 {
		return fmt.Sprintf("the batch's budget of $%.2f is spent", b.spec.BudgetUSD)
	}
	return ""
}

// rerunBudget is the budget of the second run of task id: what its first
// run left of the task's budget, bounded by what is left of the batch's
// (0: none).
func (b *batchRun) rerunBudget(id string, first taskengine.Result) float64 {
	budget := b.byID[id].Spec.BudgetUSD
	if budget > 0 && first.CostKnown {
		budget -= first.CostUSD
	}
	if b.spec.BudgetUSD > 0 {
		return batch.TaskBudget(budget, max(b.batchLeft(), 0.005))
	}
	return budget
}

// batchLeft is what is left of the batch's budget: its tasks' known costs
// taken away.
func (b *batchRun) batchLeft() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	left := b.spec.BudgetUSD
	for _, t := range b.tasks {
		if t.CostKnown {
			left -= t.CostUSD
		}
	}
	return left
}

// landed is a task's change landed on the base branch by this batch: the
// commit, and the files the change touched.
type landed struct {
	id, commit string
	files      []string
}

// landedNow records that task id landed as commit from run res.
func (b *batchRun) landedNow(id, commit string, res taskengine.Result) {
	if commit == "" {
		return
	}
	var files []string
	if n := len(res.Attempts); n > 0 {
		for _, f := range res.Attempts[n-1].Change.Files {
			files = append(files, f.Path)
		}
	}
	b.mu.Lock()
	b.landed = append(b.landed, landed{id: id, commit: commit, files: files})
	b.mu.Unlock()
}

// metSince is the tasks whose work, landed since the task run res started,
// its change met when its landing l was refused: those landed after the
// commit it started from (all of those this batch landed when it started
// from none of them), narrowed to those that touched a file the conflict
// names when some did.
func (b *batchRun) metSince(res taskengine.Result, l Landing) []string {
	b.mu.Lock()
	all := slices.Clone(b.landed)
	b.mu.Unlock()
	base := ""
	if res.Git != nil {
		base = res.Git.Base
	}
	since := all
	for i, x := range all {
		if x.commit == base {
			since = all[i+1:]
		}
	}
	var ids, touching []string
	conflicted := conflictFiles(l)
	for _, x := range since {
		if slices.Contains(ids, x.id) {
			continue
		}
		ids = append(ids, x.id)
		if slices.ContainsFunc(x.files, func(f string) bool { return slices.Contains(conflicted, f) }) {
			touching = append(touching, x.id)
		}
	}
	if len(touching) > 0 {
		return touching
	}
	return ids
}

// conflictFiles are the files a refused landing names as conflicting
// (git.Repo.PrepareSquash's words: "… conflicts with it in a, b").
func conflictFiles(l Landing) []string {
	const mark = " conflicts with it in "
	if l.Status != LandConflict {
		return nil
	}
	i := strings.LastIndex(l.Details, mark)
	if i < 0 {
		return nil
	}
	return strings.Split(l.Details[i+len(mark):], ", ")
}

func cloneRerun(r *batch.Rerun) *batch.Rerun {
	if r == nil {
		return nil
	}
	c := *r
	c.With = slices.Clone(r.With)
	return &c
}

// RerunOf is rr, the second run of a task whose first run's landing l was
// refused, as it ended: again, landed as l2 (when again is done). rr nil:
// a second run the caller did not record (a batch on Temporal), made of
// again and l.
func RerunOf(rr *batch.Rerun, l Landing, again taskengine.Result, l2 Landing) *batch.Rerun {
	if rr == nil {
		rr = &batch.Rerun{RunID: again.RunID, Why: batch.RerunConflict, Details: l.Details}
		if l.Status == LandGateFailed {
			rr.Why = batch.RerunChecksFailed
		}
	} else {
		rr = cloneRerun(rr)
	}
	if again.RunID != "" {
		rr.RunID = again.RunID
	}
	rr.Status = OutcomeOf(again).Status
	rr.Landed = again.Status == engine.StatusDone && l2.Landed()
	rr.CostUSD, rr.CostKnown, rr.DurationMs, rr.Attempts = again.CostUSD, again.CostKnown, again.DurationMs, len(again.Attempts)
	if b := BranchOf(again); b != "?" {
		rr.Branch = b
	}
	return rr
}

// AgainOutcome is how the merge of a task ends after its first run's
// landing l (from branch first) was refused and its second run (rr, nil
// when the caller did not record it) ended as again and, when again is
// done, landed as l2. The outcome holds the second run (Rerun), whose cost
// the scheduler counts in the task's.
func AgainOutcome(l Landing, first, base string, again taskengine.Result, l2 Landing, rr *batch.Rerun) batch.MergeOutcome {
	r := RerunOf(rr, l, again, l2)
	switch {
	case again.Status != engine.StatusDone:
		return batch.MergeOutcome{Status: batch.MergeConflict, Rerun: r, Details: fmt.Sprintf("%s; %s; the work is kept on branches %s and %s",
			l.Details, r.As(), first, BranchOf(again))}
	case !l2.Landed():
		return batch.MergeOutcome{Status: batch.MergeConflict, Rerun: r, Details: fmt.Sprintf("%s; %s: %s; the work is kept on branches %s and %s",
			l.Details, r.As(), l2.Details, first, BranchOf(again))}
	}
	m := l2.Outcome(base)
	m.Rerun = r
	m.Details = strings.TrimSuffix(r.As()+" ("+l.Details+"); "+m.Details, "; ")
	return m
}

// taskResult is the result of the run o of task id: this batch's, else
// the one its run wrote (a resumed batch merging a task that ran before).
func (b *batchRun) taskResult(id string, o batch.Outcome) (taskengine.Result, error) {
	if o.RunID == "" {
		b.mu.Lock()
		res, ok := b.results[id]
		b.mu.Unlock()
		if ok {
			return res, nil
		}
		return taskengine.Result{}, errors.New("the task's run is unknown")
	}
	return b.runResult(o.RunID)
}

// runResult is the result of task run id: this batch's, else the one its
// run wrote.
func (b *batchRun) runResult(id string) (taskengine.Result, error) {
	b.mu.Lock()
	res, ok := b.runs[id]
	b.mu.Unlock()
	if ok {
		return res, nil
	}
	run, err := store.Open(b.root, id)
	if err != nil {
		return taskengine.Result{}, err
	}
	defer run.Close()
	events, _, err := Events(run)
	if err != nil {
		return taskengine.Result{}, err
	}
	res, err = TaskResultOf(run, events, Parts{})
	if err == nil {
		b.keep(res)
	}
	return res, err
}

// keep keeps the result of a task run of this batch, by its id.
func (b *batchRun) keep(res taskengine.Result) {
	if res.RunID == "" {
		return
	}
	b.mu.Lock()
	b.runs[res.RunID] = res
	b.mu.Unlock()
}

// BranchOf is the branch of the task run res, "?" when it has none.
func BranchOf(res taskengine.Result) string {
	if res.Git != nil {
		return res.Git.Branch
	}
	return "?"
}

// result makes the batch's result of the scheduler's.
func (b *batchRun) result(runID string, graph *dag.Graph, res batch.Result) batch.Summary {
	return BatchSummary(b.spec, runID, graph, res, b.lastRun)
}

// BatchSummary makes the result of batch runID of the scheduler's; runOf
// gives the result of the run t.RunID of task t.ID, or an error when it
// never ran. A task run again (Rerun) counts both runs' attempts and
// tiers; its branch is its second run's when that one landed.
func BatchSummary(spec BatchSpec, runID string, graph *dag.Graph, res batch.Result,
	runOf func(batch.TaskResult) (taskengine.Result, error)) batch.Summary {
	out := batch.Summary{RunID: runID, Status: string(res.Status), ExitCode: res.ExitCode, Details: res.StopReason,
		StartedAt: res.StartedAt.UTC(), DurationMs: res.DurationMs, CostUSD: res.CostUSD, CostKnown: res.CostKnown,
		BaseBranch: spec.BaseBranch, Jobs: spec.Jobs}
	byID := map[string]BatchTask{}
	for _, t := range spec.Tasks {
		byID[t.ID] = t
	}
	for _, t := range res.Tasks {
		bt := byID[t.ID]
		r := batch.TaskSummary{ID: t.ID, File: bt.File, Title: bt.Title, Status: string(t.Status), ExitCode: t.ExitCode,
			DependsOn: bt.Depends, Level: graph.Level(t.ID), CostUSD: t.CostUSD, CostKnown: t.CostKnown, DurationMs: t.DurationMs,
			Details: t.Details}
		if r.DependsOn == nil {
			r.DependsOn = []string{}
		}
		if t.Reason != "" {
			r.Details = strings.TrimPrefix(r.Details+"; "+t.Reason, "; ")
		}
		if t.RunID != "" {
			id := t.RunID
			r.RunID = &id
		}
		if !t.StartedAt.IsZero() {
			at := t.StartedAt.UTC()
			r.StartedAt = &at
		}
		if m := t.Merge; m != nil {
			if m.Commit != "" {
				c := m.Commit
				r.Commit = &c
			}
			if m.Details != "" {
				r.Details = strings.TrimPrefix(r.Details+"; "+m.Details, "; ")
			}
		}
		if tr, err := runOf(t); err == nil {
			r.Attempts = len(tr.Attempts)
			r.Branch = BranchOf(tr)
			if r.Branch == "?" {
				r.Branch = ""
			}
			for _, ts := range tr.Tiers {
				if ts.Attempts > 0 {
					r.Tiers = append(r.Tiers, ts.Name+":"+ts.Outcome)
				}
			}
		}
		if rr := t.Rerun; rr != nil {
			c := *rr
			r.Rerun = &c
			if tr, err := runOf(batch.TaskResult{ID: t.ID, RunID: rr.RunID}); err == nil {
				c.Attempts = len(tr.Attempts)
				if b := BranchOf(tr); b != "?" {
					c.Branch = b
				}
				for _, ts := range tr.Tiers {
					if ts.Attempts > 0 {
						r.Tiers = append(r.Tiers, ts.Name+":"+ts.Outcome+" (re-run)")
					}
				}
			}
			r.Attempts += c.Attempts
			if c.Landed && c.Branch != "" {
				r.Branch = c.Branch
			}
		}
		out.Tasks = append(out.Tasks, r)
	}
	return out
}

// lastRun is the result of the run t.RunID of task t.ID (its last run
// when it names none), when it ran.
func (b *batchRun) lastRun(t batch.TaskResult) (taskengine.Result, error) {
	if t.RunID == "" {
		b.mu.Lock()
		res, ok := b.results[t.ID]
		b.mu.Unlock()
		if !ok {
			return taskengine.Result{}, errors.New("never ran")
		}
		return res, nil
	}
	return b.taskResult(t.ID, batch.Outcome{RunID: t.RunID})
}
