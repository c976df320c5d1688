package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type sandboxCheckOptions struct {
	backend string
	json    bool
}

func newSandboxCmd(stdio *Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "What the sandbox lets agents and checks reach on this machine",
		Args:  cobra.NoArgs,
	}
	o := &sandboxCheckOptions{}
	check := &cobra.Command{
		Use:   "check",
		Short: "Run a real confined probe and say what it could and could not reach",
		Long: `Run a real confined probe, confined as an agent's call is with the configuration of this
directory, and say what it could and could not do: write your home, your caches and the
directories of PATH, read the secrets of the deny list, connect to the host's Unix sockets
and loopback ports, reach hosts through the proxy, see which variables of your
environment; and how each call's limits are enforced here. With --backend, as a call of
that CLI (its state writable, its configuration read-only, its API hosts allowed).
Exit 0 when everything is as the sandbox promises, 1 when something is not (marked !),
64 when --sandbox on cannot be had.`,
		Args: cobra.NoArgs,
	}
	check.Flags().StringVarP(&o.backend, "backend", "b", "", "probe as a call of this built-in CLI (claude, codex, ...)")
	check.Flags().BoolVar(&o.json, "json", false, "print the findings as a JSON object")
	check.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := stdio.LoadConfig(nil)
		if err != nil {
			return err
		}
		p, err := runs.SandboxCheck(cmd.Context(), cfg, o.backend, stdio.Base())
		if err != nil {
			return err
		}
		if o.json {
			err = printJSON(stdio, p)
		} else {
			err = plain.SandboxCheck(stdio.Out, p, o.backend)
		}
		if err == nil && !p.OK() {
			return errSandboxLeaks
		}
		return err
	}
	cmd.AddCommand(check)
	return cmd
}

// errSandboxLeaks: the probe reached something the sandbox promises it
// cannot (exit 1).
var errSandboxLeaks = errors.New("the sandbox lets a call reach more than it promises (see the lines marked !)")
