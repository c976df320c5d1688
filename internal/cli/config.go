package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/runner"
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
		cfg, err := loadConfig(stdio, o.flags)
		if err != nil {
			return err
		}
		return printConfig(stdio, cfg, o.flags.JSON != nil && *o.flags.JSON)
	}
	return cmd
}

type configEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

func printConfig(stdio *Stdio, cfg *config.Config, asJSON bool) error {
	var entries []configEntry
	for _, k := range cfg.AllKeys() {
		entries = append(entries, configEntry{Key: k, Value: cfg.Value(k), Source: cfg.Sources[k]})
	}
	if asJSON {
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // "<redacted>" as it is
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, e := range entries {
		v := e.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Key, v, e.Source)
	}
	return tw.Flush()
}

// envValue gives a run's recorded environment names their values, which
// jlgcli does not keep: a tier's from its env in cfg, then from cfg's env
// (--env, [env]), then from jlgcli's environment.
func envValue(stdio *Stdio, cfg *config.Config) runner.EnvValue {
	return func(tier, name string) (string, bool) {
		if tier != "" {
			for _, t := range cfg.Tiers {
				if v, ok := t.Env[name]; ok && t.Name == tier {
					return v, true
				}
			}
			if p := cfg.Planner; p != nil && tier == p.Name {
				if v, ok := p.Env[name]; ok {
					return v, true
				}
			}
		}
		if v, ok := cfg.Env[name]; ok {
			return v, true
		}
		v := stdio.getenv(name)
		return v, v != ""
	}
}
