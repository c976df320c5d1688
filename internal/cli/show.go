package cli

import (
	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/view"
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
	server := flagLayer() // how to connect to the server of a run on Temporal
	bindKeys(cmd.Flags(), "show", server)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		st, err := runs.Show(cmd.Context(), root, args[0], stdio.parts(false, false, false), connect(stdio, server))
		if err != nil {
			return err
		}
		switch st.Meta.Command {
		case "task":
			if o.json {
				return printJSON(stdio, *st.Task)
			}
			return view.ShowTask(stdio.Out, st)
		case "batch":
			if o.json {
				return printJSON(stdio, view.ShownBatch(st))
			}
			view.ShowBatch(stdio.Out, st)
			return nil
		}
		if o.json {
			return printJSON(stdio, *st.Loop)
		}
		return view.ShowLoop(stdio.Out, st)
	}
	return cmd
}
