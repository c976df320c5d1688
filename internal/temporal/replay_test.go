package temporal

import (
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// history is a task's workflow history recorded from a real Temporal server
// by the end-to-end tests (e2e/temporal: go test -run TestTaskRunsOnWorkers
// -update): a task done at its first attempt on a worker.
const history = "testdata/task-history.json"

// batchHistory is a batch's workflow history recorded from a real Temporal
// server by the end-to-end tests (cd e2e/temporal && go test -count=1 -run
// 'TestBatchConflictRunsAgain$' -update .): two sheets p and q run at once;
// p lands; q's landing is refused (a conflict with p's change), so q runs
// once more from the batch's branch as p left it (the child q-again) and
// that run lands. It holds every command the batch workflow gives: the
// prepare-batch activity, child task workflows, land activities.
//
// Record it again only for a new path of the workflow, behind
// workflow.GetVersion, and keep this one: the workflow must replay both
// (see CONTRIBUTING.md, "Changing a workflow").
const batchHistory = "testdata/batch-history.json"

// TestReplayRecordedHistory: the workflow, as it is now, replays the
// recorded history. A change that makes it decide or schedule differently
// for the same history (non-determinism) fails here before it breaks the
// tasks running on a server.
func TestReplayRecordedHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, history); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCatchesAChangedWorkflow: the replay test can fail: a workflow
// that skips the preparation does not replay the recorded history.
func TestReplayCatchesAChangedWorkflow(t *testing.T) {
	changed := func(ctx workflow.Context, in TaskInput) (taskengine.Result, error) {
		ctx = workflow.WithActivityOptions(ctx, in.options(in.Queue, time.Hour))
		var out taskengine.AttemptOutcome
		err := workflow.ExecuteActivity(ctx, AttemptName, AttemptInput{RunID: in.RunID}).Get(ctx, &out)
		return taskengine.Result{}, err
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: TaskWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, history); err == nil {
		t.Fatal("a workflow that schedules other activities replayed the history")
	}
}

// TestReplayRecordedBatchHistory: the batch workflow, as it is now, replays
// the recorded history of a batch whose landing was refused once.
func TestReplayRecordedBatchHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, batchHistory); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCatchesAChangedBatchWorkflow: the batch's replay test can fail:
// a batch workflow that starts its tasks without preparing the batch's
// branch does not replay the recorded history.
func TestReplayCatchesAChangedBatchWorkflow(t *testing.T) {
	changed := func(ctx workflow.Context, in BatchInput) (batch.Summary, error) {
		for _, tk := range in.Spec.Tasks {
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: in.RunID + "-" + tk.ID, TaskQueue: in.Queue})
			if err := workflow.ExecuteChildWorkflow(cctx, TaskWorkflowName, TaskInput{RunID: in.RunID + "-" + tk.ID}).Get(ctx, nil); err != nil {
				return batch.Summary{}, err
			}
		}
		return batch.Summary{}, nil
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: BatchWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, batchHistory); err == nil {
		t.Fatal("a batch workflow that schedules other commands replayed the history")
	}
}

// Histories of the path of ChangeTaskStop and ChangeBatchStop, recorded by
// cd e2e/temporal && go test -count=1 -run 'TestStopATaskOnWorkers$|TestStopABatchOnWorkers$' -update .
// stopHistory: a task whose workflow was cancelled (jlgcli stop) during its
// first attempt; batchStopHistory: a batch cancelled while its first task
// ran, that task's workflow cancelled with it.
const (
	stopHistory      = "testdata/task-stop-history.json"
	batchStopHistory = "testdata/batch-stop-history.json"
)

// TestReplayStopHistories: the workflows, as they are now, replay the
// histories of a stopped task and a stopped batch.
func TestReplayStopHistories(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	r.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	for _, h := range []string{stopHistory, batchStopHistory} {
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}

// windowsHistory is a task's history of the path of ChangeTaskWindows (and
// ChangeTaskRoom), recorded by cd e2e/temporal && go test -count=1 -run
// 'TestWindowLimitOnWorkers$' -update .: its first attempt's agent reported
// the 5-hour window at 92% over --window-limit 80, the workflow waited on a
// timer for the reset, and the second attempt passed.
const windowsHistory = "testdata/task-windows-history.json"

// TestReplayWindowsHistory: the task workflow, as it is now, replays the
// history of a task that waited for a subscription window in the workflow.
func TestReplayWindowsHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, windowsHistory); err != nil {
		t.Fatal(err)
	}
}

// prHistory is a pull request's workflow history recorded from a real
// Temporal server and a real Gitea by cd e2e/temporal && go test -count=1
// -run 'TestPRUntilMergedOnWorkers$' -update .: a check failed at the pull
// request's head, was re-run, then became a round (a child task workflow)
// pushed onto the branch; the worker that ran it all was killed while the
// workflow waited for CI on a timer, and another worker replayed this
// history up to the wait and went on: looks, the wait for an approval, the
// merge.
const prHistory = "testdata/pr-history.json"

// prClockHistory is the pull request's workflow history recorded, as
// prHistory was, by cd e2e/temporal && go test -count=1 -run
// 'TestPRUntilMergedOnWorkers$' -update . once its looks and pushes were
// timed by the workflow's clock (pr/workflow-clock, and pr-judge-tests):
// the path of the pull requests submitted since; prHistory is the one
// before it.
const prClockHistory = "testdata/pr-clock-history.json"

// TestReplayPRHistory: the pull request's workflow, as it is now, replays
// the recorded histories of its paths (the first as the worker that took
// over after the kill did).
func TestReplayPRHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(PullRequestWorkflow, workflow.RegisterOptions{Name: PullRequestWorkflowName})
	for _, h := range []string{prHistory, prClockHistory} {
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}

// TestReplayCatchesAChangedPRWorkflow: the replay can fail: a workflow that
// waits with an activity instead of a timer does not replay the history.
func TestReplayCatchesAChangedPRWorkflow(t *testing.T) {
	changed := func(ctx workflow.Context, in PRInput) (local.PRResult, error) {
		ctx = in.forgeOptions(ctx)
		for {
			var o pull.Observation
			if err := workflow.ExecuteActivity(ctx, PRLookName, PRForge{Repo: in.Repo, Number: in.Number}).Get(ctx, &o); err != nil {
				return local.PRResult{}, err
			}
		}
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: PullRequestWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, prHistory); err == nil {
		t.Fatal("a pull request's workflow that schedules other commands replayed the history")
	}
}

// watchHistory is an issue watch's workflow history recorded from a real
// Temporal server by the end-to-end tests (cd e2e/temporal && go test
// -count=1 -run 'TestIssueWatchOnWorkers$' -update .): a look that takes
// an issue and runs its batch as a child, waits on timers (its worker
// killed during one), a later look that takes a second issue on another
// worker, then the stop that ends it.
const watchHistory = "testdata/watch-history.json"

// TestReplayWatchHistory: the watch's workflow, as it is now, replays the
// recorded history.
func TestReplayWatchHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(IssueWatchWorkflow, workflow.RegisterOptions{Name: IssueWatchWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, watchHistory); err != nil {
		t.Fatal(err)
	}
}
