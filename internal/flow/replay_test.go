package flow

import (
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/engine"
)

// history is a task's workflow history recorded from a real Temporal server
// by the end-to-end tests (e2e/temporal: go test -run TestTaskRunsOnWorkers
// -update): a task done at its first attempt on a worker.
const history = "testdata/task-history.json"

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
	changed := func(ctx workflow.Context, in TaskInput) (engine.TaskResult, error) {
		ctx = workflow.WithActivityOptions(ctx, in.options(in.Queue, time.Hour))
		var out engine.AttemptOutcome
		err := workflow.ExecuteActivity(ctx, AttemptName, AttemptInput{RunID: in.RunID}).Get(ctx, &out)
		return engine.TaskResult{}, err
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: TaskWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, history); err == nil {
		t.Fatal("a workflow that schedules other activities replayed the history")
	}
}
