package temporal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// gitIn runs git in dir for a test.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// prepareTries runs a task's workflow whose prepare activity is the
// worker's own (acts'), on the remote url; after is called once its first
// try ended. It returns the tries and the result.
func prepareTries(t *testing.T, acts *Activities, url string, after func()) (int, taskengine.Result) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The activities run git for real: slower than the detector expects.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	tries := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, in PrepareInput) (Prepared, error) {
		tries++
		p, err := acts.Prepare(ctx, in)
		if tries == 1 {
			after()
		}
		return p, err
	}, activity.RegisterOptions{Name: PrepareName})
	env.RegisterActivityWithOptions(acts.Attempt, activity.RegisterOptions{Name: AttemptName})
	env.RegisterActivityWithOptions(acts.Finish, activity.RegisterOptions{Name: FinishName})
	env.OnActivity(AttemptName, mockAny, mockAny).Return(func(_ context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
		return taskengine.AttemptOutcome{Attempt: taskengine.Attempt{Number: in.Next.Number, Tier: "a", InTier: 1, Gate: gateOf(true, 1)}}, nil
	})
	env.OnActivity(FinishName, mockAny, mockAny).Return(Finished{Merge: &taskengine.MergeInfo{Status: "skipped"}}, nil)
	spec := local.TaskSpec{Tiers: []local.TierSpec{{Name: "a", Backend: "x", Attempts: 1}}}
	env.ExecuteWorkflow(TaskWorkflowName, TaskInput{RunID: "r1", Task: "t", Repo: url, BaseBranch: "main", Branch: "jlgcli/t-r1",
		Spec: spec, Queue: "q"})
	var res taskengine.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return tries, res
}

// TestTransientGitFailureIsRetried: a ref of the worker's clone locked by
// another git (its .lock file there) fails the prepare activity's first
// try; Temporal makes it again, and once the lock is gone the task goes on
// and is done. A remote that is no repository fails once, not retried.
func TestTransientGitFailureIsRetried(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote")
	gitIn(t, "", "init", "-q", "-b", "main", remote)
	gitIn(t, remote, "commit", "-q", "--allow-empty", "-m", "first")
	acts := &Activities{StateDir: t.TempDir()}
	if _, err := git.OpenClone(context.Background(), acts.cloneDir(remote), remote); err != nil {
		t.Fatal(err)
	}
	gitIn(t, remote, "commit", "-q", "--allow-empty", "-m", "second")
	lock := filepath.Join(acts.cloneDir(remote), ".git", "refs", "remotes", "origin", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tries, res := prepareTries(t, acts, remote, func() { os.Remove(lock) })
	if tries != 2 || res.Status != engine.StatusDone {
		t.Errorf("locked clone: %d tries, %s (%s); want 2 tries, done", tries, res.Status, res.Details)
	}

	tries, res = prepareTries(t, acts, filepath.Join(t.TempDir(), "nosuch.git"), func() {})
	if tries != 1 || res.Status != engine.StatusError || !strings.Contains(res.Details, "nosuch.git' does not exist") {
		t.Errorf("no repository: %d tries, %s (%s); want 1 try, error with git's message", tries, res.Status, res.Details)
	}
}
