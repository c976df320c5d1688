package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

// batchFlags are the inputs of `batch`: the developer flags of `task`, the
// defaults that a sheet's front matter overrides, and the batch's own.
type batchFlags struct {
	task     taskFlags
	failFast bool
	dryRun   bool
	budget   float64
	// budgetSet: --budget was given.
	budgetSet bool
	base      string
	issues    string
	remote    string
	watch     bool
}

func newBatchCmd(stdio *Stdio) *cobra.Command {
	o := &batchFlags{}
	cmd := &cobra.Command{
		Use:   "batch [flags] PATH... | --issues QUERY",
		Short: "Run a backlog of task sheets as a DAG of tasks in parallel worktrees, merged in dependency order",
		Long: strings.TrimSpace(`
Run every task sheet that PATH names (a Markdown file, or a folder of .md
files, not recursive) as 'jlgcli task' runs one: its own run, worktree,
branch, tiers, gate and report. A sheet is Markdown with an optional YAML
front matter (id, description, depends, backend, model or tiers, attempts,
budget, checks, timeout); its text is the task. The flags are the defaults
that a sheet's front matter overrides.

The sheets form a DAG by their depends: an unknown id or a cycle stops the
batch before any agent runs (exit 64), and --dry-run prints the plan. Up to
--jobs tasks run at once; a task starts from the base branch once all its
dependencies are merged into it, so it sees their work. Merges are made one
at a time: when the base moved since a task branched, its change is laid on
the new base and its checks run again there; a conflict or a failing check
gives the task one more run from the new base, then it ends 'conflict' with
its branch kept. A task that fails blocks its dependents; --fail-fast stops
starting tasks after the first failure; --budget bounds the whole batch.

The batch is a run: Ctrl-C stops every task (130), and 'jlgcli resume ID'
continues it. Exit 0 when every task is done, 3 when some are not.

With --issues QUERY in place of sheets, the tasks are the open issues of
the repository's forge that QUERY matches (label:NAME, several all
required; assignee:LOGIN, none or *; milestone:TITLE): each issue is a
sheet (its title and body; "depends on #N" and "blocked by #N" lines are
its dependencies). Each task claims its issue (label jlgcli:claimed, and
jlgcli's login assigned) before it starts, tells it how it goes in one
comment edited in place, and labels it jlgcli:done, jlgcli:failed or
jlgcli:blocked at the end. Closing the issue or taking a label off stops
its task (resumable); a comment from someone who can push reaches its
next attempt. --watch keeps taking new matching issues until stopped.
See docs/issues.md.`),
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("issues") {
				_, err := intake.ParseQuery(o.issues) // an empty one says why
				return err
			}
			if len(args) == 0 {
				return usagef("name task sheets (PATH...), or the forge's issues with --issues QUERY")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	o.task.registerDeveloper(fs, "batch")
	for _, k := range config.Table() {
		if k.Name == "budgetUsd" {
			bindKey(fs, k, "task-budget", "", "cost budget of each task in US dollars, unless its sheet sets one; 0: none (config: budgetUsd)", k.Default, o.task.flags)
		}
	}
	fs.BoolVar(&o.failFast, "fail-fast", false, "start no task after the first one fails")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan (levels, order, each task's tiers and checks) and exit")
	fs.Float64Var(&o.budget, "budget", 0, "cost budget of the whole batch in US dollars: no task starts once what is left cannot pay for one; 0: none")
	fs.StringVar(&o.base, "base", "", "the branch tasks start from and merge into (default: the checked-out branch)")
	fs.StringVar(&o.issues, "issues", "", "run the forge's open issues that QUERY matches (label:NAME assignee:LOGIN|none|* milestone:TITLE) in place of sheets")
	fs.StringVar(&o.remote, "remote", "", "with --issues: the git remote whose forge holds them (default: origin)")
	fs.BoolVar(&o.watch, "watch", false, "with --issues: keep taking new matching issues, batch after batch, until stopped")
	o.task.registerTemporal(fs, "batch")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.task.heartbeatSet = cmd.Flags().Changed("heartbeat-timeout")
		o.budgetSet = cmd.Flags().Changed("budget")
		return runBatchCmd(cmd.Context(), stdio, o, args)
	}
	return cmd
}

func runBatchCmd(ctx context.Context, stdio *Stdio, o *batchFlags, args []string) error {
	if o.budgetSet && o.budget < 0 {
		return usagef("--budget must not be negative, not %g", o.budget)
	}
	out, err := runs.StartBatch(ctx, stdio, runs.BatchCommand{Paths: args, Flags: o.task.flags, Submission: o.task.submission(o.base),
		HeartbeatGiven: o.task.heartbeatSet, FailFast: o.failFast, BudgetUSD: o.budget, DryRun: o.dryRun,
		Issues: o.issues, Remote: o.remote, Watch: o.watch})
	var pick *runs.PickError
	if errors.As(err, &pick) { // backend-missing (2) or backend-unknown (64), as for a task
		stdio.Reporter().Error(pick.Error())
		return &exitError{code: pick.Result.ExitCode}
	}
	switch {
	case err != nil:
		return err
	case out.Nothing != "": // --issues: none to run
		stdio.Reporter().Notice(out.Nothing)
		return nil
	case out.Plan != nil: // --dry-run
		plain.BatchPlan(stdio.Out, out.Plan.Spec, out.Plan.Levels)
		return nil
	case out.Summary == nil: // --detach
		fmt.Fprintln(stdio.Out, out.ID)
		return nil
	}
	return reportBatch(stdio, out.JSON, *out.Summary)
}

// reportBatch prints a batch's result (plain.BatchResult).
func reportBatch(stdio *Stdio, asJSON bool, res batch.Summary) error {
	return withCode(plain.BatchResult(stdio.Out, stdio.Reporter(), asJSON, res, stdio.OutTerminal()), res.ExitCode)
}
