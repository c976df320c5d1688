// Package cli is jlgcli's command line: one file per command, flag parsing
// only, and the one function that maps errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/temporal"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// usagef is a mistake in how jlgcli was called: exit 64.
func usagef(format string, a ...any) error { return exit.Usagef("", format, a...) }

// exitError ends a command with a given code, its message already printed
// (or none needed).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// withCode ends a command once its result is printed: err, the printing's,
// else the result's exit code.
func withCode(err error, code int) error {
	if err != nil || code == 0 {
		return err
	}
	return &exitError{code: code}
}

// Main runs jlgcli with args (without the program name) and returns the exit
// code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	root := newRootCmd(&stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	stdio.WaitHooks() // the hooks under way, each within its time limit
	code := ExitCode(err)
	if err != nil && !isExitError(err) {
		say := stdio.Reporter()
		say.SetPalette(stdio.ErrPalette()) // --no-color, even when the command did not run
		say.Error(err.Error())
		hint := exit.HintOf(err) // a usage error's, a landing's, ...
		if hint != "" {
			say.Hint(hint)
		}
		var tr *trust.Error
		switch {
		case errors.As(err, &tr):
			say.Hint("jlgcli writes it whole or not at all: mend it where it says, or remove it and trust your project files again (jlgcli trust)")
		case errors.Is(err, store.ErrCorrupt):
			say.Hint("jlgcli did not write this: mend the file where it says, or remove the run's directory")
		case code == exit.Usage && !isConfigError(err):
			say.Hint("run 'jlgcli help' for usage")
		}
	}
	return code
}

// ExitCode maps an error to the exit code of the contract: the one place
// where that is decided.
func ExitCode(err error) int {
	var (
		ended *exitError
		cfg   *config.Error
		tr    *trust.Error // the record of trusted files, damaged
		// A landing left half done that the user's changes stopped
		// from ending.
		landing *local.LandingError
	)
	switch {
	case err == nil:
		return exit.OK
	case errors.As(err, &ended):
		return ended.code
	case errors.As(err, &landing):
		return landing.Status().ExitCode()
	case exit.IsUsage(err), errors.As(err, &cfg), errors.As(err, &tr),
		// A run named wrong, or whose files the user must repair or remove.
		errors.Is(err, store.ErrEmptyID), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous),
		errors.Is(err, store.ErrCorrupt):
		return exit.Usage
	case errors.Is(err, context.Canceled):
		return exit.Interrupted
	case errors.Is(err, temporal.ErrNoServer):
		return exit.Unreachable
	}
	return exit.Error
}

func isExitError(err error) bool {
	var e *exitError
	return errors.As(err, &e)
}

func isConfigError(err error) bool {
	var e *config.Error
	return errors.As(err, &e)
}

func newRootCmd(stdio *Stdio) *cobra.Command {
	root := &cobra.Command{
		Use:   "jlgcli",
		Short: "Drive AI coding-agent CLIs until the task is really done",
		Long: strings.TrimSpace(`
jlgcli drives an agent CLI headless: one call with 'run', a supervised loop with
'loop' that stops when the agent signals completion or a guard (iterations,
time, no progress) stops it, a change developed until the project's checks pass
with 'task', a backlog of them with 'batch'. Exit codes are a contract: see
'jlgcli help exit-codes'.

Built-in backends: ` + strings.Join(agent.Builtins, ", ") + `
('jlgcli backends' says which are installed, and the npm package of each), or
any command configured under [backends.NAME] in jlgcli.toml.`),
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(flagError)
	root.PersistentFlags().BoolVar(&stdio.NoColor, "no-color", false,
		"no colour on the terminal (as with NO_COLOR set); jlgcli colours only a terminal's status words")
	root.PersistentPreRun = func(*cobra.Command, []string) { stdio.Reporter().SetPalette(stdio.ErrPalette()) }
	root.AddCommand(
		newRunCmd(stdio, false),
		newRunCmd(stdio, true),
		newTaskCmd(stdio),
		newPRCmd(stdio),
		newWorkerCmd(stdio),
		newBatchCmd(stdio),
		newResumeCmd(stdio),
		newRunsCmd(stdio),
		newShowCmd(stdio),
		newReportCmd(stdio),
		newStatsCmd(stdio),
		newUsageCmd(stdio),
		newConfigCmd(stdio),
		newBackendsCmd(stdio),
		newSandboxCmd(stdio),
		newServeCmd(stdio),
		newTopCmd(stdio),
		newLogsCmd(stdio),
		newStopCmd(stdio),
		newHooksCmd(stdio),
		newTrustCmd(stdio),
		exitCodesHelp(),
	)
	// Unknown commands and wrong argument counts are usage errors too.
	for _, c := range root.Commands() {
		if c.Args != nil {
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return exit.NewUsage(err, "")
				}
				return nil
			}
		}
	}
	root.Args = func(cmd *cobra.Command, a []string) error {
		if len(a) > 0 {
			return usagef("unknown command %q for jlgcli", a[0])
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return root
}

// flagError makes a flag error a usage error. A prompt taken for flags (it
// starts with '-', as a task sheet's '---' front matter does) is cut to its
// first line and gets a hint saying how to pass it.
func flagError(cmd *cobra.Command, err error) error {
	var fe *flagValueError
	if errors.As(err, &fe) {
		return exit.NewUsage(fe, "") // "--attempts must be at least 1, not 0"
	}
	msg := err.Error()
	first, _, multiline := strings.Cut(msg, "\n")
	_, arg, _ := strings.Cut(first, " in -") // pflag: unknown shorthand flag 'x' in -xyz
	prompt := multiline || strings.HasPrefix(msg, "bad flag syntax") || strings.ContainsAny(arg, " \t")
	if multiline {
		err = fmt.Errorf("%s …", first)
	}
	if !prompt || cmd.Flags().Lookup("prompt-file") == nil {
		return exit.NewUsage(err, "")
	}
	return exit.NewUsage(err, fmt.Sprintf("a prompt that starts with '-' (such as a task sheet's '---' front matter) goes after '--': jlgcli %s [flags] -- \"$(cat FILE)\"; or read it from the file with -f FILE", cmd.Name()))
}

func exitCodesHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of jlgcli and what they mean",
		Long:  plain.ExitCodes(),
	}
}
