package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type reportOptions struct {
	storeFlags
	format string
	output string
}

func newReportCmd(stdio *Stdio) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Print the final report of a task: attempts, tiers, errors, where the work is",
		Long: `Print the final report of a task run (its id, or a unique prefix): its status, the tiers
it used and what each cost, every attempt and the gate's verdict on it, the loops detected, the
distinct errors, the flaky tests, the branch, commits and snapshots that hold the work, what to
do now, and the last diff.

--format md (the default) is Markdown, json the seed's report object (snake_case), html one
self-contained page (no script, nothing loaded from the network) with a timeline of the
attempts. -o writes it to a file instead of stdout; without --format its extension (.md,
.json, .html) chooses the format.

The report is made from the result the task wrote when it stopped, or, for a run still going
or killed, from its journal.

A batch's report tells its tasks; a pull-request run's (jlgcli pr, task --until) tells its pull
request, how it ended and why, each round (its task run, what it was for, what it pushed, the
threads it answered, its cost), the checks last seen, the merge and the comment it left; its
JSON is the object of show --json.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	o.register(cmd)
	server := flagLayer() // how to connect to the server of a run on Temporal
	bindKeys(cmd.Flags(), "report", server)
	cmd.Flags().StringVar(&o.format, "format", "", "md, json or html (default md; --json is --format json)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "write the report to `FILE`")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		format, err := runs.ReportFormat(o.format, cmd.Flags().Changed("format"), o.json, o.output)
		if err != nil {
			return exit.NewUsage(err, "")
		}
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		out, err := runs.Report(cmd.Context(), root, args[0], format, stdio.Parts(false, false, false), stdio.Connect(server))
		var nr *runs.NoReportError
		if errors.As(err, &nr) {
			return exit.WithHint(err, "'jlgcli show "+nr.ID+"' prints where its tasks stand")
		}
		if err != nil {
			return err
		}
		return runs.WriteReport(stdio.Out, stdio.WorkDir, o.output, out)
	}
	return cmd
}

type statsOptions struct {
	storeFlags
	since string
}

func newStatsCmd(stdio *Stdio) *cobra.Command {
	o := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Metrics across task runs: success rate per tier, attempts, cost per success",
		Long: `Metrics across the task runs kept for this repository (or in $XDG_STATE_HOME/jlgcli outside
one): how many succeeded, the success rate of each tier (of the tasks in which a tier made
attempts, how many it finished), the mean number of attempts before success, the cost per
successful task (the cost of all the task runs divided by the successes: failures are paid for
too) and the mean cost of a success, and the mean duration. Runs still running are not
counted. The pull-request runs (jlgcli pr, task --until) are counted by status, with their
rounds: each round is a task run, counted above once, its cost with it. --since DATE counts only the runs started at or after DATE (2006-01-02, local time,
or an RFC 3339 time).`,
		Args: cobra.NoArgs,
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.since, "since", "", "only runs started at or after `DATE` (2006-01-02 or RFC 3339)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		since, err := runs.ParseSince(o.since)
		if err != nil {
			return err
		}
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		s, err := runs.TaskStats(root, since)
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(stdio, s)
		}
		_, err = fmt.Fprint(stdio.Out, s.Text())
		return err
	}
	return cmd
}
