package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type resumeOptions struct {
	storeFlags
	quiet         bool
	maxIterations int
	timeout       time.Duration
	maxWait       time.Duration
	budget        float64
	// env holds --env: the values of the run's recorded environment.
	env *config.Layer
	// limits are the limits given on the command line.
	limits local.Limits
}

// setLimits makes the limit flags given the limits of the resume.
func (o *resumeOptions) setLimits(changed func(string) bool) {
	if changed("max-iterations") {
		o.limits.MaxIterations = &o.maxIterations
	}
	if changed("timeout") {
		o.limits.Timeout = &o.timeout
	}
	if changed("max-wait") {
		o.limits.MaxWait = &o.maxWait
	}
	if changed("budget") {
		o.limits.BudgetUSD = &o.budget
	}
}

func newResumeCmd(stdio *Stdio) *cobra.Command {
	o := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a stopped or killed run exactly where it stopped",
		Long: `Continue a run (its id, a unique prefix or suffix, or 'last') where it stopped: its iteration count, the
time it used against its timeout, its cost, its no-progress count, its agent session and its
next prompt are those the journal recorded. An iteration that was cut short is made again;
none is counted twice. Time while the run was not running is not counted. The run goes on
with the settings it was started with; --max-iterations, --timeout and --max-wait raise its
limits. A run that ended done is only printed.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	o.register(cmd)
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	cmd.Flags().IntVar(&o.maxIterations, "max-iterations", 0, "new iteration limit (counting the iterations already made)")
	durationVar(cmd.Flags(), &o.timeout, "timeout", 0, "new global time limit (counting the time already used), e.g. 90s, 5m, 1h")
	durationVar(cmd.Flags(), &o.maxWait, "max-wait", 0, "new limit on the total wait for rate limits, e.g. 30m; 0: stop at the first")
	cmd.Flags().Float64Var(&o.budget, "budget", 0, "a task's new cost budget in US dollars (counting what it spent)")
	o.env = flagLayer()
	for _, k := range config.Table() {
		if k.Name == "env" {
			bindKey(cmd.Flags(), k, k.Flag, "", "the value of a variable of the run's environment, KEY=VALUE, repeatable: jlgcli keeps only their names (default: [env] of the configuration, then the environment)", "", o.env)
		}
	}
	bindKeys(cmd.Flags(), "resume", o.env) // how to connect to the server of a run on Temporal
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.setLimits(cmd.Flags().Changed)
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		rp, done := stdio.ResumeParts(o.quiet, o.env)
		defer done() // the live lines end once the result is printed
		out, err := runs.Resume(cmd.Context(), root, args[0], o.limits, rp)
		if err != nil {
			return err
		}
		code, err := plain.Resumed(stdio.Out, stdio.Reporter(), o.json, out, stdio.OutTerminal())
		return withCode(err, code)
	}
	return cmd
}
