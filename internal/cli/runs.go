package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

// storeFlags locate the runs.
type storeFlags struct {
	stateDir string
	json     bool
}

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// root is where runs are kept: --state-dir, else as a loop started here
// would keep them (Stdio.StateRoot).
func (f *storeFlags) root(stdio *Stdio) (string, error) { return stdio.StateRoot(f.stateDir) }

type runsOptions struct {
	storeFlags
	status string
	limit  int
}

func newRunsCmd(stdio *Stdio) *cobra.Command {
	o := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs, newest first",
		Long: `List the runs kept for this repository (or in $XDG_STATE_HOME/jlgcli outside one), newest
first: id, command, status, backend, iterations, cost, duration, start and title. LIVE says
whether a process is running it now; a run whose status is 'running' and that is not live was
killed: 'jlgcli resume ID' continues it. The backend of a task is that of its last attempt; a
task that a batch started reads task<XXXXXXXX, the end of the batch's id (--json: parent, the
whole id). The title is the first line of the prompt (cut in the table; whole in --json).`,
		Args: cobra.NoArgs,
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.status, "status", "", "only runs with this status")
	cmd.Flags().IntVarP(&o.limit, "limit", "n", 0, "at most N runs")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if !runs.ValidStatus(o.status) {
			return usagef("invalid --status %q: want one of %s", o.status, strings.Join(runs.Statuses(), ", "))
		}
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		list, err := runs.List(root, store.Filter{Status: o.status, Limit: o.limit})
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(stdio, list)
		}
		return plain.Runs(stdio.Out, list, stdio.OutTerminal())
	}
	return cmd
}

func printJSON(stdio *Stdio, v any) error { return plain.JSON(stdio.Out, v) }
