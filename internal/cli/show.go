package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
)

func newShowCmd(stdio *Stdio) *cobra.Command {
	o := &storeFlags{}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: its result, transcript, and where its files are",
		Long: `Show one run (its id, or a unique prefix of it). --json prints the same result object as
'loop --json', transcript included, rebuilt from the run's journal.`,
		Args: cobra.ExactArgs(1),
	}
	o.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		_, run, err := o.open(stdio, args[0])
		if err != nil {
			return err
		}
		defer run.Close()
		if run.Meta.Temporal != nil {
			if err := refreshTemporal(cmd.Context(), stdio, run); err != nil {
				return err
			}
		}
		switch run.Meta.Command {
		case "task":
			return showTask(stdio, o.json, run)
		case "batch":
			return showBatch(stdio, o.json, run)
		}
		events, err := runEvents(stdio, run, false)
		if err != nil {
			return err
		}
		res, err := engine.ResultOf(run.ID, run.Meta.Backend, events)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.ID, err)
		}
		live := run.Live()
		if o.json {
			return printJSON(stdio, res)
		}
		status := string(res.Status)
		if res.Status == engine.StatusRunning && !live {
			status += " (not live: killed; 'jlgcli resume " + run.ID + "' continues it)"
		}
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "run\t%s\n", run.ID)
		fmt.Fprintf(tw, "command\t%s\n", run.Meta.Command)
		fmt.Fprintf(tw, "backend\t%s\n", run.Meta.Backend)
		fmt.Fprintf(tw, "status\t%s\n", status)
		if res.Details != "" {
			fmt.Fprintf(tw, "details\t%s\n", res.Details)
		}
		fmt.Fprintf(tw, "iterations\t%d\n", res.Iterations)
		fmt.Fprintf(tw, "duration\t%s\n", (time.Duration(res.DurationMs) * time.Millisecond).Round(time.Second))
		fmt.Fprintf(tw, "cost\t%s\n", cost.Amount(res.CostUSD, res.CostKnown, false))
		fmt.Fprintf(tw, "tokens\t%d in, %d out\n", res.InputTokens, res.OutputTokens)
		fmt.Fprintf(tw, "started\t%s\n", run.Meta.StartedAt.Local().Format(time.RFC3339))
		fmt.Fprintf(tw, "directory\t%s\n", run.Dir)
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, e := range res.Transcript {
			fmt.Fprintf(stdio.Out, "\n--- iteration %d (%s, %s)\n", e.Iteration, e.StartedAt, time.Duration(e.DurationMs)*time.Millisecond)
			if e.Failure != nil {
				fmt.Fprintf(stdio.Out, "failure: %s: %s\n", e.Failure.Kind, e.Failure.Message)
			}
			fmt.Fprintf(stdio.Out, "output: %s\n%s\n", run.OutputPath(e.Iteration), e.Response)
		}
		return nil
	}
	return cmd
}

// showTask prints a task run: its result, and each attempt with the refs
// that keep the tree it started from and the one it left.
func showTask(stdio *Stdio, asJSON bool, run *store.Run) error {
	res, err := taskResult(stdio, run)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(stdio, res)
	}
	status := string(res.Status)
	switch {
	case res.Status == engine.StatusRunning && run.Meta.Temporal != nil:
		status += " (on the workers of " + run.Meta.Temporal.Address + "; 'jlgcli resume " + run.ID + "' follows it)"
	case res.Status == engine.StatusRunning && !run.Live():
		status += " (not live: killed; 'jlgcli resume " + run.ID + "' continues it)"
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", run.ID)
	fmt.Fprintf(tw, "command\ttask\n")
	if t := run.Meta.Temporal; t != nil {
		fmt.Fprintf(tw, "temporal\t%s (namespace %s, queue %s)\n", t.Address, t.Namespace, t.Queue)
	}
	fmt.Fprintf(tw, "task\t%s\n", engine.Subject(run.Meta.Prompt))
	fmt.Fprintf(tw, "status\t%s\n", status)
	if res.Details != "" {
		fmt.Fprintf(tw, "details\t%s\n", res.Details)
	}
	fmt.Fprintf(tw, "attempts\t%d\n", len(res.Attempts))
	fmt.Fprintf(tw, "cost\t%s of $%.2f\n", cost.Amount(res.CostUSD, res.CostKnown, res.CostEstimated), res.BudgetUSD)
	fmt.Fprintf(tw, "duration\t%s\n", (time.Duration(res.DurationMs) * time.Millisecond).Round(time.Second))
	var s runner.TaskSpec
	_ = json.Unmarshal(run.Meta.Options, &s)
	if g := res.Git; g != nil {
		fmt.Fprintf(tw, "branch\t%s\n", g.Branch)
		if g.Merge != nil {
			fmt.Fprintf(tw, "merge\t%s %s\n", g.Merge.Status, shortSHA(g.Merge.Commit))
		}
	} else if s.Worktree.Branch != "" {
		fmt.Fprintf(tw, "branch\t%s\n", s.Worktree.Branch)
		fmt.Fprintf(tw, "worktree\t%s\n", s.Worktree.Path)
	}
	fmt.Fprintf(tw, "directory\t%s\n", run.Dir)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Attempts) == 0 {
		return nil
	}
	refs := git.RefPrefix + run.ID + "/"
	fmt.Fprintf(stdio.Out, "\nattempts (restore one with: git checkout %s<N>-result -- .)\n", refs)
	tw = tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tSTEP\tTIER\tGATE\tACTION\tCOST\tBEFORE\tAFTER")
	for _, a := range res.Attempts {
		step := "-"
		if a.Step > 0 {
			step = fmt.Sprint(a.Step)
		}
		action := a.Action
		if a.Detection != nil {
			action += " (" + a.Detection.Names() + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s%d\t%s%d-result\n", a.Number, step, a.Tier, a.Gate.Status, action, cost.Amount(a.CostUSD, a.CostKnown, a.CostEstimated),
			refs, a.Number, refs, a.Number)
	}
	return tw.Flush()
}
