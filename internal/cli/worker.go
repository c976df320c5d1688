package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/flow"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/runs"
)

func newWorkerCmd(stdio *Stdio) *cobra.Command {
	flags := flagLayer()
	var concurrency int
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [flags]",
		Short: "Run the attempts of tasks submitted to a Temporal server, until SIGINT/SIGTERM",
		Long: strings.TrimSpace(`
Connect to a Temporal server and run the tasks submitted there (jlgcli task
--temporal): the workflows, and the attempts of every backend installed on
this machine (an attempt of backend B is taken only by workers that have B).
The agents, backends, prices and the checks' tools are this machine's own, as
its configuration says. The worker keeps a clone of each repository it works
on under its state directory and reuses it; each attempt runs in a worktree of
it and pushes its snapshots, the task branch and its record to the remote.
SIGINT/SIGTERM stop the worker: the attempts under way are stopped (their agents
killed) and handed back to the server at once, which gives them to another
worker; none is left half-recorded (an attempt is recorded once it has pushed).`),
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	bindKeys(fs, "worker", flags)
	fs.IntVar(&concurrency, "concurrency", 1, "how many attempts run at once on this machine, all backends together")
	var only []string
	fs.StringSliceVar(&only, "backends", nil, "take the attempts of these backends only (comma-separated; default: every backend usable here)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if concurrency < 1 {
			return usagef("--concurrency must be at least 1, not %d", concurrency)
		}
		return runWorker(cmd.Context(), stdio, flags, concurrency, only)
	}
	return cmd
}

func runWorker(ctx context.Context, stdio *Stdio, flags *config.Layer, concurrency int, only []string) error {
	cfg, err := loadConfig(stdio, flags)
	if err != nil {
		return err
	}
	t := cfg.Temporal
	if t.Address == "" {
		return usagef("a worker needs a Temporal server: --temporal HOST:PORT, or temporal.address in the configuration")
	}
	dir := cfg.StateDir
	if dir == "" {
		base := stdio.getenv("XDG_STATE_HOME")
		if base == "" {
			base = filepath.Join(stdio.getenv("HOME"), ".local", "state")
		}
		dir = filepath.Join(base, "jlgcli", "worker")
	}
	say := stdio.reporter()
	have, err := workerBackends(ctx, stdio, runs.Registry(cfg, stdio.base()), only)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		say.Error("no agent backend is installed on this machine: the worker would take no attempt (see jlgcli backends)")
		return &exitError{code: engine.ExitBackendMissing}
	}
	c, err := runs.Dial(ctx, flow.ConnectionOf(cfg, stdio.getenv))
	if err != nil {
		return err
	}
	defer c.Close()
	say.Notice(fmt.Sprintf("worker on %s (namespace %s, queue %s): backends %s, %s at once; clones in %s",
		t.Address, t.Namespace, t.TaskQueue, strings.Join(have, ", "), plural.N(concurrency, "attempt"), dir))
	acts := &flow.Activities{StateDir: dir, Parts: stdio.parts(true, false, false), Commands: cfg.Backends, Prices: cfg.Prices}
	err = flow.Serve(ctx, c, acts, flow.WorkerOptions{Queue: t.TaskQueue, Backends: have, Concurrency: concurrency})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	say.Notice("worker stopped")
	return nil
}

// workerBackends are the backends whose attempts the worker takes: every
// one usable on this machine, or those of only (--backends), each of which
// must be known and usable here.
func workerBackends(ctx context.Context, stdio *Stdio, reg *agent.Registry, only []string) ([]string, error) {
	var have []string
	if len(only) == 0 {
		for _, name := range reg.Names() {
			if a, err := reg.Get(name); err == nil && a.Check(ctx).Status == agent.Available {
				have = append(have, name)
			}
		}
		slices.Sort(have)
		return have, nil
	}
	for _, name := range only {
		a, err := reg.Get(name)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--backends: %w", err)}
		}
		if s, details := engine.Unavailable(a.Check(ctx)); s != "" {
			stdio.reporter().Error(fmt.Sprintf("--backends: %s is not usable on this machine (%s): %s", name, s, details))
			return nil, &exitError{code: s.ExitCode()}
		}
		if !slices.Contains(have, name) {
			have = append(have, name)
		}
	}
	slices.Sort(have)
	return have, nil
}
