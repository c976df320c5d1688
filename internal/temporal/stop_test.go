package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// TestCancelledTaskEndsInterrupted: a task's workflow cancelled during its
// second attempt cancels the attempt's activity and ends interrupted (exit
// 130) with its first attempt kept: a result, not an error, that a resume
// goes on from. (The test environment does not cancel an activity's
// context: e2e/temporal's TestStopATaskOnWorkers sees the agent stopped.)
func TestCancelledTaskEndsInterrupted(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		if in.Next.Number == 1 {
			a := taskengine.Attempt{Number: 1, Step: in.Next.Step, Tier: "t", Backend: "fake", Start: "s1", Result: "r1",
				Gate: gateOf(false, 1), Change: taskengine.Change{Hash: "1"}}
			return taskengine.AttemptOutcome{Attempt: a}, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		return taskengine.AttemptOutcome{}, ctx.Err()
	})
	var cancelled []string
	env.SetOnActivityCanceledListener(func(info *activity.Info) { cancelled = append(cancelled, info.ActivityID) })
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "t", Backend: "fake", Attempts: 3}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "run-1", Task: "the task", Repo: "file:///remote", BaseBranch: "main",
		Branch: "jlgcli/the-task-run1", Spec: spec, Queue: "q"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("the cancelled workflow ended with an error: %v", err)
	}
	if res.Status != engine.StatusInterrupted || res.ExitCode != exit.Interrupted || !strings.Contains(res.Details, "interrupted during attempt 2") {
		t.Errorf("result %s (exit %d): %s; want interrupted during attempt 2", res.Status, res.ExitCode, res.Details)
	}
	if len(res.Attempts) != 1 {
		t.Errorf("%d attempts kept, want the first one", len(res.Attempts))
	}
	if len(cancelled) != 1 || cancelled[0] != "attempt-2" {
		t.Errorf("activities cancelled: %v, want attempt-2", cancelled)
	}
	v, err := env.QueryWorkflow(QueryProgress)
	if err != nil {
		t.Fatal(err)
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Stop == nil || p.Stop.Status != engine.StatusInterrupted || p.Base != "base" || len(p.History.Attempts) != 1 {
		t.Errorf("progress after the stop: %+v", p)
	}
}

// TestCancelledBatchEndsInterrupted: a batch's workflow cancelled while a
// task runs cancels that task, waits for it to end interrupted, starts no
// other task (its dependent, nor an independent one left by the jobs), and
// ends interrupted (exit 130) with the task done before kept.
func TestCancelledBatchEndsInterrupted(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	acts := &Activities{}
	env.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	env.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	for name, f := range map[string]any{PrepareBatchName: acts.PrepareBatch, LandName: acts.Land, PrepareName: acts.Prepare,
		AttemptName: acts.Attempt, FinishName: acts.Finish} {
		env.RegisterActivityWithOptions(f, activity.RegisterOptions{Name: name})
	}
	env.OnActivity(PrepareBatchName, mockAny, mockAny).Return("base", nil)
	env.OnActivity(LandName, mockAny, mockAny).Return(func(_ context.Context, in LandInput) (local.Landing, error) {
		return local.Landing{Status: local.LandMerged, Commit: "landed-" + in.RunID}, nil
	})
	env.OnActivity(PrepareName, mockAny, mockAny).Return(Prepared{Base: "base"}, nil)
	env.OnActivity(FinishName, mockAny, mockAny).Return(Finished{Merge: &taskengine.MergeInfo{Status: "skipped", Commit: "squash"}}, nil)
	env.OnActivity(AttemptName, mockAny, mockAny).Return(func(ctx context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		if in.RunID == "b1-c" {
			a := taskengine.Attempt{Number: 1, Tier: "x", Backend: "x", Start: "s1", Result: "r1", Commit: "c1", Gate: gateOf(true, 1)}
			return taskengine.AttemptOutcome{Attempt: a}, nil
		}
		select { // the test environment does not cancel an activity's context
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		return taskengine.AttemptOutcome{}, errors.New("not cancelled")
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	spec := local.BatchSpec{BaseBranch: "main", Jobs: 1, Tasks: []local.BatchTask{
		{ID: "c", Prompt: "task c"}, {ID: "e", Prompt: "task e"}, {ID: "b", Prompt: "task b", Depends: []string{"e"}},
		{ID: "f", Prompt: "task f"}}}
	withTier(&spec)
	env.ExecuteWorkflow(BatchWorkflowName, BatchInput{RunID: "b1", Repo: "file:///r", Spec: spec, Branch: BatchBranch("b1"), Queue: "q"})
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatalf("the cancelled batch ended with an error: %v", err)
	}
	status := statuses(sum)
	if diff := cmp.Diff(map[string]string{"b": "pending", "c": "done", "e": "interrupted", "f": "pending"}, status); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if sum.Status != string(batch.BatchInterrupted) || sum.ExitCode != exit.Interrupted {
		t.Errorf("batch %s (exit %d), want interrupted (130)", sum.Status, sum.ExitCode)
	}
}
