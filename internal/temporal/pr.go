package temporal

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Names of the pull-request workflow, its activities and its query.
const (
	PullRequestWorkflowName = "jlgcli.pull-request"
	PRBeginName             = "jlgcli.pr-begin"
	PRLookName              = "jlgcli.pr-look"
	PRRoundName             = "jlgcli.pr-round"
	PRPushName              = "jlgcli.pr-push"
	PRRerunName             = "jlgcli.pr-rerun"
	PRMergeName             = "jlgcli.pr-merge"
	PRCommentName           = "jlgcli.pr-comment"
	PROpenName              = "jlgcli.pr-open"
	PRJudgeName             = "jlgcli.pr-judge"
	// judgeTestsChange versions the judgement of a pull request's whole
	// change against its base's tests before it is called done or merged
	// (histories made before it replay without it).
	judgeTestsChange = "pr-judge-tests"
	// prWorkflowClock: a look's time, and a push's, are the workflow's
	// clock, not that of the worker that made it (workers' clocks differ:
	// the checks' grace and --give-up-after count on one clock).
	prWorkflowClock = "pr/workflow-clock"
	// prTrustedWords: a writer's thread is keyed by, and tells, the words
	// of those whose threads block, and a passer-by's words are nothing new
	// (histories made before it decide by pull.Policy.AnyWord).
	prTrustedWords = "pr/trusted-words"
	QueryPR        = "pr"
)

// ErrPRRefused is the type of the error of PRBegin for a pull request the
// loop does not work (a fork's, one not open): final.
const ErrPRRefused = "jlgcli.pr-refused"

// PRInput is what a pull request's workflow is started with (and continues
// as new with: Carry). It holds no token: each worker reads the forge's
// from its own environment, by the name Forge.TokenEnv gives (or the
// forge's usual variables).
type PRInput struct {
	RunID string `json:"runId"`
	// Repo is the remote the workers clone, whose forge the pull request
	// is on; Number the pull request's (0: First opens it).
	Repo   string         `json:"repo"`
	Number int            `json:"number,omitempty"`
	Forge  forge.Settings `json:"forge"`
	Policy pull.Policy    `json:"policy"`
	// Task is what the change is for, each round's task ("": the pull
	// request's title and body); Spec how each round's attempts are made.
	Task string         `json:"task,omitempty"`
	Spec local.TaskSpec `json:"spec"`
	// First, for task --pr --until, is the task that makes the change: it
	// runs first (a child task workflow), and its ready branch is opened as
	// the pull request into its base branch.
	First *TaskInput `json:"first,omitempty"`
	// Closes, when not 0, is the issue the pull request First opens
	// closes (a batch of issues): its body says so.
	Closes int `json:"closes,omitempty"`
	// Queue, WorkerWaitMs and HeartbeatMs are as a task's (TaskInput).
	Queue        string          `json:"queue"`
	WorkerWaitMs millis.Duration `json:"workerWaitMs"`
	HeartbeatMs  millis.Duration `json:"heartbeatMs"`
	Carry        *PRState        `json:"carry,omitempty"`
}

// PRState is where a pull request's workflow stands: what its query
// answers, what it continues as new with, and what a resume goes on from.
type PRState struct {
	// Result is the run's result as it stands (status running until its
	// end).
	Result local.PRResult `json:"result"`
	Memory pull.Memory    `json:"memory"`
	// Begun: the pull request was read (Result's URL and Branch, Self,
	// Prompt).
	Begun  bool   `json:"begun,omitempty"`
	Self   string `json:"self,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	Base   string `json:"base,omitempty"`
	// Prior are the runs that made the pull request's change so far (the
	// task that opened it, the rounds): the next round is told their
	// attempts and counts their cost in its budget.
	Prior *taskengine.Prior `json:"prior,omitempty"`
	// Commented: the pull request was told why the loop gave up.
	Commented bool `json:"commented,omitempty"`
	// Round is the round under way (nil: none), which a resume goes on
	// with; First the task that opens the pull request, under way.
	Round *PRRound `json:"round,omitempty"`
	First *PRRound `json:"first,omitempty"`
	// Waiting says what a wait under way waits for, and Until when it
	// ends.
	Waiting []string  `json:"waiting,omitempty"`
	Until   time.Time `json:"until"`
	// ElapsedMs is the time of the earlier runs of the workflow (before a
	// continue-as-new or a resume).
	ElapsedMs millis.Duration `json:"elapsedMs"`
}

// PRRound is a task under way for the pull request: its begin, the input
// of its task workflow, the threads it answers, and the Temporal run of
// its workflow (a resume continues it from its history).
type PRRound struct {
	Data    local.PRRoundData `json:"data"`
	Input   TaskInput         `json:"input"`
	Threads []forge.Thread    `json:"threads,omitempty"`
	Run     string            `json:"run,omitempty"`
}

// PRForge names the pull request and its forge for an activity.
type PRForge struct {
	Repo   string         `json:"repo"`
	Number int            `json:"number"`
	Forge  forge.Settings `json:"forge"`
}

// PRBegun is what PRBegin read of the pull request.
type PRBegun struct {
	Self string   `json:"self"`
	PR   forge.PR `json:"pr"`
}

// PRRoundInput is what a round's preparation is given.
type PRRoundInput struct {
	PRForge
	Obs    pull.Observation `json:"obs"`
	Action pull.Action      `json:"action"`
	Target pull.Target      `json:"target"`
	Self   string           `json:"self"`
}

// PRRoundReady is a round prepared: the section of its prompt that says
// what the pull request needs, or Moved when the branch is no longer at
// the head decided on (the next look builds on the new one).
type PRRoundReady struct {
	Needs string `json:"needs,omitempty"`
	Moved string `json:"moved,omitempty"`
}

// PRPushInput is a round's change to push onto the pull request's branch.
type PRPushInput struct {
	PRForge
	// Branch is the pull request's; From the round's task branch; Lease
	// the head the round started from.
	Branch  string         `json:"branch"`
	From    string         `json:"from"`
	Lease   string         `json:"lease"`
	Threads []forge.Thread `json:"threads,omitempty"`
	RunID   string         `json:"runId"`
	Round   int            `json:"round"`
}

// PRPushed is what a round's push did, and when.
type PRPushed struct {
	End local.PRRoundEndData `json:"end"`
	At  time.Time            `json:"at"`
}

// PRRerunInput are failed checks to run again.
type PRRerunInput struct {
	PRForge
	Checks []forge.Check `json:"checks"`
}

// PRMergeInput is a merge to ask of the forge.
type PRMergeInput struct {
	PRForge
	Method forge.MergeMethod `json:"method"`
	Head   string            `json:"head"`
}

// PRCommentInput is the comment that tells the pull request why the loop
// gave up.
type PRCommentInput struct {
	PRForge
	Body string `json:"body"`
}

// PROpenInput is the pull request to open (or find) for a task's branch.
type PROpenInput struct {
	PRForge
	New forge.NewPR `json:"new"`
}

// PRRoundID is the run id of round n of the pull-request run id: the
// workflow id of its task.
func PRRoundID(id string, n int) string { return fmt.Sprintf("%s-r%d", id, n) }

// PRTaskID is the run id of the task that opens the pull request of run id
// (task --pr --until).
func PRTaskID(id string) string { return id + "-task" }

// forgeOptions are the options of an activity that talks to the forge:
// it heartbeats while a rate limit is waited out (up to an hour), and one
// the forge does not answer is tried again a few times, with a growing
// wait, before the workflow ends in error (resumable).
func (in PRInput) forgeOptions(ctx workflow.Context) workflow.Context {
	ao := in.task().options(in.Queue, 2*time.Hour)
	ao.WaitForCancellation = true
	ao.RetryPolicy = &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: 8, NonRetryableErrorTypes: []string{ErrGit, ErrPRRefused}}
	return workflow.WithActivityOptions(ctx, ao)
}

// task is the TaskInput the rounds' task workflows start from: the queue
// and timeouts of the pull request's.
func (in PRInput) task() TaskInput {
	return TaskInput{Repo: in.Repo, Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs}
}

func (in PRInput) forgeOf(st *PRState) PRForge {
	return PRForge{Repo: in.Repo, Number: st.Result.Number, Forge: in.Forge}
}

// PullRequestWorkflow works a pull request until its policy's target, as
// local.StartPR does here, deciding with the same pull.Decide: each look is
// an activity (PRLook) that a worker makes with its own token; a wait is a
// durable timer, so no worker is held and one that dies meanwhile loses
// nothing; a failed check is re-run (PRRerun); a round is a child task
// workflow (TaskWorkflow) on a task branch made from the pull request's
// head, told what the pull request needs (PRRound prepares it), whose
// commits are then pushed onto the pull request's branch on the lease of
// the head the round started from, its threads answered and resolved
// (PRPush); a merge is asked (PRMerge); giving up tells the pull request
// once (PRComment). With First, the task that makes the change runs first
// and its ready branch is opened as the pull request (PROpen).
//
// A cancellation (jlgcli stop) ends it interrupted: a wait at once, a look
// once its activity stopped, a round once its task ended interrupted; a
// resume goes on from its state (PRState, the query's answer), the round
// under way continued from its task's history.
func PullRequestWorkflow(ctx workflow.Context, in PRInput) (local.PRResult, error) {
	st := in.Carry
	if st == nil {
		st = &PRState{Result: local.PRResult{RunID: in.RunID, Number: in.Number, Target: in.Policy.Target, Status: store.Running}}
	}
	if err := workflow.SetQueryHandler(ctx, QueryPR, func() (PRState, error) { return *st, nil }); err != nil {
		return local.PRResult{}, err
	}
	w := &prFlow{ctx: ctx, in: in, st: st, started: workflow.Now(ctx), policy: in.Policy.WithDefaults(),
		clock: workflow.GetVersion(ctx, prWorkflowClock, workflow.DefaultVersion, 1) >= 1}
	w.policy.AnyWord = workflow.GetVersion(ctx, prTrustedWords, workflow.DefaultVersion, 1) == workflow.DefaultVersion
	return w.run()
}

// prFlow is one run of a pull request's workflow.
type prFlow struct {
	ctx     workflow.Context
	in      PRInput
	st      *PRState
	started time.Time
	policy  pull.Policy
	// clock: looks and pushes are timed by the workflow's clock
	// (prWorkflowClock).
	clock bool
}

func (w *prFlow) run() (local.PRResult, error) {
	ctx, in, st := w.ctx, w.in, w.st
	if st.Result.Number == 0 && in.First != nil {
		if res, done := w.first(); done {
			return res, nil
		}
	}
	if !st.Begun {
		var b PRBegun
		err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRBeginName, in.forgeOf(st)).Get(ctx, &b)
		if err != nil {
			return w.failed(err, "read the pull request")
		}
		st.Begun, st.Self, st.Base = true, b.Self, b.PR.Base
		st.Result.URL, st.Result.Branch = b.PR.URL, b.PR.Head
		st.Prompt = in.Task
		if st.Prompt == "" {
			st.Prompt = strings.TrimSpace(b.PR.Title + "\n\n" + b.PR.Body)
		}
	}
	w.policy.Self = st.Self
	if st.Round != nil {
		// A round the stopped run began: its task goes on from its history.
		if res, done := w.round(); done {
			return res, nil
		}
	}
	for {
		if ctx.Err() != nil {
			return w.stopped("")
		}
		var o pull.Observation
		if err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRLookName, in.forgeOf(st)).Get(ctx, &o); err != nil {
			return w.failed(err, "look at the pull request")
		}
		if w.clock {
			o.At = workflow.Now(ctx)
		}
		act, next := pull.Decide(w.policy, o, st.Memory)
		var ready PRRoundReady
		if act.Do == pull.Attempt && local.ConflictReason(act.Blockers) == "" {
			// Built on the head as the forge's git has it: a push that came
			// after the look is looked at first.
			err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRRoundName, PRRoundInput{PRForge: in.forgeOf(st), Obs: o, Action: act,
				Target: w.policy.Target, Self: st.Self}).Get(ctx, &ready)
			if err != nil {
				return w.failed(err, "prepare a round")
			}
			if ready.Moved != "" {
				continue
			}
		}
		st.Memory = next
		st.Result.Looks++
		st.Result.Last, st.Result.Checks, st.Result.Head = &act, o.Checks.Checks, next.Head
		st.Waiting, st.Until = nil, time.Time{}
		switch act.Do {
		case pull.Done:
			if o.PR.State == forge.StateOpen {
				if out, ended := w.judge(o.PR, act.Head); ended {
					return out, nil
				}
			}
			return w.end(engine.StatusDone, act.Reason, nil)
		case pull.GiveUp:
			return w.end(engine.StatusNeedsYou, act.Reason, act.Blockers)
		case pull.Wait:
			st.Waiting, st.Until = act.Waiting, workflow.Now(ctx).Add(act.After.Duration())
			if err := workflow.Sleep(ctx, act.After.Duration()); err != nil {
				return w.stopped("")
			}
			st.Waiting, st.Until = nil, time.Time{}
		case pull.Rerun:
			err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRRerunName, PRRerunInput{PRForge: in.forgeOf(st), Checks: act.Checks}).Get(ctx, nil)
			if err != nil {
				return w.failed(err, "re-run a check")
			}
		case pull.Merge:
			if out, ended := w.judge(o.PR, act.Head); ended {
				return out, nil
			}
			var d local.PRMergeData
			err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRMergeName, PRMergeInput{PRForge: in.forgeOf(st), Method: w.policy.Method, Head: act.Head}).Get(ctx, &d)
			if err != nil {
				return w.failed(err, "merge")
			}
			if d.Commit != "" {
				st.Result.Merged = d.Commit
			}
			if d.Error != "" {
				// Refused (branch protection lagging a status): asked again
				// after a wait, MaxMergeTries times at most at one head.
				if err := workflow.Sleep(ctx, w.policy.Poll.Duration()); err != nil {
					return w.stopped("")
				}
			}
		case pull.Attempt:
			if why := local.ConflictReason(act.Blockers); why != "" {
				return w.end(engine.StatusNeedsYou, why, act.Blockers)
			}
			n := len(st.Result.Rounds) + 1
			id := PRRoundID(in.RunID, n)
			rd := local.PRRoundData{Round: next.Rounds, RunID: id, Head: act.Head}
			var threads []forge.Thread
			for _, b := range act.Blockers {
				rd.Blockers = append(rd.Blockers, b.String())
				if b.Thread != nil {
					threads = append(threads, *b.Thread)
				}
			}
			prior := w.prior(ready.Needs)
			spec := in.Spec.Round()
			ti := in.task()
			ti.RunID, ti.Task, ti.BaseBranch, ti.Branch, ti.Spec, ti.Prior, ti.Round = id, st.Prompt, st.Result.Branch, git.BranchName(id, st.Prompt), spec, prior, true
			st.Round = &PRRound{Data: rd, Input: ti, Threads: threads}
			if res, done := w.round(); done {
				return res, nil
			}
		}
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() >= MaxHistoryEvents {
			st.ElapsedMs = w.elapsed()
			in.Carry = st
			return local.PRResult{}, workflow.NewContinueAsNewError(ctx, PullRequestWorkflowName, in)
		}
	}
}

// first runs the task that makes the change (task --pr --until) and opens
// its pull request; done when the run ends there (the task did not end
// done, or the pull request could not be opened).
func (w *prFlow) first() (local.PRResult, bool) {
	ctx, in, st := w.ctx, w.in, w.st
	if st.First == nil {
		fi := *in.First
		fi.RunID = PRTaskID(in.RunID)
		st.First = &PRRound{Input: fi}
	}
	res, err := w.child(st.First)
	if err != nil {
		r, _ := w.failed(err, "the task")
		return r, true
	}
	st.Result.From = res.RunID
	if res.Status == engine.StatusInterrupted && ctx.Err() != nil {
		// Stopped: a resume goes on with it, from its history.
		r, _ := w.stopped("the task " + res.RunID + " was stopped")
		return withCost(r, res), true
	}
	if local.Resumable(res.Status) {
		// Stopped by a limit of its own (time, rate limit, attempts, no
		// progress): it stays under way, as a batch's task does, and a
		// resume goes on with it from its history (a new turn of its
		// tier), which counts what it spent.
		r, _ := w.end(res.Status, fmt.Sprintf("the task %s ended %s: %s", res.RunID, res.Status, res.Details), nil)
		return withCost(r, res), true
	}
	w.addPrior(res)
	st.Result.CostUSD += res.CostUSD
	if res.Status != engine.StatusDone {
		st.First = nil
		r, _ := w.end(res.Status, fmt.Sprintf("the task %s ended %s: %s", res.RunID, res.Status, res.Details), nil)
		return r, true
	}
	fi := st.First.Input
	body := local.PRBody(res, in.Policy.Target, in.Closes)
	var pr forge.PR
	err = workflow.ExecuteActivity(in.forgeOptions(ctx), PROpenName, PROpenInput{PRForge: PRForge{Repo: in.Repo, Forge: in.Forge},
		New: forge.NewPR{Head: ReadyBranch(fi.Branch), Base: fi.BaseBranch, Title: local.SquashSubject(fi.Task), Body: body}}).Get(ctx, &pr)
	if err != nil {
		r, _ := w.failed(err, "open the pull request of "+ReadyBranch(fi.Branch))
		return r, true
	}
	st.First = nil
	st.Result.Number = pr.Number
	w.addPushed(res, 0)
	if st.Prompt == "" {
		st.Prompt = fi.Task
	}
	return local.PRResult{}, false
}

// child runs the task workflow of r to its end (continued from its earlier
// run when r has one) and returns its result.
func (w *prFlow) child(r *PRRound) (taskengine.Result, error) {
	ctx := w.ctx
	input := r.Input
	if r.Run != "" {
		input.ResumeRun = r.Run
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: input.RunID, TaskQueue: w.in.Queue, WaitForCancellation: true})
	f := workflow.ExecuteChildWorkflow(cctx, TaskWorkflowName, input)
	var we workflow.Execution
	if err := f.GetChildWorkflowExecution().Get(ctx, &we); err != nil {
		return taskengine.Result{}, err
	}
	r.Run = we.RunID
	var res taskengine.Result
	err := f.Get(ctx, &res)
	return res, err
}

// round makes the round under way (st.Round) to its end: its task, then its
// push; done when the run ends there.
func (w *prFlow) round() (local.PRResult, bool) {
	ctx, in, st := w.ctx, w.in, w.st
	r := st.Round
	end := local.PRRoundEndData{Round: r.Data.Round, RunID: r.Data.RunID}
	res, err := w.child(r)
	if err != nil {
		if ctx.Err() != nil {
			out, _ := w.stopped(fmt.Sprintf("round %d (task %s) was stopped", end.Round, end.RunID))
			return out, true
		}
		out, _ := w.failed(err, fmt.Sprintf("round %d (task %s)", end.Round, end.RunID))
		return out, true
	}
	end.Status, end.CostUSD, end.Details = string(res.Status), res.CostUSD, res.Details
	if res.Status != engine.StatusDone {
		status, reason := local.RoundFailed(end)
		if status == res.Status && status != engine.StatusBudgetExceeded {
			// Stopped (jlgcli stop, a limit of its own): the round stays
			// under way, and a resume goes on with its task from its
			// history, which counts what it spent.
			if ctx.Err() != nil {
				out, _ := w.stopped(fmt.Sprintf("round %d (task %s) was stopped", end.Round, end.RunID))
				return withCost(out, res), true
			}
			out, _ := w.end(status, reason, nil)
			return withCost(out, res), true
		}
		st.Round = nil
		st.Result.CostUSD += res.CostUSD
		w.addPrior(res)
		st.Result.Rounds = append(st.Result.Rounds, r.ended(end))
		out, _ := w.end(status, reason, nil)
		return out, true
	}
	st.Result.CostUSD += res.CostUSD
	w.addPrior(res)
	// A round done is pushed, even when the run is stopped now.
	pctx, _ := workflow.NewDisconnectedContext(ctx)
	var p PRPushed
	err = workflow.ExecuteActivity(in.forgeOptions(pctx), PRPushName, PRPushInput{PRForge: in.forgeOf(st), Branch: st.Result.Branch,
		From: r.Input.Branch, Lease: res.Git.Base, Threads: r.Threads, RunID: r.Data.RunID, Round: r.Data.Round}).Get(pctx, &p)
	if err != nil {
		out, _ := w.failed(err, fmt.Sprintf("push round %d (task %s)", end.Round, end.RunID))
		return out, true
	}
	p.End.Status, p.End.CostUSD, p.End.Details = end.Status, end.CostUSD, firstOf(p.End.Details, end.Details)
	st.Result.Rounds = append(st.Result.Rounds, r.ended(p.End))
	st.Round = nil
	if p.End.Pushed != "" {
		if w.clock {
			p.At = workflow.Now(ctx)
		}
		st.Memory = st.Memory.PushedAt(p.End.Pushed, p.At)
		st.Result.Head = p.End.Pushed
		w.addPushed(res, r.Data.Round)
	}
	return local.PRResult{}, false
}

// withCost is the result r of a run that ended with res, its task under
// way, stopped: what that task spent is told in the result (a batch's
// budget and summary count it, as they count a round ended here), not
// kept in the state, since the resume's task counts it again in its own.
func withCost(r local.PRResult, res taskengine.Result) local.PRResult {
	r.CostUSD += res.CostUSD
	r.CostKnown = r.CostKnown || res.CostKnown
	return r
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// addPrior adds the ended task res to the runs that made the change.
func (w *prFlow) addPrior(res taskengine.Result) {
	before := taskengine.PriorOf(res, "", nil)
	p := w.st.Prior
	if p == nil {
		p = &taskengine.Prior{Attempts: []taskengine.Attempt{}}
	}
	p.RunID = res.RunID
	p.Attempts = append(p.Attempts, before.Attempts...)
	p.CostUSD += res.CostUSD
	p.CostKnown = p.CostKnown || res.CostKnown
	p.CostEstimated = p.CostEstimated || res.CostEstimated
	p.DurationMs += res.DurationMs
	w.st.Prior = p
}

// addPushed adds the change that the task res put on the pull request's
// branch, as round (0: the task that opened it), to those a later round
// may not make again (workflow state only: no command).
func (w *prFlow) addPushed(res taskengine.Result, round int) {
	if c, ok := taskengine.PushedOf(res, round); ok && w.st.Prior != nil {
		w.st.Prior.Pushed = append(w.st.Prior.Pushed, c)
	}
}

// prior is what the next round follows: the runs before it, and what the
// pull request needs.
func (w *prFlow) prior(needs string) *taskengine.Prior {
	p := taskengine.Prior{Attempts: []taskengine.Attempt{}}
	if w.st.Prior != nil {
		p = *w.st.Prior
	}
	p.Needs = needs
	return &p
}

// elapsed is the run's time so far, its earlier runs' included.
func (w *prFlow) elapsed() millis.Duration {
	return w.st.ElapsedMs + millis.Of(workflow.Now(w.ctx).Sub(w.started))
}

// stopped ends a run that was cancelled (jlgcli stop): interrupted,
// resumable.
func (w *prFlow) stopped(why string) (local.PRResult, error) {
	reason := "stopped while it worked the pull request (the workflow was cancelled: jlgcli stop); jlgcli resume " + w.in.RunID + " goes on"
	if why != "" {
		reason = why + "; jlgcli resume " + w.in.RunID + " goes on"
	}
	return w.end(engine.StatusInterrupted, reason, nil)
}

// failed ends a run whose activity (what) failed with err: interrupted
// when the run was cancelled meanwhile, a pull request refused as it is
// (ErrPRRefused) ends in error, and so does a forge that did not answer
// (resumable).
func (w *prFlow) failed(err error, what string) (local.PRResult, error) {
	if w.ctx.Err() != nil {
		return w.stopped("")
	}
	return w.end(engine.StatusError, what+": "+message(err), nil)
}

// end ends the run with status: a loop that gave up (or spent its budget)
// tells the pull request why, once.
func (w *prFlow) end(status engine.Status, reason string, blockers []pull.Blocker) (local.PRResult, error) {
	st, in := w.st, w.in
	if local.TellsPR(status) && !st.Commented && st.Result.Number > 0 {
		ctx, _ := workflow.NewDisconnectedContext(w.ctx)
		body := local.GiveUpComment(in.RunID, st.Result.Number, in.Policy.Target, reason, blockers)
		var url string
		if err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRCommentName, PRCommentInput{PRForge: in.forgeOf(st), Body: body}).Get(ctx, &url); err == nil {
			st.Commented, st.Result.Comment = true, url
		} else {
			workflow.GetLogger(w.ctx).Warn("the pull request's comment", "error", message(err))
		}
	}
	st.Waiting, st.Until = nil, time.Time{}
	st.Result.Status, st.Result.ExitCode, st.Result.Reason = status, status.ExitCode(), reason
	st.Result.DurationMs = w.elapsed()
	return st.Result, nil
}

// ResumedPR is the state a pull request's workflow goes on from after its
// earlier run ended at st (stopped, or in error): its result running
// again.
func ResumedPR(st PRState) *PRState {
	st.Result.Status, st.Result.ExitCode, st.Result.Reason = store.Running, 0, ""
	st.ElapsedMs = st.Result.DurationMs
	st.Waiting, st.Until = nil, time.Time{}
	st.Memory = st.Memory.Restarted()
	return &st
}

// ended is round r as it ended (end), with what it was begun for.
func (r *PRRound) ended(end local.PRRoundEndData) local.PRRound {
	return local.PRRound{PRRoundEndData: end, Head: r.Data.Head, Blockers: r.Data.Blockers}
}

// judge judges the pull request's whole change against its base's tests
// (PRJudge) before it is called done or merged, as the loop run here does;
// ended when the run ends there (needs-you, or the activity failed). A
// task meant to change tests (--edit-tests) is not judged.
func (w *prFlow) judge(pr forge.PR, head string) (local.PRResult, bool) {
	ctx, in, st := w.ctx, w.in, w.st
	if workflow.GetVersion(ctx, judgeTestsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion || in.Spec.EditTests {
		return local.PRResult{}, false
	}
	var why string
	err := workflow.ExecuteActivity(in.forgeOptions(ctx), PRJudgeName, PRJudgeInput{PRForge: in.forgeOf(st), Base: pr.Base, Head: pr.Head, SHA: head}).Get(ctx, &why)
	if err != nil {
		out, _ := w.failed(err, "judge the tests of the pull request")
		return out, true
	}
	if why != "" {
		out, _ := w.end(engine.StatusNeedsYou, why, nil)
		return out, true
	}
	return local.PRResult{}, false
}
