package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Names of the batch workflow, its activities and its query.
const (
	BatchWorkflowName = "jlgcli.batch"
	PrepareBatchName  = "jlgcli.prepare-batch"
	LandName          = "jlgcli.land"
	QueryBatch        = "batch"
)

// BatchInput is what a batch's workflow is started with.
type BatchInput struct {
	RunID string `json:"runId"`
	Repo  string `json:"repo"`
	// Spec holds the sheets (their tasks and settings), the base branch,
	// the jobs, fail-fast and the batch's budget.
	Spec local.BatchSpec `json:"spec"`
	// Branch is the batch's branch on the remote, made from the base: each
	// done task lands there, in dependency order, and the tasks that
	// depend on it start from there.
	Branch    string `json:"branch"`
	MergePush bool   `json:"mergePush,omitempty"`
	Queue     string `json:"queue"`
	// WorkerWaitMs and HeartbeatMs are as in TaskInput.
	WorkerWaitMs millis.Duration `json:"workerWaitMs"`
	HeartbeatMs  millis.Duration `json:"heartbeatMs"`
	// Resume, for a batch that ended before every task was done, is where
	// this run of its workflow goes on from.
	Resume *BatchResume `json:"resume,omitempty"`
	// Windows are the subscription windows known when the batch was
	// submitted; each task starts from them and from what the tasks that
	// ended before it reported (TaskInput.Windows), for the window limits.
	Windows engine.Windows `json:"windows,omitempty"`
}

// BatchResume is where a resumed batch goes on from, as a local batch's
// resume does: its tasks done and landed are kept; those whose run was
// stopped by a limit of its own go on from that run's history (a new turn
// of its tier); the others start anew.
type BatchResume struct {
	// Tasks is the scheduler's initial state: the tasks kept (done) and
	// those to resume (interrupted, with their run id).
	Tasks map[string]batch.TaskResult `json:"tasks"`
	// Runs are the Temporal run ids of the ended runs of the tasks to
	// resume, by task id.
	Runs map[string]string `json:"runs,omitempty"`
	// Summaries are the earlier summary's lines of the tasks kept: what
	// their runs were (branch, attempts), which this run did not make.
	Summaries map[string]batch.TaskSummary `json:"summaries,omitempty"`
	// Anew are the run ids of the tasks that ran before and start anew (a
	// landing refused): a run of their own, whose branch and records are
	// not the earlier run's.
	Anew map[string]string `json:"anew,omitempty"`
	// PRs, for a batch whose tasks land through pull requests, are where
	// the pull-request workflow of each task to resume stood when the
	// batch ended, by task id: it goes on from there (its wait, its round
	// or its task continued from its history), under its own run id.
	PRs map[string]PRState `json:"prs,omitempty"`
}

// BatchRunning is the status of a batch under way, as the batch query
// answers it (its exit code is then -1).
const BatchRunning batch.BatchStatus = "running"

// LandInput is the input of the land activity: a done task's squash
// commit, made on top of SquashBase, brought onto the batch's branch.
type LandInput struct {
	RunID      string         `json:"runId"`
	Repo       string         `json:"repo"`
	Branch     string         `json:"branch"`
	Ready      string         `json:"ready"`
	SquashBase string         `json:"squashBase"`
	Spec       local.TaskSpec `json:"spec"`
	// Baseline is the task's gate baseline: the checks judge the change
	// laid on the moved branch against it, as the task's gate did.
	Baseline *gate.Report `json:"baseline,omitempty"`
}

// driven stands for the runner and merger of a scheduler whose machine a
// workflow drives: the machine never calls them (only Scheduler.Run does).
type driven struct{}

func (driven) Run(context.Context, batch.Start) batch.Outcome {
	panic("flow: a driven scheduler runs nothing")
}
func (driven) Merge(context.Context, string, batch.Outcome) batch.MergeOutcome {
	panic("flow: a driven scheduler merges nothing")
}

// BatchWorkflow runs a batch: a child TaskWorkflow per sheet, started by the
// batch scheduler's own state machine (the DAG rules of `jlgcli batch`: jobs,
// dependencies, blocking, fail-fast, budget), each done task landed on the
// batch's branch one at a time, re-judged by the checks when the branch
// moved since the task started.
//
// A cancellation of the workflow (`jlgcli stop BATCH`) stops it as Ctrl-C
// stops a local batch: no task or landing starts any more, each running
// task is cancelled and ends interrupted, and the batch ends interrupted
// (ChangeBatchStop). A task's own workflow cancelled alone ends
// interrupted: the batch goes on without it and its dependents wait.
func BatchWorkflow(ctx workflow.Context, in BatchInput) (batch.Summary, error) {
	stoppable := workflow.GetVersion(ctx, ChangeBatchStop, workflow.DefaultVersion, 1) >= 1
	graph, err := local.BatchGraph(in.Spec.Tasks)
	if err != nil {
		return batch.Summary{}, err
	}
	byID := map[string]local.BatchTask{}
	for _, t := range in.Spec.Tasks {
		byID[t.ID] = t
	}
	resume := in.Resume
	if resume == nil {
		resume = &BatchResume{}
	}
	prog := map[string]batch.TaskResult{}
	for id, t := range resume.Tasks {
		prog[id] = t
	}
	results := map[string]taskengine.Result{}
	runs := map[string]taskengine.Result{} // by run id
	lastRun := func(t batch.TaskResult) (taskengine.Result, error) {
		if r, ok := runs[t.RunID]; ok && t.RunID != "" {
			return r, nil
		}
		if r, ok := results[t.ID]; ok {
			return r, nil
		}
		return taskengine.Result{}, errors.New("never ran")
	}
	// summary is the batch's summary of r; a task kept from before a
	// resume keeps what its run was.
	summary := func(r batch.Result) batch.Summary {
		sum := local.BatchSummary(in.Spec, in.RunID, graph, r, lastRun)
		for i, t := range sum.Tasks {
			if _, ran := results[t.ID]; ran {
				continue
			}
			if k, ok := resume.Summaries[t.ID]; ok && t.RunID != nil && k.RunID != nil && *t.RunID == *k.RunID {
				sum.Tasks[i].Attempts, sum.Tasks[i].Branch, sum.Tasks[i].Tiers = k.Attempts, k.Branch, k.Tiers
			}
		}
		return sum
	}
	began := workflow.Now(ctx)
	if err := workflow.SetQueryHandler(ctx, QueryBatch, func() (batch.Summary, error) {
		r := batch.Result{Status: BatchRunning, ExitCode: -1, StartedAt: began, CostKnown: true}
		for _, id := range graph.Order() {
			t, ok := prog[id]
			if !ok {
				t = batch.TaskResult{ID: id, Status: batch.StatusPending}
			}
			if t.CostKnown {
				r.CostUSD += t.CostUSD
			}
			r.Tasks = append(r.Tasks, t)
		}
		return summary(r), nil
	}); err != nil {
		return batch.Summary{}, err
	}
	task := TaskInput{Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs}
	actx := workflow.WithActivityOptions(ctx, task.options(in.Queue, time.Hour))
	// lctx is the context of the landings and the final push: once the
	// batch is stopped, the one under way is made all the same.
	lctx := actx
	if stoppable {
		dc, _ := workflow.NewDisconnectedContext(ctx)
		lctx = workflow.WithActivityOptions(dc, task.options(in.Queue, time.Hour))
	}
	if err := workflow.ExecuteActivity(actx, PrepareBatchName, PrepareInput{RunID: in.RunID, Repo: in.Repo,
		BaseBranch: in.Spec.BaseBranch, Branch: in.Branch}).Get(ctx, nil); err != nil {
		sum := batch.Summary{RunID: in.RunID, Status: string(batch.BatchIncomplete), ExitCode: exit.Incomplete,
			Details: "prepare the batch's branch: " + message(err), StartedAt: began, BaseBranch: in.Spec.BaseBranch,
			Jobs: in.Spec.Jobs, Tasks: []batch.TaskSummary{}}
		if stoppable && ctx.Err() != nil {
			sum.Status, sum.ExitCode = string(batch.BatchInterrupted), exit.Interrupted
			sum.Details = "interrupted while the batch's branch was prepared (the workflow was cancelled: jlgcli stop)"
		}
		return sum, nil
	}

	var merger batch.Merger = driven{}
	if in.Spec.PR != nil {
		merger = nil // each task lands through its pull request, in a workflow of its own
	}
	s := &batch.Scheduler{Graph: graph, Runner: driven{}, Merger: merger, Jobs: max(in.Spec.Jobs, 1), FailFast: in.Spec.FailFast, Initial: resume.Tasks,
		Budget: in.Spec.Budget(), Now: func() time.Time { return workflow.Now(ctx) },
		Observer: func(e batch.Event) {
			if e.Task.ID != "" {
				prog[e.Task.ID] = e.Task
			}
		}}
	m, err := s.Machine()
	if err != nil {
		return batch.Summary{}, err
	}
	sel := workflow.NewSelector(ctx)
	specs := map[string]local.TaskSpec{}
	// windows are those the batch knows: its input's and its ended tasks'.
	windows := in.Windows
	// A batch of issues: each task's claim, and the context its first
	// run's workflow gets (cancelled when the tracker asks it to stop).
	claims := map[string]local.IssueClaim{}
	taskCtx := map[string]workflow.Context{}
	// prChild works task id's pull request in a child PullRequestWorkflow
	// of its own: it runs the task from the remote's base branch as it is
	// then (First), opens its pull request and works it until the
	// batch's target, or goes on from carry (a resumed batch's); done is
	// told what became of it.
	prChild := func(id, runID string, carry *PRState, done func(local.PRResult, error)) {
		bt := byID[id]
		tin := task
		tin.RunID, tin.Task, tin.Repo, tin.BaseBranch, tin.Spec = PRTaskID(runID), bt.Prompt, in.Repo, in.Spec.BaseBranch, specs[id]
		tin.MergePush, tin.Spec.PR = false, false
		tin.Branch = git.BranchName(tin.RunID, bt.Prompt)
		pin := PRInput{RunID: runID, Repo: in.Repo, Forge: in.Spec.PR.Forge, Policy: in.Spec.PR.Policy, Task: bt.Prompt, Spec: specs[id],
			First: &tin, Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs, Carry: carry}
		if bt.Issue != nil {
			pin.Closes = bt.Issue.Number
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: runID, TaskQueue: in.Queue, WaitForCancellation: stoppable})
		sel.AddFuture(workflow.ExecuteChildWorkflow(cctx, PullRequestWorkflowName, pin), func(f workflow.Future) {
			var res local.PRResult
			err := f.Get(ctx, &res)
			done(res, err)
		})
	}
	child := func(id, runID, prompt, resumeRun string, prior *taskengine.Prior, done func(taskengine.Result, error)) {
		bt := byID[id]
		tin := task
		tin.RunID, tin.Task, tin.Repo, tin.BaseBranch, tin.Spec = runID, prompt, in.Repo, in.Branch, specs[id]
		tin.ResumeRun, tin.Prior = resumeRun, prior
		if len(tin.Spec.WindowLimits) > 0 {
			tin.Windows = windows
		}
		tin.Branch = git.BranchName(runID, bt.Prompt)
		parent := ctx
		if c, ok := claims[id]; ok && in.Spec.Issues != nil && prior == nil {
			tin.Issue = &IssueTask{Repo: in.Repo, Source: *in.Spec.Issues, Run: in.RunID, Claim: c}
			parent = taskCtx[id]
		}
		cctx := workflow.WithChildOptions(parent, workflow.ChildWorkflowOptions{WorkflowID: runID, TaskQueue: in.Queue,
			WaitForCancellation: stoppable})
		sel.AddFuture(workflow.ExecuteChildWorkflow(cctx, TaskWorkflowName, tin), func(f workflow.Future) {
			var res taskengine.Result
			err := f.Get(ctx, &res)
			res.RunID = runID
			if err == nil {
				runs[runID] = res
			}
			windows = windows.Merge(res.Windows)
			done(res, err)
		})
	}
	// land lands the done run res of task id; first is nil for its first
	// run, else the landing of the first run that was refused, whose
	// branch was firstBranch.
	var land func(id string, res taskengine.Result, first *local.Landing, firstBranch string)
	land = func(id string, res taskengine.Result, first *local.Landing, firstBranch string) {
		li := LandInput{RunID: res.RunID, Repo: in.Repo, Branch: in.Branch, Spec: specs[id], Baseline: res.Baseline}
		if g := res.Git; g != nil && g.Merge != nil {
			li.Ready, li.SquashBase = ReadyBranch(g.Branch), g.Base
		}
		sel.AddFuture(workflow.ExecuteActivity(lctx, LandName, li), func(f workflow.Future) {
			var l local.Landing
			if err := f.Get(ctx, &l); err != nil {
				m.Merged(id, batch.MergeOutcome{Status: batch.MergeFailed, Details: message(err)})
				return
			}
			switch {
			case first != nil:
				if l.Landed() {
					results[id] = res
				}
				m.Merged(id, local.AgainOutcome(*first, firstBranch, in.Branch, res, l, nil))
			case l.Landed():
				m.Merged(id, l.Outcome(in.Branch))
			default:
				// As `jlgcli batch` does: its second run from the batch's
				// branch as it is now, at the tier that passed, told what
				// the first run tried and why it did not land, and one
				// more landing.
				branch := local.BranchOf(res)
				child(id, res.RunID+"-again", byID[id].Prompt, "", local.SecondRunPrior(res, nil, l), func(again taskengine.Result, err error) {
					switch {
					case err != nil:
						m.Merged(id, batch.MergeOutcome{Status: batch.MergeConflict, Details: fmt.Sprintf("%s; its second run %s could not run: %s; the work is kept on branch %s", l.Details, res.RunID+"-again", message(err), branch)})
					case again.Status != engine.StatusDone:
						m.Merged(id, local.AgainOutcome(l, branch, in.Branch, again, local.Landing{}, nil))
					default:
						land(id, again, &l, branch)
					}
				})
			}
		})
	}
	for {
		for _, st := range m.Ready(stoppable && ctx.Err() != nil) {
			id := st.ID
			spec := byID[id].Spec
			spec.BudgetUSD = st.BudgetUSD
			specs[id] = spec
			runID, resumeRun := in.RunID+"-"+id, ""
			if st.ResumeRunID != "" && resume.Runs[id] != "" {
				runID, resumeRun = st.ResumeRunID, resume.Runs[id]
			} else if anew, ok := resume.Anew[id]; ok {
				runID = anew
			}
			run := func(steered func() string) {
				child(id, runID, byID[id].Prompt, resumeRun, nil, func(res taskengine.Result, err error) {
					why := steered()
					switch {
					case err != nil && why != "":
						m.Ended(id, batch.Outcome{Status: batch.StatusInterrupted, ExitCode: exit.Interrupted, RunID: runID, Details: "stopped: " + why})
						return
					case err != nil:
						m.Ended(id, batch.Outcome{Status: batch.StatusError, ExitCode: exit.Error, RunID: res.RunID, Details: message(err)})
						return
					}
					results[id] = res
					o := local.OutcomeOf(res)
					if why != "" && o.Status == batch.StatusInterrupted {
						o.Details = "stopped: " + why + "; " + o.Details
					}
					m.Ended(id, o)
				})
			}
			if in.Spec.PR != nil {
				// The task's pull request is its landing; a resumed batch's
				// goes on where its workflow stood.
				prID, carry := runID, (*PRState)(nil)
				if st, ok := resume.PRs[id]; ok {
					prID, carry = st.Result.RunID, ResumedPR(st)
				}
				work := func() {
					prChild(id, prID, carry, func(res local.PRResult, err error) {
						if err != nil {
							m.Ended(id, batch.Outcome{Status: batch.StatusError, ExitCode: exit.Error, RunID: prID, Details: message(err)})
							return
						}
						m.Ended(id, local.PROutcome(res, res.From, 0, false))
					})
				}
				if in.Spec.Issues == nil {
					work()
					continue
				}
				claimIssue(ctx, sel, in, byID[id], func(c local.IssueClaim, err error) {
					switch {
					case err != nil:
						m.Ended(id, batch.Outcome{Status: batch.StatusError, ExitCode: exit.Error, Details: fmt.Sprintf("issue #%d could not be claimed: %s", c.Number, message(err))})
					case c.Skip != "":
						m.Ended(id, batch.Outcome{Status: batch.StatusSkipped, Details: c.Skip + ": skipped"})
					default:
						claims[id] = c
						work()
					}
				})
				continue
			}
			if in.Spec.Issues == nil {
				run(func() string { return "" })
				continue
			}
			claimIssue(ctx, sel, in, byID[id], func(c local.IssueClaim, err error) {
				bt := byID[id]
				switch {
				case err != nil:
					m.Ended(id, batch.Outcome{Status: batch.StatusError, ExitCode: exit.Error, RunID: st.ResumeRunID,
						Details: fmt.Sprintf("issue #%d could not be claimed: %s", c.Number, message(err))})
					return
				case c.Skip != "":
					m.Ended(id, batch.Outcome{Status: batch.StatusSkipped, RunID: st.ResumeRunID, Details: c.Skip + ": skipped"})
					return
				}
				claims[id] = c
				if bt.Issue != nil && bt.Issue.Unreadable != "" {
					m.Ended(id, batch.Outcome{Status: batch.StatusError, ExitCode: exit.Usage, Details: "its body is not a task sheet: " + bt.Issue.Unreadable})
					return
				}
				tctx, stop := workflow.WithCancel(ctx)
				taskCtx[id] = tctx
				why := steerIssue(ctx, tctx, stop, in, c)
				run(why)
			})
		}
		if id, _, ok := m.NextMerge(); ok {
			land(id, results[id], nil, "")
		}
		if !m.Busy() {
			break
		}
		sel.Select(ctx)
	}
	res := m.Result(began)
	sum := summary(res)
	if in.Spec.Issues != nil {
		ein := IssuesEndedInput{Repo: in.Repo, Source: *in.Spec.Issues, Run: in.RunID, Tasks: in.Spec.Tasks, Result: res, Summary: sum}
		for _, id := range graph.Order() {
			if c, ok := claims[id]; ok {
				ein.Claims = append(ein.Claims, c)
			}
		}
		if err := workflow.ExecuteActivity(lctx, IssuesEndedName, ein).Get(ctx, nil); err != nil {
			sum.Details = strings.TrimPrefix(sum.Details+"; ", "; ") + "the issues were not told how their tasks ended: " + message(err)
		}
	}
	if in.MergePush && res.Status == batch.BatchDone {
		var f Finished
		err := workflow.ExecuteActivity(lctx, PushBaseName, PushInput{Repo: in.Repo, Branch: in.Branch, BaseBranch: in.Spec.BaseBranch}).Get(ctx, &f)
		switch {
		case err != nil:
			sum.Details = "the base branch was not pushed: " + message(err)
		case f.Merge != nil && f.Merge.Status == git.MergeRefused:
			sum.Details = "the base branch was not pushed: " + f.Merge.Reason
		}
	}
	return sum, nil
}

// claimIssue claims the issue of task t before its workflow starts, and
// tells done what became of the claim once the activity answered.
func claimIssue(ctx workflow.Context, sel workflow.Selector, in BatchInput, t local.BatchTask, done func(local.IssueClaim, error)) {
	ictx := workflow.WithActivityOptions(ctx, TaskInput{Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs}.options(in.Queue, 5*time.Minute))
	sel.AddFuture(workflow.ExecuteActivity(ictx, IssueClaimName, IssueClaimInput{Repo: in.Repo, Source: *in.Spec.Issues, Run: in.RunID, Task: t}),
		func(f workflow.Future) {
			var c local.IssueClaim
			err := f.Get(ctx, &c)
			c.Task, c.Number = t.ID, intake.NumberOf(t.ID)
			done(c, err)
		})
}

// steerIssue reads the issue of claim c again every poll on a durable
// timer while its task runs (until tctx ends) and stops the task (stop)
// when the tracker asks it to; the function it returns says why it did
// ("" when it did not).
func steerIssue(ctx, tctx workflow.Context, stop workflow.CancelFunc, in BatchInput, c local.IssueClaim) func() string {
	poll := in.Spec.Issues.PollMs.Duration()
	if poll <= 0 {
		poll = local.DefaultIssuePoll
	}
	why := ""
	look := IssueTask{Repo: in.Repo, Source: *in.Spec.Issues, Run: in.RunID, Claim: c}
	lctx := workflow.WithActivityOptions(tctx, TaskInput{Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs}.options(in.Queue, 5*time.Minute))
	workflow.Go(tctx, func(g workflow.Context) {
		for {
			if workflow.Sleep(g, poll) != nil {
				return
			}
			var w string
			if err := workflow.ExecuteActivity(lctx, IssueLookName, look).Get(g, &w); err != nil {
				if g.Err() != nil {
					return
				}
				continue
			}
			if w != "" {
				why = w
				stop()
				return
			}
		}
	})
	return func() string {
		r := why
		stop() // the task ended: the look ends with it
		return r
	}
}

// PushBaseName is the activity that fast-forwards the base branch on the
// remote to the batch's branch (--merge push).
const PushBaseName = "jlgcli.push-base"

// PushInput is the input of the push-base activity.
type PushInput struct {
	Repo       string `json:"repo"`
	Branch     string `json:"branch"`
	BaseBranch string `json:"baseBranch"`
}

// PrepareBatch makes the batch's branch on the remote at the tip of the
// base branch (or finds it, made before) and returns its commit.
func (w *Activities) PrepareBatch(ctx context.Context, in PrepareInput) (string, error) {
	ctx, end := w.start(ctx)
	defer end()
	defer w.beat(ctx)()
	c, unlock, err := w.clone(ctx, in.Repo)
	if err != nil {
		return "", err
	}
	defer unlock()
	if tip, found, err := c.RemoteRef(ctx, "refs/heads/"+in.Branch); err != nil {
		return "", gitError(ctx, err)
	} else if found {
		return tip, nil
	}
	if err := c.Fetch(ctx, "+refs/heads/"+in.BaseBranch+":refs/remotes/origin/"+in.BaseBranch); err != nil {
		return "", gitError(ctx, err)
	}
	base, err := c.Rev(ctx, "refs/remotes/origin/"+in.BaseBranch)
	if err != nil {
		return "", gitError(ctx, err)
	}
	if err := c.Push(ctx, base+":refs/heads/"+in.Branch); err != nil {
		return "", gitError(ctx, err)
	}
	return base, nil
}

// Land brings a done task's squash commit onto the batch's branch
// (local.LandTask, at the worker's clone of the remote): as it is when the
// branch has not moved since the task started from it; otherwise merged
// onto the branch's tip (git merge-tree), refused when it conflicts, and
// judged by the task's checks there before it lands. The push is never
// forced. A refusal (conflict, checks failing) is a landing with that
// status, for the run the batch makes from the branch as it is now; a push
// the remote rejects is an error.
func (w *Activities) Land(ctx context.Context, in LandInput) (local.Landing, error) {
	ctx, end := w.start(ctx)
	defer end()
	defer w.beat(ctx)()
	if in.Ready == "" {
		return local.Landing{}, temporal.NewNonRetryableApplicationError("the task left no squash commit to land", "jlgcli.land", nil)
	}
	c, unlock, err := w.clone(ctx, in.Repo)
	if err != nil {
		return local.Landing{}, err
	}
	defer unlock()
	return local.LandTask(ctx, &cloneSite{c: c, in: in}, in.RunID, in.Branch, in.Spec, nil)
}

// cloneSite is a worker's clone of the remote, where a batch on Temporal
// lands its tasks on the batch's branch.
type cloneSite struct {
	c  *git.Clone
	in LandInput
	// tip is the branch's tip on the remote, commit the change laid on it.
	tip, commit string
}

func (s *cloneSite) Lay(ctx context.Context) (local.Laid, error) {
	c, in := s.c, s.in
	if err := c.Fetch(ctx, "+refs/heads/"+in.Branch+":refs/remotes/origin/"+in.Branch, "+refs/heads/"+in.Ready+":refs/remotes/origin/"+in.Ready); err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	tip, err := c.Rev(ctx, "refs/remotes/origin/"+in.Branch)
	if err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	squash, err := c.Rev(ctx, "refs/remotes/origin/"+in.Ready)
	if err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	s.tip, s.commit = tip, squash
	if tip == in.SquashBase {
		return local.Laid{Head: tip}, nil
	}
	tree, conflicts, err := c.MergeTree(ctx, tip, squash)
	if err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	if len(conflicts) > 0 {
		return local.Laid{Conflict: fmt.Sprintf("%s has moved since the task started and conflicts with it in %s", in.Branch, strings.Join(conflicts, ", "))}, nil
	}
	msg, err := c.Message(ctx, squash)
	if err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	if s.commit, err = c.CommitOfTree(ctx, tree, msg, tip); err != nil {
		return local.Laid{}, gitError(ctx, err)
	}
	return local.Laid{Moved: true, Head: tip}, nil
}

func (s *cloneSite) Baseline() (*gate.Report, error) { return s.in.Baseline, nil }

func (s *cloneSite) Checkout(ctx context.Context) (string, func(), error) {
	wt, err := s.c.Checkout(ctx, s.in.RunID+"-land", "jlgcli/land-"+s.in.RunID, s.commit, s.tip)
	if err != nil {
		return "", nil, gitError(ctx, err)
	}
	return wt.Path, func() { _ = wt.Remove(context.WithoutCancel(ctx)) }, nil
}

func (s *cloneSite) Commit(ctx context.Context) (string, error) {
	if err := s.c.Push(ctx, s.commit+":refs/heads/"+s.in.Branch); err != nil {
		return "", gitError(ctx, err) // rejected: the branch moved under the batch
	}
	return s.commit, nil
}

// PushBase fast-forwards the base branch on the remote to the batch's
// branch, never forced.
func (w *Activities) PushBase(ctx context.Context, in PushInput) (Finished, error) {
	ctx, end := w.start(ctx)
	defer end()
	c, unlock, err := w.fetched(ctx, in.Repo, in.Branch)
	if err != nil {
		return Finished{}, err
	}
	defer unlock()
	m := &taskengine.MergeInfo{Status: git.MergeFastForwarded, Into: in.BaseBranch}
	base := "refs/remotes/origin/" + in.BaseBranch
	if err := c.Fetch(ctx, "+refs/heads/"+in.BaseBranch+":"+base); err != nil {
		return Finished{}, gitError(ctx, err)
	}
	var refused *git.MergeRefusedError
	if err := c.HoldForReview(ctx, in.BaseBranch, in.Branch, base, "refs/remotes/origin/"+in.Branch); errors.As(err, &refused) {
		// The user merges it after review.
		m.Status, m.Reason = git.MergeRefused, string(refused.Reason)+": "+refused.Detail
		m.Command = fmt.Sprintf("git fetch origin %s && git merge --ff-only FETCH_HEAD", in.Branch)
		return Finished{Merge: m}, nil
	} else if err != nil {
		return Finished{}, gitError(ctx, err)
	}
	if err := c.Push(ctx, "refs/remotes/origin/"+in.Branch+":refs/heads/"+in.BaseBranch); err != nil {
		if !errors.Is(err, git.ErrPushRejected) {
			return Finished{}, gitError(ctx, err)
		}
		m.Status, m.Reason = git.MergeRefused, err.Error()
	}
	return Finished{Merge: m}, nil
}
