package cli

import (
	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

type backendsOptions struct {
	json bool
}

func newBackendsCmd(stdio *Stdio) *cobra.Command {
	o := &backendsOptions{}
	cmd := &cobra.Command{
		Use:   "backends",
		Short: "List every backend: installed or not, path, version and status",
		Long: `List every backend: the built-in ones (claude, codex, copilot, gemini, opencode, qwen,
kilo), then those of the configuration. For each: whether its CLI is installed, its version,
status and path; under the table, the npm package that installs a missing built-in CLI, why one
cannot be used, and a note when something here will make its calls fail (claude as root
without IS_SANDBOX=1). --json prints the same as an array of objects, with the npm package
of each built-in backend (package).`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print an array of objects")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := stdio.LoadConfig(nil)
		if err != nil {
			return err
		}
		rows := runs.Backends(cmd.Context(), cfg, stdio.Base())
		if o.json {
			return printJSON(stdio, rows)
		}
		return plain.Backends(stdio.Out, rows)
	}
	return cmd
}
