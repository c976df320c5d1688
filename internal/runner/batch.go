package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"slices"
	"strings"
	"sync"
	"time"

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

// StartBatch checks that the batch can run (a repository with a commit, a
// base branch, every task's agents installed and checks to judge it with)
// before it creates anything, then creates the batch's run and runs its
// tasks, Jobs at a time, each as `jlgcli task` runs one, merging each done
// task into the base branch in turn (Land). A batch whose agents cannot
// run is a result, not an error.
func StartBatch(ctx context.Context, spec BatchSpec, stateDir string, bp BatchParts) (batch.Summary, error) {
	repo, err := OpenRepo(ctx, spec.Repo)
	if err != nil {
		return batch.Summary{}, err
	}
	spec.Repo = repo.Dir
	if len(spec.Tasks) == 0 {
		return batch.Summary{}, usagef("name task sheets (.md files) or folders that hold some", "the batch has no task")
	}
	graph, err := BatchGraph(spec.Tasks)
	if err != nil {
		return batch.Summary{}, &UsageError{Err: err}
	}
	if spec.BaseBranch != "" {
		if _, err := repo.ResolveCommit(ctx, "refs/heads/"+spec.BaseBranch); errors.Is(err, git.ErrNotCommit) {
			return batch.Summary{}, usagef("name a branch of this repository: the tasks start from it and merge into it",
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
			return batch.Summary{}, usagef("check out the branch the tasks should start from and merge into", "HEAD is detached in %s: a batch needs a base branch", repo.Dir)
		}
	}
	if err := refuseChanges(ctx, repo, spec.BaseBranch, usagef("commit or stash them first: the batch merges each task into it as it goes",
		"%s, the batch's base branch, is checked out in %s with uncommitted changes", spec.BaseBranch, repo.Dir)); err != nil {
		return batch.Summary{}, err
	}
	checked := map[string]bool{} // the CLIs checked already, by backend and environment
	var confined *sandbox.Record // the first task's, for the batch's record
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		t.Spec.Repo = repo.Dir
		// A sandbox asked for and not to be had stops the batch before
		// anything is made.
		_, rec, err := Confine(ctx, t.Spec.Sandbox, bp.Parts, Site{})
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
	run, err := store.Create(root, id, store.Meta{Command: "batch", Backend: spec.Tasks[0].Spec.Tiers[0].Backend,
		Prompt: fmt.Sprintf("%s: %s", plural.N(len(ids), "task"), strings.Join(ids, ", ")), Options: opts, Cwd: repo.Dir, Sandbox: confined})
	if err != nil {
		return batch.Summary{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	bp.progress("batch %s: %s, %d at a time, merged into %s", id, plural.N(len(spec.Tasks), "task"), spec.Jobs, spec.BaseBranch)
	return runBatch(ctx, root, run, spec, graph, nil, bp)
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
		if t.RunID != "" {
			if n := proc.KillTagged(RunTag(t.RunID)); n > 0 {
				bp.notice("killed %s of task %s (run %s)", plural.N(n, "orphaned agent process group"), t.ID, t.RunID)
			}
		}
	}
	bp.progress("resuming batch %s: %d of %s done", run.ID, countDone(initial), plural.N(len(spec.Tasks), "task"))
	res, err = runBatch(ctx, root, run, spec, graph, initial, bp)
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
func batchFailure(r engine.TaskResult, id string) batch.Summary {
	return batch.Summary{Status: string(r.Status), ExitCode: r.ExitCode, Details: fmt.Sprintf("task %s: %s", id, r.Details), Tasks: []batch.TaskSummary{}}
}

// batchRun is one execution of a batch: the scheduler's Runner and Merger.
type batchRun struct {
	root string
	spec BatchSpec
	byID map[string]BatchTask
	bp   BatchParts
	j    journal

	mu      sync.Mutex
	results map[string]engine.TaskResult // each task's last run
	tasks   map[string]batch.TaskResult  // the scheduler's view, for the checkpoint
	began   time.Time
}

func runBatch(ctx context.Context, root string, run *store.Run, spec BatchSpec, graph *dag.Graph,
	initial map[string]batch.TaskResult, bp BatchParts) (batch.Summary, error) {
	ctx, unwatch := watchStop(ctx, run)
	defer unwatch()
	b := &batchRun{root: root, spec: spec, bp: bp, j: openJournal(bp.Parts, root, run), byID: map[string]BatchTask{},
		results: map[string]engine.TaskResult{}, tasks: map[string]batch.TaskResult{}, began: time.Now()}
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
	if initial == nil {
		b.record(engine.Event{Type: engine.EventStart, Time: b.began})
	} else {
		b.record(engine.Event{Type: engine.EventResume, Time: b.began})
	}
	b.checkpoint(store.Running)
	s := batch.Scheduler{Graph: graph, Runner: b, Merger: b, Jobs: max(spec.Jobs, 1), FailFast: spec.FailFast,
		Budget: batch.Budget{TotalUSD: spec.BudgetUSD}, Initial: initial, Observer: b.observe}
	res, err := s.Run(ctx)
	if err != nil {
		return batch.Summary{}, err
	}
	out := b.result(run.ID, graph, res)
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
	b.mu.Lock()
	cp := BatchCheckpoint{RunID: b.j.run.ID}
	cp.Status, cp.Heartbeat, cp.CostKnown = status, time.Now().UTC(), true
	cp.DurationMs = time.Since(b.began).Milliseconds()
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
	if err := b.j.checkpoint(cp); err != nil {
		b.bp.warn("batch checkpoint: %v", err)
	}
}

// Run runs one task of the batch (batch.Runner): its own run, worktree and
// branch from the base branch as it is now, merged later by Merge.
func (b *batchRun) Run(ctx context.Context, st batch.Start) batch.Outcome {
	p := b.bp.task(st.ID)
	var res engine.TaskResult
	var err error
	if st.ResumeRunID != "" {
		res, err = b.resume(ctx, st, p)
	} else {
		res, err = b.start(ctx, st, p)
	}
	if err != nil {
		code := engine.ExitError
		if IsUsage(err) {
			code = engine.ExitUsage
		}
		return batch.Outcome{Status: batch.StatusError, ExitCode: code, RunID: st.ResumeRunID, Details: err.Error()}
	}
	b.mu.Lock()
	b.results[st.ID] = res
	b.mu.Unlock()
	return OutcomeOf(res)
}

// start starts a task's run. The batch journals the run's id before the
// run exists: a kill at any point leaves it a run to resume, or none to
// find (resume then starts the task anew).
func (b *batchRun) start(ctx context.Context, st batch.Start, p Parts) (engine.TaskResult, error) {
	t := b.byID[st.ID]
	sp := t.Spec
	sp.Merge = git.MergeNone // merged by the batch, in turn
	sp.BudgetUSD = st.Cap(sp.BudgetUSD)
	id := store.NewRunID(time.Now())
	data, _ := json.Marshal(BatchTaskData{Kind: batch.EventStarted, Task: batch.TaskResult{ID: st.ID, RunID: id}})
	b.record(engine.Event{Type: EventBatchRun, Time: time.Now(), Data: data})
	return StartTask(ctx, NewTask{Prompt: t.Prompt, Spec: sp, Base: b.spec.BaseBranch, StateDir: b.root, ID: id, Parent: b.j.run.ID}, p)
}

// resume goes on with a task's run that was cut short or stopped; a run
// the batch journaled but that was never made is started anew.
func (b *batchRun) resume(ctx context.Context, st batch.Start, p Parts) (engine.TaskResult, error) {
	run, err := store.Open(b.root, st.ResumeRunID)
	if errors.Is(err, store.ErrNotFound) {
		p.progress("run %s was stopped before it was made: the task starts anew", st.ResumeRunID)
		return b.start(ctx, st, p)
	}
	if err != nil {
		return engine.TaskResult{}, err
	}
	defer run.Close()
	if _, err := run.Lock(); err != nil {
		return engine.TaskResult{}, fmt.Errorf("run %s: %w", run.ID, err)
	}
	events, _, err := Events(run)
	if err != nil {
		return engine.TaskResult{}, err
	}
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
func OutcomeOf(res engine.TaskResult) batch.Outcome {
	o := batch.Outcome{Status: batch.Status(res.Status), ExitCode: res.ExitCode, RunID: res.RunID,
		CostUSD: res.CostUSD, CostKnown: res.CostKnown, Details: res.Details}
	switch res.Status {
	case engine.StatusDone:
		o.Status = batch.StatusDone
	case engine.StatusInterrupted:
		o.Status = batch.StatusInterrupted
	case "":
		o.Status = batch.StatusError
	}
	return o
}

// Merge lands a done task into the base branch (batch.Merger). When its
// change conflicts with the base as it is now, or the checks fail on it
// there, the task gets one more run from the base as it is now, told why;
// if that one does not land either, the task ends in conflict with its
// branches kept.
func (b *batchRun) Merge(ctx context.Context, id string, o batch.Outcome) batch.MergeOutcome {
	p := b.bp.task(id)
	res, err := b.taskResult(id, o)
	if err != nil {
		return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error()}
	}
	l, err := Land(ctx, b.root, res, b.spec.BaseBranch, p)
	if err != nil {
		return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error()}
	}
	if l.Landed() {
		return l.Outcome(b.spec.BaseBranch)
	}
	first := BranchOf(res)
	if ctx.Err() != nil {
		return batch.MergeOutcome{Status: batch.MergeInterrupted, Details: l.Details}
	}
	p.progress("%s; one more attempt from %s as it is now", l.Details, b.spec.BaseBranch)
	t := b.byID[id]
	sp := t.Spec
	sp.Merge = git.MergeNone
	prompt := AgainPrompt(t.Prompt, first, b.spec.BaseBranch, l)
	again, err := StartTask(ctx, NewTask{Prompt: prompt, Spec: sp, Base: b.spec.BaseBranch, StateDir: b.root, Parent: b.j.run.ID}, p)
	switch {
	case err != nil:
		return batch.MergeOutcome{Status: batch.MergeConflict, Details: fmt.Sprintf("%s; the attempt from the new base could not start: %v; the work is kept on branch %s", l.Details, err, first)}
	case again.Status == engine.StatusInterrupted:
		return batch.MergeOutcome{Status: batch.MergeInterrupted, Details: l.Details}
	case again.Status != engine.StatusDone:
		return AgainOutcome(l, first, b.spec.BaseBranch, again, Landing{})
	}
	l2, err := Land(ctx, b.root, again, b.spec.BaseBranch, p)
	if err != nil {
		return batch.MergeOutcome{Status: batch.MergeFailed, Details: err.Error()}
	}
	if l2.Landed() {
		b.mu.Lock()
		b.results[id] = again
		b.mu.Unlock()
	}
	return AgainOutcome(l, first, b.spec.BaseBranch, again, l2)
}

// AgainOutcome is how the merge of a task ends after its first run's
// landing l (from branch first) was refused and a run from base as it is
// now (again) ended, and, when again is done, landed as l2.
func AgainOutcome(l Landing, first, base string, again engine.TaskResult, l2 Landing) batch.MergeOutcome {
	switch {
	case again.Status != engine.StatusDone:
		return batch.MergeOutcome{Status: batch.MergeConflict, Details: fmt.Sprintf("%s; the attempt from the new base (run %s) ended %s; the work is kept on branches %s and %s",
			l.Details, again.RunID, again.Status, first, BranchOf(again))}
	case !l2.Landed():
		return batch.MergeOutcome{Status: batch.MergeConflict, Details: fmt.Sprintf("%s; the attempt from the new base (run %s) did not land either: %s; the work is kept on branches %s and %s",
			l.Details, again.RunID, l2.Details, first, BranchOf(again))}
	}
	return batch.MergeOutcome{Status: batch.MergeMerged, Commit: l2.Commit,
		Details: fmt.Sprintf("merged from a second run (%s) started from %s after: %s", again.RunID, base, l.Details)}
}

// taskResult is the last run of task id: this batch's, else the one its
// run wrote (a resumed batch merging a task that ran before).
func (b *batchRun) taskResult(id string, o batch.Outcome) (engine.TaskResult, error) {
	b.mu.Lock()
	res, ok := b.results[id]
	b.mu.Unlock()
	if ok {
		return res, nil
	}
	if o.RunID == "" {
		return engine.TaskResult{}, errors.New("the task's run is unknown")
	}
	run, err := store.Open(b.root, o.RunID)
	if err != nil {
		return engine.TaskResult{}, err
	}
	defer run.Close()
	events, _, err := Events(run)
	if err != nil {
		return engine.TaskResult{}, err
	}
	res, err = TaskResultOf(run, events, Parts{})
	if err == nil {
		b.mu.Lock()
		b.results[id] = res
		b.mu.Unlock()
	}
	return res, err
}

// BranchOf is the branch of the task run res, "?" when it has none.
func BranchOf(res engine.TaskResult) string {
	if res.Git != nil {
		return res.Git.Branch
	}
	return "?"
}

// result makes the batch's result of the scheduler's.
func (b *batchRun) result(runID string, graph *dag.Graph, res batch.Result) batch.Summary {
	return BatchSummary(b.spec, runID, graph, res, b.lastRun)
}

// BatchSummary makes the result of batch runID of the scheduler's; lastRun
// gives the result of a task's last run, or an error when it never ran.
func BatchSummary(spec BatchSpec, runID string, graph *dag.Graph, res batch.Result,
	lastRun func(batch.TaskResult) (engine.TaskResult, error)) batch.Summary {
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
		if tr, err := lastRun(t); err == nil {
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
		out.Tasks = append(out.Tasks, r)
	}
	return out
}

// lastRun is the result of a task's last run, when it ran.
func (b *batchRun) lastRun(t batch.TaskResult) (engine.TaskResult, error) {
	if t.RunID == "" {
		b.mu.Lock()
		res, ok := b.results[t.ID]
		b.mu.Unlock()
		if !ok {
			return engine.TaskResult{}, errors.New("never ran")
		}
		return res, nil
	}
	return b.taskResult(t.ID, batch.Outcome{RunID: t.RunID})
}
