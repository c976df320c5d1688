package cli

import (
	"context"
	"fmt"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/live"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// submission is how task's and batch's flags send a run to Temporal, base
// the branch it starts from.
func (o *taskFlags) submission(base string) runs.Submission {
	return runs.Submission{RepoURL: o.repoURL, Base: base, Heartbeat: o.heartbeat, Detach: o.detach, IncludeDirty: o.includeDirty, Plan: o.plan}
}

// runTaskTemporal submits a task to the Temporal server of cfg and prints
// its result once followed to its end (runs.SubmitTask), or only its id
// (--detach).
func runTaskTemporal(ctx context.Context, stdio *Stdio, cfg *config.Config, o *taskFlags, prompt string) error {
	p := stdio.Parts(cfg.Quiet, true, false)
	defer live.Close(p)
	id, res, err := runs.SubmitTask(ctx, cfg, o.submission(o.base), prompt, p)
	if err != nil {
		return err
	}
	if res == nil {
		fmt.Fprintln(stdio.Out, id)
		return nil
	}
	if g := res.Git; g != nil && g.Merge != nil && g.Merge.Commit != "" {
		stdio.Reporter().Notice(fmt.Sprintf("squash commit %s on branch %s", plain.ShortSHA(g.Merge.Commit), temporal.ReadyBranch(g.Branch)))
	}
	return reportTask(stdio, cfg.JSON, *res)
}

// runBatchTemporal submits a batch to the Temporal server of cfg and
// prints its result once followed to its end (runs.SubmitBatch), with a
// line for each task whose status changes, or only its id (--detach).
func runBatchTemporal(ctx context.Context, stdio *Stdio, cfg *config.Config, o *batchFlags, spec local.BatchSpec) error {
	changed := func(tr batch.TaskSummary) { stdio.Reporter().Progress(plain.TaskChanged(tr)) } // left out when quiet
	id, sum, err := runs.SubmitBatch(ctx, cfg, o.task.submission(o.base), spec, changed, stdio.Parts(cfg.Quiet, false, false))
	if err != nil {
		return err
	}
	if sum == nil {
		fmt.Fprintln(stdio.Out, id)
		return nil
	}
	return reportBatch(stdio, cfg.JSON, *sum)
}
