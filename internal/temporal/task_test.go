package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/taskengine/decisiontest"
)

func specOf(c decisiontest.Case) local.TaskSpec {
	s := local.TaskSpec{BudgetUSD: c.BudgetUSD, EscalateFrom: taskengine.EscalateFrom(c.EscalateFrom)}
	for _, t := range c.Tiers {
		s.Tiers = append(s.Tiers, local.TierSpec{Name: t.Name, Backend: "fake", Attempts: t.Attempts})
	}
	return s
}

func gateOf(pass bool, n int) gate.Report {
	if pass {
		return gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit, Confidence: 1}
	}
	return gate.Report{Status: gate.StatusFail, Recommendation: gate.RecommendFixRequired, Confidence: 1,
		Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "test", ExitCode: 1, Fingerprint: fmt.Sprint(n)}}}}
}

// newEnv is a test environment with the workflow and the activities, whose
// attempts are scripted by attempt.
func newEnv(t *testing.T, attempt func(context.Context, AttemptInput) (taskengine.AttemptOutcome, error)) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &Activities{}
	env.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	env.RegisterActivityWithOptions(acts.Prepare, activity.RegisterOptions{Name: PrepareName})
	env.RegisterActivityWithOptions(acts.Attempt, activity.RegisterOptions{Name: AttemptName})
	env.RegisterActivityWithOptions(acts.Finish, activity.RegisterOptions{Name: FinishName})
	env.RegisterActivityWithOptions(acts.Plan, activity.RegisterOptions{Name: PlanName})
	env.RegisterActivityWithOptions(acts.Previous, activity.RegisterOptions{Name: PreviousName})
	env.RegisterActivityWithOptions(acts.Workers, activity.RegisterOptions{Name: WorkersName})
	env.OnActivity(PrepareName, mockAny, mockAny).Return(Prepared{Base: "base"}, nil)
	env.OnActivity(AttemptName, mockAny, mockAny).Return(attempt)
	env.OnActivity(FinishName, mockAny, mockAny).Return(func(_ context.Context, in FinishInput) (Finished, error) {
		return Finished{Merge: &taskengine.MergeInfo{Status: "skipped", Commit: "squash-of-" + in.Branch}}, nil
	})
	return env
}

var mockAny = mock.Anything

// TestDecisionTableWorkflow runs the task engine's decision table through the
// workflow: the same cases, the same expectations as taskengine.Run.
func TestDecisionTableWorkflow(t *testing.T) {
	cases, err := decisiontest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			calls := 0
			env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
				calls++
				if calls > len(c.Attempts) || in.Next.Number != calls {
					return taskengine.AttemptOutcome{}, fmt.Errorf("attempt %d (call %d); the case scripts %d", in.Next.Number, calls, len(c.Attempts))
				}
				sc := c.Attempts[calls-1]
				a := taskengine.Attempt{Number: calls, Step: in.Next.Step, Tier: c.Tiers[in.Next.TierIndex].Name, TierIndex: in.Next.TierIndex,
					InTier: in.Next.InTier, Backend: "fake", Start: fmt.Sprintf("s%d", calls), Result: fmt.Sprintf("r%d", calls),
					CostUSD: sc.CostUSD, CostKnown: true, Gate: gateOf(sc.Pass, calls), Change: taskengine.Change{Hash: fmt.Sprint(calls)}}
				if sc.Pass {
					a.Commit = fmt.Sprintf("c%d", calls)
				}
				out := taskengine.AttemptOutcome{Attempt: a}
				if sc.Loop != "" {
					out.Detection = &detect.Detection{Rule: sc.Loop, Attempts: []int{calls}, Details: "scripted"}
				}
				return out, nil
			})
			env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "run-1", Task: "the task", Repo: "file:///remote", BaseBranch: "main",
				Branch: "jlgcli/the-task-run1", Spec: specOf(c), Queue: "q"})
			if !env.IsWorkflowCompleted() {
				t.Fatal("the workflow did not complete")
			}
			var res taskengine.Result
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			var actions, tiers []string
			for _, a := range res.Attempts {
				actions, tiers = append(actions, a.Action), append(tiers, a.Tier)
			}
			if diff := cmp.Diff(c.Actions, actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.TiersUsed, tiers); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
			if string(res.Status) != c.Status {
				t.Errorf("status = %s (%s), want %s", res.Status, res.Details, c.Status)
			}
			if c.Status == "done" && (res.Git == nil || res.Git.Merge == nil || res.Git.Merge.Commit == "") {
				t.Errorf("a done task has no squash commit: %+v", res.Git)
			}
		})
	}
}

// TestWorkflowEscalatesFromWhereThePolicySays: the attempt after an
// escalation starts from the step's base, or from the last tree.
func TestWorkflowStartsAttemptsWhereThePolicySays(t *testing.T) {
	for _, from := range []taskengine.EscalateFrom{taskengine.EscalateFromBase, taskengine.EscalateFromLast} {
		var starts []string
		env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
			n := in.Next.Number
			starts = append(starts, in.Next.Start)
			return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: n, Tier: []string{"a", "b"}[in.Next.TierIndex], TierIndex: in.Next.TierIndex,
				InTier: in.Next.InTier, Start: fmt.Sprintf("s%d", n), Result: fmt.Sprintf("r%d", n), Gate: gateOf(n == 2, n)}}, nil
		})
		spec := local.TaskSpec{EscalateFrom: from, Tiers: []local.TierSpec{{Name: "a", Backend: "x", Attempts: 1}, {Name: "b", Backend: "y", Attempts: 1}}}
		env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"})
		want := []string{"", "s1"}
		if from == taskengine.EscalateFromLast {
			want = []string{"", "r1"}
		}
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("%s: starts (-want +got):\n%s", from, diff)
		}
	}
}

// TestWorkflowNoWorkerForBackend: an attempt that no worker takes within
// the wait fails the task as backend-missing, naming the backend.
func TestWorkflowNoWorkerForBackend(t *testing.T) {
	env := newEnv(t, func(context.Context, AttemptInput) (taskengine.AttemptOutcome, error) {
		return taskengine.AttemptOutcome{}, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
	})
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "cheap", Backend: "nosuch", Attempts: 1}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", WorkerWaitMs: 3000, Branch: "jlgcli/t-r"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusBackendMissing || res.ExitCode != engine.StatusBackendMissing.ExitCode() {
		t.Errorf("status = %s (exit %d), want backend-missing", res.Status, res.ExitCode)
	}
	for _, s := range []string{"nosuch", "3s", "q@nosuch", "temporal.workerWait"} {
		if !strings.Contains(res.Details, s) {
			t.Errorf("details %q do not say %q", res.Details, s)
		}
	}
}

// TestWorkflowHandBack: an attempt handed back by a worker with no room
// for it is scheduled again at once, under a new activity id, and counts
// once; the workflow asks every worker to hand back rather than wait.
func TestWorkflowHandBack(t *testing.T) {
	calls := 0
	env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		calls++
		if !in.HandBack {
			return taskengine.AttemptOutcome{}, errors.New("the workflow did not ask for a hand back")
		}
		if calls <= 2 {
			return taskengine.AttemptOutcome{}, temporal.NewNonRetryableApplicationError("attempt 1 handed back", ErrHandedBack, nil)
		}
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: 1, Tier: "t", Start: "s", Result: "r", Commit: "c",
			Gate: gateOf(true, 1)}}, nil
	})
	var ids []string
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		ids = append(ids, info.ActivityID)
	})
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "t", Backend: "fake", Attempts: 3}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 {
		t.Errorf("%s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	var attempts []string
	for _, id := range ids {
		if strings.HasPrefix(id, "attempt-") {
			attempts = append(attempts, id)
		}
	}
	if want := []string{"attempt-1", "attempt-1.2", "attempt-1.3"}; !slices.Equal(attempts, want) {
		t.Errorf("attempt activities %v, want %v", attempts, want)
	}
}

// TestWorkflowWaitsForBusyWorkers: an attempt that waited its worker-wait
// in the queue is scheduled again while a worker that has its backend is
// up (all of them busy), and the task goes on once one takes it; with no
// such worker the task ends backend-missing (TestWorkflowNoWorkerForBackend).
func TestWorkflowWaitsForBusyWorkers(t *testing.T) {
	calls := 0
	env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		calls++
		if calls <= 2 {
			return taskengine.AttemptOutcome{}, temporal.NewTimeoutError(enums.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: 1, Tier: "t", Start: "s", Result: "r", Commit: "c",
			Gate: gateOf(true, 1)}}, nil
	})
	var asked []WorkersInput
	env.OnActivity(WorkersName, mockAny, mockAny).Return(func(_ context.Context, in WorkersInput) (int, error) {
		asked = append(asked, in)
		return 1, nil
	})
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "t", Backend: "fake", Attempts: 3}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 {
		t.Errorf("%s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	if want := []WorkersInput{{Queue: "q", Backend: "fake"}, {Queue: "q", Backend: "fake"}}; !slices.Equal(asked, want) {
		t.Errorf("workers asked for %v, want %v", asked, want)
	}
}

// TestWorkflowContinuesAsNew: after AttemptsPerRun attempts the workflow
// continues as new with the history as its input.
func TestWorkflowContinuesAsNew(t *testing.T) {
	env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		n := in.Next.Number
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: n, Tier: "a", InTier: in.Next.InTier, Start: "s", Result: "r",
			Gate: gateOf(false, n)}}, nil
	})
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "a", Backend: "x", Attempts: AttemptsPerRun + 5}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"})
	err := env.GetWorkflowError()
	if !workflow.IsContinueAsNewError(err) {
		t.Fatalf("error = %v, want continue-as-new", err)
	}
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatal("not a ContinueAsNewError")
	}
	if can.WorkflowType == nil || can.WorkflowType.Name != TaskWorkflowName {
		t.Errorf("continues as %+v, want the workflow type %s that workers register", can.WorkflowType, TaskWorkflowName)
	}
	var in TaskInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	if in.Carry == nil || len(in.Carry.History.Attempts) != AttemptsPerRun || in.Carry.History.State.Attempts != AttemptsPerRun {
		t.Fatalf("carried history: %+v", in.Carry)
	}
}

// TestBatchWorkflowFollowsTheDAGRules: the batch workflow starts a child
// task per sheet as the scheduler's rules say: a failed task blocks its
// dependents, independent ones go on, each done one is landed.
func TestBatchWorkflowFollowsTheDAGRules(t *testing.T) {
	env := newBatchEnv()
	var landed []string
	env.OnActivity(LandName, mockAny, mockAny).Return(func(_ context.Context, in LandInput) (local.Landing, error) {
		landed = append(landed, in.Ready)
		return local.Landing{Status: local.LandMerged, Commit: "landed-" + in.RunID}, nil
	})
	var (
		mu      sync.Mutex
		started []string
	)
	env.OnWorkflow(TaskWorkflowName, mockAny, mockAny).Return(func(_ workflow.Context, in TaskInput) (taskengine.Result, error) {
		mu.Lock()
		started = append(started, in.RunID)
		mu.Unlock()
		if in.BaseBranch != "jlgcli/batch-b1" {
			return taskengine.Result{}, fmt.Errorf("task %s starts from %s, not the batch's branch", in.RunID, in.BaseBranch)
		}
		if strings.HasSuffix(in.RunID, "-a") {
			return taskengine.Result{Status: engine.StatusMaxIterations, ExitCode: 4, Details: "spent"}, nil
		}
		return taskengine.Result{Status: engine.StatusDone, Git: &taskengine.GitInfo{Branch: in.Branch, Base: "base",
			Merge: &taskengine.MergeInfo{Commit: "squash"}}}, nil
	})
	spec := local.BatchSpec{BaseBranch: "main", Jobs: 2, Tasks: []local.BatchTask{
		{ID: "a", Prompt: "task a"}, {ID: "b", Prompt: "task b", Depends: []string{"a"}}, {ID: "c", Prompt: "task c"}}}
	withTier(&spec)
	env.ExecuteWorkflow(BatchWorkflowName, BatchInput{RunID: "b1", Repo: "file:///r", Spec: spec, Branch: BatchBranch("b1"), Queue: "q"})
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	status := statuses(sum)
	want := map[string]string{"a": "max-iterations", "b": "blocked", "c": "done"}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if sum.Status != "incomplete" || sum.ExitCode != exit.Incomplete {
		t.Errorf("batch %s (exit %d), want incomplete", sum.Status, sum.ExitCode)
	}
	slices.Sort(started)
	if diff := cmp.Diff([]string{"b1-a", "b1-c"}, started); diff != "" {
		t.Errorf("children started (-want +got):\n%s", diff)
	}
	if len(landed) != 1 {
		t.Errorf("landed %v, want c's squash only", landed)
	}
}

// TestWorkflowPlanSpendsTheBudget: the planner's cost counts; a planner
// that spends the budget stops the task before any attempt, as locally.
func TestWorkflowPlanSpendsTheBudget(t *testing.T) {
	env := newEnv(t, func(context.Context, AttemptInput) (taskengine.AttemptOutcome, error) {
		return taskengine.AttemptOutcome{}, errors.New("no attempt may be made")
	})
	env.OnActivity(PlanName, mockAny, mockAny).Return(Planned{Planner: taskengine.Attempt{Tier: "planner", CostUSD: 0.5, CostKnown: true},
		Steps: []string{"one", "two"}}, nil)
	spec := local.TaskSpec{Plan: true, BudgetUSD: 0.4, Tiers: []local.TierSpec{{Name: "a", Backend: "x", Attempts: 1}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusBudgetExceeded || len(res.Attempts) != 0 || res.CostUSD != 0.5 || len(res.Plan) != 2 {
		t.Errorf("%s, %d attempts, cost %v, plan %v: %s", res.Status, len(res.Attempts), res.CostUSD, res.Plan, res.Details)
	}
}

// TestBatchWorkflowRunsAgainWhenALandingIsRefused: as `jlgcli batch` does, a
// done task whose change conflicts with the batch's branch (or fails its
// checks there) gets one more run from that branch as it is now, told why,
// and lands from it; when that run does not end done either, the task ends
// conflict with both branches named.
func TestBatchWorkflowRunsAgainWhenALandingIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name       string
		againDone  bool
		wantStatus string
		wantCommit string
		wantDetail string
	}{
		{"the second run lands", true, "done", "landed-b1-c-again", "re-run as b1-c-again after a conflict with the work merged since it started, which landed (jlgcli/batch-b1 has moved since the task started and conflicts with it in answer.txt)"},
		{"the second run fails", false, "conflict", "", "conflicts with it in answer.txt; re-run as b1-c-again after a conflict with the work merged since it started, which ended max-iterations; the work is kept on branches jlgcli/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newBatchEnv()
			var landed []string
			env.OnActivity(LandName, mockAny, mockAny).Return(func(_ context.Context, in LandInput) (local.Landing, error) {
				landed = append(landed, in.RunID)
				if in.Baseline == nil || in.Baseline.Status != gate.StatusFail {
					return local.Landing{}, fmt.Errorf("landing of %s without the task's baseline: %+v", in.RunID, in.Baseline)
				}
				if in.RunID == "b1-c" {
					return local.Landing{Status: local.LandConflict, Regated: true,
						Details: "jlgcli/batch-b1 has moved since the task started and conflicts with it in answer.txt"}, nil
				}
				return local.Landing{Status: local.LandMerged, Commit: "landed-" + in.RunID}, nil
			})
			prompts := map[string]string{}
			priors := map[string]*taskengine.Prior{}
			env.OnWorkflow(TaskWorkflowName, mockAny, mockAny).Return(func(_ workflow.Context, in TaskInput) (taskengine.Result, error) {
				prompts[in.RunID], priors[in.RunID] = in.Task, in.Prior
				if in.BaseBranch != "jlgcli/batch-b1" {
					return taskengine.Result{}, fmt.Errorf("task %s starts from %s, not the batch's branch", in.RunID, in.BaseBranch)
				}
				if in.RunID == "b1-c-again" && !tc.againDone {
					return taskengine.Result{Status: engine.StatusMaxIterations, ExitCode: 4, CostUSD: 0.25, CostKnown: true, Git: &taskengine.GitInfo{Branch: in.Branch}}, nil
				}
				return taskengine.Result{Status: engine.StatusDone, CostUSD: 0.25, CostKnown: true, Git: &taskengine.GitInfo{Branch: in.Branch, Base: "base",
					Merge: &taskengine.MergeInfo{Commit: "squash"}}, Baseline: &gate.Report{Status: gate.StatusFail}}, nil
			})
			spec := local.BatchSpec{BaseBranch: "main", Jobs: 1, Tasks: []local.BatchTask{
				{ID: "a", Prompt: "task a"}, {ID: "c", Prompt: "task c"}}}
			withTier(&spec)
			env.ExecuteWorkflow(BatchWorkflowName, BatchInput{RunID: "b1", Repo: "file:///r", Spec: spec, Branch: BatchBranch("b1"), Queue: "q"})
			var sum batch.Summary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			wantLanded := []string{"b1-a", "b1-c", "b1-c-again"}
			if !tc.againDone {
				wantLanded = wantLanded[:2]
			}
			if diff := cmp.Diff(wantLanded, landed); diff != "" {
				t.Errorf("landings (-want +got):\n%s", diff)
			}
			// The second run is the task's, told of the first: the prior
			// holds its run and why it did not land.
			if p := prompts["b1-c-again"]; p != "task c" {
				t.Errorf("the second run's task: %q", p)
			}
			if pr := priors["b1-c-again"]; pr == nil || pr.RunID != "b1-c" ||
				pr.Reason != "a conflict with the work merged since it started: jlgcli/batch-b1 has moved since the task started and conflicts with it in answer.txt" {
				t.Errorf("the second run's prior: %+v", pr)
			}
			if priors["b1-c"] != nil || priors["b1-a"] != nil {
				t.Errorf("a first run was given a prior")
			}
			c := sum.Tasks[1]
			// Every cent: the task's line and the batch's total count both
			// of c's runs ($0.25 each); the second run is linked.
			if c.CostUSD != 0.5 || sum.CostUSD != 0.75 || c.Rerun == nil || c.Rerun.RunID != "b1-c-again" || c.Rerun.Landed != tc.againDone {
				t.Errorf("task c: cost %v, batch %v, rerun %+v; want 0.5, 0.75, b1-c-again", c.CostUSD, sum.CostUSD, c.Rerun)
			}
			commit := ""
			if c.Commit != nil {
				commit = *c.Commit
			}
			if c.ID != "c" || c.Status != tc.wantStatus || commit != tc.wantCommit || !strings.Contains(c.Details, tc.wantDetail) {
				t.Errorf("task c: %s, commit %q, details %q; want %s, %q, details with %q", c.Status, commit, c.Details, tc.wantStatus, tc.wantCommit, tc.wantDetail)
			}
		})
	}
}

func mustHave(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q lacks %q", s, p)
		}
	}
}

// TestWorkflowResumesAnEarlierRun: a task's workflow started with the run id
// of its earlier run (a resumed batch's stopped task) asks for that run's
// history instead of preparing the branch again, and goes on from it with a
// new turn of its tier, as a local resume does.
func TestWorkflowResumesAnEarlierRun(t *testing.T) {
	var nexts []taskengine.Next
	env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		nexts = append(nexts, in.Next)
		if len(in.History.Attempts) != 1 || in.Base != "base-1" {
			return taskengine.AttemptOutcome{}, fmt.Errorf("attempt %d with %d attempts before, base %q", in.Next.Number, len(in.History.Attempts), in.Base)
		}
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: in.Next.Number, Tier: "a", InTier: in.Next.InTier,
			Start: in.Next.Start, Result: "r2", Gate: gateOf(true, 2)}}, nil
	})
	prepared := false
	env.OnActivity(PrepareName, mockAny, mockAny).Return(func(context.Context, PrepareInput) (Prepared, error) {
		prepared = true
		return Prepared{Base: "base-2"}, nil
	})
	var asked PreviousInput
	env.OnActivity(PreviousName, mockAny, mockAny).Return(func(_ context.Context, in PreviousInput) (Progress, error) {
		asked = in
		h := taskengine.History{Attempts: []taskengine.Attempt{{Number: 1, Tier: "a", InTier: 1, Start: "base-1", Result: "r1", Gate: gateOf(false, 1)}}}
		h.State.Attempts, h.State.InTier, h.State.Start = 1, 1, "r1"
		return Progress{History: h, Base: "base-1", Stop: &engine.StopData{Status: engine.StatusMaxIterations, ExitCode: 4}}, nil
	})
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "a", Backend: "x", Attempts: 1}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "b1-fix", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r", ResumeRun: "earlier"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if asked != (PreviousInput{WorkflowID: "b1-fix", RunID: "earlier"}) || prepared {
		t.Errorf("asked %+v for the earlier run, prepared again %v", asked, prepared)
	}
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 || len(nexts) != 1 || nexts[0].Number != 2 || nexts[0].InTier != 1 {
		t.Errorf("%s with %d attempts; next %+v; want done, attempt 2 the first of a new turn", res.Status, len(res.Attempts), nexts)
	}
}

// TestResumeBatchOf: the tasks of an ended batch are kept (done), resumed
// from their run (stopped by a limit), or started anew; one that ran before
// and starts anew (its landing refused) gets a run of its own, never another
// task's.
func TestResumeBatchOf(t *testing.T) {
	sum := batch.Summary{RunID: "b1", Tasks: []batch.TaskSummary{
		{ID: "a", Status: "done", RunID: new("b1-a"), Commit: new("c1"), Attempts: 2, Branch: "jlgcli/a-b1"},
		{ID: "x", Status: "conflict", RunID: new("b1-x")},
		{ID: "x-r2", Status: "blocked"},
		{ID: "y", Status: "merge-failed", RunID: new("b1-y-r2")},
		{ID: "z", Status: "blocked"},
	}}
	r, err := ResumeBatchOf(t.Context(), nil, sum, false) // no task to resume: the server is not asked
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 1 || r.Tasks["a"].Status != batch.StatusDone || r.Tasks["a"].Merge.Commit != "c1" || r.Summaries["a"].Branch != "jlgcli/a-b1" {
		t.Errorf("kept %+v, summaries %+v", r.Tasks, r.Summaries)
	}
	if diff := cmp.Diff(map[string]string{"x": "b1-x-r3", "y": "b1-y-r3"}, r.Anew); diff != "" {
		t.Errorf("runs of the tasks started anew (-want +got):\n%s", diff)
	}
}

// TestBatchWorkflowResumed: a resumed batch runs neither its kept tasks nor
// a resumed one anew: the kept one keeps its run, the one to resume goes on
// in its earlier workflow (its Temporal run id given), the one that starts
// anew after it ran runs under its new id.
func TestBatchWorkflowResumed(t *testing.T) {
	env := newBatchEnv()
	env.OnActivity(LandName, mockAny, mockAny).Return(local.Landing{Status: local.LandMerged, Commit: "landed"}, nil)
	started := map[string]string{}
	env.OnWorkflow(TaskWorkflowName, mockAny, mockAny).Return(func(_ workflow.Context, in TaskInput) (taskengine.Result, error) {
		started[in.RunID] = in.ResumeRun
		return taskengine.Result{Status: engine.StatusDone, Git: &taskengine.GitInfo{Branch: in.Branch, Base: "base", Merge: &taskengine.MergeInfo{Commit: "squash"}}}, nil
	})
	spec := local.BatchSpec{BaseBranch: "main", Jobs: 2, Tasks: []local.BatchTask{{ID: "a", Prompt: "task a"}, {ID: "b", Prompt: "task b"}, {ID: "c", Prompt: "task c"}}}
	withTier(&spec)
	resume := &BatchResume{
		Tasks: map[string]batch.TaskResult{
			"a": {ID: "a", Status: batch.StatusDone, RunID: "b1-a", Merge: &batch.MergeOutcome{Status: batch.MergeMerged, Commit: "c1"}},
			"b": {ID: "b", Status: batch.StatusInterrupted, RunID: "b1-b"},
		},
		Runs:      map[string]string{"b": "temporal-run-of-b"},
		Summaries: map[string]batch.TaskSummary{"a": {ID: "a", RunID: new("b1-a"), Attempts: 3, Branch: "jlgcli/task-a-b1"}},
		Anew:      map[string]string{"c": "b1-c-r2"},
	}
	env.ExecuteWorkflow(BatchWorkflowName, BatchInput{RunID: "b1", Repo: "file:///r", Spec: spec, Branch: BatchBranch("b1"), Queue: "q", Resume: resume})
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"b1-b": "temporal-run-of-b", "b1-c-r2": ""}, started); diff != "" {
		t.Errorf("children started, with the run they resume (-want +got):\n%s", diff)
	}
	if sum.Status != "done" || sum.Tasks[0].Attempts != 3 || sum.Tasks[0].Branch != "jlgcli/task-a-b1" || *sum.Tasks[0].Commit != "c1" {
		t.Errorf("batch %s; kept task %+v", sum.Status, sum.Tasks[0])
	}
}

// newBatchEnv is a test environment with the batch and task workflows and
// the batch's activities, the batch's branch prepared at "base".
func newBatchEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &Activities{}
	env.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	env.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	env.RegisterActivityWithOptions(acts.PrepareBatch, activity.RegisterOptions{Name: PrepareBatchName})
	env.RegisterActivityWithOptions(acts.Land, activity.RegisterOptions{Name: LandName})
	env.OnActivity(PrepareBatchName, mockAny, mockAny).Return("base", nil)
	return env
}

// statuses are the status of each task of sum, by task id.
func statuses(sum batch.Summary) map[string]string {
	out := map[string]string{}
	for _, tk := range sum.Tasks {
		out[tk.ID] = tk.Status
	}
	return out
}

// withTier gives every task of spec one tier of one attempt.
func withTier(spec *local.BatchSpec) {
	for i := range spec.Tasks {
		spec.Tasks[i].Spec = local.TaskSpec{Tiers: []local.TierSpec{{Name: "x", Backend: "x", Attempts: 1}}}
	}
}

// TestWorkflowSecondRunStartsAtThePassingTier: a task's workflow given the
// first run of the task (a batch's second run, TaskInput.Prior) starts at
// the tier that passed there, tells that run's attempts in its prompt, and
// its result names that run and its cost, as a local second run does.
func TestWorkflowSecondRunStartsAtThePassingTier(t *testing.T) {
	var nexts []taskengine.Next
	env := newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		nexts = append(nexts, in.Next)
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: in.Next.Number, Tier: "strong", TierIndex: in.Next.TierIndex,
			InTier: in.Next.InTier, Gate: gateOf(true, in.Next.Number), CostUSD: 0.5, CostKnown: true}}, nil
	})
	prior := &taskengine.Prior{RunID: "b1-c", Reason: "a conflict with a: it conflicts", CostUSD: 0.7, CostKnown: true, Attempts: []taskengine.Attempt{
		{Number: 1, Tier: "cheap", TierIndex: 0, Action: taskengine.ActionEscalate, Gate: gateOf(false, 1)},
		{Number: 2, Tier: "strong", TierIndex: 1, Action: taskengine.ActionPass, Gate: gateOf(true, 2)}}}
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "cheap", Backend: "x", Attempts: 2}, {Name: "strong", Backend: "x", Attempts: 2}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "b1-c-again", Task: "task c", Spec: spec, Queue: "q", Branch: "jlgcli/c", Prior: prior})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(nexts) != 1 || nexts[0].TierIndex != 1 || nexts[0].Number != 1 {
		t.Fatalf("attempts asked: %+v, want one, of tier strong (1)", nexts)
	}
	mustHave(t, nexts[0].Prompt, "## An earlier run of this task", "(run b1-c) made 2 attempts", "after a conflict with a: it conflicts")
	if res.Status != engine.StatusDone || res.RerunOf == nil || res.RerunOf.RunID != "b1-c" || res.RerunOf.CostUSD != 0.7 || res.CostUSD != 0.5 {
		t.Errorf("%s, rerunOf %+v, cost %v", res.Status, res.RerunOf, res.CostUSD)
	}
}

// TestWorkflowWindowLimit: the windows an attempt's agent reported are
// carried to the next attempt; one over --window-limit holds the next
// attempt back on a timer until its reset (no worker held), told by the
// progress query meanwhile; a reset beyond --max-wait ends the task
// rate-limited. The windows the task was submitted with count from the
// first attempt.
func TestWorkflowWindowLimit(t *testing.T) {
	for _, c := range []struct {
		name      string
		maxWait   time.Duration
		submitted bool
		want      engine.Status
		attempts  int
	}{
		{name: "waits", maxWait: time.Hour, want: engine.StatusDone, attempts: 2},
		{name: "beyond max-wait", maxWait: time.Minute, want: engine.StatusRateLimited, attempts: 1},
		{name: "known when submitted", maxWait: time.Hour, submitted: true, want: engine.StatusDone, attempts: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var env *testsuite.TestWorkflowEnvironment
			var reset time.Time
			var starts []time.Time
			var carried []engine.Windows
			env = newEnv(t, func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
				starts = append(starts, env.Now())
				carried = append(carried, in.History.State.Windows)
				n := in.Next.Number
				a := taskengine.Attempt{Number: n, Tier: "t", Start: "s", Result: "r", Gate: gateOf(n >= 2 || c.submitted, n)}
				if a.Gate.Status == gate.StatusPass {
					a.Commit = "c"
				}
				ws := in.History.State.Windows
				if n == 1 && !c.submitted {
					ws = ws.Note("fake", env.Now(), []agent.Window{{Kind: "5h", Used: 0.92, ResetsAt: reset}})
				}
				return taskengine.AttemptOutcome{Attempt: a, Windows: ws}, nil
			})
			start := env.Now()
			reset = start.Add(30 * time.Minute)
			var waits []*taskengine.TaskWait
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(QueryProgress)
				if err == nil {
					var p Progress
					if v.Get(&p) == nil {
						waits = append(waits, p.Wait)
					}
				}
			}, 10*time.Minute)
			spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "t", Backend: "fake", Attempts: 3}},
				WindowLimits: engine.WindowLimits{"": 80}, MaxWaitMs: millis.Of(c.maxWait)}
			in := TaskInput{RunID: "r", Task: "t", Spec: spec, Queue: "q", Branch: "jlgcli/t-r"}
			if c.submitted {
				in.Windows = engine.Windows{{Backend: "fake", Kind: "5h", Used: 0.95, ResetsAt: reset, At: start}}
			}
			env.ExecuteWorkflow(TaskWorkflowName, in)
			var res taskengine.Result
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want || len(starts) != c.attempts {
				t.Fatalf("%s after %d attempts (%s), want %s after %d", res.Status, len(starts), res.Details, c.want, c.attempts)
			}
			if c.want == engine.StatusRateLimited {
				if !strings.Contains(res.Details, "5h window at 92% (--window-limit 80%)") || !strings.Contains(res.Details, "--max-wait 1m0s") {
					t.Errorf("details: %s", res.Details)
				}
				return
			}
			last := starts[len(starts)-1]
			if last.Before(reset) {
				t.Errorf("the attempt after the window filled started at %s, before its reset at %s", last, reset)
			}
			if len(carried[len(carried)-1]) == 0 {
				t.Error("the windows were not carried to the attempt after the wait")
			}
			if len(waits) != 1 || waits[0] == nil || waits[0].Window == nil || !waits[0].Until.After(reset) {
				t.Errorf("the progress during the wait: %+v", waits)
			}
			if res.Windows == nil {
				t.Error("the result has no windows")
			}
		})
	}
}

// TestBatchOfPullRequestsResumed: a resumed batch of pull requests goes
// on with each pull request where its workflow stood, under its own run
// id (not the task that opened it, not anew); one that gave up is told
// again and blocks what depends on it; one that never began starts.
func TestBatchOfPullRequestsResumed(t *testing.T) {
	env := newBatchEnv()
	env.RegisterWorkflowWithOptions(PullRequestWorkflow, workflow.RegisterOptions{Name: PullRequestWorkflowName})
	started := map[string]*PRState{}
	env.OnWorkflow(PullRequestWorkflowName, mockAny, mockAny).Return(func(_ workflow.Context, in PRInput) (local.PRResult, error) {
		started[in.RunID] = in.Carry
		n := 8
		if in.Carry != nil {
			n = in.Carry.Result.Number
		}
		return local.PRResult{RunID: in.RunID, Number: n, Status: engine.StatusDone, From: PRTaskID(in.RunID), CostUSD: 1, CostKnown: true}, nil
	})
	env.OnWorkflow(TaskWorkflowName, mockAny, mockAny).Return(func(_ workflow.Context, in TaskInput) (taskengine.Result, error) {
		t.Errorf("task %s started outside its pull request's workflow", in.RunID)
		return taskengine.Result{}, nil
	})
	spec := local.BatchSpec{BaseBranch: "main", Jobs: 1, PR: &local.BatchPR{Remote: "origin", Policy: pull.Policy{Target: pull.Merged}},
		Tasks: []local.BatchTask{{ID: "a", Prompt: "task a"}, {ID: "b", Prompt: "task b"}, {ID: "c", Prompt: "task c", Depends: []string{"b"}}, {ID: "d", Prompt: "task d"}}}
	withTier(&spec)
	stood := PRState{Result: local.PRResult{RunID: "b1-a", Number: 7, From: "b1-a-task", Status: engine.StatusInterrupted, Reason: "stopped", CostUSD: 0.5},
		Begun: true, Waiting: []string{"ci"}}
	resume := &BatchResume{
		Tasks: map[string]batch.TaskResult{
			"a": {ID: "a", Status: batch.StatusInterrupted, RunID: "b1-a-task", CostUSD: 0.5, CostKnown: true},
			"b": {ID: "b", Status: batch.Status(engine.StatusNeedsYou), RunID: "b1-b-task", Details: "pull request #9: gave up"},
		},
		Runs:      map[string]string{},
		Summaries: map[string]batch.TaskSummary{},
		Anew:      map[string]string{},
		PRs:       map[string]PRState{"a": stood},
	}
	env.ExecuteWorkflow(BatchWorkflowName, BatchInput{RunID: "b1", Repo: "file:///r", Spec: spec, Branch: BatchBranch("b1"), Queue: "q", Resume: resume})
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if len(started) != 2 || started["b1-d"] != nil {
		t.Fatalf("pull-request workflows started %v, want b1-a (resumed) and b1-d (new)", started)
	}
	c := started["b1-a"]
	if c == nil || c.Result.Number != 7 || c.Result.Status != "running" || c.Result.Reason != "" || !c.Begun || c.Waiting != nil {
		t.Errorf("b1-a carried %+v, want where it stood, running again", c)
	}
	status := statuses(sum)
	if diff := cmp.Diff(map[string]string{"a": "done", "b": "needs-you", "c": "blocked", "d": "done"}, status); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
}
