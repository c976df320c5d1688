package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/plain"
)

func newHooksCmd(stdio *Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "The hooks of the configuration ([[hooks]]): try them",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	cmd.AddCommand(newHooksTestCmd(stdio))
	return cmd
}

func newHooksTestCmd(stdio *Stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test [EVENT]",
		Short: "Send a sample event to every hook that takes it and say what each answered",
		Long: strings.TrimSpace(`
Send a sample EVENT (default run.ended; one of ` + strings.Join(hooks.Events, ", ") + `) to every
hook of the configuration that takes it, as a run would, and print what each answered: the first
line of a command's output, a webhook's HTTP status. Exit 1 when one failed.`),
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: hooks.Events,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		event := hooks.RunEnded
		if len(args) == 1 {
			event = args[0]
		}
		if event == "*" || !hooks.Known(event) {
			return usagef("unknown event %q: want one of %s", event, strings.Join(hooks.Events, ", "))
		}
		cfg, err := stdio.LoadConfig(nil)
		if err != nil {
			return err
		}
		d := &hooks.Dispatcher{Hooks: cfg.Hooks, Timeout: cfg.HookTimeout, Environ: stdio.Environ}
		answers := d.Send(cmd.Context(), hooks.Sample(event))
		if err := plain.HookAnswers(stdio.Out, stdio.Reporter(), asJSON, event, len(cfg.Hooks), answers); err != nil {
			return err
		}
		if hooks.Failed(answers) > 0 {
			return withCode(nil, exit.Error)
		}
		return nil
	}
	return cmd
}
