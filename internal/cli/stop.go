package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

func newStopCmd(stdio *Stdio) *cobra.Command {
	o := &storeFlags{}
	cmd := &cobra.Command{
		Use:   "stop RUN",
		Short: "Stop a run from any terminal, as Ctrl-C stops it: resumable",
		Long: strings.TrimSpace(`
Stop RUN (its id, a unique prefix or suffix of it, or 'last') as Ctrl-C in its terminal
would: its agent is stopped, its state checkpointed, its status is interrupted, the
command that runs it exits 130, and 'jlgcli resume RUN' continues it. A task that a
running batch started stops alone: the batch goes on with its other tasks, leaves those
that depend on it unstarted, and 'jlgcli resume BATCH' runs it later. A run on Temporal
is stopped the same way: its workflow is cancelled, the attempt under way stopped on its
worker, and 'jlgcli resume RUN' continues it on the workers; a task of a batch there is
named by its full run id (BATCH-TASK). stop returns when the run has stopped; a run that
is not running is a usage error (exit 64).`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	o.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		run, err := runs.Stop(cmd.Context(), root, args[0], stdio.Connect(flagLayer()))
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(stdio, run)
		}
		plain.Stopped(stdio.Out, stdio.Reporter(), run)
		return nil
	}
	return cmd
}
