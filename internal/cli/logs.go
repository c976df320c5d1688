package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/view"
)

type logsOptions struct {
	storeFlags
	follow bool
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
Ctrl-C); each call's output starts after a line on stderr naming it.`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the output as it is written, until the run ends")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		n, path, found, err := runs.LastOutput(root, args[0])
		if err != nil {
			return err
		}
		say := stdio.reporter()
		if o.follow && !runs.Live(root, args[0]) {
			o.follow = false // nothing more will be written: as without -f
		}
		if !o.follow {
			if !found {
				say.Notice("no agent call of this run has written anything yet")
				return nil
			}
			say.Notice(fmt.Sprintf("output of call %d (%s)", n, path))
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(stdio.Out, f)
			return err
		}
		shown := -1
		return runs.Follow(cmd.Context(), root, args[0], runs.FollowOptions{}, func(e runs.Event) error {
			if e.Kind != runs.KindOutput {
				return nil
			}
			if e.N != shown {
				say.Notice(fmt.Sprintf("output of call %d", e.N))
				shown = e.N
			}
			_, err := stdio.Out.Write(e.Output)
			return err
		})
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
		root, err := (&storeFlags{}).root(stdio)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := runs.List(root, store.Filter{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range list {
			if strings.HasPrefix(r.ID, prefix) {
				out = append(out, r.ID+"\t"+r.Command+" "+r.Status+": "+view.Cut(r.Title, 40))
			}
		}
		if strings.HasPrefix("last", prefix) && len(list) > 0 {
			out = append(out, "last\tthe newest run")
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
