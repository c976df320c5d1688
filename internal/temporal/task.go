// Package temporal runs tasks and batches on the workers of a Temporal server, as workflows: the workflow makes the
// task's decisions with the engine's own pure functions (taskengine.Policy), and
// each attempt is an activity that a `jlgcli worker` anywhere runs in its own
// clone of the task's repository, pushing what it did to the remote.
package temporal

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Names of the workflow, its activities and its query.
const (
	TaskWorkflowName = "jlgcli.task"
	PrepareName      = "jlgcli.prepare"
	AttemptName      = "jlgcli.attempt"
	PlanName         = "jlgcli.plan"
	FinishName       = "jlgcli.finish"
	// PreviousName reads where an earlier, ended run of a task's workflow
	// stood (its progress query).
	PreviousName  = "jlgcli.previous"
	QueryProgress = "progress"
	// WorkersName counts the workers up that have a backend.
	WorkersName = "jlgcli.workers"
)

// Changes of the workflows (workflow.GetVersion ids; see CONTRIBUTING.md,
// "Changing a workflow").
const (
	// ChangeTaskStop: a task's workflow that is cancelled ends interrupted,
	// resumable, once the activity under way has stopped.
	ChangeTaskStop = "task/stop-interrupted"
	// ChangeBatchStop: a batch's workflow that is cancelled stops starting
	// tasks and landings, waits for its tasks to end interrupted, and ends
	// interrupted; the landing under way and the final push are made.
	ChangeBatchStop = "batch/stop-interrupted"
	// ChangeTaskRoom: an attempt (or plan) that reached a worker with no
	// room for it is handed back (the activity fails as ErrHandedBack
	// before it did anything) and scheduled again, for a worker that has
	// room; one that waited its worker-wait for a worker is scheduled again
	// while a worker with its backend is up (all busy), and ends the task
	// only when none is (WorkersName).
	ChangeTaskRoom = "task/room"
	// ChangeTaskWindows: the subscription windows the agents reported are
	// carried in the task's state from one attempt to the next (and from
	// TaskInput.Windows, what the submitter knew), and an attempt whose
	// backend has a window over its --window-limit waits for the reset in
	// the workflow (a timer: no worker is held), or ends the task
	// rate-limited when --max-wait does not allow it, as a local task does.
	ChangeTaskWindows = "task/windows"
)

// Bounds of a task's workflow history. An attempt adds about 11 events
// (its activity scheduled, started and completed, a workflow task
// scheduled, started and completed, and the retries of a lost worker), and
// its result carries the attempt's record with the reply cut to
// MaxKeptReply. After AttemptsPerRun attempts, or once the history holds
// MaxHistoryEvents events, the workflow continues as new with the task's
// history as its input.
const (
	AttemptsPerRun   = 25
	MaxHistoryEvents = 2000
	MaxKeptReply     = 8 << 10
)

// Defaults of a submission.
const (
	DefaultQueue      = "jlgcli"
	DefaultWorkerWait = 10 * time.Minute
	DefaultHeartbeat  = time.Minute
)

// TaskInput is what a task's workflow is started with (and continues as
// new with: Carry).
type TaskInput struct {
	RunID string `json:"runId"`
	Task  string `json:"task"`
	// Repo is the remote the workers clone; BaseBranch the branch the
	// task starts from; Branch the task branch made on the remote.
	Repo       string `json:"repo"`
	BaseBranch string `json:"baseBranch"`
	Branch     string `json:"branch"`
	// MergePush: once done, the base branch is fast-forwarded to the
	// task's squash commit on the remote (never forced).
	MergePush bool           `json:"mergePush,omitempty"`
	Spec      local.TaskSpec `json:"spec"`
	// Queue is the task queue of the workflow; an attempt of backend b
	// goes to Queue@b, which only workers that have b poll.
	Queue string `json:"queue"`
	// WorkerWaitMs is how long an attempt waits for a worker that has its
	// backend before the task fails; HeartbeatMs how long a silent worker
	// keeps its attempt before it is given to another.
	WorkerWaitMs millis.Duration `json:"workerWaitMs"`
	HeartbeatMs  millis.Duration `json:"heartbeatMs"`
	Carry        *Carry          `json:"carry,omitempty"`
	// Windows are the subscription windows known when the task was
	// submitted (the runs kept where it was submitted, a batch's earlier
	// tasks): the task starts from them, for its window limits.
	Windows engine.Windows `json:"windows,omitempty"`
	// ResumeRun, without Carry, is the Temporal run id of this workflow's
	// earlier run, ended stopped by a limit: this run goes on from its
	// history, as `jlgcli resume` of a task does (a resumed batch).
	ResumeRun string `json:"resumeRun,omitempty"`
	// Prior, for a batch's second run of a task whose first run's change
	// could not land, is that run: this one starts at the tier that passed
	// there and is told its attempts, as a local batch's second run is.
	Prior *taskengine.Prior `json:"prior,omitempty"`
	// Round: the task is a round of a pull request's workflow, which
	// pushes its task branch onto the pull request's own: no squash
	// commit is made of it (no finish).
	Round bool `json:"round,omitempty"`
	// Issue, for a task of a batch of issues, is its issue: each attempt
	// is told the issue's new comments first, and the issue where the
	// task is after it.
	Issue *IssueTask `json:"issue,omitempty"`
}

// Carry is what a task's workflow hands to the run that continues it.
type Carry struct {
	Base     string             `json:"base"`
	Baseline *gate.Report       `json:"baseline,omitempty"`
	History  taskengine.History `json:"history"`
}

// Progress is what the progress query answers: the history so far, the
// attempt under way, and the stop once there is one.
type Progress struct {
	History taskengine.History `json:"history"`
	Running *taskengine.Next   `json:"running,omitempty"`
	Stop    *engine.StopData   `json:"stop,omitempty"`
	// Base and Baseline are the task's starting point and the gate's
	// verdict there, for a resume.
	Base     string       `json:"base,omitempty"`
	Baseline *gate.Report `json:"baseline,omitempty"`
	// Wait is the wait for a subscription window to reset under way
	// before the next attempt (nil: none).
	Wait *taskengine.TaskWait `json:"wait,omitempty"`
	// Sandbox is how the worker of the last attempt confined its agent
	// and checks (nil: no attempt said it yet).
	Sandbox *sandbox.Record `json:"sandbox,omitempty"`
}

// AttemptQueue is the task queue of the attempts of backend.
func AttemptQueue(queue, backend string) string { return queue + "@" + backend }

// TaskWorkflow runs a task: the tree is prepared once, then each attempt is
// an activity run by a worker that has the tier's backend, and what follows
// it is decided here by taskengine.Policy, the same functions taskengine.Run calls.
//
// A cancellation of the workflow (`jlgcli stop`) stops it as Ctrl-C stops a
// local task: the activity under way is cancelled and waited for (its agent
// stopped), and the task ends interrupted with the attempts made so far,
// which a resume goes on from (ChangeTaskStop; before it, the activity's
// error ended the task).
func TaskWorkflow(ctx workflow.Context, in TaskInput) (taskengine.Result, error) {
	stoppable := workflow.GetVersion(ctx, ChangeTaskStop, workflow.DefaultVersion, 1) >= 1
	roomy := workflow.GetVersion(ctx, ChangeTaskRoom, workflow.DefaultVersion, 1) >= 1
	windowed := workflow.GetVersion(ctx, ChangeTaskWindows, workflow.DefaultVersion, 1) >= 1
	policy := in.Spec.Policy(in.Task)
	prog := &Progress{}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress, error) { return *prog, nil }); err != nil {
		return taskengine.Result{}, err
	}
	// opts are the options of an activity on queue: with a cancellation of
	// the workflow, its end is waited for.
	opts := func(queue string, timeout time.Duration) workflow.Context {
		ao := in.options(queue, timeout)
		ao.WaitForCancellation = stoppable
		return workflow.WithActivityOptions(ctx, ao)
	}
	// stopped is the stop of a task whose activity (what) ended with err
	// because the workflow was cancelled; nil otherwise.
	stopped := func(err error, what string) *engine.StopData {
		if !stoppable || err == nil || ctx.Err() == nil {
			return nil
		}
		return stopOf(engine.StatusInterrupted, "interrupted "+what+" (the workflow was cancelled: jlgcli stop)")
	}
	// agent runs activity name (an attempt or the plan, what) of backend
	// with input into out, on a worker that has room for it: one that
	// had none handed it back, and it is scheduled again at once (to the
	// queue's other pollers: that worker polls no more while it is full);
	// one that waited its worker-wait in the queue is scheduled again
	// while a worker that has backend is up, all of them busy.
	agent := func(ao workflow.ActivityOptions, name, backend string, input AttemptInput, out any) error {
		input.HandBack = roomy
		id := ao.ActivityID
		for try := 1; ; try++ {
			if try > 1 && id != "" {
				ao.ActivityID = fmt.Sprintf("%s.%d", id, try)
			}
			err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, ao), name, input).Get(ctx, out)
			if !roomy || err == nil || ctx.Err() != nil {
				return err
			}
			if IsHandedBack(err) {
				continue
			}
			if !isStartTimeout(err) {
				return err
			}
			var n int
			q := WorkersInput{Queue: in.Queue, Backend: backend}
			if werr := workflow.ExecuteActivity(opts(in.Queue, time.Minute), WorkersName, q).Get(ctx, &n); werr != nil || n == 0 {
				return err // no worker has backend: the attempt's own timeout says so
			}
		}
	}
	c := in.Carry
	var stop *engine.StopData
	if c == nil && in.ResumeRun != "" {
		var p Progress
		err := workflow.ExecuteActivity(opts(in.Queue, time.Hour), PreviousName,
			PreviousInput{WorkflowID: in.RunID, RunID: in.ResumeRun}).Get(ctx, &p)
		interrupted := stopped(err, "while it read its earlier run")
		switch {
		case interrupted != nil:
			stop, c = interrupted, &Carry{}
		case err != nil:
			stop = stopOf(engine.StatusError, "read the history of its earlier run: "+message(err))
			c = &Carry{}
		case p.Base != "": // else it ended before its branch was made: it starts anew
			c = ResumedCarry(p, policy)
		}
	}
	if c == nil {
		var p Prepared
		err := workflow.ExecuteActivity(opts(in.Queue, time.Hour), PrepareName,
			PrepareInput{RunID: in.RunID, Repo: in.Repo, BaseBranch: in.BaseBranch, Branch: in.Branch, Spec: in.Spec}).Get(ctx, &p)
		if stop = stopped(err, "while its branch was prepared"); stop != nil {
			c = &Carry{}
		} else if err != nil {
			stop = stopOf(engine.StatusError, "prepare the task's branch: "+message(err))
			c = &Carry{}
		} else {
			c = &Carry{Base: p.Base, Baseline: p.Baseline}
			if in.Prior != nil {
				c.History.Prior = in.Prior
				c.History.State.Tier = in.Prior.StartTier(len(policy.Tiers))
			}
		}
	}
	if stop == nil && in.Spec.Plan && c.History.Planner == nil {
		backend := in.Spec.PlannerBackend()
		var pl Planned
		ao := in.options(AttemptQueue(in.Queue, backend), 24*time.Hour)
		ao.WaitForCancellation = stoppable
		err := agent(ao, PlanName, backend, AttemptInput{RunID: in.RunID, Task: in.Task, Repo: in.Repo, Branch: in.Branch, Base: c.Base,
			Spec: in.Spec, History: c.History}, &pl)
		interrupted := stopped(err, "while the planner was asked")
		switch {
		case interrupted != nil:
			stop = interrupted
		case err != nil:
			stop = attemptStop(err, taskengine.Tier{Name: "planner", Backend: backend}, taskengine.Next{}, in)
		case pl.Stop != nil:
			stop = pl.Stop
		default:
			c.History.State.WaitedMs = pl.WaitedMs
			c.History, stop = policy.Planned(c.History, pl.Planner, pl.Steps)
		}
	}
	if windowed {
		c.History.State.Windows = c.History.State.Windows.Merge(in.Windows)
	}
	prog.History, prog.Base, prog.Baseline = c.History, c.Base, c.Baseline
	started := len(c.History.Attempts)
	for stop == nil {
		begin := workflow.Now(ctx)
		if in.Issue != nil {
			// What people wrote on the issue since: told once, to this
			// attempt. The issue that cannot be read tells nothing new.
			var notes []taskengine.Note
			if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, in.options(in.Queue, 5*time.Minute)), IssueNotesName, *in.Issue).Get(ctx, &notes); err == nil {
				c.History.Notes = c.History.Unread(notes)
			}
		}
		next, s := policy.Begin(c.History, c.History.State.ElapsedMs.Duration())
		c.History.Notes = nil // told by next, then recorded on its attempt
		if s != nil {
			stop = s
			break
		}
		tier := policy.Tiers[next.TierIndex]
		if windowed {
			held, s := windowHold(ctx, in.Spec, tier, &c.History.State, prog)
			if stop = s; stop != nil {
				break
			}
			if held {
				continue
			}
		}
		prog.Running = &next
		timeout := 24 * time.Hour
		if policy.Timeout > 0 {
			timeout = policy.Timeout + 10*time.Minute // the activity stops itself at the timeout
		}
		ao := in.options(AttemptQueue(in.Queue, tier.Backend), timeout)
		ao.ActivityID = fmt.Sprintf("attempt-%d", next.Number) // with the run: the attempt's key, as its refs
		ao.WaitForCancellation = stoppable
		var out taskengine.AttemptOutcome
		err := agent(ao, AttemptName, tier.Backend, AttemptInput{RunID: in.RunID, Task: in.Task, Repo: in.Repo,
			Branch: in.Branch, Base: c.Base, Baseline: c.Baseline, Spec: in.Spec, History: stepHistory(c.History, next),
			Next: next}, &out)
		prog.Running = nil
		if stop = stopped(err, fmt.Sprintf("during attempt %d", next.Number)); stop != nil {
			break
		}
		if err != nil {
			stop = attemptStop(err, tier, next, in)
			break
		}
		if out.Sandbox != nil {
			prog.Sandbox = out.Sandbox
		}
		if out.Stop != nil {
			stop = out.Stop
			break
		}
		h := c.History
		waited := out.WaitedMs - h.State.WaitedMs
		h.State.WaitedMs = out.WaitedMs
		if windowed {
			h.State.Windows = h.State.Windows.Merge(out.Windows)
		}
		a := out.Attempt
		a.Prompt = next.Prompt
		d := policy.Decide(h, a, out.Detection)
		a.Action, a.Detection = d.Action, d.Detection
		c.History.Attempts = append(c.History.Attempts, a)
		c.History.State = d.State
		c.History.State.ElapsedMs = h.State.ElapsedMs + max(0, millis.Of(workflow.Now(ctx).Sub(begin))-waited)
		prog.History = c.History
		if in.Issue != nil {
			issueProgress(ctx, in, c.History, a)
		}
		if d.Stop != nil {
			stop = d.Stop
			break
		}
		if stoppable && ctx.Err() != nil { // cancelled as the attempt ended: no other starts
			stop = stopOf(engine.StatusInterrupted, fmt.Sprintf("interrupted after attempt %d (the workflow was cancelled: jlgcli stop)", next.Number))
			break
		}
		if len(c.History.Attempts)-started >= AttemptsPerRun || workflow.GetInfo(ctx).GetCurrentHistoryLength() >= MaxHistoryEvents {
			in.Carry = c
			return taskengine.Result{}, workflow.NewContinueAsNewError(ctx, TaskWorkflowName, in)
		}
	}
	stop.DurationMs = c.History.State.ElapsedMs
	prog.Stop = stop
	res := policy.Result(in.RunID, c.History, stop)
	res.Baseline = c.Baseline
	res.Git = &taskengine.GitInfo{Mode: string(git.CommitBranch), Repo: in.Repo, Branch: in.Branch, Base: c.Base,
		BaseBranch: in.BaseBranch, Refs: git.RefPrefix + in.RunID + "/", Remote: in.Repo, Pushed: c.Base != ""}
	if stop.Status == engine.StatusDone && !in.Round {
		fctx := ctx
		if stoppable { // a task done is finished, even when it is stopped now
			fctx, _ = workflow.NewDisconnectedContext(ctx)
		}
		var f Finished
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(fctx, in.options(in.Queue, time.Hour)), FinishName,
			FinishInput{RunID: in.RunID, Task: in.Task, Repo: in.Repo, Branch: in.Branch, BaseBranch: in.BaseBranch,
				Base: c.Base, MergePush: in.MergePush, PR: in.Spec.PR, PRBody: prBody(res, in.Spec.PR)}).Get(ctx, &f)
		if err != nil {
			res.Git.Warnings = append(res.Git.Warnings, "the squash commit could not be made: "+message(err))
		} else {
			res.Git.Merge, res.Git.PR = f.Merge, f.PR
			if f.Warning != "" {
				res.Git.Warnings = append(res.Git.Warnings, f.Warning)
			}
			res.HoldForReview()
		}
	}
	return res, nil
}

// issueProgress tells the issue of task in where it is after attempt a
// of history h; a forge that does not take it is no reason to stop.
func issueProgress(ctx workflow.Context, in TaskInput, h taskengine.History, a taskengine.Attempt) {
	p := IssueProgressInput{Issue: *in.Issue, Tier: a.Tier, Attempt: a.Number, Gate: string(a.Gate.Status), CostKnown: true}
	for _, x := range h.Attempts {
		p.CostUSD += x.CostUSD
		p.CostKnown = p.CostKnown && x.CostKnown
		for _, n := range x.Notes {
			p.Notes = append(p.Notes, n.ID)
		}
	}
	_ = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, in.options(in.Queue, 5*time.Minute)), IssueProgressName, p).Get(ctx, nil)
}

// windowHold holds back the next attempt, of tier, while a subscription
// window of its backend is at or over spec's window limit, as a local
// task does before a call (engine.WindowWait over the windows st carries):
// the workflow waits for the reset on a timer, the wait not counted as
// active time, and held is true (the caller decides again); a reset beyond
// --max-wait stops the task rate-limited, resumable. prog tells the wait
// while it lasts.
func windowHold(ctx workflow.Context, spec local.TaskSpec, tier taskengine.Tier, st *taskengine.State, prog *Progress) (held bool, stop *engine.StopData) {
	if len(spec.WindowLimits) == 0 {
		return false, nil
	}
	now := workflow.Now(ctx)
	h := engine.WindowWait(now, st.Windows, tier.Backend, spec.WindowLimits, st.WaitedMs.Duration(), spec.MaxWaitMs.Duration())
	if h == nil {
		return false, nil
	}
	if !h.OK {
		return false, stopOf(engine.StatusRateLimited, fmt.Sprintf("tier %s: %s", tier.Name, h.Details))
	}
	w := h.Window
	st.WaitedMs += millis.Of(h.Wait)
	prog.Wait = &taskengine.TaskWait{Until: now.Add(h.Wait), WaitMs: millis.Of(h.Wait), Message: h.Details, Window: &w, State: *st}
	err := workflow.Sleep(ctx, h.Wait)
	prog.Wait = nil
	if err != nil {
		return false, stopOf(engine.StatusInterrupted, "interrupted while waiting for a subscription window to reset (the workflow was cancelled: jlgcli stop)")
	}
	return true, nil
}

// prBody is the text of a task's pull request: its report.
func prBody(res taskengine.Result, pr bool) string {
	if !pr {
		return ""
	}
	return report.New(res).Markdown()
}

// options are the activity options of an activity on queue.
func (in TaskInput) options(queue string, timeout time.Duration) workflow.ActivityOptions {
	wait := in.WorkerWaitMs.Duration()
	if wait <= 0 {
		wait = DefaultWorkerWait
	}
	beat := in.HeartbeatMs.Duration()
	if beat <= 0 {
		beat = DefaultHeartbeat
	}
	return workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: wait,
		StartToCloseTimeout:    timeout,
		HeartbeatTimeout:       beat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{ErrGit}},
	}
}

// stepHistory is what an attempt needs of the history: the state, the plan
// and the attempts of its step, and, in a pull request's round, the changes
// the runs before it pushed (the loop rules read them).
func stepHistory(h taskengine.History, next taskengine.Next) taskengine.History {
	out := taskengine.History{Plan: h.Plan, State: h.State, Prior: h.Prior.ForAttempt()}
	for _, a := range h.Attempts {
		if a.Step == next.Step {
			a.Prompt, a.Response = "", ""
			a.Change.Diff = ""
			out.Attempts = append(out.Attempts, a)
		}
	}
	return out
}

// isStartTimeout reports whether an activity failed because no worker took
// it within its worker-wait.
func isStartTimeout(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// IsHandedBack reports whether an activity failed because the worker that
// got it had no room for it (ErrHandedBack): it did nothing.
func IsHandedBack(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == ErrHandedBack
}

// attemptStop is the stop of a task whose attempt failed as an activity.
func attemptStop(err error, tier taskengine.Tier, next taskengine.Next, in TaskInput) *engine.StopData {
	if isStartTimeout(err) {
		wait := in.WorkerWaitMs.Duration()
		if wait <= 0 {
			wait = DefaultWorkerWait
		}
		what := fmt.Sprintf("attempt %d", next.Number)
		if next.Number == 0 {
			what = "the plan"
		}
		return stopOf(engine.StatusBackendMissing, fmt.Sprintf("tier %s: no worker with backend %s took %s within %s (queue %s; set temporal.workerWait to wait longer)",
			tier.Name, tier.Backend, what, wait, AttemptQueue(in.Queue, tier.Backend)))
	}
	if next.Number == 0 {
		return stopOf(engine.StatusError, "the plan: "+message(err))
	}
	return stopOf(engine.StatusError, fmt.Sprintf("attempt %d: %s", next.Number, message(err)))
}

func stopOf(s engine.Status, details string) *engine.StopData {
	return &engine.StopData{Status: s, ExitCode: s.ExitCode(), Details: details}
}

// message is the innermost message of an activity's error: git's own, for
// a clone that cannot fetch.
func message(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return strings.TrimSpace(err.Error())
		}
		err = u
	}
}

// PreviousInput names an ended run of a task's workflow.
type PreviousInput struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
}

// ResumedCarry is what a task's workflow goes on from after its earlier
// run, which stood at p: its history, with the new turn that a resume of a
// task stopped by a limit gives its tier under policy.
func ResumedCarry(p Progress, policy taskengine.Policy) *Carry {
	h := p.History
	h.State = policy.Resumed(h.State, p.Stop)
	return &Carry{Base: p.Base, Baseline: p.Baseline, History: h}
}
