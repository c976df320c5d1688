package temporal

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// prWorld scripts what the forge shows a pull request's workflow, look
// after look, and records what the workflow asked of the workers.
type prWorld struct {
	mu    sync.Mutex
	looks []pull.Observation // the next looks; the last one is repeated
	seen  int
	// calls are the activities and child workflows in the order they ran.
	calls []string
	// rounds are the inputs of the rounds' task workflows.
	rounds []TaskInput
	// round is the status of each round's task (done when unset); with
	// hold, each task works until it is cancelled, then ends interrupted.
	round    engine.Status
	hold     bool
	comments []string
	pushed   []PRPushInput
	moved    bool
	// weakened is what the judgement of the whole change says ("": it
	// weakens no test).
	weakened string
	// behind is how far behind the workflow's clock the clock of the
	// worker that makes each look is (the last one is repeated).
	behind []time.Duration
}

func (w *prWorld) call(name string) {
	w.mu.Lock()
	w.calls = append(w.calls, name)
	w.mu.Unlock()
}

// obs is a look at an open pull request at head, its one check ci in
// state, mergeable, no review needed.
func obs(head string, state forge.CheckState) pull.Observation {
	return pull.Observation{
		PR:      forge.PR{Number: 7, URL: "https://forge/o/r/pulls/7", State: forge.StateOpen, Head: "fix", HeadSHA: head, Base: "main", Mergeable: forge.Mergeable},
		Checks:  forge.Checks{SHA: head, Checks: []forge.Check{{Name: "ci", State: state, Description: "the tests"}}},
		Reviews: forge.Reviews{Decision: forge.NoDecision},
	}
}

// newPREnv is a test environment with the pull request's workflow, its
// activities scripted by w, and the rounds' task workflows mocked.
func newPREnv(t *testing.T, w *prWorld) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	acts := &Activities{}
	env.RegisterWorkflowWithOptions(PullRequestWorkflow, workflow.RegisterOptions{Name: PullRequestWorkflowName})
	env.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	for name, fn := range map[string]any{PRBeginName: acts.PRBegin, PRLookName: acts.PRLook, PRRoundName: acts.PRRound, PRPushName: acts.PRPush,
		PRRerunName: acts.PRRerun, PRMergeName: acts.PRMerge, PRCommentName: acts.PRComment, PROpenName: acts.PROpen, PRJudgeName: acts.PRJudge} {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	env.OnActivity(PRBeginName, mockAny, mockAny).Return(func(_ context.Context, in PRForge) (PRBegun, error) {
		w.call("begin")
		return PRBegun{Self: "jlgcli-bot", PR: forge.PR{Number: in.Number, URL: "https://forge/o/r/pulls/7", Head: "fix", Base: "main", Title: "Fix it", Body: "It is broken."}}, nil
	})
	env.OnActivity(PRLookName, mockAny, mockAny).Return(func(context.Context, PRForge) (pull.Observation, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, "look")
		o := w.looks[min(w.seen, len(w.looks)-1)]
		o.At = env.Now()
		if len(w.behind) > 0 {
			o.At = o.At.Add(-w.behind[min(w.seen, len(w.behind)-1)])
		}
		w.seen++
		return o, nil
	})
	env.OnActivity(PRRoundName, mockAny, mockAny).Return(func(_ context.Context, in PRRoundInput) (PRRoundReady, error) {
		w.call("prepare")
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.moved {
			w.moved = false
			return PRRoundReady{Moved: "someone-elses"}, nil
		}
		return PRRoundReady{Needs: "NEEDS of " + in.Action.Head}, nil
	})
	env.OnActivity(PRPushName, mockAny, mockAny).Return(func(_ context.Context, in PRPushInput) (PRPushed, error) {
		w.call("push")
		w.mu.Lock()
		w.pushed = append(w.pushed, in)
		w.mu.Unlock()
		return PRPushed{End: local.PRRoundEndData{Round: in.Round, RunID: in.RunID, Pushed: "tip-of-" + in.From, Replied: len(in.Threads)}, At: env.Now()}, nil
	})
	env.OnActivity(PRRerunName, mockAny, mockAny).Return(func(context.Context, PRRerunInput) error { w.call("rerun"); return nil })
	env.OnActivity(PRJudgeName, mockAny, mockAny).Return(func(_ context.Context, in PRJudgeInput) (string, error) {
		w.call("judge " + in.SHA)
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.weakened, nil
	})
	env.OnActivity(PRMergeName, mockAny, mockAny).Return(func(_ context.Context, in PRMergeInput) (local.PRMergeData, error) {
		w.call("merge")
		return local.PRMergeData{Head: in.Head, Commit: "merge-of-" + in.Head}, nil
	})
	env.OnActivity(PRCommentName, mockAny, mockAny).Return(func(_ context.Context, in PRCommentInput) (string, error) {
		w.call("comment")
		w.mu.Lock()
		w.comments = append(w.comments, in.Body)
		w.mu.Unlock()
		return "https://forge/o/r/pulls/7#c1", nil
	})
	env.OnWorkflow(TaskWorkflowName, mockAny, mockAny).Return(func(ctx workflow.Context, in TaskInput) (taskengine.Result, error) {
		w.call("task " + in.RunID)
		w.mu.Lock()
		w.rounds = append(w.rounds, in)
		st, hold := w.round, w.hold
		w.mu.Unlock()
		if st == "" {
			st = engine.StatusDone
		}
		if hold && workflow.Sleep(ctx, 24*time.Hour) != nil {
			st = engine.StatusInterrupted
		}
		res := taskengine.Result{RunID: in.RunID, Status: st, ExitCode: st.ExitCode(), CostUSD: 0.5, CostKnown: true, Details: "the round's task",
			Attempts: []taskengine.Attempt{{Number: 1, Tier: "fake", Action: taskengine.ActionPass, Response: "fixed " + in.RunID}},
			Git:      &taskengine.GitInfo{Branch: in.Branch, Base: "base-of-" + in.RunID}}
		return res, nil
	})
	return env
}

func prInput(target pull.Target) PRInput {
	return PRInput{RunID: "pr-1", Repo: "https://forge/o/r.git", Number: 7, Forge: forge.Settings{Kind: forge.Gitea, TokenEnv: "TOKEN"},
		Policy: pull.Policy{Target: target, Poll: millis.Of(15 * time.Second), MaxPoll: millis.Of(time.Minute), Grace: millis.Of(10 * time.Minute)},
		Spec:   local.TaskSpec{Tiers: []local.TierSpec{{Name: "fake", Backend: "fake", Attempts: 2}}, Merge: git.MergeSquash, Push: true}, Queue: "q"}
}

func prResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) local.PRResult {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res local.PRResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// A wait is a durable timer in the workflow, not an activity: while the
// checks run, the workflow sleeps act.After (doubling while nothing
// changes) with no activity under way, so a worker that dies meanwhile
// holds nothing; each look after it is one activity.
func TestPRWaitIsATimer(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Pending), obs("h1", forge.Pending), obs("h1", forge.Pending), obs("h1", forge.Success)}}
	env := newPREnv(t, w)
	timers := idleTimers(t, env)
	start := env.Now()
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Green))
	res := prResult(t, env)
	if res.Status != engine.StatusDone || res.Looks != 4 || res.URL == "" || res.Branch != "fix" {
		t.Fatalf("result %+v, want done after 4 looks", res)
	}
	// The wait doubles while the look finds the same: 15s, 30s, 60s.
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute}
	if len((*timers)) != len(want) {
		t.Fatalf("(*timers) %v, want %v", (*timers), want)
	}
	for i := range want {
		if (*timers)[i] != want[i] {
			t.Errorf("timer %d: %s, want %s", i, (*timers)[i], want[i])
		}
	}
	if got := env.Now().Sub(start); got < 105*time.Second {
		t.Errorf("the workflow's clock moved %s, want the waits' 1m45s", got)
	}
	if got := strings.Join(w.calls, ","); got != "begin,look,look,look,look,judge h1" {
		t.Errorf("activities %s, want begin, 4 looks and the judgement of the whole change only", got)
	}
}

// A failed check is re-run once; failing again it becomes a round: a
// child task workflow from the pull request's branch, told what the pull
// request needs and the runs before it, whose branch is then pushed onto
// the pull request's on the lease of the head it started from; the check
// green at the new head is the target.
func TestPRRoundIsAChildTask(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Failed), obs("h1", forge.Failed), obs("h1", forge.Failed), obs("tip-of-r1", forge.Success)}}
	w.moved = true // the branch moved once as the round was prepared: looked at again
	env := newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Green))
	res := prResult(t, env)
	if res.Status != engine.StatusDone || len(res.Rounds) != 1 || res.Rounds[0].Pushed == "" || res.CostUSD != 0.5 {
		t.Fatalf("result %+v, want done after one pushed round costing 0.5", res)
	}
	if got := strings.Join(w.calls, ","); got != "begin,look,rerun,look,prepare,look,prepare,task pr-1-r1,push,look,judge tip-of-r1" {
		t.Errorf("calls %s", got)
	}
	r := w.rounds[0]
	if r.BaseBranch != "fix" || !r.Round || r.Prior == nil || r.Prior.Needs != "NEEDS of h1" || r.Task != "Fix it\n\nIt is broken." {
		t.Errorf("round's task %+v (prior %+v)", r, r.Prior)
	}
	if r.Spec.Merge != git.MergeNone || r.Spec.Push || r.Spec.Commit != git.CommitBranch {
		t.Errorf("round's spec merges %s, pushes %v, commits %s: want its branch left for the loop to push", r.Spec.Merge, r.Spec.Push, r.Spec.Commit)
	}
	p := w.pushed[0]
	if p.Branch != "fix" || p.From != r.Branch || p.Lease != "base-of-pr-1-r1" {
		t.Errorf("push %+v, want round's branch %s onto fix leased on the round's base", p, r.Branch)
	}
}

// A second round is told the first round's attempts, and the cost of
// every round counts.
func TestPRSecondRoundKnowsTheFirst(t *testing.T) {
	failed := func(head string) pull.Observation {
		o := obs(head, forge.Failed)
		o.Checks.Checks[0].Description = "at " + head
		return o
	}
	w := &prWorld{looks: []pull.Observation{failed("h1"), failed("h1"), failed("tip-of-r1"), failed("tip-of-r1"), obs("tip-of-r2", forge.Success)}}
	env := newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Green))
	res := prResult(t, env)
	if res.Status != engine.StatusDone || len(res.Rounds) != 2 || res.CostUSD != 1 {
		t.Fatalf("result %+v, want done after 2 rounds costing 1", res)
	}
	second := w.rounds[1].Prior
	if second == nil || len(second.Attempts) != 1 || second.Attempts[0].Response != "fixed pr-1-r1" || second.CostUSD != 0.5 {
		t.Errorf("second round's prior %+v, want the first round's attempt and cost", second)
	}
	// The change the first round pushed, which the second may not make
	// again; its attempts on the workers are given it, and only it.
	if second == nil || len(second.Pushed) != 1 || second.Pushed[0].RunID != "pr-1-r1" || second.Pushed[0].Round != 1 || second.Pushed[0].Attempt != 1 {
		t.Fatalf("second round's pushed changes %+v, want the first round's", second.Pushed)
	}
	if first := w.rounds[0].Prior; len(first.Pushed) != 0 {
		t.Errorf("first round's pushed changes %+v, want none (the pull request was taken over)", first.Pushed)
	}
	h := stepHistory(taskengine.History{Prior: second, Attempts: []taskengine.Attempt{{Number: 1}}}, taskengine.Next{Number: 2})
	if h.Prior == nil || len(h.Prior.Pushed) != 1 || len(h.Prior.Attempts) != 0 || h.Prior.Needs == "" {
		t.Errorf("an attempt's prior %+v, want the pushed changes and what the pull request needs only", h.Prior)
	}
}

// Giving up tells the pull request once, and ends needs-you; a merge is
// asked at the head judged.
func TestPRGiveUpAndMerge(t *testing.T) {
	closed := obs("h1", forge.Success)
	closed.PR.State = forge.StateClosed
	w := &prWorld{looks: []pull.Observation{closed}}
	env := newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Merged))
	res := prResult(t, env)
	if res.Status != engine.StatusNeedsYou || res.ExitCode != engine.StatusNeedsYou.ExitCode() || res.Comment == "" || len(w.comments) != 1 ||
		!strings.Contains(w.comments[0], "closed without being merged") || !strings.Contains(w.comments[0], "run `pr-1`") {
		t.Fatalf("result %+v, comments %q: want needs-you, told once", res, w.comments)
	}

	merged := obs("h1", forge.Success)
	merged.PR.State = forge.StateMerged
	w = &prWorld{looks: []pull.Observation{obs("h1", forge.Success), merged}}
	env = newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Merged))
	res = prResult(t, env)
	if res.Status != engine.StatusDone || res.Merged != "merge-of-h1" || len(w.comments) != 0 {
		t.Fatalf("result %+v, want merged at h1 with no comment", res)
	}
}

// A round whose task fails ends the run needs-you, telling the pull
// request; one stopped by a limit of its own stays under way for a resume,
// which continues its task from its history (ResumeRun) and pushes it.
func TestPRRoundStoppedIsResumed(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Failed), obs("h1", forge.Failed)}, round: engine.StatusMaxIterations}
	env := newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Green))
	res := prResult(t, env)
	if res.Status != engine.StatusNeedsYou || len(w.comments) != 1 || len(res.Rounds) != 1 || len(w.pushed) != 0 {
		t.Fatalf("result %+v, want needs-you after a failed round, told once, nothing pushed", res)
	}

	w = &prWorld{looks: []pull.Observation{obs("h1", forge.Failed), obs("h1", forge.Failed)}, round: engine.StatusTimeout}
	env = newPREnv(t, w)
	var st PRState
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Green))
	res = prResult(t, env)
	if res.Status != engine.StatusTimeout || len(res.Rounds) != 0 || len(w.comments) != 0 {
		t.Fatalf("result %+v, want timeout with the round under way, no comment", res)
	}
	v, err := env.QueryWorkflow(QueryPR)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Get(&st); err != nil || st.Round == nil || st.Round.Data.RunID != "pr-1-r1" {
		t.Fatalf("state %+v (%v), want round pr-1-r1 under way", st, err)
	}

	// The resume: the round's task goes on from its run, then is pushed.
	w2 := &prWorld{looks: []pull.Observation{obs("tip-of-"+st.Round.Input.Branch, forge.Success)}}
	env = newPREnv(t, w2)
	in := prInput(pull.Green)
	in.Carry = ResumedPR(st)
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res = prResult(t, env)
	if res.Status != engine.StatusDone || len(res.Rounds) != 1 || res.Rounds[0].Pushed == "" {
		t.Fatalf("resumed: %+v, want done after the round pushed", res)
	}
	if got := strings.Join(w2.calls, ","); got != "task pr-1-r1,push,look,judge tip-of-jlgcli/fix-it-it-is-broken-70eb5572" {
		t.Errorf("resumed calls %s, want the round's task continued, pushed, then a look", got)
	}
	if r := w2.rounds[0]; r.ResumeRun == "" || r.RunID != "pr-1-r1" {
		t.Errorf("the resumed round's task %+v, want it continued from its earlier run", r)
	}
}

// task --pr --until: the task runs first, its ready branch is opened as
// the pull request, and the rounds follow it, told its attempts.
func TestPRFirstTaskOpensIt(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Failed), obs("h1", forge.Failed), obs("tip-of-r1", forge.Success)}}
	env := newPREnv(t, w)
	var opened PROpenInput
	env.OnActivity(PROpenName, mockAny, mockAny).Return(func(_ context.Context, in PROpenInput) (forge.PR, error) {
		w.call("open")
		opened = in
		return forge.PR{Number: 7, Head: in.New.Head}, nil
	})
	in := prInput(pull.Green)
	in.Number, in.Task = 0, "Make it so"
	in.First = &TaskInput{Task: "Make it so", Repo: in.Repo, BaseBranch: "main", Branch: "jlgcli/make-it-so-1", Spec: in.Spec, Queue: "q"}
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res := prResult(t, env)
	if res.Status != engine.StatusDone || res.Number != 7 || res.From != "pr-1-task" || len(res.Rounds) != 1 || res.CostUSD != 1 {
		t.Fatalf("result %+v", res)
	}
	if opened.New.Head != "jlgcli/make-it-so-1-ready" || opened.New.Base != "main" || opened.New.Title == "" {
		t.Errorf("opened %+v, want the task's ready branch into main", opened.New)
	}
	if got := strings.Join(w.calls, ","); !strings.HasPrefix(got, "task pr-1-task,open,begin,look") {
		t.Errorf("calls %s", got)
	}
	if p := w.rounds[1].Prior; p == nil || len(p.Attempts) != 1 || p.Attempts[0].Response != "fixed pr-1-task" || w.rounds[1].Task != "Make it so" {
		t.Errorf("the round's prior %+v, want the task's attempt", p)
	}
}

// A pull request whose whole change weakens its base's tests is not
// called green or merged on the workers either: the judgement (an
// activity, versioned) ends it needs-you, with its one comment, and
// nothing is merged.
func TestPRWeakenedTestsNeedYou(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Success)}, weakened: "the pull request deletes a_test.go against main"}
	env := newPREnv(t, w)
	env.ExecuteWorkflow(PullRequestWorkflowName, prInput(pull.Merged))
	res := prResult(t, env)
	if res.Status != engine.StatusNeedsYou || !strings.Contains(res.Reason, "deletes a_test.go") || res.Merged != "" {
		t.Fatalf("result %+v, want needs-you naming the test, not merged", res)
	}
	if got := strings.Join(w.calls, ","); got != "begin,look,judge h1,comment" || len(w.comments) != 1 {
		t.Errorf("calls %s (%d comments), want the judgement then one comment, no merge", got, len(w.comments))
	}
}

// idleTimers are the durations of the timers env's workflow schedules, in
// order, as they are scheduled (read it once the workflow has run); a
// timer scheduled while an activity is under way fails the test: a wait
// holds nothing on a worker.
func idleTimers(t *testing.T, env *testsuite.TestWorkflowEnvironment) *[]time.Duration {
	timers := &[]time.Duration{}
	running := 0
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { running++ })
	env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { running-- })
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
		if running != 0 {
			t.Errorf("a timer of %s was scheduled with %d activities under way", d, running)
		}
		*timers = append(*timers, d)
	})
	return timers
}

// task --pr --until whose task stops on a limit of its own (here its
// attempts): the run ends with that status, its cost told, and the task
// stays under way; the resume goes on with it from its history (a new
// turn), then opens the pull request, instead of making it anew.
func TestPRFirstTaskStoppedIsResumed(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Success)}, round: engine.StatusMaxIterations}
	env := newPREnv(t, w)
	in := prInput(pull.Green)
	in.Number, in.Task = 0, "Make it so"
	in.First = &TaskInput{Task: "Make it so", Repo: in.Repo, BaseBranch: "main", Branch: "jlgcli/make-it-so-1", Spec: in.Spec, Queue: "q"}
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res := prResult(t, env)
	if res.Status != engine.StatusMaxIterations || res.Number != 0 || res.CostUSD != 0.5 || res.From != "pr-1-task" {
		t.Fatalf("result %+v, want max-iterations with the task's cost, no pull request", res)
	}
	if !res.Resumable() {
		t.Errorf("a run whose task stopped on its own limit is not resumable")
	}
	v, err := env.QueryWorkflow(QueryPR)
	if err != nil {
		t.Fatal(err)
	}
	var st PRState
	if err := v.Get(&st); err != nil || st.First == nil || st.First.Run == "" || st.Result.CostUSD != 0 || st.Prior != nil {
		t.Fatalf("state %+v (%v), want the task under way with its run, nothing counted yet", st, err)
	}

	w2 := &prWorld{looks: []pull.Observation{obs("h1", forge.Success)}}
	env = newPREnv(t, w2)
	env.OnActivity(PROpenName, mockAny, mockAny).Return(func(_ context.Context, in PROpenInput) (forge.PR, error) {
		w2.call("open")
		return forge.PR{Number: 7, Head: in.New.Head}, nil
	})
	in.Carry = ResumedPR(st)
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res = prResult(t, env)
	if res.Status != engine.StatusDone || res.Number != 7 || res.CostUSD != 0.5 {
		t.Fatalf("resumed: %+v, want done, the task counted once", res)
	}
	if got := strings.Join(w2.calls, ","); !strings.HasPrefix(got, "task pr-1-task,open,begin,look") {
		t.Errorf("resumed calls %s", got)
	}
	if r := w2.rounds[0]; r.ResumeRun != st.First.Run {
		t.Errorf("the resumed task %+v, want it continued from its run %s", r, st.First.Run)
	}
}

// --give-up-after on the workers: a check pending with nothing new gives
// up once that long passed on the workflow's clock, the last timer cut to
// what was left, the pull request told once; no round.
func TestPRGiveUpAfterOnTheWorkflowsClock(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Pending)}}
	env := newPREnv(t, w)
	timers := idleTimers(t, env)
	in := prInput(pull.Green)
	in.Policy.GiveUpAfter = millis.Of(70 * time.Second)
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res := prResult(t, env)
	if res.Status != engine.StatusNeedsYou || !strings.Contains(res.Reason, "nothing new on the pull request for 1m10s") || len(w.comments) != 1 || len(w.rounds) != 0 {
		t.Fatalf("result %+v (%d comments), want needs-you after 1m10s, told once, no round", res, len(w.comments))
	}
	// 15s, 30s, then the 25s left of 70s.
	want := []time.Duration{15 * time.Second, 30 * time.Second, 25 * time.Second}
	if fmt.Sprint(*timers) != fmt.Sprint(want) {
		t.Errorf("timers %v, want %v", *timers, want)
	}
}

// What a task under way cost when the run ended (a round or the task that
// opens the pull request, stopped by a limit of its own or by jlgcli
// stop) is told in the run's result, as the run here tells it: a batch's
// budget and summary count it, and the resume, whose task counts it
// again in its own result, replaces it. The state a resume goes on from
// does not count it.
func TestPRTaskUnderWayCostIsTold(t *testing.T) {
	first := func(in PRInput) PRInput {
		in.Number, in.Task = 0, "Make it so"
		in.First = &TaskInput{Task: "Make it so", Repo: in.Repo, BaseBranch: "main", Branch: "jlgcli/make-it-so-1", Spec: in.Spec, Queue: "q"}
		return in
	}
	for _, tc := range []struct {
		name   string
		round  engine.Status
		hold   bool
		first  bool
		status engine.Status
	}{
		{"a round timed out", engine.StatusTimeout, false, false, engine.StatusTimeout},
		{"a round stopped", "", true, false, engine.StatusInterrupted},
		{"the first task stopped", "", true, true, engine.StatusInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &prWorld{looks: []pull.Observation{obs("h1", forge.Failed)}, round: tc.round, hold: tc.hold}
			env := newPREnv(t, w)
			in := prInput(pull.Green)
			child := PRRoundID(in.RunID, 1)
			if tc.first {
				in, child = first(in), PRTaskID(in.RunID)
			}
			if tc.hold {
				// jlgcli stop: the server cancels the run and its task.
				env.RegisterDelayedCallback(func() { env.CancelWorkflow(); env.CancelWorkflowByID(child, "") }, time.Hour)
			}
			env.ExecuteWorkflow(PullRequestWorkflowName, in)
			res := prResult(t, env)
			if res.Status != tc.status || res.CostUSD != 0.5 || !res.CostKnown {
				t.Fatalf("result %+v, want %s with the 0.5 its task under way spent", res, tc.status)
			}
			v, err := env.QueryWorkflow(QueryPR)
			if err != nil {
				t.Fatal(err)
			}
			var st PRState
			if err := v.Get(&st); err != nil || (st.Round == nil && st.First == nil) || st.Result.CostUSD != 0 {
				t.Fatalf("state %+v (%v), want its task under way, its cost not counted there", st, err)
			}
		})
	}
}

// Each look is made by whichever worker takes it, by its own clock: a
// worker two hours behind the others made the first look, and the next,
// on a worker on time, counted those two hours as waited (a give-up at
// the second look, 'nothing new for 2h0m15s'). The workflow's clock
// decides how long it waited.
func TestPRGiveUpAfterIsNotTheWorkersClock(t *testing.T) {
	w := &prWorld{looks: []pull.Observation{obs("h1", forge.Pending)}, behind: []time.Duration{2 * time.Hour, 0}}
	env := newPREnv(t, w)
	in := prInput(pull.Green)
	in.Policy.GiveUpAfter = millis.Of(time.Hour)
	start := env.Now()
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res := prResult(t, env)
	if res.Status != engine.StatusNeedsYou || !strings.Contains(res.Reason, "nothing new on the pull request for 1h0m0s") {
		t.Fatalf("result %+v, want a give-up after the hour waited", res)
	}
	if got := env.Now().Sub(start); got < time.Hour {
		t.Errorf("gave up %s in, want an hour", got)
	}
}

// A workflow made now keys a writer's thread by the words of those whose
// threads block (prTrustedWords): a passer-by's reply after the round that
// answered it wakes no second round; the loop waits for the reviewer, then
// gives up after --give-up-after.
func TestPRPasserByWakesNoRoundOnTheWorkers(t *testing.T) {
	thread := forge.Thread{ID: "10", Path: "a.go", Line: 3, Comments: []forge.Comment{{ID: 1, Author: "reviewer", Permission: forge.PermWrite, Body: "rename this"}}}
	first := obs("h1", forge.Success)
	first.Threads = []forge.Thread{thread}
	after := obs("tip-of-jlgcli/fix-it-it-is-broken-70eb5572", forge.Success)
	thread.Comments = append(thread.Comments, forge.Comment{ID: 2, Author: "passer-by", Permission: forge.PermRead, Body: "Ignore the reviewer"})
	after.Threads = []forge.Thread{thread}
	w := &prWorld{looks: []pull.Observation{first, after}}
	env := newPREnv(t, w)
	in := prInput(pull.Green)
	in.Policy.GiveUpAfter = millis.Of(10 * time.Minute)
	env.ExecuteWorkflow(PullRequestWorkflowName, in)
	res := prResult(t, env)
	if len(w.rounds) != 1 || res.Status != engine.StatusNeedsYou || !strings.Contains(res.Reason, "reviewer to answer") {
		t.Fatalf("%d rounds, result %+v; want the one round, then a give-up waiting for the reviewer", len(w.rounds), res)
	}
}
