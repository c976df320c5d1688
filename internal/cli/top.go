package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/live"
	"github.com/jlgcli/jlgcli/internal/top"
)

// topOptions are the inputs of `top`.
type topOptions struct {
	stateDir string
	board    string
}

func newTopCmd(stdio *Stdio) *cobra.Command {
	o := &topOptions{}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch and steer the runs in a full-screen terminal view",
		Long: strings.TrimSpace(`
Show the runs kept here (the state directory 'jlgcli runs' reads) full-screen, read again
every second: one line each, those that need you (failed, error, blocked, skipped, killed,
waiting for a subscription window) first and marked !, then newest first, with status,
title, kind, tier and attempt, cost, duration and id; a batch's tasks under it. Beside the
list (under it below 120 columns), the selected one's live agent output, the diff of its
newest attempt (+N -M per file) and its details as 'jlgcli show' prints them.

Keys: up/down or k/j select, enter opens or closes a batch, tab switches output, diff and
details, s stops the selected run as 'jlgcli stop' does (after y), r resumes it with
'jlgcli resume ID' in a process of its own (its output in the run's resume.log; a batch's
task with its batch), o says where the web board ('jlgcli serve' at --board) shows it or
how to start one, ? help, q or Ctrl-C quits (the runs go on). The agent's output is shown
as text: its escape sequences are written out, never run.

top needs a terminal: with its output piped it is a usage error (exit 64); 'jlgcli runs'
and 'jlgcli show --follow' print the same for a script.`),
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", "where runs are kept (default: .jlgcli at the repository root, else $XDG_STATE_HOME/jlgcli)")
	cmd.Flags().StringVar(&o.board, "board", "127.0.0.1:8421", "HOST:PORT where o looks for the web board ('jlgcli serve --addr')")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if !live.IsLive(stdio.OutIsTerminal, stdio.Env("TERM")) {
			return usagef("top is a full-screen view: run it in a terminal (its output is not one, or TERM is dumb); 'jlgcli runs' and 'jlgcli show --follow' print the runs for a script")
		}
		root, err := stdio.StateRoot(o.stateDir)
		if err != nil {
			return err
		}
		src := &top.Store{Root: root, Connect: stdio.Connect(flagLayer()), Env: stdio.Environ, BoardAddr: o.board}
		return top.Run(cmd.Context(), top.Options{In: stdio.In, Out: stdio.Out, Env: stdio.Environ,
			Palette: stdio.OutTerminal().Palette, Source: src})
	}
	return cmd
}
