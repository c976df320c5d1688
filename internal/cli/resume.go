package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
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
	limits runner.Limits
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
	durationVar(cmd.Flags(), &o.timeout, "timeout", 0, "new global time limit (counting the time already used), e.g. 90s, 5m, 1h")
	durationVar(cmd.Flags(), &o.maxWait, "max-wait", 0, "new limit on the total wait for rate limits, e.g. 30m; 0: stop at the first")
	cmd.Flags().Float64Var(&o.budget, "budget", 0, "a task's new cost budget in US dollars (counting what it spent)")
	o.env = flagLayer()
	for _, k := range config.Table() {
		if k.Name == "env" {
			bindKey(cmd.Flags(), k, k.Flag, "", "the value of a variable of the run's environment, KEY=VALUE, repeatable: jlgcli keeps only their names (default: [env] of the configuration, then the environment)", "", o.env)
		}
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.setLimits(cmd.Flags().Changed)
		root, run, err := o.open(stdio, args[0])
		if err != nil {
			return err
		}
		defer run.Close()
		if err := o.useEnv(stdio, run); err != nil {
			return err
		}
		if run.Meta.Temporal != nil {
			return resumeTemporal(cmd.Context(), stdio, o, run)
		}
		if _, err := run.Lock(); err != nil {
			if errors.Is(err, store.ErrLive) {
				return &hintError{&usageError{fmt.Errorf("run %s is running in another process: %w", run.ID, err)}, "wait for it, or stop it with Ctrl-C there"}
			}
			return err
		}
		// An agent of this run may outlive a jlgcli that was killed: it
		// must not go on writing beside the resumed run.
		if n := proc.KillTagged(runner.RunTag(run.ID)); n > 0 && !o.quiet {
			stdio.reporter().Notice(fmt.Sprintf("killed %s of run %s", plural.N(n, "orphaned agent process group"), run.ID))
		}
		events, err := runEvents(stdio, run, o.quiet)
		if err != nil {
			return err
		}
		if err := o.limits.Check(run.Meta.Command, run.ID); err != nil {
			return err
		}
		switch run.Meta.Command {
		case "task":
			return resumeTask(cmd.Context(), stdio, o, root, run, events)
		case "batch":
			return resumeBatch(cmd.Context(), stdio, o, root, run, events)
		}
		p := stdio.parts(o.quiet, false, true)
		if c, ok := p.LoopObserver.(interface{ Close() }); ok {
			defer c.Close()
		}
		res, done, err := runner.ResumeLoop(cmd.Context(), root, run, events, o.limits, p)
		if err != nil {
			return err
		}
		if done {
			stdio.reporter().Notice(fmt.Sprintf("run %s is already done; nothing to resume", run.ID))
		}
		return reportLoop(stdio, o.json, res)
	}
	return cmd
}

// useEnv makes resume's --env, the configuration (as the run's directory
// sees it) and the environment what gives the run's recorded environment
// names their values again.
func (o *resumeOptions) useEnv(stdio *Stdio, run *store.Run) error {
	if fi, err := os.Stat(run.Meta.Cwd); err == nil && fi.IsDir() && o.env.Cwd == nil {
		o.env.Cwd = &run.Meta.Cwd
	}
	cfg, err := loadConfig(stdio, o.env)
	if err != nil {
		return err
	}
	stdio.envValue = envValue(stdio, cfg)
	return nil
}
