package temporal

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkerOptions are a worker's settings.
type WorkerOptions struct {
	Queue string
	// Backends are the backends this machine has: the worker takes the
	// attempts of those only.
	Backends []string
	// Concurrency bounds the attempts (and plans) run at once, all
	// backends together.
	Concurrency int
	// StopTimeout bounds how long a stopping worker waits for its
	// activities, once stopped, to report their failure (default 30s).
	StopTimeout time.Duration
}

// heartbeatThrottle bounds the time between two heartbeats an activity
// sends: the server's answer to one tells it of a cancellation (jlgcli
// stop), so its agent is stopped within that time (the SDK's own bound is
// most of the heartbeat timeout, a minute by default).
const heartbeatThrottle = 5 * time.Second

// Register registers the task, batch and pull-request workflows and acts' activities on
// w.
func Register(w worker.Registry, acts *Activities) {
	w.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	w.RegisterActivityWithOptions(acts.Prepare, activity.RegisterOptions{Name: PrepareName})
	w.RegisterActivityWithOptions(acts.Attempt, activity.RegisterOptions{Name: AttemptName})
	w.RegisterActivityWithOptions(acts.Plan, activity.RegisterOptions{Name: PlanName})
	w.RegisterActivityWithOptions(acts.Finish, activity.RegisterOptions{Name: FinishName})
	w.RegisterActivityWithOptions(acts.Previous, activity.RegisterOptions{Name: PreviousName})
	w.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	w.RegisterActivityWithOptions(acts.PrepareBatch, activity.RegisterOptions{Name: PrepareBatchName})
	w.RegisterActivityWithOptions(acts.Land, activity.RegisterOptions{Name: LandName})
	w.RegisterActivityWithOptions(acts.PushBase, activity.RegisterOptions{Name: PushBaseName})
	w.RegisterActivityWithOptions(acts.Workers, activity.RegisterOptions{Name: WorkersName})
	w.RegisterWorkflowWithOptions(PullRequestWorkflow, workflow.RegisterOptions{Name: PullRequestWorkflowName})
	w.RegisterActivityWithOptions(acts.PRBegin, activity.RegisterOptions{Name: PRBeginName})
	w.RegisterActivityWithOptions(acts.PRLook, activity.RegisterOptions{Name: PRLookName})
	w.RegisterActivityWithOptions(acts.PRRound, activity.RegisterOptions{Name: PRRoundName})
	w.RegisterActivityWithOptions(acts.PRPush, activity.RegisterOptions{Name: PRPushName})
	w.RegisterActivityWithOptions(acts.PRRerun, activity.RegisterOptions{Name: PRRerunName})
	w.RegisterActivityWithOptions(acts.PRMerge, activity.RegisterOptions{Name: PRMergeName})
	w.RegisterActivityWithOptions(acts.PRJudge, activity.RegisterOptions{Name: PRJudgeName})
	w.RegisterActivityWithOptions(acts.PRComment, activity.RegisterOptions{Name: PRCommentName})
	w.RegisterActivityWithOptions(acts.PROpen, activity.RegisterOptions{Name: PROpenName})
	w.RegisterActivityWithOptions(acts.IssueClaim, activity.RegisterOptions{Name: IssueClaimName})
	w.RegisterActivityWithOptions(acts.IssueLook, activity.RegisterOptions{Name: IssueLookName})
	w.RegisterActivityWithOptions(acts.IssueNotes, activity.RegisterOptions{Name: IssueNotesName})
	w.RegisterActivityWithOptions(acts.IssueProgress, activity.RegisterOptions{Name: IssueProgressName})
	w.RegisterActivityWithOptions(acts.IssuesEnded, activity.RegisterOptions{Name: IssuesEndedName})
	w.RegisterWorkflowWithOptions(IssueWatchWorkflow, workflow.RegisterOptions{Name: IssueWatchWorkflowName})
	w.RegisterActivityWithOptions(acts.IssueWatchLook, activity.RegisterOptions{Name: IssueWatchLookName})
}

// Identity is the identity of a worker that takes the attempts of
// backends, as the server shows it (its pollers, the activities it
// started): "PID@HOST backends=claude,codex". Workers reads the backends
// back (BackendsOf).
func Identity(backends []string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s backends=%s", os.Getpid(), host, strings.Join(backends, ","))
}

// BackendsOf are the backends that a worker's identity (Identity) names.
func BackendsOf(identity string) []string {
	i := strings.LastIndex(identity, " backends=")
	if i < 0 {
		return nil
	}
	return strings.Split(identity[i+len(" backends="):], ",")
}

// Serve runs a worker until ctx is done: the workflows and the preparing
// and finishing activities on the queue, and the attempts on the queue of
// each of its backends. A stopping worker hands back what it runs: its
// activities under way are stopped (an agent's process group is killed)
// and fail while the worker still reports to the server, which gives them
// to another worker at once; none is left half-recorded (an attempt is
// recorded only once it has pushed). Then the worker stops polling.
func Serve(ctx context.Context, c client.Client, acts *Activities, o WorkerOptions) error {
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	stop, handBack := context.WithCancel(context.Background())
	defer handBack()
	acts.stop, acts.client = stop, c
	acts.machine = newMachine(o.Concurrency)
	var workers []worker.Worker
	id := Identity(o.Backends)
	main := worker.New(c, o.Queue, worker.Options{Identity: id, WorkerStopTimeout: o.StopTimeout, MaxHeartbeatThrottleInterval: heartbeatThrottle})
	Register(main, acts)
	workers = append(workers, main)
	for _, b := range o.Backends {
		tuner, err := acts.machine.tuner()
		if err != nil {
			return err
		}
		w := worker.New(c, AttemptQueue(o.Queue, b), worker.Options{Identity: id, Tuner: tuner, MaxConcurrentActivityTaskPollers: 1,
			WorkerStopTimeout: o.StopTimeout, DisableWorkflowWorker: true, MaxHeartbeatThrottleInterval: heartbeatThrottle})
		w.RegisterActivityWithOptions(acts.Attempt, activity.RegisterOptions{Name: AttemptName})
		w.RegisterActivityWithOptions(acts.Plan, activity.RegisterOptions{Name: PlanName})
		workers = append(workers, w)
	}
	for i, w := range workers {
		if err := w.Start(); err != nil {
			for _, s := range workers[:i] {
				s.Stop()
			}
			return err
		}
	}
	<-ctx.Done()
	handBack()
	ended := make(chan struct{})
	go func() {
		acts.running.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(o.StopTimeout):
	}
	for _, w := range workers {
		w.Stop()
	}
	return nil
}
