package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// A watch of a forge's issues (batch --issues --watch) on Temporal: a
// workflow of its own that outlives the jlgcli that started it and any
// worker. Each look at the tracker is an activity a worker makes with its
// own token, planning the batch of the issues it takes with the
// configuration the watch was submitted with; a look that finds issues
// runs them as a child BatchWorkflow (a batch of issues as one submitted
// alone is), a look that finds nothing waits on a durable timer.

// Names of the watch's workflow, its activity and its query.
const (
	IssueWatchWorkflowName = "jlgcli.issue-watch"
	IssueWatchLookName     = "jlgcli.issue-watch-look"
	QueryWatch             = "watch"
	// ErrWatchPlan is the type of the error of a look whose batch cannot
	// be planned (a setting refused): not retried; the watch says it and
	// looks again after its wait, as a watch here does.
	ErrWatchPlan = "jlgcli.watch-plan"
	// LooksPerRun is how many looks a run of the watch's workflow makes
	// before it continues as new, carrying its state, so that its history
	// stays bounded.
	LooksPerRun = 100
	// KeptBatches is how many of the watch's ended batches its state keeps
	// (their tasks, for show); the older ones are counted only.
	KeptBatches = 50
)

// WatchConfig is the configuration a watch plans each batch with: the
// submitter's layers as they were resolved at submission (user file,
// project file, environment, then the command's flags), sent whole so
// that a worker resolves each issue's settings over them as the submitter
// would. It holds no token (the [forge] table names its variable) and no
// hooks (they fire where the watch is followed).
type WatchConfig struct {
	Layers    []*config.Layer `json:"layers"`
	FailFast  bool            `json:"failFast,omitempty"`
	BudgetUSD float64         `json:"budgetUsd,omitempty"`
	// Plan asks each task's planner for steps first.
	Plan bool `json:"plan,omitempty"`
	// Checks are those detected at submission in the checkout here, for
	// the tasks that name none (nil: the configuration names them).
	Checks []gate.Check `json:"checks,omitempty"`
}

// Recorded is c as a run's record keeps it: the names of its
// environment, not their values.
func (c WatchConfig) Recorded() WatchConfig {
	return c.envMapped(func(_, _, _ string) (string, bool) { return "", true })
}

// FillEnv gives the environment's names of c their values; it returns the
// names that have none.
func (c *WatchConfig) FillEnv(value local.EnvValue) (missing []string) {
	*c = c.envMapped(func(tier, name, v string) (string, bool) {
		if v != "" {
			return v, true
		}
		if got, ok := value(tier, name); ok {
			return got, true
		}
		missing = append(missing, name)
		return "", true
	})
	return missing
}

// envMapped is c with a copy of each layer whose environment's values f
// gives (f is told the tier, "" for the run's own, the name and the value).
func (c WatchConfig) envMapped(f func(tier, name, v string) (string, bool)) WatchConfig {
	mapEnv := func(tier string, env map[string]string) map[string]string {
		if env == nil {
			return nil
		}
		out := make(map[string]string, len(env))
		for k, v := range env {
			out[k], _ = f(tier, k, v)
		}
		return out
	}
	layers := make([]*config.Layer, len(c.Layers))
	for i, l := range c.Layers {
		if l == nil {
			continue
		}
		cp := *l
		cp.Env = mapEnv("", l.Env)
		cp.Tiers = append([]config.TierLayer(nil), l.Tiers...)
		for j := range cp.Tiers {
			cp.Tiers[j].Env = mapEnv(cp.Tiers[j].Name, cp.Tiers[j].Env)
		}
		if l.Planner != nil {
			pl := *l.Planner
			pl.Env = mapEnv("planner", pl.Env)
			cp.Planner = &pl
		}
		if l.Review != nil {
			rv := *l.Review
			rv.Env = mapEnv("review", rv.Env)
			cp.Review = &rv
		}
		layers[i] = &cp
	}
	c.Layers = layers
	return c
}

// WatchInput is what a watch's workflow is started with (and continues as
// new with: Carry).
type WatchInput struct {
	RunID string `json:"runId"`
	// Repo is the remote the workers clone and whose forge has the issues;
	// Base the branch each batch starts from and lands on.
	Repo string `json:"repo"`
	Base string `json:"base"`
	// Query is the query of the issues (batch --issues), Source the
	// tracker's settings (the token's variable, trust, poll).
	Query  string            `json:"query"`
	Source local.IssueSource `json:"source"`
	Config WatchConfig       `json:"config"`
	// MergePush, Queue, WorkerWaitMs, HeartbeatMs and Windows are each
	// batch's (BatchInput).
	MergePush    bool            `json:"mergePush,omitempty"`
	Queue        string          `json:"queue"`
	WorkerWaitMs millis.Duration `json:"workerWaitMs"`
	HeartbeatMs  millis.Duration `json:"heartbeatMs"`
	Windows      engine.Windows  `json:"windows,omitempty"`
	Carry        *WatchState     `json:"carry,omitempty"`
}

// IsWatch tells whether a run's recorded options are a watch's input.
func IsWatch(options []byte) bool {
	var in struct {
		Query string `json:"query"`
	}
	return json.Unmarshal(options, &in) == nil && in.Query != ""
}

// WatchState is where a watch stands: what its queries answer, what it
// continues as new with, and what a resume goes on from.
type WatchState struct {
	// Looks is the number of reads of the tracker so far; Started the
	// number of batches started (the next is <run>-b<Started+1>).
	Looks   int `json:"looks"`
	Started int `json:"started"`
	// Ended are the last KeptBatches batches that ended; Dropped counts
	// those before them, DroppedCostUSD what they spent.
	Ended          []batch.Summary `json:"ended,omitempty"`
	Dropped        int             `json:"dropped,omitempty"`
	DroppedCostUSD float64         `json:"droppedCostUsd,omitempty"`
	// Current is the batch under way (nil: none); a resumed watch goes on
	// with it first (its Resume set as a batch's resume sets it).
	Current *BatchInput `json:"current,omitempty"`
	// Wait is the last wait after a look that found nothing, Until when
	// the wait under way ends (zero: none).
	Wait  millis.Duration `json:"waitMs,omitempty"`
	Until time.Time       `json:"until"`
	// Last is what the last look said: the issues it left out, or why
	// its batch could not be planned.
	Last string `json:"last,omitempty"`
	// StartedAt is when the watch began.
	StartedAt time.Time `json:"startedAt"`
}

// WatchBatchID is the run id of batch n of watch id: its workflow's id.
func WatchBatchID(id string, n int) string { return fmt.Sprintf("%s-b%d", id, n) }

// WatchLookInput is what a look of the watch is given.
type WatchLookInput struct {
	Repo   string            `json:"repo"`
	Base   string            `json:"base"`
	Query  string            `json:"query"`
	Source local.IssueSource `json:"source"`
	Config WatchConfig       `json:"config"`
}

// WatchLook is what a look found: the batch to run (nil: nothing to run
// now), and the issues it left out, each with why.
type WatchLook struct {
	Spec *local.BatchSpec `json:"spec,omitempty"`
	Left []string         `json:"left,omitempty"`
}

// PlanIssues plans a look of a watch, on the worker: it reads the issues
// of in.Query from the tracker f (the worker's token), takes them by the
// rules of a batch of issues and plans their batch over in.Config. A
// setting it refuses is an *exit.UsageError (not tried again); any other
// error is the tracker's, tried again.
type PlanIssues func(ctx context.Context, f forge.Forge, in WatchLookInput, warn func(string)) (WatchLook, error)

// IssueWatchLook is a look of a watch (Activities.PlanIssues).
func (w *Activities) IssueWatchLook(ctx context.Context, in WatchLookInput) (WatchLook, error) {
	if w.PlanIssues == nil {
		return WatchLook{}, temporal.NewNonRetryableApplicationError("this worker cannot plan a watch's batch", ErrWatchPlan, nil)
	}
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Repo, Forge: in.Source.Forge})
	if err != nil {
		return WatchLook{}, lookError(err)
	}
	defer done()
	warn := func(s string) { activity.GetLogger(ctx).Warn(s) }
	look, err := w.PlanIssues(ctx, f, in, warn)
	return look, lookError(err)
}

// lookError is err as a look returns it: a setting refused, no token on
// this worker or a token the forge refuses is not tried again (the watch
// says why in its details and looks again after its wait: the same
// answer a moment later helps nobody, while a worker with a good token may
// take the next look); any other error is the tracker's, tried again.
func lookError(err error) error {
	if err != nil && (exit.IsUsage(err) || errors.Is(err, forge.ErrUnauthorized)) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrWatchPlan, nil)
	}
	return err
}

// lookOptions are the options of a look: it waits for a worker as long as
// it takes (no worker up is no reason to end the watch), and a tracker that
// does not answer is asked again, the wait growing up to MaxIssueWait,
// for as long as the watch runs.
func (in WatchInput) lookOptions(ctx workflow.Context) workflow.Context {
	ao := TaskInput{HeartbeatMs: in.HeartbeatMs}.options(in.Queue, 30*time.Minute)
	ao.ScheduleToStartTimeout = 0
	ao.WaitForCancellation = true
	ao.RetryPolicy = &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: local.MaxIssueWait,
		NonRetryableErrorTypes: []string{ErrWatchPlan}}
	return workflow.WithActivityOptions(ctx, ao)
}

// IssueWatchWorkflow watches a forge's issues until it is cancelled
// (jlgcli stop), as `batch --issues --watch` does here: it reads the
// tracker (IssueWatchLook, on a worker), runs the batch of the issues it
// took as a child BatchWorkflow (<run>-b<n>) and waits for it to end, then
// waits its poll before it looks again, the wait doubling while nothing
// new matches (local.NextIssueWait) on a durable timer. It continues as new
// every LooksPerRun looks. Its queries answer its state (QueryWatch) and,
// as a batch's does, a summary (QueryBatch): the tasks of its batches so
// far; its result is that summary once stopped (interrupted).
func IssueWatchWorkflow(ctx workflow.Context, in WatchInput) (batch.Summary, error) {
	st := in.Carry
	if st == nil {
		st = &WatchState{StartedAt: workflow.Now(ctx)}
	}
	w := &watchFlow{ctx: ctx, in: in, st: st}
	if err := workflow.SetQueryHandler(ctx, QueryWatch, func() (WatchState, error) { return *st, nil }); err != nil {
		return batch.Summary{}, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryBatch, func() (batch.Summary, error) {
		return w.summary(BatchRunning, -1, w.details()), nil
	}); err != nil {
		return batch.Summary{}, err
	}
	return w.run()
}

// watchFlow is one run of a watch's workflow.
type watchFlow struct {
	ctx workflow.Context
	in  WatchInput
	st  *WatchState
}

func (w *watchFlow) run() (batch.Summary, error) {
	ctx, in, st := w.ctx, w.in, w.st
	poll := in.Source.PollMs.Duration()
	for looks := 0; ; {
		if st.Current != nil {
			if !w.batch() {
				return w.stopped(), nil
			}
			st.Wait = millis.Of(local.NextIssueWait(0, poll, true))
			if err := w.sleep(st.Wait.Duration()); err != nil {
				return w.stopped(), nil
			}
		}
		if ctx.Err() != nil {
			return w.stopped(), nil
		}
		if looks >= LooksPerRun || workflow.GetInfo(ctx).GetCurrentHistoryLength() >= MaxHistoryEvents {
			in.Carry = st
			return batch.Summary{}, workflow.NewContinueAsNewError(ctx, IssueWatchWorkflowName, in)
		}
		var look WatchLook
		err := workflow.ExecuteActivity(in.lookOptions(ctx), IssueWatchLookName, WatchLookInput{Repo: in.Repo, Base: in.Base,
			Query: in.Query, Source: in.Source, Config: in.Config}).Get(ctx, &look)
		looks++
		st.Looks++
		switch {
		case ctx.Err() != nil:
			return w.stopped(), nil
		case err != nil:
			st.Last = "the last look failed: " + message(err)
		default:
			st.Last = ""
			if len(look.Left) > 0 {
				st.Last = "left out: " + joinLeft(look.Left)
			}
		}
		if err == nil && look.Spec != nil && len(look.Spec.Tasks) > 0 {
			st.Started++
			id := WatchBatchID(in.RunID, st.Started)
			bi := BatchInput{RunID: id, Repo: in.Repo, Spec: *look.Spec, Branch: BatchBranch(id), MergePush: in.MergePush,
				Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs, Windows: in.Windows}
			st.Current, st.Wait = &bi, 0
			continue
		}
		st.Wait = millis.Of(local.NextIssueWait(st.Wait.Duration(), poll, false))
		if err := w.sleep(st.Wait.Duration()); err != nil {
			return w.stopped(), nil
		}
	}
}

// sleep waits d on a durable timer, saying until when; an error once the
// watch is cancelled.
func (w *watchFlow) sleep(d time.Duration) error {
	w.st.Until = workflow.Now(w.ctx).Add(d)
	err := workflow.Sleep(w.ctx, d)
	w.st.Until = time.Time{}
	return err
}

// batch runs the batch under way (st.Current) to its end, as a child
// BatchWorkflow; false when the watch was cancelled meanwhile (the batch
// then ended interrupted, and stays under way for a resume).
func (w *watchFlow) batch() bool {
	ctx, st := w.ctx, w.st
	cur := *st.Current
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: cur.RunID, TaskQueue: w.in.Queue, WaitForCancellation: true})
	var sum batch.Summary
	err := workflow.ExecuteChildWorkflow(cctx, BatchWorkflowName, cur).Get(ctx, &sum)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		sum = batch.Summary{RunID: cur.RunID, Status: string(batch.BatchIncomplete), ExitCode: exit.Incomplete, Details: message(err),
			BaseBranch: cur.Spec.BaseBranch, Jobs: cur.Spec.Jobs, Tasks: []batch.TaskSummary{}}
	}
	st.Current = nil
	st.Ended = append(st.Ended, sum)
	if n := len(st.Ended) - KeptBatches; n > 0 {
		for _, s := range st.Ended[:n] {
			st.DroppedCostUSD += s.CostUSD
		}
		st.Dropped += n
		st.Ended = append([]batch.Summary(nil), st.Ended[n:]...)
	}
	return true
}

// stopped is the watch's result once cancelled: interrupted, its batches'
// tasks as they ended.
func (w *watchFlow) stopped() batch.Summary {
	return w.summary(batch.BatchInterrupted, exit.Interrupted, fmt.Sprintf("the watch of %s was stopped (jlgcli stop) after %d looks and %d batches; jlgcli resume %s goes on",
		w.in.Query, w.st.Looks, w.st.Started, w.in.RunID))
}

// details says where a running watch stands.
func (w *watchFlow) details() string {
	st := w.st
	s := fmt.Sprintf("watching %s: %d looks, %d batches", w.in.Query, st.Looks, st.Started)
	switch {
	case st.Current != nil:
		s += "; batch " + st.Current.RunID + " under way"
	case !st.Until.IsZero():
		s += "; next look at " + st.Until.UTC().Format(time.RFC3339)
	}
	if st.Last != "" {
		s += "; " + st.Last
	}
	return s
}

// summary is the watch as a batch's summary: the tasks of the batches it
// kept, then those of the batch under way (pending until it ends: their
// own runs say more).
func (w *watchFlow) summary(status batch.BatchStatus, code int, details string) batch.Summary {
	st := w.st
	sum := batch.Summary{RunID: w.in.RunID, Status: string(status), ExitCode: code, Details: details, StartedAt: st.StartedAt,
		DurationMs: millis.Of(workflow.Now(w.ctx).Sub(st.StartedAt)), CostUSD: st.DroppedCostUSD, CostKnown: true, BaseBranch: w.in.Base,
		Tasks: []batch.TaskSummary{}}
	for _, b := range st.Ended {
		sum.CostUSD += b.CostUSD
		sum.CostKnown = sum.CostKnown && (b.CostKnown || b.CostUSD == 0)
		sum.Jobs = max(sum.Jobs, b.Jobs)
		sum.Tasks = append(sum.Tasks, b.Tasks...)
	}
	if cur := st.Current; cur != nil {
		sum.Jobs = max(sum.Jobs, cur.Spec.Jobs)
		for _, t := range cur.Spec.Tasks {
			id := cur.RunID + "-" + t.ID
			sum.Tasks = append(sum.Tasks, batch.TaskSummary{ID: t.ID, File: t.File, Title: t.Title, Status: string(batch.StatusRunning),
				ExitCode: -1, RunID: &id, DependsOn: t.Depends, Branch: git.BranchName(id, t.Prompt)})
		}
	}
	return sum
}

// joinLeft is the issues a look left out, on one line.
func joinLeft(left []string) string { return strings.Join(left, "; ") }

// ResumedWatch is the state a watch goes on from after it stopped at st:
// the batch it stopped under way, when it did not end done, is resumed
// first as a batch's resume goes on (resume, from ResumeBatchOf); one
// that ended done meanwhile is counted as ended.
func ResumedWatch(st WatchState, current *batch.Summary, resume *BatchResume) *WatchState {
	st.Ended = append([]batch.Summary(nil), st.Ended...)
	st.Until = time.Time{}
	if st.Current != nil {
		cur := *st.Current
		switch {
		case current != nil && current.Status == string(batch.BatchDone):
			st.Ended, st.Current = append(st.Ended, *current), nil
		case resume != nil:
			cur.Resume = resume
			st.Current = &cur
		}
	}
	return &st
}

// SubmitWatch starts the workflow of a watch; its workflow id is the run
// id.
func SubmitWatch(ctx context.Context, c client.Client, in WatchInput) error {
	return start(ctx, c, "watch", in.RunID, in.Queue, IssueWatchWorkflowName, in)
}

// QueryWatchSummary asks watch id where it stands, as QueryBatchSummary
// asks a batch: the tasks of its batches so far, those of its batch under
// way as that batch tells them (the watch itself only knows them started).
func QueryWatchSummary(ctx context.Context, c client.Client, id string) (batch.Summary, error) {
	s, err := QueryBatchSummary(ctx, c, id)
	if err != nil {
		return s, err
	}
	st, err := QueryWatchState(ctx, c, id)
	if err != nil || st.Current == nil {
		return s, nil
	}
	cur, err := QueryBatchSummary(ctx, c, st.Current.RunID)
	if err != nil {
		return s, nil // not started yet, or its worker away: as the watch knows it
	}
	return withCurrent(s, st.Current.RunID, cur), nil
}

// withCurrent is the watch's summary s with the tasks of its batch under
// way, batchID, as that batch's summary cur tells them, and its cost.
func withCurrent(s batch.Summary, batchID string, cur batch.Summary) batch.Summary {
	byID := map[string]batch.TaskSummary{}
	for _, t := range cur.Tasks {
		byID[t.ID] = t
	}
	tasks := make([]batch.TaskSummary, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		if t.RunID != nil && strings.HasPrefix(*t.RunID, batchID+"-") {
			if c, ok := byID[t.ID]; ok {
				t = c
			}
		}
		tasks = append(tasks, t)
	}
	s.Tasks = tasks
	s.CostUSD += cur.CostUSD
	s.CostKnown = s.CostKnown && (cur.CostKnown || cur.CostUSD == 0)
	return s
}

// WatchBatchOf is the id of the batch of watch id that the task run task
// belongs to (WatchBatchID: "<watch>-b<n>-…"); false for a task of none.
func WatchBatchOf(id, task string) (string, bool) {
	rest, ok := strings.CutPrefix(task, id+"-b")
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != '-' {
		return "", false
	}
	return id + "-b" + rest[:n], true
}

// StartedBatchInput is the input batch workflow id was started with, read
// from the first event of its history: a watch's batch that has ended (its
// state no longer holds it) as well as one under way, no worker needed.
func StartedBatchInput(ctx context.Context, c client.Client, id string) (BatchInput, error) {
	var in BatchInput
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return in, fmt.Errorf("batch %s: no history", id)
	}
	ev, err := it.Next()
	if err != nil {
		return in, err
	}
	a := ev.GetWorkflowExecutionStartedEventAttributes()
	if a == nil {
		return in, fmt.Errorf("batch %s: its history does not start with its start", id)
	}
	return in, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in)
}

// QueryWatchState asks a watch where it stands (an ended one too, while
// a worker can replay it).
func QueryWatchState(ctx context.Context, c client.Client, runID string) (WatchState, error) {
	var st WatchState
	v, err := c.QueryWorkflow(ctx, runID, "", QueryWatch)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}
