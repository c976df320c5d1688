package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
)

// runOptions are the inputs of `run` and `loop`.
type runOptions struct {
	loop       bool
	promptFile string
	flags      *config.Layer
}

func newRunCmd(stdio *Stdio, loop bool) *cobra.Command {
	o := &runOptions{loop: loop}
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Make one agent call and print its reply",
		Long: strings.TrimSpace(`
Make one call to the agent and print its reply on stdout (or, with --json, the
result object). PROMPT '-' reads the prompt from stdin; -f reads it from a file.`),
		Args: cobra.MaximumNArgs(1),
	}
	if loop {
		cmd.Use = "loop [flags] PROMPT"
		cmd.Short = "Call the agent in a loop until it signals done or a guard stops it"
		cmd.Long = strings.TrimSpace(`
Send the prompt to the agent, read its reply, and decide: done (the marker line,
or a JSON {"status":"done"}), or continue (the same prompt, or the JSON "next").
Guards: --max-iterations (exit 4), --timeout for the whole loop (exit 75),
--no-progress-limit identical consecutive replies (exit 5). A reply that
claims done is verified before it is believed: premature-stop phrases,
--checklist, then --check commands; a refusal sends the agent back to work
with the reason. Every loop is a run kept in .jlgcli at the repository root:
Ctrl-C stops it (exit 130) and 'jlgcli resume ID' continues it where it
stopped. PROMPT '-' reads stdin; -f reads a file.`)
	}
	cmd.Flags().StringVarP(&o.promptFile, "prompt-file", "f", "", "read the prompt from FILE")
	o.flags = flagLayer()
	name := "run"
	if loop {
		name = "loop"
	}
	bindKeys(cmd.Flags(), name, o.flags)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runRun(cmd.Context(), stdio, o, args)
	}
	return cmd
}

func runRun(ctx context.Context, stdio *Stdio, o *runOptions, args []string) error {
	c := runs.LoopCommand{Prompt: runs.Prompt{Args: args, File: o.promptFile, Stdin: stdio.In}, Flags: o.flags}
	if o.loop {
		// A loop is a persistent run: journaled, resumable, guarded.
		out, err := runs.StartLoop(ctx, stdio, c)
		if err != nil {
			return err
		}
		return reportLoop(stdio, out.JSON, out.Result)
	}
	out, err := runs.RunOnce(ctx, stdio, c)
	if err != nil {
		return err
	}
	return report(stdio, out.JSON, out.Result)
}

// reportLoop prints a loop's result (plain.LoopResult).
func reportLoop(stdio *Stdio, asJSON bool, res engine.Result) error {
	return withCode(plain.LoopResult(stdio.Out, stdio.Reporter(), asJSON, res), res.ExitCode)
}

// report prints a run's result (plain.Result).
func report(stdio *Stdio, asJSON bool, res engine.Result) error {
	return withCode(plain.Result(stdio.Out, stdio.Reporter(), asJSON, res), res.ExitCode)
}
