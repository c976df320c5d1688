package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// watchWorld scripts what the looks of a watch find, look after look, and
// records what the watch asked.
type watchWorld struct {
	mu sync.Mutex
	// looks are what each look finds: the ids of the issues' tasks to run
	// (none: nothing), or fails with (err); the last one is repeated.
	looks []watchLookScript
	seen  int
	calls []string
	// batches are the inputs of the batches started.
	batches []BatchInput
	// hold keeps each batch running this long.
	hold time.Duration
}

type watchLookScript struct {
	tasks []string
	err   error
}

func (w *watchWorld) call(s string) {
	w.mu.Lock()
	w.calls = append(w.calls, s)
	w.mu.Unlock()
}

func newWatchEnv(t *testing.T, w *watchWorld) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &Activities{}
	env.RegisterWorkflowWithOptions(IssueWatchWorkflow, workflow.RegisterOptions{Name: IssueWatchWorkflowName})
	env.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	env.RegisterActivityWithOptions(acts.IssueWatchLook, activity.RegisterOptions{Name: IssueWatchLookName})
	env.OnActivity(IssueWatchLookName, mockAny, mockAny).Return(func(_ context.Context, in WatchLookInput) (WatchLook, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		l := w.looks[min(w.seen, len(w.looks)-1)]
		w.seen++
		if l.err != nil {
			w.calls = append(w.calls, "look failed")
			return WatchLook{}, l.err
		}
		w.calls = append(w.calls, "look")
		if len(l.tasks) == 0 {
			return WatchLook{Left: []string{"#9: claimed already"}}, nil
		}
		spec := local.BatchSpec{Repo: in.Repo, BaseBranch: in.Base, Jobs: 1, Issues: &in.Source}
		for _, id := range l.tasks {
			spec.Tasks = append(spec.Tasks, local.BatchTask{ID: id, Title: "issue " + id, Prompt: "do " + id, Depends: []string{}})
		}
		withTier(&spec)
		return WatchLook{Spec: &spec}, nil
	})
	env.OnWorkflow(BatchWorkflowName, mockAny, mockAny).Return(func(ctx workflow.Context, in BatchInput) (batch.Summary, error) {
		w.call("batch " + in.RunID)
		w.mu.Lock()
		w.batches = append(w.batches, in)
		hold := w.hold
		w.mu.Unlock()
		sum := batch.Summary{RunID: in.RunID, Status: string(batch.BatchDone), CostUSD: 1, CostKnown: true, BaseBranch: in.Spec.BaseBranch, Jobs: 1}
		if hold > 0 {
			if err := workflow.Sleep(ctx, hold); err != nil {
				sum.Status, sum.ExitCode = string(batch.BatchInterrupted), exit.Interrupted
			}
		}
		for _, t := range in.Spec.Tasks {
			id := in.RunID + "-" + t.ID
			st := string(batch.StatusDone)
			if sum.Status != string(batch.BatchDone) {
				st = string(batch.StatusInterrupted)
			}
			sum.Tasks = append(sum.Tasks, batch.TaskSummary{ID: t.ID, Status: st, RunID: &id})
		}
		return sum, nil
	})
	return env
}

func watchInput() WatchInput {
	return WatchInput{RunID: "w1", Repo: "https://forge/o/r.git", Base: "main", Query: "label:agent",
		Source: local.IssueSource{Remote: "origin", Forge: forge.Settings{Kind: forge.Gitea, TokenEnv: "TOKEN"}, PollMs: millis.Of(10 * time.Second)},
		Config: WatchConfig{Layers: []*config.Layer{{Name: "flag"}}}, Queue: "q"}
}

// A look that finds issues runs them as a child batch (<watch>-b<n>, the
// batch's own input as a submitted batch's) and waits for it; one that
// finds nothing waits on a durable timer, poll first then doubling, with no
// activity under way; after a batch the wait is poll again. A stop ends
// the watch interrupted, the tasks of its batches in its summary.
func TestWatchLooksRunsAndWaits(t *testing.T) {
	w := &watchWorld{looks: []watchLookScript{{}, {tasks: []string{"issue-1"}}, {}, {}, {tasks: []string{"issue-2", "issue-3"}}, {}}}
	env := newWatchEnv(t, w)
	timers := idleTimers(t, env)
	// 10s (poll, the first wait), batch, 10s (poll, after a batch), 20s,
	// 40s, batch, 10s, 20s: then the stop, during the wait of 40s.
	env.RegisterDelayedCallback(env.CancelWorkflow, 130*time.Second)
	env.ExecuteWorkflow(IssueWatchWorkflowName, watchInput())
	if !env.IsWorkflowCompleted() {
		t.Fatal("the watch did not end once stopped")
	}
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatalf("the stopped watch ended with an error: %v", err)
	}
	want := []time.Duration{10 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	if len((*timers)) != len(want) {
		t.Fatalf("(*timers) %v, want %v", (*timers), want)
	}
	for i := range want {
		if (*timers)[i] != want[i] {
			t.Errorf("timer %d: %s, want %s (all: %v)", i, (*timers)[i], want[i], (*timers))
		}
	}
	if got := strings.Join(w.calls, ","); got != "look,look,batch w1-b1,look,look,look,batch w1-b2,look,look" {
		t.Errorf("calls %s", got)
	}
	b := w.batches[0]
	if b.RunID != "w1-b1" || b.Branch != BatchBranch("w1-b1") || b.Repo != "https://forge/o/r.git" || b.Spec.Issues == nil || b.Queue != "q" {
		t.Errorf("first batch's input %+v", b)
	}
	if sum.RunID != "w1" || sum.Status != string(batch.BatchInterrupted) || sum.ExitCode != exit.Interrupted || sum.CostUSD != 2 {
		t.Errorf("summary %+v, want w1 interrupted (130) having spent 2", sum)
	}
	var ids []string
	for _, tk := range sum.Tasks {
		ids = append(ids, *tk.RunID+":"+tk.Status)
	}
	if got := strings.Join(ids, ","); got != "w1-b1-issue-1:done,w1-b2-issue-2:done,w1-b2-issue-3:done" {
		t.Errorf("tasks %s", got)
	}
	if !strings.Contains(sum.Details, "jlgcli resume w1") {
		t.Errorf("details %q do not say how to go on", sum.Details)
	}
}

// A tracker that does not answer is asked again, the wait growing, and
// the watch goes on; a batch that cannot be planned is said and looked
// at again after the wait, not tried again at once.
func TestWatchSurvivesTheTracker(t *testing.T) {
	down := errors.New("dial tcp: connection refused")
	refused := temporal.NewNonRetryableApplicationError("task issue-4: tier \"\": want BACKEND[:MODEL]", ErrWatchPlan, nil)
	w := &watchWorld{looks: []watchLookScript{{err: down}, {err: down}, {err: down}, {tasks: []string{"issue-1"}}, {err: refused}, {}}}
	env := newWatchEnv(t, w)
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(IssueWatchWorkflowName, watchInput())
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatalf("the watch ended with an error: %v", err)
	}
	calls := strings.Join(w.calls, ",")
	if !strings.HasPrefix(calls, "look failed,look failed,look failed,look,batch w1-b1,look failed,look") {
		t.Errorf("calls %s: want the tracker asked again until it answers, the refused plan not retried", calls)
	}
	if len(sum.Tasks) != 1 || sum.Status != string(batch.BatchInterrupted) {
		t.Errorf("summary %+v", sum)
	}
}

// Every LooksPerRun looks the watch continues as new, carrying its state.
func TestWatchContinuesAsNew(t *testing.T) {
	w := &watchWorld{looks: []watchLookScript{{tasks: []string{"issue-1"}}, {}}}
	env := newWatchEnv(t, w)
	env.ExecuteWorkflow(IssueWatchWorkflowName, watchInput())
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("the watch ended with %v, want it to continue as new", err)
	}
	var in WatchInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	st := in.Carry
	if can.WorkflowType.Name != IssueWatchWorkflowName || st == nil || st.Looks != LooksPerRun || st.Started != 1 || len(st.Ended) != 1 ||
		st.Wait.Duration() != local.MaxIssueWait || in.RunID != "w1" {
		t.Errorf("continued as %s with %+v", can.WorkflowType.Name, st)
	}
}

// A watch stopped while its batch runs stops the batch with it and keeps
// it under way, so that a resume goes on with it first (ResumedWatch);
// the resumed watch starts it again under the same id.
func TestWatchStoppedDuringABatchIsResumed(t *testing.T) {
	w := &watchWorld{looks: []watchLookScript{{tasks: []string{"issue-1"}}, {}}, hold: time.Hour}
	env := newWatchEnv(t, w)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(IssueWatchWorkflowName, watchInput())
	var sum batch.Summary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Status != string(batch.BatchInterrupted) || len(sum.Tasks) != 1 || sum.Tasks[0].Status != string(batch.StatusRunning) {
		t.Fatalf("summary %+v, want interrupted with its batch's task under way", sum)
	}
	v, err := env.QueryWorkflow(QueryWatch)
	if err != nil {
		t.Fatal(err)
	}
	var st WatchState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if st.Current == nil || st.Current.RunID != "w1-b1" {
		t.Fatalf("state %+v, want batch w1-b1 under way", st)
	}
	stopped := batch.Summary{RunID: "w1-b1", Status: string(batch.BatchInterrupted)}
	again := &BatchResume{Tasks: map[string]batch.TaskResult{"issue-1": {ID: "issue-1", Status: batch.StatusInterrupted, RunID: "w1-b1-issue-1"}}}
	in := watchInput()
	in.Carry = ResumedWatch(st, &stopped, again)

	w2 := &watchWorld{looks: []watchLookScript{{}}}
	env2 := newWatchEnv(t, w2)
	env2.RegisterDelayedCallback(env2.CancelWorkflow, 5*time.Second)
	env2.ExecuteWorkflow(IssueWatchWorkflowName, in)
	if err := env2.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if len(w2.batches) != 1 || w2.batches[0].RunID != "w1-b1" || w2.batches[0].Resume == nil {
		t.Fatalf("batches %+v, want w1-b1 resumed first", w2.batches)
	}
	if len(sum.Tasks) != 1 || sum.Tasks[0].Status != string(batch.StatusDone) {
		t.Errorf("summary %+v", sum)
	}
}

// A batch that ended done while the watch was stopped is counted as
// ended, not run again.
func TestResumedWatchKeepsADoneBatch(t *testing.T) {
	cur := BatchInput{RunID: "w1-b2"}
	st := WatchState{Started: 2, Current: &cur, Ended: []batch.Summary{{RunID: "w1-b1"}}, Until: time.Now()}
	got := ResumedWatch(st, &batch.Summary{RunID: "w1-b2", Status: string(batch.BatchDone)}, nil)
	if got.Current != nil || len(got.Ended) != 2 || !got.Until.IsZero() || len(st.Ended) != 1 {
		t.Errorf("resumed %+v (from %+v)", got, st)
	}
}

// The configuration a watch is recorded with keeps the names of its
// environment, not their values; FillEnv gives them back, or says which
// have none.
func TestWatchConfigEnv(t *testing.T) {
	c := WatchConfig{Layers: []*config.Layer{
		{Name: "user", Env: map[string]string{"A": "secret-a"}, Tiers: []config.TierLayer{{Name: "big", Backend: "x", Env: map[string]string{"B": "secret-b"}}}},
		{Name: "flag", Review: &config.PlannerLayer{Backend: "y", Env: map[string]string{"C": "secret-c"}}},
	}}
	rec := c.Recorded()
	if rec.Layers[0].Env["A"] != "" || rec.Layers[0].Tiers[0].Env["B"] != "" || rec.Layers[1].Review.Env["C"] != "" {
		t.Fatalf("recorded %+v %+v: values kept", rec.Layers[0], rec.Layers[1])
	}
	if c.Layers[0].Env["A"] != "secret-a" || c.Layers[0].Tiers[0].Env["B"] != "secret-b" {
		t.Fatal("Recorded changed the configuration it was given")
	}
	values := map[string]string{":A": "a", "big:B": "b"}
	missing := rec.FillEnv(func(tier, name string) (string, bool) { v, ok := values[tier+":"+name]; return v, ok })
	if strings.Join(missing, ",") != "C" || rec.Layers[0].Env["A"] != "a" || rec.Layers[0].Tiers[0].Env["B"] != "b" {
		t.Errorf("filled %+v, missing %v", rec.Layers[0], missing)
	}
}

// TestLookError: a look that fails on a setting, on no token or on a token
// the forge refuses is not tried again (the watch says why and looks
// again after its wait); one the tracker did not answer is.
func TestLookError(t *testing.T) {
	for _, tc := range []struct {
		err   error
		again bool
	}{
		{fmt.Errorf("gitea at x: %w (401)", forge.ErrUnauthorized), false},
		{exit.Usagef("export TOKEN", "no token for x"), false},
		{errors.New("dial tcp: connection refused"), true},
	} {
		var app *temporal.ApplicationError
		err := lookError(tc.err)
		if again := !errors.As(err, &app) || !app.NonRetryable(); again != tc.again {
			t.Errorf("%v: tried again %v, want %v", tc.err, again, tc.again)
		}
	}
	if lookError(nil) != nil {
		t.Error("no error is no error")
	}
}

// TestWatchBatchOf: a task run's batch among a watch's batches.
func TestWatchBatchOf(t *testing.T) {
	for task, want := range map[string]string{
		"w1-b1-20261128T050000Z-aaaa": "w1-b1",
		"w1-b12-issue-3":              "w1-b12",
		"w1-b-x":                      "",
		"w1-b3":                       "",
		"w2-b1-x":                     "",
		"w1-bx-1":                     "",
	} {
		got, ok := WatchBatchOf("w1", task)
		if got != want || ok != (want != "") {
			t.Errorf("WatchBatchOf(w1, %s) = %q, %v; want %q", task, got, ok, want)
		}
	}
}

// TestWithCurrent: the watch's summary tells the tasks of its batch under
// way as that batch does (one done, one pending: not both "running"), the
// tasks of its ended batches as they ended, and adds that batch's cost.
func TestWithCurrent(t *testing.T) {
	id := func(s string) *string { return &s }
	s := batch.Summary{CostUSD: 1, CostKnown: true, Tasks: []batch.TaskSummary{
		{ID: "issue-1", Status: "done", RunID: id("w1-b1-issue-1")},
		{ID: "issue-2", Status: "running", RunID: id("w1-b2-issue-2")},
		{ID: "issue-3", Status: "running", RunID: id("w1-b2-issue-3")},
	}}
	cur := batch.Summary{CostUSD: 0.5, CostKnown: true, Tasks: []batch.TaskSummary{
		{ID: "issue-2", Status: "done", RunID: id("w1-b2-issue-2")},
		{ID: "issue-3", Status: "pending"},
	}}
	got := withCurrent(s, "w1-b2", cur)
	var words []string
	for _, tk := range got.Tasks {
		words = append(words, tk.ID+" "+tk.Status)
	}
	if w := strings.Join(words, ", "); w != "issue-1 done, issue-2 done, issue-3 pending" || got.CostUSD != 1.5 || !got.CostKnown {
		t.Errorf("%s, cost %v %v", w, got.CostUSD, got.CostKnown)
	}
	if s.Tasks[1].Status != "running" {
		t.Error("the watch's own summary was written into")
	}
}
