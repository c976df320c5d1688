package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/flow"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
)

// runTaskTemporal submits a task to the Temporal server of cfg and follows
// it to its end, or only submits it (--detach). The user's clone is never
// touched: the workers clone the remote and push their work there.
func runTaskTemporal(ctx context.Context, stdio *Stdio, cfg *config.Config, o *taskFlags, prompt string) error {
	if o.plan {
		return usagef("--plan is not available yet for a task sent to Temporal; run it here, or without --plan")
	}
	if o.includeDirty {
		return usagef("--include-dirty cannot reach Temporal workers: they clone the remote; commit and push your changes first")
	}
	if err := o.checkTemporal(); err != nil {
		return err
	}
	s := runner.TaskSpecOf(cfg, "")
	for _, t := range s.Tiers {
		if t.Backend == "" {
			return usagef("a task sent to Temporal names its backend (-b BACKEND, --tier or [[tiers]]): the workers' machines decide which are installed")
		}
	}
	url, base, err := remoteOf(ctx, cfg, o.repoURL, o.base)
	if err != nil {
		return err
	}
	t := cfg.Temporal
	c, err := flow.Dial(ctx, t.Address, t.Namespace, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	id := store.NewRunID(time.Now())
	in := flow.TaskInput{RunID: id, Task: prompt, Repo: url, BaseBranch: base, Branch: git.BranchName(id, prompt),
		MergePush: cfg.Merge == git.MergePush, Spec: s, Queue: t.TaskQueue, WorkerWaitMs: t.WorkerWait.Milliseconds(),
		HeartbeatMs: o.heartbeat.Milliseconds()}
	if err := flow.Submit(ctx, c, in); err != nil {
		return err
	}
	say := stdio.reporter()
	if o.detach {
		fmt.Fprintln(stdio.Out, id)
		return nil
	}
	say.Notice(fmt.Sprintf("task %s submitted to %s (queue %s); its branch on %s: %s", id, t.Address, t.TaskQueue, url, in.Branch))
	p := stdio.parts(cfg.Quiet, true, false)
	res, err := flow.Follow(ctx, c, id, s.Policy(prompt).Tiers, p.TaskObserver, time.Second)
	if c, ok := p.TaskObserver.(interface{ Close() }); ok {
		c.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			say.Notice(fmt.Sprintf("stopped following task %s; it goes on on the workers", id))
		}
		return err
	}
	if g := res.Git; g != nil && g.Merge != nil && g.Merge.Commit != "" {
		say.Notice(fmt.Sprintf("squash commit %s on branch %s", shortSHA(g.Merge.Commit), flow.ReadyBranch(g.Branch)))
	}
	return reportTask(stdio, cfg.JSON, res)
}

func (o *taskFlags) checkTemporal() error {
	if o.heartbeat < 10*time.Second {
		return usagef("--heartbeat-timeout must be at least 10s (workers heartbeat every 5s), not %s", o.heartbeat)
	}
	return nil
}

// remoteOf is the repository the workers clone and the branch a
// submission starts from: as given, else this repository's origin and
// its current branch.
func remoteOf(ctx context.Context, cfg *config.Config, url, base string) (string, string, error) {
	if url == "" || base == "" {
		repo, err := runner.OpenRepo(ctx, cfg.Cwd)
		if err != nil {
			if url == "" {
				return "", "", usagef("--repo URL is needed outside a git repository: %v", err)
			}
		} else {
			if url == "" {
				if url, err = repo.RemoteURL(ctx, "origin"); err != nil {
					return "", "", usagef("this repository has no origin to give the workers (%v): pass --repo URL", err)
				}
			}
			if base == "" {
				if base, _ = repo.CurrentBranch(ctx); base == "" {
					return "", "", usagef("HEAD is detached: name the base branch with --base BRANCH")
				}
			}
		}
	}
	if base == "" {
		base = "main"
	}
	return url, base, nil
}

// runBatchTemporal submits a batch to the Temporal server of cfg and
// follows it to its end, or only submits it (--detach).
func runBatchTemporal(ctx context.Context, stdio *Stdio, cfg *config.Config, o *batchFlags, spec runner.BatchSpec) error {
	if o.task.plan {
		return usagef("--plan is not available yet for a batch sent to Temporal; run it here, or without --plan")
	}
	if err := o.task.checkTemporal(); err != nil {
		return err
	}
	for _, t := range spec.Tasks {
		for _, tr := range t.Spec.Tiers {
			if tr.Backend == "" {
				return usagef("task %s: a batch sent to Temporal names its backends (-b, --tier, [[tiers]] or the sheet's backend)", t.ID)
			}
		}
	}
	url, base, err := remoteOf(ctx, cfg, o.task.repoURL, o.base)
	if err != nil {
		return err
	}
	spec.BaseBranch, spec.Repo = base, url
	t := cfg.Temporal
	c, err := flow.Dial(ctx, t.Address, t.Namespace, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	id := store.NewRunID(time.Now())
	in := flow.BatchInput{RunID: id, Repo: url, Spec: spec, Branch: flow.BatchBranch(id), MergePush: cfg.Merge == git.MergePush,
		Queue: t.TaskQueue, WorkerWaitMs: t.WorkerWait.Milliseconds(), HeartbeatMs: o.task.heartbeat.Milliseconds()}
	if err := flow.SubmitBatch(ctx, c, in); err != nil {
		return err
	}
	say := stdio.reporter()
	if o.task.detach {
		fmt.Fprintln(stdio.Out, id)
		return nil
	}
	say.Notice(fmt.Sprintf("batch %s of %d tasks submitted to %s (queue %s); its branch on %s: %s", id, len(spec.Tasks), t.Address, t.TaskQueue, url, in.Branch))
	sum, err := flow.FollowBatch(ctx, c, id, func(tr batch.TaskResult) {
		if cfg.Quiet {
			return
		}
		line := fmt.Sprintf("[%s] %s", tr.ID, tr.Status)
		if tr.Reason != "" {
			line += ": " + tr.Reason
		} else if tr.Details != "" {
			line += ": " + tr.Details
		}
		say.Notice(line)
	}, time.Second)
	if err != nil {
		if ctx.Err() != nil {
			say.Notice(fmt.Sprintf("stopped following batch %s; it goes on on the workers", id))
		}
		return err
	}
	return reportBatch(stdio, cfg.JSON, sum)
}
