package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

func newUsageCmd(stdio *Stdio) *cobra.Command {
	o := &storeFlags{}
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "The last known use of each subscription window (5h, weekly) per backend",
		Long: `The last known use of each subscription window (5-hour, weekly) of each backend, as the
agents of the runs kept here reported it, with its reset and how long ago it was reported; then
the backends of the runs kept here that reported none. Only an agent logged in with a
subscription reports its windows (Claude Code with a claude.ai login); the others report none,
and nothing is guessed for them.`,
		Args: cobra.NoArgs,
	}
	o.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		now := time.Now()
		u, err := runs.UsageOf(root, now)
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(stdio, u)
		}
		return plain.Usage(stdio.Out, u, now)
	}
	return cmd
}
