package runs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// A front end starts each kind of run with one call, given the command's
// flags as plain values: RunOnce (`jlgcli run`), StartLoop, StartTask and
// StartBatch. The call resolves the configuration, reads the prompt or the
// sheets, opens the repository once, decides the spec (Pick, PlanBatch),
// and runs it here (package local) or sends it to a Temporal server; the
// front end asks for nothing in between and prints what it returns. Each
// kind has its own function, not one Start taking a command of any kind:
// a loop, a task and a batch have results of their own types and parts of
// their own (a batch's give each task its own), made only once the run
// starts, so that a front end shows live progress only for a run that
// starts.

// Front is what a front end gives the runs it starts: the configuration it
// resolves with a command's flags, and the parts the runs report through.
// The command line's is cli.Stdio.
type Front interface {
	// LoadLayers resolves the configuration of a command with its flags
	// (nil: none) on top, with the layers it was resolved from
	// (LoadConfig); the front end says what it has to say of it (a
	// landing left half done that it settled, a project file it does not
	// trust).
	LoadLayers(flags *config.Layer) (Config, error)
	// Base are the parts without live progress or hooks: the environment
	// agents start from and the front end's messages.
	Base() local.Parts
	// Once are the parts of a single agent call: Base with the call's live
	// line, unless quiet.
	Once(quiet bool) local.Parts
	// Parts are the parts of a run: Base with the configuration's hooks,
	// its progress messages left out when quiet, and, unless quiet, the
	// live line of a task (task) or of a loop (loop).
	Parts(quiet, task, loop bool) local.Parts
	// BatchParts are the parts of a batch of total tasks here, and what
	// ends their display once the batch stops.
	BatchParts(quiet bool, total int) (local.BatchParts, func())
	// TaskChanged is told of each task whose status changes while a batch
	// on Temporal is followed.
	TaskChanged(t batch.TaskSummary)
}

// Prompt is where a command's prompt comes from (ReadPrompt).
type Prompt struct {
	// Args are the command's arguments: the prompt, or "-" to read it
	// from Stdin.
	Args []string
	// File is the file the prompt is read from (--prompt-file).
	File string
	// Stdin is what "-" reads; nil: there is none.
	Stdin io.Reader
}

func (p Prompt) read() (string, error) { return ReadPrompt(p.Stdin, p.File, p.Args) }

// LoopCommand is a single call (RunOnce) or a loop (StartLoop).
type LoopCommand struct {
	Prompt Prompt
	// Flags is the configuration layer of the command's flags.
	Flags *config.Layer
}

// LoopDone is what RunOnce or StartLoop did: the result of the call or of
// the loop (which says why when no agent could be had), printed as JSON
// when JSON.
type LoopDone struct {
	Result engine.Result
	JSON   bool
}

// TaskCommand is a task to start (StartTask).
type TaskCommand struct {
	Prompt Prompt
	// Flags is the configuration layer of the command's flags.
	Flags *config.Layer
	// Submission holds the task's own settings: Base (the ref its branch
	// starts from; "": HEAD here, the checked-out branch on Temporal),
	// IncludeDirty and Plan; and those of a task sent to a Temporal
	// server, which a task run here refuses (CheckLocal).
	Submission
	// HeartbeatGiven: Submission.Heartbeat was given, not defaulted.
	HeartbeatGiven bool
}

// TaskDone is what StartTask did.
type TaskDone struct {
	// Result is the task's result (one that says why, when no agent could
	// be had); nil for a task submitted with Detach.
	Result *taskengine.Result
	// ID is the run of a task submitted with Detach.
	ID string
	// Temporal: the task was sent to a Temporal server.
	Temporal bool
	// JSON: the result is printed as JSON.
	JSON bool
	// PR is what became of the pull request the task was worked on until
	// --until's target; nil without --until, or when the task did not end
	// done and pushed.
	PR *local.PRResult
}

// BatchCommand is a batch to start (StartBatch).
type BatchCommand struct {
	// Paths name the task sheets: files, or folders of them.
	Paths []string
	// Flags is the configuration layer of the command's flags, the
	// defaults that a sheet's front matter overrides.
	Flags *config.Layer
	// Submission holds the batch's Base (the branch its tasks start from
	// and merge into; "": the checked-out one) and Plan (for each task);
	// and the settings of a batch sent to a Temporal server, which a batch
	// run here refuses (CheckLocal).
	Submission
	// HeartbeatGiven: Submission.Heartbeat was given, not defaulted.
	HeartbeatGiven bool
	FailFast       bool
	// BudgetUSD bounds the cost of the whole batch; 0: none.
	BudgetUSD float64
	// DryRun plans the batch and runs nothing.
	DryRun bool
	// Issues, in place of Paths, is a query of the forge's issues
	// (label:NAME assignee:LOGIN milestone:TITLE): each open issue it
	// matches is a task (batch --issues). Remote is the git remote whose
	// forge holds them ("": origin); Watch keeps taking new ones until
	// the command is stopped.
	Issues string
	Remote string
	Watch  bool
}

// BatchDone is what StartBatch did.
type BatchDone struct {
	// Plan is the batch's plan, for a dry run (nothing ran); nil
	// otherwise.
	Plan *BatchPlan
	// Summary is the batch's result; nil for a dry run and for a batch
	// submitted with Detach.
	Summary *batch.Summary
	// ID is the run of a batch submitted with Detach.
	ID string
	// Nothing, for a batch of issues with none to run, says so.
	Nothing string
	// JSON: the result is printed as JSON.
	JSON bool
}

// RunOnce makes one call to the agent of the command's configuration
// (Pick) with its prompt: no run is kept, and a rate limit is reported,
// not waited for. In a git repository, what the call changes in git's
// control files is put back (local.WatchGit).
func RunOnce(ctx context.Context, f Front, c LoopCommand) (LoopDone, error) {
	cfg, prompt, a, out, err := prepareLoop(f, c)
	if err != nil || a == nil {
		return out, err
	}
	p := f.Once(cfg.Quiet)
	defer endParts(p)
	box, _, err := local.Confine(cfg.Sandbox, p, local.LoopSite("", cfg.Cwd, ""))
	if err != nil {
		return LoopDone{}, err
	}
	if a, err = local.WatchGit(ctx, a, cfg.Cwd, p); err != nil {
		return LoopDone{}, err
	}
	opts := local.LoopSpecOf(cfg, a.Name()).Options(store.NewRunID(time.Now()), prompt)
	opts.Once = true
	opts.MaxWait = 0
	opts.Observer = p.LoopObserver
	opts.Box = box
	out.Result = engine.Run(ctx, a, opts)
	return out, nil
}

// StartLoop runs a loop of the agent of the command's configuration
// (Pick) on its prompt to its end: a run kept under the configuration's
// state directory, journaled, guarded and resumable.
func StartLoop(ctx context.Context, f Front, c LoopCommand) (LoopDone, error) {
	cfg, prompt, a, out, err := prepareLoop(f, c)
	if err != nil || a == nil {
		return out, err
	}
	p := f.Parts(cfg.Quiet, false, true)
	defer endParts(p)
	if out.Result, err = local.StartLoop(ctx, local.LoopSpecOf(cfg, a.Name()), a, prompt, cfg.StateDir, p); err != nil {
		return LoopDone{}, err
	}
	return out, nil
}

// prepareLoop reads c's prompt, resolves its configuration and picks its
// agent; with no agent to be had, out's result says why and a is nil.
func prepareLoop(f Front, c LoopCommand) (cfg *config.Config, prompt string, a agent.Agent, out LoopDone, err error) {
	if prompt, err = c.Prompt.read(); err != nil {
		return nil, "", nil, LoopDone{}, err
	}
	lc, err := f.LoadLayers(c.Flags)
	if err != nil {
		return nil, "", nil, LoopDone{}, err
	}
	cfg = lc.Config
	out.JSON = cfg.JSON
	out.Result, a = Pick(cfg, f.Base())
	return cfg, prompt, a, out, nil
}

// StartTask runs the task of the command to its end: here, as a run kept
// under the configuration's state directory in the git repository of its
// directory (local.StartTask), or on the Temporal server it names
// (SubmitTask). A task whose agent cannot be had is a result, not an
// error.
func StartTask(ctx context.Context, f Front, c TaskCommand) (TaskDone, error) {
	prompt, err := c.Prompt.read()
	if err != nil {
		return TaskDone{}, err
	}
	lc, err := f.LoadLayers(c.Flags)
	if err != nil {
		return TaskDone{}, err
	}
	cfg := lc.Config
	out := TaskDone{JSON: cfg.JSON}
	if cfg.Until != "" && cfg.Temporal.Address != "" {
		if !cfg.PR {
			return TaskDone{}, cfg.KeyError("until", "works a pull request: add --pr (config: pr = true)")
		}
		p := withEnv(f.Parts(cfg.Quiet, true, false), cfg)
		defer endParts(p)
		in, err := taskPRSubmission(ctx, cfg, c.Submission, prompt, p)
		if err != nil {
			return TaskDone{}, err
		}
		res, first, err := SubmitPR(ctx, cfg, in, c.Heartbeat, c.Detach, p)
		if err != nil {
			return TaskDone{}, err
		}
		if c.Detach {
			out.Temporal, out.ID = true, res.RunID
			return out, nil
		}
		out.Temporal, out.Result = true, first
		if first == nil || res.Number > 0 {
			out.PR = &res
		}
		if out.Result == nil {
			// The task did not run: what became of the run says why.
			out.Result = &taskengine.Result{RunID: res.RunID, Status: res.Status, ExitCode: res.ExitCode, Details: res.Reason}
		}
		return out, nil
	}
	if f := watchFlag(c.Flags); cfg.Until == "" && f != "" {
		return TaskDone{}, exit.Usagef("add --pr --until green|approved|merged", "--%s: only a pull request worked --until takes it", f)
	}
	if cfg.Temporal.Address != "" {
		p := withEnv(f.Parts(cfg.Quiet, true, false), cfg)
		defer endParts(p)
		id, res, err := SubmitTask(ctx, cfg, c.Submission, prompt, p)
		if err != nil {
			return TaskDone{}, err
		}
		out.Temporal, out.ID, out.Result = true, id, res
		return out, nil
	}
	if err := CheckLocal(cfg, "task", c.Submission, c.HeartbeatGiven); err != nil {
		return TaskDone{}, err
	}
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		return TaskDone{}, err
	}
	s, failed := taskSpec(cfg, repo, c.Plan, f.Base())
	if failed != nil {
		out.Result = failed
		return out, nil
	}
	if cfg.Until != "" {
		if !cfg.PR {
			return TaskDone{}, cfg.KeyError("until", "works a pull request: add --pr (config: pr = true)")
		}
		// The pull request is the landing: the branch is pushed, the
		// forge opens it, nothing merges here.
		s.Merge, s.Push, s.PR, s.ViaPR = git.MergeNone, true, false, true
	}
	p := withEnv(f.Parts(cfg.Quiet, true, false), cfg)
	defer endParts(p)
	var fg forge.Forge
	if cfg.Until != "" {
		// The forge, its token and the remote are known before the task
		// spends anything: a missing one is said now, not after the work.
		if fg, err = taskForge(ctx, cfg, repo, p); err != nil {
			return TaskDone{}, err
		}
	}
	res, err := local.StartTask(ctx, local.NewTask{Prompt: prompt, Spec: s, Repo: repo, Base: c.Base, IncludeDirty: c.IncludeDirty, StateDir: cfg.StateDir}, p)
	if err != nil {
		return TaskDone{}, err
	}
	out.Result = &res
	if cfg.Until != "" {
		if out.PR, err = watchTaskPR(ctx, cfg, fg, repo, s, prompt, res, p); err != nil {
			return out, err
		}
	}
	return out, nil
}

// taskSpec is the spec of a task with cfg in repo, planned first when plan
// is set. A single tier without a backend gets the one picked as a loop's
// is (Pick, which says so on p); when none can be had, the result that
// says why is returned in place of the spec.
func taskSpec(cfg *config.Config, repo *git.Repo, plan bool, p local.Parts) (local.TaskSpec, *taskengine.Result) {
	s := local.TaskSpecOf(cfg, repo.Dir)
	s.Plan = plan
	if len(s.Tiers) == 1 && s.Tiers[0].Backend == "" {
		res, a := Pick(cfg, p)
		if a == nil {
			r := local.Failure(res)
			return local.TaskSpec{}, &r
		}
		s.Tiers[0].Backend, s.Tiers[0].Name = a.Name(), a.Name()
	}
	return s, nil
}

// StartBatch runs the batch of the command's sheets to its end: here, as
// a run kept under the configuration's state directory in the git
// repository of its directory (local.StartBatch), or on the Temporal
// server it names (SubmitBatch); a dry run only plans it (PlanBatch). A
// sheet that needs a backend picked when none can be had is a *PickError.
func StartBatch(ctx context.Context, f Front, c BatchCommand) (BatchDone, error) {
	lc, err := f.LoadLayers(c.Flags)
	if err != nil {
		return BatchDone{}, err
	}
	cfg := lc.Config
	base := f.Base()
	if err := checkBatchPR(cfg, c); err != nil {
		return BatchDone{}, err
	}
	if c.Issues != "" || c.Watch || c.Remote != "" {
		return startIssues(ctx, f, lc, c)
	}
	sheets, err := LoadSheets(c.Paths, say(base).Warn)
	if err != nil {
		return BatchDone{}, err
	}
	if err := CheckLocal(cfg, "batch", c.Submission, c.HeartbeatGiven); err != nil {
		return BatchDone{}, err
	}
	repo, err := BatchRepo(ctx, cfg)
	if err != nil {
		return BatchDone{}, err
	}
	b := Batch{Sheets: sheets, Base: c.Base, FailFast: c.FailFast, BudgetUSD: c.BudgetUSD, Plan: c.Plan}
	if repo != nil {
		b.Repo = repo.Dir
	}
	plan, err := PlanBatch(lc, b, base)
	if err != nil {
		return BatchDone{}, err
	}
	out := BatchDone{JSON: cfg.JSON}
	switch {
	case c.DryRun:
		out.Plan = &plan
	case cfg.Temporal.Address != "":
		p := withEnv(f.Parts(cfg.Quiet, false, false), cfg)
		if out.ID, out.Summary, err = SubmitBatch(ctx, cfg, c.Submission, plan.Spec, f.TaskChanged, p); err != nil {
			return BatchDone{}, err
		}
	default:
		sum, err := runBatchHere(ctx, f, cfg, repo, plan)
		if err != nil {
			return BatchDone{}, err
		}
		out.Summary = &sum
	}
	return out, nil
}

// runBatchHere runs the batch of plan in repo, as a run kept under cfg's
// state directory.
func runBatchHere(ctx context.Context, f Front, cfg *config.Config, repo *git.Repo, plan BatchPlan) (batch.Summary, error) {
	bp, endBoard := f.BatchParts(cfg.Quiet, len(plan.Spec.Tasks))
	env := cfg.EnvValue(getenv(bp.Parts))
	bp = eachParts(bp, func(p local.Parts) local.Parts { p.EnvValue = env; return p })
	if cfg.Until != "" {
		if err := landByPR(ctx, cfg, repo, &plan.Spec, bp.Parts); err != nil {
			endBoard()
			return batch.Summary{}, err
		}
	}
	sum, err := local.StartBatch(ctx, repo, plan.Spec, cfg.StateDir, bp)
	endBoard()
	return sum, err
}

// checkBatchPR refuses what a batch cannot do of the pull-request loop's
// settings: --pr or the loop's flags without --until (and --poll or
// --trust without --issues either), --until without --pr, on Temporal, or
// green and approved for a batch whose tasks depend on others (a
// dependent starts from its dependencies' work, merged).
func checkBatchPR(cfg *config.Config, c BatchCommand) error {
	flags := c.Flags
	if flags == nil {
		flags = &config.Layer{}
	}
	if cfg.Until == "" {
		switch {
		case flags.PR != nil && *flags.PR:
			return exit.Usagef("add --until green|approved|merged", "--pr: a batch's tasks land through pull requests only when they are worked --until a target")
		case c.Issues == "" && (flags.Poll != nil || flags.Trust != nil):
			return exit.Usagef("add --issues QUERY or --pr --until TARGET", "--poll and --trust are for a batch of the forge's issues (--issues) or of pull requests (--until)")
		case c.Issues == "" && flags.Forge != nil:
			return exit.Usagef("add --issues QUERY or --pr --until TARGET", "--forge-kind, --forge-url and --forge-token-env are for a batch of the forge's issues (--issues) or of pull requests (--until)")
		}
		if f := untilFlag(flags); f != "" {
			return exit.Usagef("add --pr --until green|approved|merged", "--%s: only a batch whose pull requests are worked --until takes it", f)
		}
		return nil
	}
	switch {
	case !cfg.PR:
		return cfg.KeyError("until", "works pull requests: add --pr (config: pr = true)")
	case cfg.Merge == git.MergePush:
		return cfg.KeyError("merge", "push lands each task on its base; with --until its pull request is the landing")
	}
	return nil
}

// landByPR makes each task of plan land through a pull request of its
// own worked until cfg's target (local.BatchPR): its branch pushed to
// the remote the task branches go to, nothing merged here. The forge and
// its token are checked now, before anything is spent.
func landByPR(ctx context.Context, cfg *config.Config, repo *git.Repo, spec *local.BatchSpec, p local.Parts) error {
	policy := policyOf(cfg, "")
	if policy.Target != pull.Merged {
		for _, t := range spec.Tasks {
			if len(t.Depends) > 0 {
				return cfg.KeyError("until", fmt.Sprintf("%s: task %s depends on %s, and starts from their work merged: use --until merged, or run them as batches of their own",
					policy.Target, t.ID, strings.Join(t.Depends, ", ")))
			}
		}
	}
	rm := "origin" // on Temporal (repo nil): the remote the workers clone
	if repo != nil {
		if _, err := taskForge(ctx, cfg, repo, p); err != nil {
			return err
		}
		rm, _ = repo.Remote(ctx, "jlgcli/new") // known: taskForge found it
	}
	spec.PR = &local.BatchPR{Remote: rm, Forge: cfg.Forge, Policy: policy}
	for i := range spec.Tasks {
		s := &spec.Tasks[i].Spec
		s.Merge, s.Push, s.PR, s.ViaPR = git.MergeNone, true, false, true
	}
	return nil
}

// startIssues runs the batch of the command's query of the forge's issues
// (batch --issues), once or, with Watch, until ctx ends.
func startIssues(ctx context.Context, f Front, lc Config, c BatchCommand) (BatchDone, error) {
	cfg := lc.Config
	switch {
	case c.Issues == "":
		return BatchDone{}, exit.Usagef("add --issues QUERY (label:agent)", "--watch and --remote are for a batch of the forge's issues (--issues)")
	case len(c.Paths) > 0:
		return BatchDone{}, exit.Usagef("run the sheets and the issues as two batches", "task sheets (%s) and --issues: a batch takes one or the other", strings.Join(c.Paths, ", "))
	case c.Watch && c.DryRun:
		return BatchDone{}, exit.Usagef("drop one of them", "--watch and --dry-run: a dry run plans once")
	}
	if c.Watch && cfg.Temporal.Address != "" {
		// The watch is a workflow: the workers look, plan and run.
		id, sum, err := submitWatch(ctx, f, lc, c)
		return BatchDone{JSON: cfg.JSON, ID: id, Summary: sum}, err
	}
	if err := CheckLocal(cfg, "batch", c.Submission, c.HeartbeatGiven); err != nil {
		return BatchDone{}, err
	}
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		return BatchDone{}, err
	}
	base := f.Base()
	out := BatchDone{JSON: cfg.JSON}
	onTemporal := cfg.Temporal.Address != ""
	planRepo := repo.Dir
	if onTemporal {
		planRepo = "" // the workers clone the remote
	}
	once := func() (*batch.Summary, error) {
		plan, in, err := planIssues(ctx, lc, c, repo.Dir, planRepo, base)
		if err != nil {
			return nil, err
		}
		if n := leftNotice(in.Left); n != "" {
			say(base).Notice(n)
		}
		if len(plan.Spec.Tasks) == 0 {
			out.Nothing = fmt.Sprintf("no open issue to run matches %s", c.Issues)
			if c.Watch {
				say(base).Notice(out.Nothing)
			}
			return nil, nil
		}
		out.Nothing = ""
		if c.DryRun {
			out.Plan = &plan
			return nil, nil
		}
		if onTemporal {
			// The workers claim and tell the issues, with their own token.
			id, sum, err := SubmitBatch(ctx, cfg, c.Submission, plan.Spec, f.TaskChanged, withEnv(f.Parts(cfg.Quiet, false, false), cfg))
			out.ID = id
			return sum, err
		}
		sum, err := runBatchHere(ctx, f, cfg, repo, plan)
		if err != nil {
			return nil, err
		}
		return &sum, nil
	}
	if !c.Watch {
		sum, err := once()
		out.Summary = sum
		return out, err
	}
	sum, err := watchIssues(ctx, cfg.Poll, say(base).Notice, once)
	out.Summary = sum
	if sum == nil && err == nil && out.Nothing == "" {
		out.Nothing = "stopped: no batch ran"
	}
	return out, err
}

// withEnv is p whose runs' recorded environment names get their values
// from cfg and the environment (config.Config.EnvValue) when their
// settings are read back.
func withEnv(p local.Parts, cfg *config.Config) local.Parts {
	p.EnvValue = cfg.EnvValue(getenv(p))
	return p
}

// eachParts is bp with its own parts, and those of each of its tasks,
// made over by f.
func eachParts(bp local.BatchParts, f func(local.Parts) local.Parts) local.BatchParts {
	bp.Parts = f(bp.Parts)
	if forTask := bp.ForTask; forTask != nil {
		bp.ForTask = func(id string) local.Parts { return f(forTask(id)) }
	}
	return bp
}

// endParts ends the live lines of p, once its run stopped.
func endParts(p local.Parts) {
	closeObserver(p.TaskObserver)
	closeObserver(p.LoopObserver)
}
