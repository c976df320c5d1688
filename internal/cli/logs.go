package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
)

type logsOptions struct {
	storeFlags
	follow bool
	raw    bool
}

func newLogsCmd(stdio *Stdio) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs RUN",
		Short: "Print what the agent of a run writes: its running (or last) attempt's or iteration's output",
		Long: strings.TrimSpace(`
Print the raw output of the newest agent call of RUN (its id, a unique prefix or suffix of it,
or 'last'): the attempt or iteration under way, else the last one made. With -f, go on
printing it as the agent writes it, and the next calls' after it, until the run ends (or
Ctrl-C); each call's output starts after a line on stderr naming it.

On a terminal the output is made safe to read: the agent's escape sequences and control
characters are shown (\x1b, \r, \u009b), never run. Piped or redirected, or with --raw,
it is written byte for byte as the agent wrote it.`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the output as it is written, until the run ends")
	cmd.Flags().BoolVar(&o.raw, "raw", false, "write the agent's bytes as they are, escape sequences included, even on a terminal")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		raw := o.raw || !stdio.OutIsTerminal
		return plain.Logs(cmd.Context(), stdio.Out, stdio.Reporter(), root, args[0], o.follow, raw)
	}
	return cmd
}

// completeRuns completes a run id: the runs kept here, newest first, each
// with its title.
func completeRuns(stdio *Stdio) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return stdio.Completions(prefix), cobra.ShellCompDirectiveNoFileComp
	}
}
