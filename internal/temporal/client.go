package temporal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Submit starts the workflow of a task; its workflow id is the run id.
func Submit(ctx context.Context, c client.Client, in TaskInput) error {
	return start(ctx, c, "task", in.RunID, in.Queue, TaskWorkflowName, in)
}

// start starts workflow name of run id on queue (DefaultQueue when "").
func start(ctx context.Context, c client.Client, what, id, queue, name string, in any) error {
	if queue == "" {
		queue = DefaultQueue
	}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, name, in); err != nil {
		return fmt.Errorf("submit %s %s: %w", what, id, err)
	}
	return nil
}

// await waits for run runID (a task or batch: what) to end and decodes its
// result into out, calling tick (when not nil) every period meanwhile.
func await(ctx context.Context, c client.Client, what, runID string, out any, every time.Duration, tick func()) error {
	if every <= 0 {
		every = time.Second
	}
	done := make(chan error, 1)
	go func() { done <- c.GetWorkflow(ctx, runID, "").Get(ctx, out) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("%s %s: %w", what, runID, err)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if tick != nil {
				tick()
			}
		}
	}
}

// Waiter is a taskengine.Observer that is told of a task's waits for a rate limit
// to reset, as the worker making its attempt heartbeats them (Beat).
type Waiter interface {
	Waiting(until time.Time, message string)
}

// OutputObserver is a taskengine.Observer that is given the agent's output of an
// attempt under way on its worker, as its heartbeats carry it (Beat): the
// bytes of attempt n after those given before, in order; a gap (more
// written between two beats than one carries) is given as a line that
// says how much is left out.
type OutputObserver interface {
	AttemptOutput(n int, p []byte)
}

// SandboxObserver is a taskengine.Observer told how the worker of the task's
// last attempt confined its agent and checks, once an attempt said it, and
// again when another said otherwise.
type SandboxObserver interface {
	Confined(r sandbox.Record)
}

// Follow follows the task runID, whose tiers are tiers, until it ends,
// telling obs (may be nil) of each attempt as it starts and ends, of each
// wait when it is a Waiter, of the agent's retry and error lines on its
// worker when it is an engine.AgentObserver and of its output when it is
// an OutputObserver, and returns its result.
func Follow(ctx context.Context, c client.Client, runID string, tiers []taskengine.Tier, obs taskengine.Observer, every time.Duration) (taskengine.Result, error) {
	var res taskengine.Result
	if obs == nil {
		return res, await(ctx, c, "task", runID, &res, every, nil)
	}
	waiter, _ := obs.(Waiter)
	liner, _ := obs.(engine.AgentObserver)
	outs, _ := obs.(OutputObserver)
	boxed, _ := obs.(SandboxObserver)
	var confined *sandbox.Record
	sandboxOf := func(p Progress) {
		if boxed != nil && p.Sandbox != nil && (confined == nil || *confined != *p.Sandbox) {
			confined = p.Sandbox
			boxed.Confined(*p.Sandbox)
		}
	}
	var waited time.Time
	// What was shown of each attempt's beats: the output's end, the lines.
	shownOut, shownLines := map[int]int64{}, map[int]int{}
	showBeat := func(b *Beat) {
		if outs != nil && b.OutputEnd < shownOut[b.Attempt] { // made again, by another worker
			outs.AttemptOutput(b.Attempt, []byte("\n[jlgcli: the attempt is made again, on another worker]\n"))
			shownOut[b.Attempt], shownLines[b.Attempt] = 0, 0
		}
		if outs != nil && b.OutputEnd > shownOut[b.Attempt] {
			from := b.OutputEnd - int64(len(b.Output)) // where b.Output starts
			if gap := from - shownOut[b.Attempt]; gap > 0 {
				outs.AttemptOutput(b.Attempt, fmt.Appendf(nil, "\n[jlgcli: %d bytes of the worker's output left out]\n", gap))
				shownOut[b.Attempt] = from
			}
			outs.AttemptOutput(b.Attempt, b.Output[shownOut[b.Attempt]-from:])
			shownOut[b.Attempt] = b.OutputEnd
		}
		if liner != nil && b.LineCount > shownLines[b.Attempt] {
			n := min(b.LineCount-shownLines[b.Attempt], len(b.Lines))
			for _, l := range b.Lines[len(b.Lines)-n:] {
				liner.AgentLine(l)
			}
			shownLines[b.Attempt] = b.LineCount
		}
	}
	seen, started := 0, 0
	done := func(attempts []taskengine.Attempt) {
		for _, a := range attempts[min(seen, len(attempts)):] {
			obs.AttemptDone(progressOf(tiers, a), a)
			seen = a.Number
		}
	}
	err := await(ctx, c, "task", runID, &res, every, func() {
		p, err := Query(ctx, c, runID)
		if err != nil {
			return // between two runs of a workflow that continues as new
		}
		done(p.History.Attempts)
		sandboxOf(p)
		if p.Running != nil && p.Running.Number > started {
			started = p.Running.Number
			pr := taskengine.Progress{Step: max(1, p.Running.Step), Steps: max(1, len(p.History.Plan)),
				TierIndex: p.Running.TierIndex, InTier: p.Running.InTier, Number: p.Running.Number,
				CostUSD: p.History.State.Ledger.Spent(), Estimated: p.History.State.Ledger.Estimated(), CostKnown: costKnown(p.History)}
			if i := p.Running.TierIndex; i < len(tiers) {
				pr.Tier, pr.Tiers, pr.Attempts = tiers[i].Name, len(tiers), tiers[i].Attempts
			}
			obs.AttemptStarted(pr)
		}
		if waiter != nil && p.Wait != nil && p.Wait.Until.After(waited) { // a window's reset, in the workflow
			waited = p.Wait.Until
			waiter.Waiting(p.Wait.Until, p.Wait.Message)
		}
		if p.Running != nil && (waiter != nil || liner != nil || outs != nil) {
			b := attemptBeat(ctx, c, runID)
			if b == nil {
				return
			}
			if w := b.Wait; waiter != nil && w != nil && w.Until.After(waited) {
				waited = w.Until
				waiter.Waiting(w.Until, w.Message)
			}
			showBeat(b)
		}
	})
	if err == nil {
		done(res.Attempts)
		if boxed != nil {
			if p, qerr := Query(ctx, c, runID); qerr == nil { // an attempt that ended between two looks
				sandboxOf(p)
			}
		}
	}
	return res, err
}

// attemptBeat is the latest heartbeat of the attempt under way of task
// runID; nil before its first.
func attemptBeat(ctx context.Context, c client.Client, runID string) *Beat {
	d, err := c.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		return nil
	}
	for _, a := range d.GetPendingActivities() {
		if a.GetActivityType().GetName() != AttemptName || a.GetHeartbeatDetails() == nil {
			continue
		}
		var b Beat
		if converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &b) == nil {
			return &b
		}
	}
	return nil
}

// Query asks a running task where it stands.
func Query(ctx context.Context, c client.Client, runID string) (Progress, error) {
	var p Progress
	v, err := c.QueryWorkflow(ctx, runID, "", QueryProgress)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}

func progressOf(tiers []taskengine.Tier, a taskengine.Attempt) taskengine.Progress {
	p := taskengine.Progress{Step: max(1, a.Step), Steps: 1, Tier: a.Tier, TierIndex: a.TierIndex, InTier: a.InTier,
		Number: a.Number, CostUSD: a.CostUSD, Estimated: a.CostEstimated, CostKnown: a.CostKnown, LastGate: a.Gate.Status}
	if a.TierIndex < len(tiers) {
		p.Tiers, p.Attempts = len(tiers), tiers[a.TierIndex].Attempts
	}
	return p
}

func costKnown(h taskengine.History) bool {
	for _, a := range h.Attempts {
		if a.CostKnown {
			return true
		}
	}
	return false
}

// BatchBranch is the branch of batch runID on the remote.
func BatchBranch(runID string) string { return "jlgcli/batch-" + runID }

// SubmitBatch starts the workflow of a batch; its workflow id is the run
// id.
func SubmitBatch(ctx context.Context, c client.Client, in BatchInput) error {
	return start(ctx, c, "batch", in.RunID, in.Queue, BatchWorkflowName, in)
}

// FollowBatch follows batch runID until it ends, telling changed (may be
// nil) of each task whose status changes, and returns its result.
func FollowBatch(ctx context.Context, c client.Client, runID string, changed func(batch.TaskSummary), every time.Duration) (batch.Summary, error) {
	return followSummary(ctx, c, runID, changed, every, QueryBatchSummary)
}

// FollowWatch is FollowBatch of an issue watch (IssueWatchWorkflow): its
// tasks as QueryWatchSummary tells them.
func FollowWatch(ctx context.Context, c client.Client, runID string, changed func(batch.TaskSummary), every time.Duration) (batch.Summary, error) {
	return followSummary(ctx, c, runID, changed, every, QueryWatchSummary)
}

// followSummary follows batch runID, its summary read by query.
func followSummary(ctx context.Context, c client.Client, runID string, changed func(batch.TaskSummary), every time.Duration,
	query func(context.Context, client.Client, string) (batch.Summary, error)) (batch.Summary, error) {
	var sum batch.Summary
	if changed == nil {
		return sum, await(ctx, c, "batch", runID, &sum, every, nil)
	}
	seen := map[string]string{}
	tell := func(s batch.Summary) {
		for _, t := range s.Tasks {
			if seen[t.ID] != t.Status {
				seen[t.ID] = t.Status
				changed(t)
			}
		}
	}
	err := await(ctx, c, "batch", runID, &sum, every, func() {
		if s, err := query(ctx, c, runID); err == nil {
			tell(s)
		}
	})
	if err == nil {
		tell(sum)
	}
	return sum, err
}

// QueryBatchSummary asks a batch where it stands: its result so far,
// status running.
func QueryBatchSummary(ctx context.Context, c client.Client, runID string) (batch.Summary, error) {
	var s batch.Summary
	v, err := c.QueryWorkflow(ctx, runID, "", QueryBatch)
	if err != nil {
		return s, err
	}
	return s, v.Get(&s)
}

// Outcome decodes the result of run runID into v once it ended; false
// while it runs.
func Outcome(ctx context.Context, c client.Client, runID string, v any) (closed bool, err error) {
	d, err := c.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		return false, err
	}
	if d.GetWorkflowExecutionInfo().GetCloseTime() == nil {
		return false, nil
	}
	return true, c.GetWorkflow(ctx, runID, "").Get(ctx, v)
}

// ResumeBatchOf is where the ended batch whose summary is sum goes on from,
// by the rules of a local batch's resume (local.ResumeState): for each task
// to resume, the server is asked for the run id of its task's workflow.
// For a batch whose tasks land through pull requests (prs), it is asked
// where each unfinished task's pull-request workflow stood instead
// (resumePRs).
func ResumeBatchOf(ctx context.Context, c client.Client, sum batch.Summary, prs bool) (*BatchResume, error) {
	tasks := map[string]batch.TaskResult{}
	kept := map[string]batch.TaskSummary{}
	for _, t := range sum.Tasks {
		tr := batch.TaskResult{ID: t.ID, Status: batch.Status(t.Status), ExitCode: t.ExitCode, Details: t.Details,
			CostUSD: t.CostUSD, CostKnown: t.CostKnown, DurationMs: t.DurationMs}
		if t.RunID != nil {
			tr.RunID = *t.RunID
		}
		if t.StartedAt != nil {
			tr.StartedAt = *t.StartedAt
		}
		if tr.Status == batch.StatusUnmerged {
			// Left unlanded by a batch stopped (jlgcli stop) before its turn:
			// it runs again as the batch's task (<batch>-<task>), whose
			// attempts recorded on the remote are read back, not made again.
			continue
		}
		if tr.Status == batch.StatusDone {
			tr.Merge = &batch.MergeOutcome{Status: batch.MergeMerged}
			if t.Commit != nil {
				tr.Merge.Commit = *t.Commit
			}
			kept[t.ID] = t
		}
		tasks[t.ID] = tr
	}
	r := &BatchResume{Tasks: local.ResumeState(tasks), Runs: map[string]string{}, Summaries: kept, Anew: map[string]string{}}
	if prs {
		if err := resumePRs(ctx, c, sum, tasks, r); err != nil {
			return nil, err
		}
	}
	taken := map[string]bool{}
	for _, t := range sum.Tasks {
		taken[sum.RunID+"-"+t.ID] = true
		if t.RunID != nil {
			taken[*t.RunID] = true
		}
	}
	for id, t := range tasks {
		if _, kept := r.Tasks[id]; !kept && t.RunID != "" {
			next := nextRun(t.RunID)
			for taken[next] { // another task's own run id
				next = nextRun(next)
			}
			taken[next], r.Anew[id] = true, next
		}
	}
	for id, t := range r.Tasks {
		if _, ok := r.PRs[id]; ok || t.Status != batch.StatusInterrupted {
			continue
		}
		d, err := c.DescribeWorkflowExecution(ctx, t.RunID, "")
		if err != nil {
			return nil, fmt.Errorf("task %s (run %s): %w", id, t.RunID, err)
		}
		r.Runs[id] = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	return r, nil
}

// resumePRs fills r for a batch of pull requests whose summary is sum and
// whose tasks stood at tasks: each task not done whose pull-request
// workflow (<batch>-<task>) ran goes on from where that workflow stood
// (r.PRs) when a resume of that pull request would go on
// (PRResult.Resumable: stopped, cut short, in error); else what it ended with is
// told again, as a local batch's resume tells a pull request that gave up
// or spent its budget, and blocks the tasks that depend on it.
func resumePRs(ctx context.Context, c client.Client, sum batch.Summary, tasks map[string]batch.TaskResult, r *BatchResume) error {
	r.PRs = map[string]PRState{}
	for _, t := range sum.Tasks {
		tr, ok := tasks[t.ID]
		if !ok || tr.Status == batch.StatusDone {
			continue
		}
		id := sum.RunID + "-" + t.ID
		st, err := QueryPRState(ctx, c, id)
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			continue // never started: the task starts anew
		case err != nil:
			return fmt.Errorf("task %s: where its pull request's run %s stood: %w", t.ID, id, err)
		}
		if st.Result.Resumable() {
			r.PRs[t.ID] = st
			tr.Status, tr.RunID = batch.StatusInterrupted, cmp.Or(tr.RunID, id)
			r.Tasks[t.ID] = tr
			continue
		}
		o := local.PROutcome(st.Result, st.Result.From, 0, false)
		tr.Status, tr.ExitCode, tr.Details, tr.RunID = o.Status, o.ExitCode, o.Details, cmp.Or(o.RunID, tr.RunID)
		r.Tasks[t.ID] = tr
		r.Summaries[t.ID] = t
	}
	return nil
}

// nextRun is the run id of the next run of a batch's task whose last run
// was id: id-r2, then id-r3...
func nextRun(id string) string {
	if i := strings.LastIndex(id, "-r"); i > 0 {
		if n, err := strconv.Atoi(id[i+2:]); err == nil && n > 1 {
			return fmt.Sprintf("%s-r%d", id[:i], n+1)
		}
	}
	return id + "-r2"
}

// SubmitPR starts the workflow of a pull request; its workflow id is the
// run id.
func SubmitPR(ctx context.Context, c client.Client, in PRInput) error {
	return start(ctx, c, "pull request", in.RunID, in.Queue, PullRequestWorkflowName, in)
}

// QueryPRState asks a pull request's workflow where it stands (also one
// that ended: the server replays its history on a worker).
func QueryPRState(ctx context.Context, c client.Client, runID string) (PRState, error) {
	var st PRState
	v, err := c.QueryWorkflow(ctx, runID, "", QueryPR)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

// FollowPR follows the pull request's run runID until it ends, telling
// changed (may be nil) where it stands each time that changes, and returns
// its result.
func FollowPR(ctx context.Context, c client.Client, runID string, changed func(PRState), every time.Duration) (local.PRResult, error) {
	var res local.PRResult
	if changed == nil {
		return res, await(ctx, c, "pull request", runID, &res, every, nil)
	}
	var last []byte
	return res, await(ctx, c, "pull request", runID, &res, every, func() {
		st, err := QueryPRState(ctx, c, runID)
		if err != nil {
			return // between two runs of a workflow that continues as new
		}
		st.Result.DurationMs = 0 // not a change
		b, _ := json.Marshal(st)
		if !bytes.Equal(b, last) {
			last = b
			changed(st)
		}
	})
}
