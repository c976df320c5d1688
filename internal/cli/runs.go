package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
)

// storeFlags locate the runs.
type storeFlags struct {
	stateDir string
	json     bool
}

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// root finds the state root as a loop started here would, with the
// configuration's stateDir unless --state-dir is given.
func (f *storeFlags) root(stdio *Stdio) (string, error) {
	cfg, err := loadConfig(stdio, nil)
	if err != nil {
		return "", err
	}
	override := f.stateDir
	if override == "" {
		override = cfg.StateDir
	}
	return runner.StateRoot(stdio.parts(true, false, false), cfg.Cwd, override)
}

// open opens run id under the state root, mapping a missing or ambiguous id
// to a usage error.
func (f *storeFlags) open(stdio *Stdio, id string) (string, *store.Run, error) {
	root, err := f.root(stdio)
	if err != nil {
		return "", nil, err
	}
	run, err := store.Open(root, id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAmbiguous) {
		return "", nil, &hintError{&usageError{err}, "'jlgcli runs' lists the runs kept in " + root}
	}
	return root, run, err
}

type runsOptions struct {
	storeFlags
	status string
	limit  int
}

func newRunsCmd(stdio *Stdio) *cobra.Command {
	o := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs, newest first",
		Long: `List the runs kept for this repository (or in $XDG_STATE_HOME/jlgcli outside one), newest
first: id, command, status, backend, iterations, cost, duration and start. LIVE says whether a
process is running it now; a run whose status is 'running' and that is not live was killed:
'jlgcli resume ID' continues it.`,
		Args: cobra.NoArgs,
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.status, "status", "", "only runs with this status")
	cmd.Flags().IntVarP(&o.limit, "limit", "n", 0, "at most N runs")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		idx, err := store.OpenIndex(root)
		if err != nil {
			return err
		}
		defer idx.Close()
		rows, err := idx.List(store.Filter{Status: o.status, Limit: o.limit})
		if err != nil {
			return err
		}
		if o.json {
			if rows == nil {
				rows = []store.RunRow{}
			}
			return printJSON(stdio, rows)
		}
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCOMMAND\tSTATUS\tBACKEND\tITER\tCOST\tDURATION\tSTARTED\tLIVE")
		for _, r := range rows {
			c := "-"
			if r.CostKnown {
				c = cost.Amount(r.CostUSD, true, false)
			}
			live := "no"
			if r.Live {
				live = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.ID, r.Command, r.Status, r.Backend, r.Iterations, c,
				(time.Duration(r.DurationMs) * time.Millisecond).Round(time.Second), r.StartedAt.Local().Format("2006-01-02 15:04"), live)
		}
		return tw.Flush()
	}
	return cmd
}

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

type resumeOptions struct {
	storeFlags
	quiet         bool
	maxIterations int
	timeout       time.Duration
	maxWait       time.Duration
	budget        float64
}

func newResumeCmd(stdio *Stdio) *cobra.Command {
	o := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a stopped or killed run exactly where it stopped",
		Long: `Continue a run (its id, or a unique prefix) where it stopped: its iteration count, the
time it used against its timeout, its cost, its no-progress count, its agent session and its
next prompt are those the journal recorded. An iteration that was cut short is made again;
none is counted twice. Time while the run was not running is not counted. The run goes on
with the settings it was started with; --max-iterations, --timeout and --max-wait raise its
limits. A run that ended done is only printed.`,
		Args: cobra.ExactArgs(1),
	}
	o.register(cmd)
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	cmd.Flags().IntVar(&o.maxIterations, "max-iterations", 0, "new iteration limit (counting the iterations already made)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "new global time limit (counting the time already used)")
	cmd.Flags().DurationVar(&o.maxWait, "max-wait", 0, "new limit on the total wait for rate limits")
	cmd.Flags().Float64Var(&o.budget, "budget", 0, "a task's new cost budget in US dollars (counting what it spent)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, run, err := o.open(stdio, args[0])
		if err != nil {
			return err
		}
		defer run.Close()
		if _, err := run.Lock(); err != nil {
			if errors.Is(err, store.ErrLive) {
				return &hintError{&usageError{fmt.Errorf("run %s is running in another process: %w", run.ID, err)}, "wait for it, or stop it with Ctrl-C there"}
			}
			return err
		}
		// An agent of this run may outlive a jlgcli that was killed: it
		// must not go on writing beside the resumed run.
		if n := proc.KillTagged(runner.RunTag(run.ID)); n > 0 && !o.quiet {
			stdio.reporter().Notice(fmt.Sprintf("killed %d orphaned agent process group(s) of run %s", n, run.ID))
		}
		events, err := runEvents(stdio, run, o.quiet)
		if err != nil {
			return err
		}
		switch run.Meta.Command {
		case "task":
			return resumeTask(cmd, stdio, o, root, run, events)
		case "batch":
			return resumeBatch(cmd, stdio, o, root, run, events)
		}
		set := cmd.Flags().Changed
		if set("budget") {
			return usagef("--budget is a task's; run %s is a %s run", run.ID, run.Meta.Command)
		}
		var limits runner.LoopLimits
		if set("max-iterations") {
			limits.MaxIterations = &o.maxIterations
		}
		if set("timeout") {
			limits.Timeout = &o.timeout
		}
		if set("max-wait") {
			limits.MaxWait = &o.maxWait
		}
		p := stdio.parts(o.quiet, false, true)
		if c, ok := p.LoopObserver.(interface{ Close() }); ok {
			defer c.Close()
		}
		res, done, err := runner.ResumeLoop(cmd.Context(), root, run, events, limits, p)
		if err != nil {
			return err
		}
		if done {
			stdio.reporter().Notice(fmt.Sprintf("run %s is already done; nothing to resume", run.ID))
		}
		return report(stdio, o.json, res)
	}
	return cmd
}

// runEvents reads a run's journal as engine events, saying on stderr when a
// torn last line was repaired.
func runEvents(stdio *Stdio, run *store.Run, quiet bool) ([]engine.Event, error) {
	events, repair, err := runner.Events(run)
	if err != nil {
		return nil, err
	}
	if repair != nil && !quiet {
		stdio.reporter().Notice(repair.String())
	}
	return events, nil
}

func printJSON(stdio *Stdio, v any) error {
	enc := json.NewEncoder(stdio.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
