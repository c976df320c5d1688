package runs

import (
	"context"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Each kind of run starts with a function of its own, not one Start taking
// a spec of any kind: a loop, a task and a batch have results of their own
// types (engine.Result, engine.TaskResult, batch.Summary) and parts of
// their own (a batch's give each task its own), and what decides the spec
// (Pick, TaskSpec, PlanBatch) comes first, so that a front end starts its
// live display only for a run that starts.

// RunOnce makes one call to agent a (Pick) with prompt and cfg's settings:
// no run is kept, and a rate limit is reported, not waited for. obs follows
// the call; nil: nobody. In a git repository, what the call changes in
// git's control files is put back (local.WatchGit).
func RunOnce(ctx context.Context, cfg *config.Config, a agent.Agent, prompt string, obs engine.Observer, p local.Parts) (engine.Result, error) {
	ctx, _, err := local.Confine(ctx, cfg.Sandbox, p, local.LoopSite("", cfg.Cwd, ""))
	if err != nil {
		return engine.Result{}, err
	}
	if a, err = local.WatchGit(ctx, a, cfg.Cwd, p); err != nil {
		return engine.Result{}, err
	}
	opts := local.LoopSpecOf(cfg, a.Name()).Options(store.NewRunID(time.Now()), prompt)
	opts.Once = true
	opts.MaxWait = 0
	opts.Observer = obs
	return engine.Run(ctx, a, opts), nil
}

// StartLoop runs a loop of agent a (Pick) on prompt with cfg's settings to
// its end: a run kept under cfg's state directory, journaled, guarded and
// resumable.
func StartLoop(ctx context.Context, cfg *config.Config, a agent.Agent, prompt string, p local.Parts) (engine.Result, error) {
	return local.StartLoop(ctx, local.LoopSpecOf(cfg, a.Name()), a, prompt, cfg.StateDir, p)
}

// TaskSpec is the spec of a task with cfg in the git repository of cfg's
// cwd, planned first when plan is set. A single tier without a backend
// gets the one picked as a loop's is (Pick); when none can be had, the
// result that says why is returned in place of the spec.
func TaskSpec(ctx context.Context, cfg *config.Config, plan bool, p local.Parts) (local.TaskSpec, *engine.TaskResult, error) {
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		return local.TaskSpec{}, nil, err
	}
	s := local.TaskSpecOf(cfg, repo.Dir)
	s.Plan = plan
	if len(s.Tiers) == 1 && s.Tiers[0].Backend == "" {
		res, a := Pick(cfg, p)
		if a == nil {
			r := local.Failure(res)
			return local.TaskSpec{}, &r, nil
		}
		s.Tiers[0].Backend, s.Tiers[0].Name = a.Name(), a.Name()
	}
	return s, nil, nil
}

// Task is a task to start here with its spec (TaskSpec).
type Task struct {
	Prompt string
	Spec   local.TaskSpec
	// Base is the ref the task branch starts from; "": HEAD.
	Base string
	// IncludeDirty brings the uncommitted changes of the user's tree in as
	// the branch's first commit.
	IncludeDirty bool
}

// StartTask runs the task t to its end as a run kept under cfg's state
// directory (local.StartTask).
func StartTask(ctx context.Context, cfg *config.Config, t Task, p local.Parts) (engine.TaskResult, error) {
	return local.StartTask(ctx, local.NewTask{Prompt: t.Prompt, Spec: t.Spec, Base: t.Base, IncludeDirty: t.IncludeDirty, StateDir: cfg.StateDir}, p)
}

// StartBatch runs the batch of spec (PlanBatch) to its end as a run kept
// under cfg's state directory (local.StartBatch).
func StartBatch(ctx context.Context, cfg *config.Config, spec local.BatchSpec, bp local.BatchParts) (batch.Summary, error) {
	return local.StartBatch(ctx, spec, cfg.StateDir, bp)
}
