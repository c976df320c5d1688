package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Types of an activity error that git gave. ErrGit: final, another try
// would meet it again (a remote that is no repository, a push refused,
// credentials refused, a bad ref). ErrGitTransient: another try may pass
// (a lock another git holds, a remote briefly away: git.ErrTransient), so
// Temporal makes the activity again, within its retry policy.
const (
	ErrGit          = "git"
	ErrGitTransient = "git.transient"
	// ErrHandedBack is the type of the error of an attempt or a plan that
	// reached a worker with no room for it: it did nothing, and the
	// workflow schedules it again (ChangeTaskRoom), for a worker that has
	// room. Final as a failure: no retry of the activity counts it.
	ErrHandedBack = "jlgcli.handed-back"
)

// outcomeFile is the file of an attempt's record, in the commit that
// refs/jlgcli/<run>/<n>-outcome points to on the remote.
const outcomeFile = "outcome.json"

// PrepareInput is the input of the prepare activity.
type PrepareInput struct {
	RunID      string         `json:"runId"`
	Repo       string         `json:"repo"`
	BaseBranch string         `json:"baseBranch"`
	Branch     string         `json:"branch"`
	Spec       local.TaskSpec `json:"spec"`
}

// Prepared is what the prepare activity made: the base commit (the task
// branch and refs/jlgcli/<run>/base point to it on the remote) and the
// gate's baseline there.
type Prepared struct {
	Base     string       `json:"base"`
	Baseline *gate.Report `json:"baseline,omitempty"`
}

// AttemptInput is the input of an attempt activity.
type AttemptInput struct {
	RunID    string             `json:"runId"`
	Task     string             `json:"task"`
	Repo     string             `json:"repo"`
	Branch   string             `json:"branch"`
	Base     string             `json:"base"`
	Baseline *gate.Report       `json:"baseline,omitempty"`
	Spec     local.TaskSpec     `json:"spec"`
	History  taskengine.History `json:"history"`
	Next     taskengine.Next    `json:"next"`
	// HandBack: a worker with no room for the attempt now hands it back
	// at once (ErrHandedBack) rather than wait for a place; a workflow
	// from before ChangeTaskRoom does not ask it, and its attempts wait.
	HandBack bool `json:"handBack,omitempty"`
}

// Planned is what the plan activity gives: the planner's call and its
// steps (nil: none), the time waited for rate limits, or why the planner
// could not be asked.
type Planned struct {
	Planner  taskengine.Attempt `json:"planner"`
	Steps    []string           `json:"steps,omitempty"`
	WaitedMs millis.Duration    `json:"waitedMs"`
	Stop     *engine.StopData   `json:"stop,omitempty"`
}

// FinishInput is the input of the finish activity.
type FinishInput struct {
	RunID      string `json:"runId"`
	Task       string `json:"task"`
	Repo       string `json:"repo"`
	Branch     string `json:"branch"`
	BaseBranch string `json:"baseBranch"`
	Base       string `json:"base"`
	MergePush  bool   `json:"mergePush,omitempty"`
	// PR asks for a pull request of the ready branch (gh, on the worker),
	// PRBody its text: the task's report.
	PR     bool   `json:"pr,omitempty"`
	PRBody string `json:"prBody,omitempty"`
}

// Finished is what the finish activity made: the squash commit on the
// ready branch, what became of the base branch, and the pull request.
type Finished struct {
	Merge *taskengine.MergeInfo `json:"merge"`
	PR    string                `json:"pr,omitempty"`
	// Warning says what went wrong with the pull request.
	Warning string `json:"warning,omitempty"`
}

// Activities are a worker's activities: its state directory (where its
// clones are kept), its agents and prices.
type Activities struct {
	StateDir string
	Parts    local.Parts
	Commands map[string]agent.CommandSpec
	Prices   cost.Table
	// HeartbeatEvery is how often a running activity heartbeats; 0: every
	// 5 seconds.
	HeartbeatEvery time.Duration
	// OpenForge opens the forge of a repository's URL for the pull-request
	// loop's activities; nil: forge.Open, the token read from Parts'
	// environment.
	OpenForge func(ctx context.Context, repo string, s forge.Settings) (forge.Forge, error)
	// PlanIssues plans the batch of a watch's look (IssueWatchLook); nil:
	// this worker refuses the looks of a watch.
	PlanIssues PlanIssues

	mu    sync.Mutex
	locks map[string]*sync.Mutex
	// client is the worker's own connection to the server (Previous).
	client client.Client

	// stop, once done, makes every activity under way stop and fail, so
	// that the server gives it to another worker at once; running counts
	// them.
	stop    context.Context
	running sync.WaitGroup
	// machine bounds the agents run at once (Serve's Concurrency); nil:
	// no bound.
	machine *machine
}

// start begins an activity: its context also ends when the worker stops;
// end must be called when it returns.
func (w *Activities) start(ctx context.Context) (context.Context, func()) {
	w.running.Add(1)
	ctx, cancel := context.WithCancelCause(ctx)
	stopped := func() bool { return false }
	if w.stop != nil {
		stopped = context.AfterFunc(w.stop, func() { cancel(errWorkerStopping) })
	}
	return ctx, func() {
		stopped()
		cancel(nil)
		w.running.Done()
	}
}

// errWorkerStopping is why the activities of a stopping worker end.
var errWorkerStopping = errors.New("the worker is stopping: another worker makes it")

// clone opens the worker's clone of url and locks it for the caller (one
// git fetch or push at a time per clone); unlock when done.
func (w *Activities) clone(ctx context.Context, url string) (*git.Clone, func(), error) {
	dir := w.cloneDir(url)
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[string]*sync.Mutex{}
	}
	m := w.locks[dir]
	if m == nil {
		m = &sync.Mutex{}
		w.locks[dir] = m
	}
	w.mu.Unlock()
	m.Lock()
	c, err := git.OpenClone(ctx, dir, url)
	if err != nil {
		m.Unlock()
		return nil, nil, gitError(ctx, err)
	}
	return c, m.Unlock, nil
}

// cloneDir is the directory of the worker's clone of url.
func (w *Activities) cloneDir(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(w.StateDir, "repos", hex.EncodeToString(sum[:8]))
}

// fetched is the worker's clone of url, locked, with branch fetched as the
// remote has it (refs/remotes/origin/<branch>).
func (w *Activities) fetched(ctx context.Context, url, branch string) (*git.Clone, func(), error) {
	c, unlock, err := w.clone(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Fetch(ctx, "+refs/heads/"+branch+":refs/remotes/origin/"+branch); err != nil {
		unlock()
		return nil, nil, gitError(ctx, err)
	}
	return c, unlock, nil
}

// beat heartbeats until the returned function is called.
func (w *Activities) beat(ctx context.Context, details ...any) func() {
	return w.beatWith(ctx, func() []any { return details })
}

// beatWith heartbeats with the details that details gives at each beat
// until the returned function is called.
func (w *Activities) beatWith(ctx context.Context, details func() []any) func() {
	every := w.HeartbeatEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, details()...)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// gitError is an activity's error of git, with git's message: retried
// when git.ErrTransient classifies it so (a lock, a remote briefly away),
// else final (a remote that cannot be fetched, a push refused); unless the
// activity was stopped meanwhile (its worker stopping): then another
// worker makes it.
func gitError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stopped on this worker (%v): %w", context.Cause(ctx), err)
	}
	if errors.Is(err, git.ErrTransient) {
		return temporal.NewApplicationErrorWithCause(err.Error(), ErrGitTransient, err)
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrGit, err)
}

// Prepare makes the task branch and refs/jlgcli/<run>/base on the remote at
// the tip of the base branch (or finds them, when made before), and takes
// the gate's baseline there.
func (w *Activities) Prepare(ctx context.Context, in PrepareInput) (Prepared, error) {
	ctx, end := w.start(ctx)
	defer end()
	defer w.beat(ctx)()
	c, unlock, err := w.clone(ctx, in.Repo)
	if err != nil {
		return Prepared{}, err
	}
	baseRef := git.RefPrefix + in.RunID + "/" + git.BaseName
	base, made, err := c.RemoteRef(ctx, baseRef)
	if err == nil && !made {
		if err = c.Fetch(ctx, "+refs/heads/"+in.BaseBranch+":refs/remotes/origin/"+in.BaseBranch); err == nil {
			if base, err = c.Rev(ctx, "refs/remotes/origin/"+in.BaseBranch); err == nil {
				err = c.Push(ctx, base+":refs/heads/"+in.Branch, base+":"+baseRef)
			}
		}
	} else if err == nil {
		err = c.Fetch(ctx, "+"+baseRef+":"+baseRef)
	}
	if err != nil {
		unlock()
		return Prepared{}, gitError(ctx, err)
	}
	wt, err := c.Checkout(ctx, in.RunID, in.Branch, base, base)
	unlock()
	if err != nil {
		return Prepared{}, gitError(ctx, err)
	}
	defer wt.Remove(context.WithoutCancel(ctx))
	p := Prepared{Base: base}
	if len(in.Spec.Checks) > 0 {
		p.Baseline, err = in.Spec.Baseline(ctx, in.RunID, wt.Path)
		if ctx.Err() != nil {
			return Prepared{}, ctx.Err()
		}
		if err != nil {
			return Prepared{}, fmt.Errorf("the baseline's checks on this worker: %w", err)
		}
	}
	return p, nil
}

// Attempt makes one attempt of a task in the worker's clone: the tree is
// the task branch's as the remote has it, restored to the attempt's
// starting point; the agent runs (the activity heartbeats meanwhile); the
// change is measured, saved and judged; then the snapshots, the task
// branch (with the commit of a passing attempt) and the attempt's record
// are pushed to the remote in one atomic push. An attempt whose record is
// on the remote already (its worker died after pushing) is not made again:
// the record is returned.
func (w *Activities) Attempt(ctx context.Context, in AttemptInput) (taskengine.AttemptOutcome, error) {
	ctx, end := w.start(ctx)
	defer end()
	leave, err := w.room(ctx, in, fmt.Sprintf("attempt %d of run %s", in.Next.Number, in.RunID))
	if err != nil {
		return taskengine.AttemptOutcome{}, err
	}
	defer leave()
	waits := &waits{}
	details := func() []any { return []any{waits.beat(in.Next.Number)} }
	waits.told = func() { activity.RecordHeartbeat(ctx, details()...) } // at once, not at the next beat
	defer w.beatWith(ctx, details)()
	n := strconv.Itoa(in.Next.Number)
	prefix := git.RefPrefix + in.RunID + "/"
	outcomeRef := prefix + n + "-outcome"
	c, unlock, err := w.clone(ctx, in.Repo)
	if err != nil {
		return taskengine.AttemptOutcome{}, err
	}
	if _, found, err := c.RemoteRef(ctx, outcomeRef); err != nil {
		unlock()
		return taskengine.AttemptOutcome{}, gitError(ctx, err)
	} else if found {
		defer unlock()
		return w.recorded(ctx, c, outcomeRef)
	}
	err = c.Fetch(ctx, "+refs/heads/"+in.Branch+":refs/remotes/origin/"+in.Branch, "+"+prefix+"*:"+prefix+"*")
	var wt *git.Worktree
	if err == nil {
		wt, err = c.Checkout(ctx, in.RunID, in.Branch, "refs/remotes/origin/"+in.Branch, in.Base)
	}
	unlock()
	if err != nil {
		return taskengine.AttemptOutcome{}, gitError(ctx, err)
	}
	defer wt.Remove(context.WithoutCancel(ctx))

	spec := in.Spec
	spec.Commands, spec.Prices = w.Commands, w.Prices // the worker's own agents and prices
	parts := w.Parts
	parts.TaskObserver = waits // the agent's retry lines, for the heartbeat
	out := spec.Attempt(ctx, parts, in.RunID, in.Task, wt, in.Baseline, in.History, in.Next, waits)
	if ctx.Err() != nil || (out.Stop != nil && out.Stop.Status == engine.StatusInterrupted) {
		// The worker is stopping, or lost its attempt: another makes it.
		return taskengine.AttemptOutcome{}, fmt.Errorf("attempt %s was interrupted on this worker: %w", n, context.Cause(ctx))
	}
	if out.Stop != nil {
		return out, nil
	}
	out.Attempt.Prompt = "" // the workflow has it
	if len(out.Attempt.Response) > MaxKeptReply {
		out.Attempt.Response = out.Attempt.Response[:MaxKeptReply] + "\n[jlgcli: reply cut; the whole attempt is in " + outcomeRef + "]"
	}
	record, err := json.Marshal(out)
	if err != nil {
		return taskengine.AttemptOutcome{}, err
	}

	pctx := context.WithoutCancel(ctx)
	unlock = w.lock(pctx, c)
	defer unlock()
	rec, err := c.WriteFile(pctx, outcomeFile, record, "jlgcli attempt "+in.RunID+"/"+n)
	if err != nil {
		return taskengine.AttemptOutcome{}, gitError(ctx, err)
	}
	refs := []string{out.Attempt.Start + ":" + prefix + n, rec + ":" + outcomeRef}
	if out.Attempt.Result != "" {
		refs = append(refs, out.Attempt.Result+":"+prefix+n+"-result")
	}
	if out.Attempt.Commit != "" {
		refs = append(refs, out.Attempt.Commit+":refs/heads/"+in.Branch)
	}
	if err := c.Push(pctx, refs...); err != nil {
		return taskengine.AttemptOutcome{}, gitError(ctx, err)
	}
	return out, nil
}

// room takes a place on this worker for the agent of what (an attempt or a
// plan): at once when in asks the hand back (ChangeTaskRoom), else the
// activity fails as handed back (ErrHandedBack) before it did anything,
// and the workflow schedules it again for a worker that has room; without
// it, the activity waits for a place, heartbeating. leave gives the place
// back.
func (w *Activities) room(ctx context.Context, in AttemptInput, what string) (leave func(), err error) {
	if in.HandBack {
		if leave, ok := w.machine.take(); ok {
			n, of := w.machine.running()
			w.say("%s: started here (%d of %d places taken)", what, n, of)
			return func() { leave(); w.say("%s: ended here", what) }, nil
		}
		n, of := w.machine.running()
		w.say("%s: handed back, no place here (%d of %d agents running)", what, n, of)
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s handed back: its worker runs %d of %d agents; a worker with room makes it",
			what, n, of), ErrHandedBack, nil)
	}
	defer w.beat(ctx)()
	leave, err = w.machine.enter(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s waited for a place on this worker: %w", what, err)
	}
	return leave, nil
}

// say tells the worker's log (its Parts' reporter) what it does.
func (w *Activities) say(format string, a ...any) {
	if w.Parts.Say != nil {
		w.Parts.Say.Notice(fmt.Sprintf(format, a...))
	}
}

// Beat is what an attempt's heartbeat tells: the attempt's number, its
// latest wait for a rate limit to reset (nil: none), which the jlgcli that
// follows the task tells its hooks of (run.waiting), and what its agent
// says as it says it, which that jlgcli shows and keeps in the run's local
// record (logs -f, show --follow, the board read it there): the end of
// the agent's output (Output, at most MaxBeatOutput bytes, ending at byte
// OutputEnd of all it wrote) and its last retry or error lines (Lines, at
// most MaxBeatLines, the last of LineCount in all).
type Beat struct {
	Attempt   int                  `json:"attempt"`
	Wait      *taskengine.TaskWait `json:"wait,omitempty"`
	Output    []byte               `json:"output,omitempty"`
	OutputEnd int64                `json:"outputEnd,omitempty"`
	Lines     []string             `json:"lines,omitempty"`
	LineCount int                  `json:"lineCount,omitempty"`
}

// Bounds of what a heartbeat carries of the agent's output.
const (
	MaxBeatOutput = 32 << 10
	MaxBeatLines  = 20
)

// waits is the journal of an attempt on a worker: it keeps the attempt's
// latest wait for a rate limit, the end of its agent's output and its
// agent's last retry or error lines (it is the attempt's observer too),
// for its heartbeat, and nothing else.
type waits struct {
	mu    sync.Mutex
	wait  *taskengine.TaskWait
	out   []byte
	end   int64
	lines []string
	count int
	// told, when set, is called once a wait or a line is kept.
	told func()
}

func (j *waits) Record(ev engine.Event) error {
	if ev.Type != engine.EventWait {
		return nil
	}
	var d taskengine.TaskWait
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return nil // a heartbeat's detail: the attempt goes on without it
	}
	d.State = taskengine.State{}
	j.mu.Lock()
	j.wait = &d
	j.mu.Unlock()
	if j.told != nil {
		j.told()
	}
	return nil
}

func (j *waits) CheckpointTask(taskengine.Checkpoint) error { return nil }

// Output keeps the end of the agent's output for the heartbeat.
func (j *waits) Output(int) io.WriteCloser { return beatOutput{j} }

type beatOutput struct{ j *waits }

func (o beatOutput) Write(p []byte) (int, error) {
	j := o.j
	j.mu.Lock()
	defer j.mu.Unlock()
	j.end += int64(len(p))
	j.out = append(j.out, p...)
	if over := len(j.out) - MaxBeatOutput; over > 0 {
		j.out = append(j.out[:0:0], j.out[over:]...)
	}
	return len(p), nil
}

func (beatOutput) Close() error { return nil }

// AgentLine keeps a retry or error line of the agent, and heartbeats it at
// once (engine.AgentObserver).
func (j *waits) AgentLine(line string) {
	j.mu.Lock()
	j.lines = append(j.lines, line)
	if len(j.lines) > MaxBeatLines {
		j.lines = j.lines[len(j.lines)-MaxBeatLines:]
	}
	j.count++
	j.mu.Unlock()
	if j.told != nil {
		j.told()
	}
}

func (j *waits) AttemptStarted(taskengine.Progress)                  {}
func (j *waits) Phase(taskengine.Progress, string)                   {}
func (j *waits) AttemptDone(taskengine.Progress, taskengine.Attempt) {}

// beat is the heartbeat's details of attempt n.
func (j *waits) beat(n int) Beat {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Beat{Attempt: n, Wait: j.wait, Output: slices.Clone(j.out), OutputEnd: j.end,
		Lines: slices.Clone(j.lines), LineCount: j.count}
}

// last is the latest wait, nil before one.
func (j *waits) last() *taskengine.TaskWait {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.wait
}

// Plan asks the task's planner for its steps, in a worktree of the task
// branch as the remote has it (the planner reads the code, changes none).
func (w *Activities) Plan(ctx context.Context, in AttemptInput) (Planned, error) {
	ctx, end := w.start(ctx)
	defer end()
	leave, err := w.room(ctx, in, "the plan of run "+in.RunID)
	if err != nil {
		return Planned{}, err
	}
	defer leave()
	defer w.beat(ctx)()
	c, unlock, err := w.clone(ctx, in.Repo)
	if err != nil {
		return Planned{}, err
	}
	err = c.Fetch(ctx, "+refs/heads/"+in.Branch+":refs/remotes/origin/"+in.Branch)
	var wt *git.Worktree
	if err == nil {
		wt, err = c.Checkout(ctx, in.RunID, in.Branch, "refs/remotes/origin/"+in.Branch, in.Base)
	}
	unlock()
	if err != nil {
		return Planned{}, gitError(ctx, err)
	}
	defer wt.Remove(context.WithoutCancel(ctx))
	spec := in.Spec
	spec.Commands, spec.Prices = w.Commands, w.Prices
	p, steps, waited, stop := spec.AskPlanner(ctx, w.Parts, in.RunID, in.Task, wt, in.History)
	if ctx.Err() != nil || (stop != nil && stop.Status == engine.StatusInterrupted) {
		return Planned{}, fmt.Errorf("the planner was interrupted on this worker: %w", context.Cause(ctx))
	}
	return Planned{Planner: p, Steps: steps, WaitedMs: waited, Stop: stop}, nil
}

// lock locks c's clone again (after the attempt ran unlocked).
func (w *Activities) lock(ctx context.Context, c *git.Clone) func() {
	w.mu.Lock()
	m := w.locks[c.Dir]
	w.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// recorded reads back an attempt's record from the remote.
func (w *Activities) recorded(ctx context.Context, c *git.Clone, ref string) (taskengine.AttemptOutcome, error) {
	var out taskengine.AttemptOutcome
	if err := c.Fetch(ctx, "+"+ref+":"+ref); err != nil {
		return out, gitError(ctx, err)
	}
	data, err := c.ReadFile(ctx, ref, outcomeFile)
	if err != nil {
		return out, gitError(ctx, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", ref, err), "record", err)
	}
	activity.GetLogger(ctx).Info("attempt already recorded on the remote", "ref", ref)
	return out, nil
}

// Finish makes the squash commit "feat: <task>" of the task branch on top
// of the base and pushes it as the ready branch <branch>-ready; with
// MergePush, the base branch is fast-forwarded to it on the remote, never
// forced.
func (w *Activities) Finish(ctx context.Context, in FinishInput) (Finished, error) {
	ctx, end := w.start(ctx)
	defer end()
	defer w.beat(ctx)()
	c, unlock, err := w.fetched(ctx, in.Repo, in.Branch)
	if err != nil {
		return Finished{}, err
	}
	defer unlock()
	tip := "refs/remotes/origin/" + in.Branch
	ready := ReadyBranch(in.Branch)
	squash, err := c.CommitTree(ctx, tip, local.SquashSubject(in.Task), in.Base)
	if err != nil {
		return Finished{}, gitError(ctx, err)
	}
	if err := c.Push(ctx, "+"+squash+":refs/heads/"+ready); err != nil {
		return Finished{}, gitError(ctx, err)
	}
	m := &taskengine.MergeInfo{Status: git.MergeSkipped, Into: in.BaseBranch, Commit: squash,
		Command: fmt.Sprintf("git fetch origin %s && git merge --ff-only FETCH_HEAD", ready)}
	if in.MergePush {
		var refused *git.MergeRefusedError
		switch err := c.HoldForReview(ctx, in.BaseBranch, ready, in.Base, squash); {
		case errors.As(err, &refused):
			// Not pushed to the base branch: the user merges it after
			// review.
			m.Status, m.Reason = git.MergeRefused, string(refused.Reason)+": "+refused.Detail
		case err != nil:
			return Finished{}, gitError(ctx, err)
		default:
			if err := c.Push(ctx, squash+":refs/heads/"+in.BaseBranch); err != nil {
				m.Status, m.Reason = git.MergeRefused, err.Error()
				if !errors.Is(err, git.ErrPushRejected) {
					return Finished{}, gitError(ctx, err)
				}
			} else {
				m.Status, m.Command = git.MergeFastForwarded, ""
			}
		}
	}
	f := Finished{Merge: m}
	if in.PR {
		f.PR, f.Warning = w.openPR(ctx, c, in, ready)
	}
	return f, nil
}

// openPR opens the pull request of the ready branch with the worker's gh.
func (w *Activities) openPR(ctx context.Context, c *git.Clone, in FinishInput, ready string) (url, warning string) {
	body, err := os.CreateTemp("", "jlgcli-pr-*.md")
	if err != nil {
		return "", err.Error()
	}
	defer os.Remove(body.Name())
	_, err = body.WriteString(in.PRBody)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		url, err = local.OpenPR(ctx, w.Parts, c.Dir, ready, in.BaseBranch, local.SquashSubject(in.Task), body.Name())
	}
	if err != nil {
		return "", "the pull request was not opened: " + err.Error()
	}
	return url, ""
}

// ReadyBranch is the branch of a task's squash commit, ready to merge.
func ReadyBranch(branch string) string { return branch + "-ready" }

// Previous answers where an ended run of a task's workflow stood: its
// progress query, which the server answers from that run's history.
func (w *Activities) Previous(ctx context.Context, in PreviousInput) (Progress, error) {
	var p Progress
	if w.client == nil {
		return p, temporal.NewNonRetryableApplicationError("this worker has no client to ask the server", "jlgcli.previous", nil)
	}
	v, err := w.client.QueryWorkflow(ctx, in.WorkflowID, in.RunID, QueryProgress)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}

// WorkersInput names the queue of a task and a backend (WorkersName).
type WorkersInput struct {
	Queue   string `json:"queue"`
	Backend string `json:"backend"`
}

// Workers counts the workers up on the task's queue that take the
// attempts of a backend, busy or not: every worker polls the queue of the
// workflows, full or not, and says its backends in its identity
// (Identity). A full worker does not poll its backends' queues, so those
// cannot tell.
func (w *Activities) Workers(ctx context.Context, in WorkersInput) (int, error) {
	if w.client == nil {
		return 0, temporal.NewNonRetryableApplicationError("this worker has no client to ask the server", "jlgcli.workers", nil)
	}
	seen := map[string]bool{}
	// Every partition's pollers (the enhanced description); the root
	// partition's alone where the server has no such description.
	d, err := w.client.DescribeTaskQueueEnhanced(ctx, client.DescribeTaskQueueEnhancedOptions{TaskQueue: in.Queue,
		TaskQueueTypes: []client.TaskQueueType{client.TaskQueueTypeWorkflow}, ReportPollers: true})
	if err == nil {
		for _, v := range d.VersionsInfo {
			for _, t := range v.TypesInfo {
				for _, p := range t.Pollers {
					seen[p.Identity] = true
				}
			}
		}
	}
	if r, lerr := w.client.DescribeTaskQueue(ctx, in.Queue, enums.TASK_QUEUE_TYPE_WORKFLOW); lerr == nil {
		for _, p := range r.GetPollers() {
			seen[p.GetIdentity()] = true
		}
	} else if err != nil {
		return 0, lerr
	}
	n := 0
	for id := range seen {
		if slices.Contains(BackendsOf(id), in.Backend) {
			n++
		}
	}
	return n, nil
}
