package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	taskreport "github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// Submission is how a task or a batch is sent to a Temporal server, beyond
// the configuration (whose [temporal] names the server).
type Submission struct {
	// RepoURL is the repository as the workers clone it; "": the origin of
	// the repository of the configuration's directory.
	RepoURL string
	// Base is the branch the work starts from; "": the branch checked out
	// there, else main.
	Base string
	// Heartbeat is how long a silent worker keeps an attempt before
	// another worker makes it again (at least 10s).
	Heartbeat time.Duration
	// Detach: return once submitted, without following the run.
	Detach bool
	// IncludeDirty asks for the uncommitted changes of the tree here,
	// which the workers cannot see: a task's submission refuses it.
	IncludeDirty bool
	// Plan asks a planner for steps first (a task's; a batch's tasks have
	// it in their specs).
	Plan bool
}

// Dial connects to the Temporal server of conn (temporal.ConnectionOf a
// configuration, or a Connect of a run): the one place where jlgcli dials
// one.
func Dial(ctx context.Context, conn temporal.Connection) (client.Client, error) {
	return temporal.Dial(ctx, conn, nil)
}

// Connect is how to reach the Temporal server that a run kept here was
// submitted to: as its record says, each setting that the configuration or
// flags give overriding the record's (temporal.RunConnection). nil: as the
// record says, with the environment's API key.
type Connect func(run *store.Run) (temporal.Connection, error)

// connection is how to reach run's server through connect.
func (connect Connect) connection(run *store.Run) (temporal.Connection, error) {
	if connect != nil {
		return connect(run)
	}
	return temporal.RunConnection(run.Meta.Temporal, run.ID, &config.Config{}, os.Getenv), nil
}

// getenv is p's Getenv, else the environment's.
func getenv(p local.Parts) func(string) string {
	if p.Getenv != nil {
		return p.Getenv
	}
	return os.Getenv
}

// SubmitTask sends a task of prompt, with the settings of cfg, to the
// Temporal server of cfg, keeps a local record of it, and follows it to its
// end: its result; with sub.Detach it returns once submitted, with a nil
// result. The user's clone is never touched: the workers clone the remote
// and push their work there. p says the messages; its TaskObserver follows
// the attempts (closed, when it has a Close method, once following ends).
func SubmitTask(ctx context.Context, cfg *config.Config, sub Submission, prompt string, p local.Parts) (string, *taskengine.Result, error) {
	in, err := submittedTask(ctx, cfg, sub, prompt, p)
	if err != nil {
		return "", nil, err
	}
	id, s, t := in.RunID, in.Spec, cfg.Temporal
	c, err := Dial(ctx, temporal.ConnectionOf(cfg, getenv(p)))
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	if err := temporal.Submit(ctx, c, in); err != nil {
		return "", nil, err
	}
	rec := in // the record keeps the environment's names only
	rec.Spec = in.Spec.Recorded()
	run := keepRecord(p, cfg, id, "task", s.Tiers[0].Backend, prompt, rec)
	if run != nil {
		defer run.Close()
	}
	if sub.Detach {
		return id, nil, nil
	}
	say(p).Notice(fmt.Sprintf("task %s submitted to %s (queue %s); its branch on %s: %s", id, t.Address, t.TaskQueue, in.Repo, in.Branch))
	hooks := local.HooksOf(p, run) // they fire here, on the side that follows the run
	hooks.Started()
	obs := following(ctx, c, p.TaskObserver, hooks, 0, run)
	res, err := temporal.Follow(ctx, c, id, s.Policy(prompt).Tiers, obs, time.Second)
	closeObserver(obs)
	if err := followed(ctx, p, "task", id, err, run, func() error { return saveTask(run, res) }); err != nil {
		return id, nil, err
	}
	taskStopped(p, id, res.Status)
	hooks.TaskEnded(res)
	return id, &res, nil
}

// submittedTask is the input of the workflow of a task of prompt sent to
// the Temporal server of cfg, with a new run id: what a submission cannot
// do refused, its backends named, its checks detected when none is
// configured.
func submittedTask(ctx context.Context, cfg *config.Config, sub Submission, prompt string, p local.Parts) (temporal.TaskInput, error) {
	if sub.IncludeDirty {
		return temporal.TaskInput{}, &exit.UsageError{Err: errors.New("--include-dirty cannot reach Temporal workers: they clone the remote; commit and push your changes first")}
	}
	if err := checkTemporal(cfg, sub); err != nil {
		return temporal.TaskInput{}, err
	}
	s := local.TaskSpecOf(cfg, "")
	s.Plan = sub.Plan
	if err := namedBackends(s); err != nil {
		return temporal.TaskInput{}, err
	}
	url, base, checkout, err := remoteOf(ctx, cfg, sub.RepoURL, sub.Base)
	if err != nil {
		return temporal.TaskInput{}, err
	}
	if s.Checks, err = submittedChecks(s.Checks, checkout, url, "", local.TaskChecksHint); err != nil {
		return temporal.TaskInput{}, err
	}
	t := cfg.Temporal
	id := store.NewRunID(time.Now())
	in := temporal.TaskInput{RunID: id, Task: prompt, Repo: url, BaseBranch: base, Branch: git.BranchName(id, prompt),
		MergePush: cfg.Merge == git.MergePush, Spec: s, Queue: t.TaskQueue, WorkerWaitMs: millis.Of(t.WorkerWait),
		HeartbeatMs: millis.Of(sub.Heartbeat)}
	if len(s.WindowLimits) > 0 {
		in.Windows = knownWindows(p, cfg) // as a local task with a window limit starts
	}
	return in, nil
}

// namedBackends refuses a spec sent to Temporal whose tier names no
// backend: the workers' machines decide which are installed.
func namedBackends(s local.TaskSpec) error {
	for _, t := range s.Tiers {
		if t.Backend == "" {
			return &exit.UsageError{Err: errors.New("a task sent to Temporal names its backend (-b BACKEND, --tier or [[tiers]]): the workers' machines decide which are installed")}
		}
	}
	return nil
}

// CheckLocal refuses, for a task or batch (kind) that runs here because
// cfg names no Temporal server, what only a submission to one does: sub's
// repository or detach, a heartbeat timeout given (heartbeatGiven), and
// merge = push (a *config.Error); it checks nothing when cfg names one.
func CheckLocal(cfg *config.Config, kind string, sub Submission, heartbeatGiven bool) error {
	switch {
	case cfg.Temporal.Address != "":
	case sub.RepoURL != "" || sub.Detach || heartbeatGiven:
		return usagef("--repo, --detach and --heartbeat-timeout are for a %s sent to a Temporal server (--temporal HOST:PORT)", kind)
	case cfg.Merge == git.MergePush:
		return cfg.KeyError("merge", "push is for a "+kind+" sent to a Temporal server (--temporal); here: squash or none")
	}
	return nil
}

// checkTemporal refuses what a submission to Temporal cannot do.
func checkTemporal(cfg *config.Config, sub Submission) error {
	if sub.Heartbeat < 10*time.Second {
		return &exit.UsageError{Err: fmt.Errorf("--heartbeat-timeout must be at least 10s (workers heartbeat every 5s), not %s", sub.Heartbeat)}
	}
	if cfg.Commit == git.CommitDirect {
		return cfg.KeyError("commit", "direct cannot be done by Temporal workers: they commit on the task branch on the remote")
	}
	return nil
}

// remoteOf is the repository the workers clone and the branch a
// submission starts from: as given, else this repository's origin and
// its current branch; and the checkout of the repository here, where its
// checks are detected: this repository, when the workers clone its
// origin ("" for none).
func remoteOf(ctx context.Context, cfg *config.Config, url, base string) (string, string, string, error) {
	checkout := ""
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		if url == "" {
			return "", "", "", &exit.UsageError{Err: fmt.Errorf("--repo URL is needed outside a git repository: %v", err)}
		}
	} else {
		origin, oerr := repo.RemoteURL(ctx, "origin")
		if url == "" {
			if oerr != nil {
				return "", "", "", &exit.UsageError{Err: fmt.Errorf("this repository has no origin to give the workers (%v): pass --repo URL", oerr)}
			}
			url = origin
		}
		if oerr == nil && sameRemote(url, origin) {
			checkout = repo.Dir
		}
		if base == "" {
			if base, _ = repo.CurrentBranch(ctx); base == "" {
				return "", "", "", &exit.UsageError{Err: errors.New("HEAD is detached: name the base branch with --base BRANCH")}
			}
		}
	}
	if base == "" {
		base = "main"
	}
	return url, base, checkout, nil
}

// sameRemote reports whether a and b name the same remote, a local one
// with or without file://.
func sameRemote(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.TrimPrefix(s, "file://"), "/") }
	return norm(a) == norm(b)
}

// submittedChecks makes a submission's pre-flight of its checks, as a
// local task's (local.DefaultChecks): checks, when configured, else those
// that the checkout of the repository calls for; without a checkout here
// there is nothing to detect them in, and the submission is refused.
func submittedChecks(checks []gate.Check, checkout, url, who, hint string) ([]gate.Check, error) {
	if len(checks) > 0 {
		return checks, nil
	}
	if checkout == "" {
		return nil, &exit.UsageError{Hint: hint,
			Err: fmt.Errorf("%sno checks to judge the work with: none configured, and no checkout of %s here to detect them in", who, url)}
	}
	return local.DefaultChecks(checkout, who, hint)
}

// SubmitBatch sends the batch spec, resolved from its sheets, to the
// Temporal server of cfg, keeps a local record of it, and follows it to its
// end: its result; with sub.Detach it returns once submitted, with a nil
// result. changed (nil: nobody) is told of each task whose status changes
// as the batch is followed; p says the messages.
func SubmitBatch(ctx context.Context, cfg *config.Config, sub Submission, spec local.BatchSpec, changed func(batch.TaskSummary), p local.Parts) (string, *batch.Summary, error) {
	if err := checkTemporal(cfg, sub); err != nil {
		return "", nil, err
	}
	if cfg.Until != "" {
		// Each task lands through a pull request the workers work, with
		// their own token.
		if err := landByPR(ctx, cfg, nil, &spec, p); err != nil {
			return "", nil, err
		}
	}
	for _, t := range spec.Tasks {
		for _, tr := range t.Spec.Tiers {
			if tr.Backend == "" {
				return "", nil, &exit.UsageError{Err: fmt.Errorf("task %s: a batch sent to Temporal names its backends (-b, --tier, [[tiers]] or the sheet's backend)", t.ID)}
			}
		}
	}
	url, base, checkout, err := remoteOf(ctx, cfg, sub.RepoURL, sub.Base)
	if err != nil {
		return "", nil, err
	}
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		if t.Spec.Checks, err = submittedChecks(t.Spec.Checks, checkout, url, fmt.Sprintf("%s (%s): ", t.ID, t.File), local.BatchChecksHint); err != nil {
			return "", nil, err
		}
	}
	spec.BaseBranch, spec.Repo = base, url
	t := cfg.Temporal
	c, err := Dial(ctx, temporal.ConnectionOf(cfg, getenv(p)))
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	id := store.NewRunID(time.Now())
	in := temporal.BatchInput{RunID: id, Repo: url, Spec: spec, Branch: temporal.BatchBranch(id), MergePush: cfg.Merge == git.MergePush,
		Queue: t.TaskQueue, WorkerWaitMs: millis.Of(t.WorkerWait), HeartbeatMs: millis.Of(sub.Heartbeat)}
	if slices.ContainsFunc(spec.Tasks, func(t local.BatchTask) bool { return len(t.Spec.WindowLimits) > 0 }) {
		in.Windows = knownWindows(p, cfg)
	}
	if err := temporal.SubmitBatch(ctx, c, in); err != nil {
		return "", nil, err
	}
	rec := in // the record keeps the environment's names only
	rec.Spec = in.Spec.Recorded()
	run := keepRecord(p, cfg, id, "batch", "", plural.N(len(spec.Tasks), "task sheet"), rec)
	if run != nil {
		defer run.Close()
	}
	if sub.Detach {
		return id, nil, nil
	}
	say(p).Notice(fmt.Sprintf("batch %s of %s submitted to %s (queue %s); its branch on %s: %s", id, plural.N(len(spec.Tasks), "task"), t.Address, t.TaskQueue, url, in.Branch))
	hooks := local.HooksOf(p, run) // they fire here, on the side that follows the run
	hooks.Started()
	tasks := &batchTasks{ctx: ctx, c: c, p: p, in: in, changed: changed}
	if run != nil {
		tasks.root, tasks.meta = run.Root(), run.Meta
	}
	sum, err := temporal.FollowBatch(ctx, c, id, tasks.change, time.Second)
	tasks.wait()
	if err := followed(ctx, p, "batch", id, err, run, func() error { return saveBatch(run, sum) }); err != nil {
		return id, nil, err
	}
	if n := local.StoppedBatch(id, sum.Status); n != "" {
		say(p).Notice(n)
	}
	hooks.BatchEnded(sum)
	return id, &sum, nil
}

// batchTasks follows the tasks of a batch on Temporal as they start, as
// the batch's own follower: each gets a local record whose parent is the
// batch (runs, show and the board list it under its batch), the hooks of
// its attempts (task.attempt, task.escalated) and of its start and end,
// and its attempts' output as their workers write it (logs -f), as a local
// batch's task does; changed (nil: nobody) is told of each change too.
type batchTasks struct {
	ctx context.Context
	c   client.Client
	p   local.Parts
	// root is the state root of the batch's record, meta its meta ("":
	// the batch has no record, nor do its tasks).
	root    string
	meta    store.Meta
	in      temporal.BatchInput
	changed func(batch.TaskSummary)
	// inputOf, when not nil, is the input of the batch whose task's run
	// is id, the record's parent being in's run (a watch's batches);
	// false when it cannot be had.
	inputOf func(id string) (temporal.BatchInput, bool)

	seen map[string]bool
	wg   sync.WaitGroup
}

// change is told of a task of the batch whose status changed.
func (b *batchTasks) change(t batch.TaskSummary) {
	if b.changed != nil {
		b.changed(t)
	}
	if b.root == "" || t.RunID == nil || b.seen[*t.RunID] { // once it started (or, quicker than a look, ended)
		return
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	id := *t.RunID
	b.seen[id] = true
	in := b.in
	if b.inputOf != nil {
		var ok bool
		if in, ok = b.inputOf(id); !ok {
			return
		}
	}
	i := slices.IndexFunc(in.Spec.Tasks, func(bt local.BatchTask) bool { return bt.ID == t.ID })
	if i < 0 || len(in.Spec.Tasks[i].Spec.Tiers) == 0 {
		return
	}
	bt := in.Spec.Tasks[i]
	rec := temporal.TaskInput{RunID: id, Task: bt.Prompt, Repo: in.Repo, BaseBranch: in.Branch, Branch: git.BranchName(id, bt.Prompt),
		Spec: bt.Spec.Recorded(), Queue: in.Queue, WorkerWaitMs: in.WorkerWaitMs, HeartbeatMs: in.HeartbeatMs}
	run, made, err := b.record(id, bt, rec)
	if err != nil {
		say(b.p).Warn(fmt.Sprintf("task %s of batch %s: no local record of it could be kept: %v", t.ID, b.in.RunID, err))
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer run.Close()
		hooks := local.HooksOf(b.p, run)
		if made > 0 {
			hooks.Resumed()
		} else {
			hooks.Started()
		}
		obs := following(b.ctx, b.c, nil, hooks, made, run)
		res, err := temporal.Follow(b.ctx, b.c, id, bt.Spec.Policy(bt.Prompt).Tiers, obs, time.Second)
		closeObserver(obs)
		if err != nil {
			return // the batch's follower says why it stopped following
		}
		if err := saveTask(run, res); err != nil {
			say(b.p).Warn(fmt.Sprintf("keep the result of task %s: %v", id, err))
		}
		hooks.TaskEnded(res)
	}()
}

// record is the local record of task bt's run id, made with rec as its
// options, or the one made before (a resumed batch's task that goes on
// from its history, after made attempts), locked.
func (b *batchTasks) record(id string, bt local.BatchTask, rec temporal.TaskInput) (run *store.Run, made int, err error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, 0, err
	}
	run, err = store.Create(b.root, id, store.Meta{Command: "task", Backend: bt.Spec.Tiers[0].Backend, Prompt: bt.Prompt,
		Options: data, Cwd: b.meta.Cwd, Temporal: b.meta.Temporal, Parent: b.in.RunID})
	if errors.Is(err, store.ErrExists) {
		if run, err = store.Open(b.root, id); err != nil {
			return nil, 0, err
		}
		if _, err := run.Lock(); err != nil {
			run.Close()
			return nil, 0, err
		}
		if row, err := run.Row(); err == nil {
			made = row.Iterations
		}
		return run, made, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if err := run.WriteCheckpoint(store.Progress{Status: string(engine.StatusRunning), Heartbeat: time.Now().UTC()}); err != nil {
		run.Close()
		return nil, 0, err
	}
	indexRun(run)
	return run, 0, nil
}

// wait waits for the tasks followed to be saved.
func (b *batchTasks) wait() { b.wg.Wait() }

// hookedObserver follows a task on Temporal for obs (nil: nobody) and its
// hooks, which get each attempt judged after the first from (those made
// before this follower, which others told) as those of a task run here do,
// and keeps in the run's local record (logs, nil: none) the output of each
// attempt as its worker's heartbeats carry it, for logs -f and the board.
type hookedObserver struct {
	obs   taskengine.Observer
	hooks local.RunHooks
	from  int
	logs  *attemptLogs
	// save, when not nil, keeps in the run's record where the task stands
	// as each attempt starts and ends (show reads it there).
	save func()
}

// following is obs, the hooks of the attempts after the first from, and
// the output logs of run (nil: none), as one observer, which also keeps in
// run where the task stands, asking c, as each attempt starts and ends;
// close it (closeObserver) once the task is followed.
func following(ctx context.Context, c client.Client, obs taskengine.Observer, hooks local.RunHooks, from int, run *store.Run) taskengine.Observer {
	o := hookedObserver{obs: obs, hooks: hooks, from: from, logs: logsOf(run)}
	if run != nil {
		o.save = func() {
			if res, err := runningTask(ctx, c, run); err == nil && res.Status == engine.StatusRunning {
				_ = saveTask(run, res) // where it stands, until its end is saved
			}
		}
	}
	return o
}

func logsOf(run *store.Run) *attemptLogs {
	if run == nil {
		return nil
	}
	return &attemptLogs{run: run, n: -1}
}

// attemptLogs writes the output of a Temporal task's attempts into its
// local record's output logs, one attempt's at a time.
type attemptLogs struct {
	run *store.Run
	n   int
	w   io.WriteCloser
}

func (l *attemptLogs) write(n int, p []byte) {
	if n != l.n {
		l.close()
		l.n = n
		if w, err := l.run.Output(n); err == nil {
			l.w = w
		}
	}
	if l.w != nil {
		l.w.Write(p)
	}
}

func (l *attemptLogs) close() {
	if l.w != nil {
		l.w.Close()
		l.w = nil
	}
}

// AttemptOutput keeps the output of attempt n (temporal.OutputObserver).
func (o hookedObserver) AttemptOutput(n int, p []byte) {
	if o.logs != nil {
		o.logs.write(n, p)
	}
}

// AgentLine shows the agent's retry or error line, said on its worker, as
// a local attempt's is shown (engine.AgentObserver).
func (o hookedObserver) AgentLine(line string) {
	if a, ok := o.obs.(engine.AgentObserver); ok {
		a.AgentLine(line)
	}
}

// Confined keeps in the run's local record how its worker confined its
// agent and checks (temporal.SandboxObserver): show says it, as for a local run.
func (o hookedObserver) Confined(r sandbox.Record) {
	if o.logs == nil {
		return
	}
	run := o.logs.run
	run.Meta.Sandbox = &r
	_ = run.WriteMeta() // a detail of the record: the run goes on without it
}

// Close ends the output logs and closes obs.
func (o hookedObserver) Close() {
	if o.logs != nil {
		o.logs.close()
	}
	closeObserver(o.obs)
}

func (o hookedObserver) AttemptStarted(p taskengine.Progress) {
	if o.obs != nil {
		o.obs.AttemptStarted(p)
	}
	if o.save != nil {
		o.save()
	}
}

func (o hookedObserver) Phase(p taskengine.Progress, phase string) {
	if o.obs != nil {
		o.obs.Phase(p, phase)
	}
}

func (o hookedObserver) AttemptDone(p taskengine.Progress, a taskengine.Attempt) {
	if o.obs != nil {
		o.obs.AttemptDone(p, a)
	}
	if a.Number > o.from {
		o.hooks.Attempt(a)
	}
	if o.save != nil {
		o.save()
	}
}

// Waiting tells obs, when it shows waits, and the hooks that the task
// waits for a rate limit or a subscription window to reset (temporal.Waiter).
func (o hookedObserver) Waiting(until time.Time, message string) {
	if w, ok := o.obs.(temporal.Waiter); ok {
		w.Waiting(until, message)
	}
	o.hooks.Waiting(until, message)
}

// taskStopped tells of task id ended with status when it is to be resumed,
// as a local task's end does.
func taskStopped(p local.Parts, id string, status engine.Status) {
	if local.Resumable(status) || status == engine.StatusBudgetExceeded {
		say(p).Notice(local.StoppedTask(id, "", status))
	}
}

// knownWindows are the subscription windows that the runs kept in cfg's
// state root last reported (none when it cannot be read): a task sent to
// Temporal with a window limit starts from them, as a local one does.
func knownWindows(p local.Parts, cfg *config.Config) engine.Windows {
	root, err := local.StateRoot(p, cfg.Cwd, cfg.StateDir)
	if err != nil {
		return nil
	}
	idx, err := store.OpenIndex(root)
	if err != nil {
		return nil
	}
	defer idx.Close()
	return local.KnownWindows(idx)
}

// keepRecord keeps the local record of a run just submitted (recordRun),
// or says why it could not: the run goes on without it.
func keepRecord(p local.Parts, cfg *config.Config, id, command, backend, prompt string, input any) *store.Run {
	run, err := recordRun(p, cfg, id, command, backend, prompt, input)
	if err != nil {
		say(p).Warn(fmt.Sprintf("%s %s was submitted, but no local record of it could be kept (show and report will not find it): %v", command, id, err))
		return nil
	}
	return run
}

// followed ends the following of a run: err, the following's, is returned
// (a Ctrl-C only stops following: the run goes on on the workers);
// otherwise the result is kept in the run's record (save), when it has one.
func followed(ctx context.Context, p local.Parts, command, id string, err error, run *store.Run, save func() error) error {
	if err != nil {
		if ctx.Err() != nil {
			say(p).Notice(fmt.Sprintf("stopped following %s %s; it goes on on the workers", command, id))
		}
		return err
	}
	if run != nil {
		if err := save(); err != nil {
			say(p).Warn(fmt.Sprintf("keep the result of %s %s: %v", command, id, err))
		}
	}
	return nil
}

// recordRun keeps a local record of a run submitted to Temporal, in the
// state directory, so that runs, show, report and resume find it; input,
// the workflow's, is its options. The record's lock is held until the
// caller closes it.
func recordRun(p local.Parts, cfg *config.Config, id, command, backend, prompt string, input any) (*store.Run, error) {
	root, err := local.StateRoot(p, cfg.Cwd, cfg.StateDir)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	run, err := store.Create(root, id, store.Meta{Command: command, Backend: backend, Prompt: prompt, Options: data, Cwd: cfg.Cwd,
		Temporal: temporal.Recorded(cfg.Temporal)})
	if err != nil {
		return nil, fmt.Errorf("record run %s: %w", id, err)
	}
	if err := run.WriteCheckpoint(store.Progress{Status: string(engine.StatusRunning), Heartbeat: time.Now().UTC()}); err != nil {
		run.Close()
		return nil, err
	}
	indexRun(run)
	return run, nil
}

// indexRun brings the run index's row of run up to date with its
// checkpoint; the index is a cache (runs rebuilds it), so a failure is not
// the run's.
func indexRun(run *store.Run) {
	idx, err := store.OpenIndex(run.Root())
	if err != nil {
		return
	}
	defer idx.Close()
	if row, err := run.Row(); err == nil {
		_ = idx.Upsert(row)
	}
}

// saveTask writes a Temporal task's result as its record's report and
// checkpoint.
func saveTask(run *store.Run, res taskengine.Result) error {
	if err := run.WriteReport(res, taskreport.New(res).Markdown()); err != nil {
		return err
	}
	if err := run.WriteCheckpoint(store.Progress{Status: string(res.Status), Iterations: len(res.Attempts), CostUSD: res.CostUSD,
		CostKnown: res.CostKnown, DurationMs: res.DurationMs, Heartbeat: time.Now().UTC(), Windows: res.Windows}); err != nil {
		return err
	}
	indexRun(run)
	return nil
}

// saveBatch writes a Temporal batch's result as its record's report and
// checkpoint.
func saveBatch(run *store.Run, sum batch.Summary) error {
	if err := run.WriteReport(sum, taskreport.BatchMarkdown(sum)); err != nil {
		return err
	}
	if err := run.WriteCheckpoint(store.Progress{Status: sum.Status, Iterations: len(sum.Tasks), CostUSD: sum.CostUSD,
		CostKnown: sum.CostKnown, DurationMs: sum.DurationMs, Heartbeat: time.Now().UTC()}); err != nil {
		return err
	}
	indexRun(run)
	return nil
}

// Refresh brings the record of a run on Temporal up to date from the
// server, unless its report already says it ended: the result of a run
// that ended, or where a running one stands (status running). A run made
// here is left as it is.
func Refresh(ctx context.Context, run *store.Run, connect Connect) error {
	if run.Meta.Temporal == nil {
		return nil
	}
	var head struct {
		Status string `json:"status"`
	}
	if found, _ := run.ReadReport(&head); found && head.Status != string(engine.StatusRunning) {
		return nil
	}
	if _, err := run.Lock(); err != nil {
		if errors.Is(err, store.ErrLive) {
			return nil // the jlgcli following it writes it
		}
		return err
	}
	t := run.Meta.Temporal
	conn, err := connect.connection(run)
	if err != nil {
		return err
	}
	c, err := Dial(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	switch run.Meta.Command {
	case "pr":
		return refreshPR(ctx, c, run)
	case "batch":
		var sum batch.Summary
		closed, err := temporal.Outcome(ctx, c, run.ID, &sum)
		query := temporal.QueryBatchSummary
		if temporal.IsWatch(run.Meta.Options) {
			query = temporal.QueryWatchSummary
		}
		if err == nil && !closed {
			sum, err = query(ctx, c, run.ID)
		}
		if err != nil {
			return fmt.Errorf("batch %s on %s: %w", run.ID, t.Address, err)
		}
		return saveBatch(run, sum)
	default:
		var res taskengine.Result
		closed, err := temporal.Outcome(ctx, c, run.ID, &res)
		if err == nil && !closed {
			res, err = runningTask(ctx, c, run)
		}
		if err != nil {
			return fmt.Errorf("task %s on %s: %w", run.ID, t.Address, err)
		}
		if run.Meta.Sandbox == nil { // how its worker confined it, when nobody followed it
			if p, err := temporal.Query(ctx, c, run.ID); err == nil && p.Sandbox != nil {
				run.Meta.Sandbox = p.Sandbox
				_ = run.WriteMeta()
			}
		}
		return saveTask(run, res)
	}
}

// runningTask is where a running Temporal task stands, as a result whose
// status is running.
func runningTask(ctx context.Context, c client.Client, run *store.Run) (taskengine.Result, error) {
	var in temporal.TaskInput
	if err := json.Unmarshal(run.Meta.Options, &in); err != nil {
		return taskengine.Result{}, fmt.Errorf("its record cannot be read: %w", err)
	}
	p, err := temporal.Query(ctx, c, run.ID)
	if err != nil {
		return taskengine.Result{}, err
	}
	res := in.Spec.Policy(in.Task).Result(run.ID, p.History, p.Stop)
	res.Git = &taskengine.GitInfo{Mode: string(git.CommitBranch), Repo: in.Repo, Branch: in.Branch, Base: p.Base,
		BaseBranch: in.BaseBranch, Refs: git.RefPrefix + run.ID + "/", Remote: in.Repo}
	return res, nil
}

// resumeTemporal continues following a Temporal run: a run still going on
// the workers is followed to its end; a task that ended stopped by its
// limits (attempts, a loop, the budget, the time) is started again on the
// server from its history, with a new turn of its current tier and the
// limits given; a run that ended otherwise is only returned. env gives the
// values of the run's recorded environment names.
func resumeTemporal(ctx context.Context, run *store.Run, limits local.Limits, rp ResumeParts, env local.EnvValue) (Resumed, error) {
	out := Resumed{Kind: run.Meta.Command, ID: run.ID}
	if _, err := run.Lock(); err != nil {
		if errors.Is(err, store.ErrLive) {
			return out, &exit.UsageError{Err: fmt.Errorf("run %s is followed by another jlgcli: %w", run.ID, err), Hint: "follow it there, or wait"}
		}
		return out, err
	}
	t := run.Meta.Temporal
	conn, err := rp.Connect.connection(run)
	if err != nil {
		return out, err
	}
	c, err := Dial(ctx, conn)
	if err != nil {
		return out, err
	}
	defer c.Close()
	if run.Meta.Command == "pr" {
		if limits.Any() {
			return out, &exit.UsageError{Err: errors.New("a pull request's loop takes no new limits")}
		}
		out.PR, err = resumePR(ctx, c, run, rp, env)
		return out, err
	}
	say := say(rp.Parts)
	hooks := local.HooksOf(rp.Parts, run) // as those of a resume here: started again, attempts, end
	if run.Meta.Command == "batch" {
		if limits.Any() {
			return out, &exit.UsageError{Err: errors.New("a batch on Temporal takes no new limits")}
		}
		if temporal.IsWatch(run.Meta.Options) {
			out.Batch, err = resumeWatch(ctx, c, run, rp, env)
			return out, err
		}
		var sum batch.Summary
		closed, err := temporal.Outcome(ctx, c, run.ID, &sum)
		if err != nil {
			return out, fmt.Errorf("batch %s on %s: %w", run.ID, t.Address, err)
		}
		if closed && sum.Status != string(batch.BatchDone) {
			// As a local batch's resume: done tasks kept, stopped ones go on
			// from their history, the others start anew.
			var in temporal.BatchInput
			if err := json.Unmarshal(run.Meta.Options, &in); err != nil {
				return out, fmt.Errorf("run %s: its record cannot be read: %w", run.ID, err)
			}
			if missing := in.Spec.FillEnv(env); len(missing) > 0 {
				return out, local.MissingEnv(run.ID, missing)
			}
			if in.Resume, err = temporal.ResumeBatchOf(ctx, c, sum, in.Spec.PR != nil); err != nil {
				return out, fmt.Errorf("batch %s on %s: %w", run.ID, t.Address, err)
			}
			if err := temporal.SubmitBatch(ctx, c, in); err != nil {
				return out, err
			}
			done := 0
			for _, tr := range in.Resume.Tasks {
				if tr.Status == batch.StatusDone {
					done++
				}
			}
			say.Progress(fmt.Sprintf("resuming batch %s on %s: %d of %s done, %d resumed from their history", run.ID, t.Address,
				done, plural.N(len(in.Spec.Tasks), "task"), len(in.Resume.Runs)))
			hooks.Resumed()
			closed = false
		}
		if !closed {
			say.Progress(fmt.Sprintf("following batch %s on %s", run.ID, t.Address))
			var in temporal.BatchInput
			_ = json.Unmarshal(run.Meta.Options, &in) // without it, its tasks get no record
			tasks := &batchTasks{ctx: ctx, c: c, p: rp.Parts, root: run.Root(), meta: run.Meta, in: in}
			sum, err = temporal.FollowBatch(ctx, c, run.ID, tasks.change, time.Second)
			tasks.wait()
			if err != nil {
				return out, err
			}
		}
		if err := saveBatch(run, sum); err != nil {
			return out, err
		}
		if !closed {
			if n := local.StoppedBatch(run.ID, sum.Status); n != "" {
				say.Notice(n)
			}
			hooks.BatchEnded(sum)
		}
		out.Batch = sum
		return out, nil
	}
	if err := limits.Check("task", run.ID); err != nil {
		return out, err
	}
	var in temporal.TaskInput
	if err := json.Unmarshal(run.Meta.Options, &in); err != nil {
		return out, fmt.Errorf("run %s: its record cannot be read: %w", run.ID, err)
	}
	var res taskengine.Result
	closed, err := temporal.Outcome(ctx, c, run.ID, &res)
	if err != nil {
		return out, fmt.Errorf("task %s on %s: %w", run.ID, t.Address, err)
	}
	made := 0 // the attempts made before this resume follows the task
	if closed && local.Resumable(res.Status) || closed && res.Status == engine.StatusBudgetExceeded {
		p, err := temporal.Query(ctx, c, run.ID)
		if err != nil {
			return out, fmt.Errorf("task %s on %s: read its history: %w", run.ID, t.Address, err)
		}
		if missing := in.Spec.FillEnv(env); len(missing) > 0 {
			return out, local.MissingEnv(run.ID, missing)
		}
		in.Carry = temporal.ResumedCarry(p, in.Spec.Policy(in.Task))
		limits.ApplyTask(&in.Spec)
		if err := temporal.Submit(ctx, c, in); err != nil {
			return out, err
		}
		say.Progress(fmt.Sprintf("resuming task %s on %s after %s", run.ID, t.Address, plural.N(len(in.Carry.History.Attempts), "attempt")))
		hooks.Resumed()
		closed, made = false, len(in.Carry.History.Attempts)
	} else if !closed {
		if p, err := temporal.Query(ctx, c, run.ID); err == nil {
			made = len(p.History.Attempts)
		}
	}
	if !closed {
		pt := rp.task(env)
		obs := following(ctx, c, pt.TaskObserver, hooks, made, run)
		res, err = temporal.Follow(ctx, c, run.ID, in.Spec.Policy(in.Task).Tiers, obs, time.Second)
		closeObserver(obs)
		if err != nil {
			return out, err
		}
	}
	if err := saveTask(run, res); err != nil {
		return out, err
	}
	if !closed {
		taskStopped(rp.Parts, run.ID, res.Status)
		hooks.TaskEnded(res)
	}
	out.Task = res
	return out, nil
}
