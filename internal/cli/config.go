package cli

import (
	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/plain"
)

type configOptions struct {
	flags *config.Layer
}

func newConfigCmd(stdio *Stdio) *cobra.Command {
	o := &configOptions{}
	cmd := &cobra.Command{
		Use:   "config [flags]",
		Short: "Print the resolved configuration and where each value came from",
		Long: `Print every setting as jlgcli resolves it, from lowest to highest precedence:
defaults, the user file ($XDG_CONFIG_HOME/jlgcli/config.toml), the project file
(jlgcli.toml in the working directory or its nearest parent up to the repository
root), the environment (JLGCLI_*), then flags. Give the same flags as to 'loop'
to see their effect; --json prints an object.`,
		Args: cobra.NoArgs,
	}
	o.flags = flagLayer()
	bindKeys(cmd.Flags(), "config", o.flags)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := stdio.LoadConfig(o.flags)
		if err != nil {
			return err
		}
		return plain.Config(stdio.Out, cfg.Settings(), o.flags.JSON != nil && *o.flags.JSON)
	}
	return cmd
}
