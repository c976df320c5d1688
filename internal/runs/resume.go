package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// ResumeParts are what a front end gives a resume: its messages, and the
// parts of the run resumed, made once its kind is known (a task's live
// line, a loop's, a batch's board).
type ResumeParts struct {
	// Parts say the resume's own messages (Say) and are the parts of a
	// resumed run for which no maker below is given.
	local.Parts
	// Quiet leaves out the notices of orphaned agents killed and of a
	// journal repaired (the reporter leaves out the progress).
	Quiet bool
	// Env, when set, is called with the directory the run was started in
	// before anything else is done with it: what it returns gives the
	// run's recorded environment names their values again, as the EnvValue
	// of every part of the resumed run.
	Env func(dir string) (local.EnvValue, error)
	// Task and Loop make the parts of a resumed task (with its
	// TaskObserver) and loop (with its LoopObserver).
	Task, Loop func() local.Parts
	// Batch makes the parts of a resumed batch of total tasks, and what
	// ends them once the batch stops.
	Batch func(total int) (local.BatchParts, func())
	// Connect is how to reach the server of a run on Temporal.
	Connect Connect
	// Hooks, when set, gives the hooks of the configuration of the
	// directory a run was started in (dir), which fire for its resume as
	// they fired for the run, wherever resume is typed; nil: the hooks of
	// the parts.
	Hooks func(dir string) *hooks.Dispatcher

	hooks *hooks.Dispatcher // Hooks's for the run resumed, once known
}

// withHooks are p with the hooks of the run resumed, when Hooks gave them.
func (rp ResumeParts) withHooks(p local.Parts) local.Parts {
	if rp.Hooks != nil {
		p.Hooks = rp.hooks
	}
	return p
}

// task makes the parts of a resumed task, env their EnvValue.
func (rp ResumeParts) task(env local.EnvValue) local.Parts {
	p := rp.Parts
	if rp.Task != nil {
		p = rp.Task()
	}
	p.EnvValue = env
	return rp.withHooks(p)
}

// loop makes the parts of a resumed loop, env their EnvValue.
func (rp ResumeParts) loop(env local.EnvValue) local.Parts {
	p := rp.Parts
	if rp.Loop != nil {
		p = rp.Loop()
	}
	p.EnvValue = env
	return rp.withHooks(p)
}

// batch makes the parts of a resumed batch, env their EnvValue and that
// of each task's.
func (rp ResumeParts) batch(total int, env local.EnvValue) (local.BatchParts, func()) {
	bp, end := local.BatchParts{Parts: rp.Parts}, func() {}
	if rp.Batch != nil {
		bp, end = rp.Batch(total)
	}
	return eachParts(bp, func(p local.Parts) local.Parts {
		p.EnvValue = env
		return rp.withHooks(p)
	}), end
}

// env is what gives a run's recorded environment names their values:
// rp.Env's for the run started in dir, else p's EnvValue, else jlgcli's
// environment.
func (rp ResumeParts) env(dir string) (local.EnvValue, error) {
	if rp.Env != nil {
		return rp.Env(dir)
	}
	if rp.EnvValue != nil {
		return rp.EnvValue, nil
	}
	getenv := rp.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(_, name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}, nil
}

// Resumed is what a resume did.
type Resumed struct {
	// Kind is the run's command: "task", "batch", else a loop ("loop",
	// "run"); ID is the run's whole id.
	Kind string
	ID   string
	// Done: the run had already ended done, and nothing was resumed (a run
	// on Temporal is only followed or printed); false for a task done but
	// killed before its end, which the resume ended.
	Done bool
	// The result of the run, of its kind.
	Loop  engine.Result
	Task  taskengine.Result
	Batch batch.Summary
	PR    local.PRResult
}

// Resume continues run id (or a unique prefix of it) under the state root
// root where it stopped, with the limits given (refused when its kind
// cannot take them: local.Limits.Check): a loop, task or batch made here
// (local.ResumeLoop, ResumeTask, ResumeBatch), after the agents a killed
// jlgcli left are killed; a run on Temporal is followed, or started again
// on the server when it stopped by its limits. A run that another process
// is running or following is refused (a usage error).
func Resume(ctx context.Context, root, id string, limits local.Limits, rp ResumeParts) (Resumed, error) {
	run, err := Open(root, id)
	if err != nil {
		return Resumed{}, err
	}
	defer run.Close()
	out := Resumed{Kind: run.Meta.Command, ID: run.ID}
	env, err := rp.env(run.Meta.Cwd)
	if err != nil {
		return out, err
	}
	if rp.Hooks != nil {
		rp.hooks = rp.Hooks(run.Meta.Cwd)
		rp.Parts = rp.withHooks(rp.Parts)
	}
	if run.Meta.Temporal != nil {
		return resumeTemporal(ctx, run, limits, rp, env)
	}
	if _, err := run.Lock(); err != nil {
		if errors.Is(err, store.ErrLive) {
			return out, &exit.UsageError{Err: fmt.Errorf("run %s is running in another process: %w", run.ID, err), Hint: "wait for it, or stop it with Ctrl-C there"}
		}
		return out, err
	}
	// An agent of this run may outlive a jlgcli that was killed: it must
	// not go on writing beside the resumed run.
	if n := proc.KillTagged(local.RunTag(run.ID)); n > 0 && !rp.Quiet {
		say(rp.Parts).Notice(fmt.Sprintf("killed %s of run %s", plural.N(n, "orphaned agent process group"), run.ID))
	}
	evs, err := events(run, rp.Parts, rp.Quiet)
	if err != nil {
		return out, err
	}
	if err := limits.Check(run.Meta.Command, run.ID); err != nil {
		return out, err
	}
	switch run.Meta.Command {
	case "task":
		out.Task, out.Done, err = local.ResumeTask(ctx, root, run, evs, limits, rp.task(env))
	case "pr":
		p := rp.task(env)
		out.PR, out.Done, err = local.ResumePR(ctx, root, run, evs, p)
	case "batch":
		var total int
		var spec local.BatchSpec
		if err := json.Unmarshal(run.Meta.Options, &spec); err == nil {
			total = len(spec.Tasks)
		}
		bp, end := rp.batch(total, env)
		out.Batch, out.Done, err = local.ResumeBatch(ctx, root, run, evs, bp)
		end()
	default:
		out.Loop, out.Done, err = local.ResumeLoop(ctx, root, run, evs, limits, rp.loop(env))
	}
	return out, err
}
