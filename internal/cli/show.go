package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/live"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

// showOptions are the inputs of `show`.
type showOptions struct {
	storeFlags
	follow bool
}

func newShowCmd(stdio *Stdio) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: its result, transcript, and where its files are",
		Long: `Show one run (its id, a unique prefix or suffix of it, or 'last'). --json prints the same
result object as 'loop --json', transcript included, rebuilt from the run's journal.
--follow shows it again each time its journal is written, until it ends: on a terminal
in place, else one view after the other (with --json, one object per line).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&o.follow, "follow", false, "show the run again as its events are written, until it ends")
	server := flagLayer() // how to connect to the server of a run on Temporal
	bindKeys(cmd.Flags(), "show", server)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		state := func(ctx context.Context) (runs.State, error) {
			return runs.Show(ctx, root, args[0], stdio.Parts(false, false, false), stdio.Connect(server))
		}
		onTerminal := live.IsLive(stdio.OutIsTerminal, stdio.Env("TERM"))
		return plain.Show(cmd.Context(), stdio.Out, root, o.json, o.follow, onTerminal, stdio.OutTerminal(), state)
	}
	return cmd
}
