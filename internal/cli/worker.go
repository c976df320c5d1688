package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
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
	cfg, err := stdio.LoadConfig(flags)
	if err != nil {
		return err
	}
	p := stdio.Parts(true, false, false)
	p.Hooks = nil // the hooks of a run on Temporal fire on the side that submitted it
	err = runs.Serve(ctx, cfg, runs.Worker{Concurrency: concurrency, Only: only}, p)
	var be *runs.BackendError
	if errors.As(err, &be) {
		stdio.Reporter().Error(be.Msg)
		return &exitError{code: be.Code}
	}
	return err
}
