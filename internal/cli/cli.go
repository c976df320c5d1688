// Package cli is jlgcli's command line: one file per command, flag parsing
// only, and the one function that maps errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/flow"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/runner"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/ui"
)

// Stdio is the world a command sees: its streams and environment, injected
// so that tests can supply their own.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// ErrIsTerminal tells whether Err is a terminal (live status line,
	// unless TERM=dumb).
	ErrIsTerminal bool
	// OutIsTerminal tells whether Out is a terminal (show --follow
	// redraws in place there, unless TERM=dumb).
	OutIsTerminal bool
	// ErrWidth is Err's width in cells, read at each redraw; nil: 80.
	ErrWidth func() int
	// Getenv reads the environment; nil: os.Getenv.
	Getenv func(string) string
	// Environ is the environment agents start from; nil: os.Environ().
	Environ []string
	// Dir is the working directory; "": the process's own.
	Dir string

	// envValue gives the values of a run's recorded environment names
	// (config.Config.EnvValue); nil: the environment's.
	envValue runner.EnvValue

	say *ui.Reporter // every message on Err goes through it

	hooksMade bool
	hookd     *hooks.Dispatcher // the configuration's hooks; nil: none
	// cfg is the configuration the command resolved with its flags (the
	// first it resolved), where its hooks are read; nil before.
	cfg *config.Config
}

// hooks are the hooks of the configuration (the command's, --cwd's project
// file included, once it is resolved), with the desktop notification
// when stderr is a terminal (unless notify = false), made once; nil when
// there are none (or the configuration cannot be read: the command says
// why).
func (s *Stdio) hooks() *hooks.Dispatcher {
	if s.hooksMade {
		return s.hookd
	}
	s.hooksMade = true
	cfg := s.cfg
	if cfg == nil {
		var err error
		if cfg, err = loadConfig(s, nil); err != nil {
			return nil
		}
	}
	var terminal io.Writer // rings the bell at a long run's end
	if s.ErrIsTerminal {
		terminal = s.Err
	}
	s.hookd = cfg.Dispatcher(s.Environ, s.reporter().Warn, terminal)
	return s.hookd
}

// reporter is the one writer of jlgcli's messages on Err.
func (s *Stdio) reporter() *ui.Reporter {
	if s.say == nil {
		s.say = ui.NewReporter(s.Err, false)
	}
	return s.say
}

func (s *Stdio) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

// term is Err as a run started from the command line reports to it
// (ui.Terminal), without the hooks.
func (s *Stdio) term() ui.Terminal {
	return ui.Terminal{Say: s.reporter(), Err: s.Err, Live: ui.IsLive(s.ErrIsTerminal, s.getenv("TERM")), Width: s.ErrWidth,
		Environ: s.Environ, Getenv: s.getenv, EnvValue: s.envValue}
}

// base are the parts of the command line without live progress: the
// environment and the reporter on stderr, as is.
func (s *Stdio) base() runner.Parts { return s.term().Base() }

// parts are the runtime parts of a run started from the command line
// (ui.Terminal.Parts), with the configuration's hooks.
func (s *Stdio) parts(quiet, task, loop bool) runner.Parts {
	return s.hooked().Parts(quiet, task, loop)
}

// hooked is term with the configuration's hooks: a batch's parts are
// hooked().BatchParts.
func (s *Stdio) hooked() ui.Terminal {
	t := s.term()
	t.Hooks = s.hooks()
	return t
}

func (s *Stdio) dir() (string, error) {
	if s.Dir != "" {
		return s.Dir, nil
	}
	return os.Getwd()
}

// usageError is a mistake in how jlgcli was called: exit 64.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// exitError ends a command with a given code, its message already printed
// (or none needed).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exit ends a command once its result is printed: err, the printing's,
// else the result's exit code.
func exit(err error, code int) error {
	if err != nil || code == 0 {
		return err
	}
	return &exitError{code: code}
}

// hintError carries a line telling the user what to do.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// Main runs jlgcli with args (without the program name) and returns the exit
// code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	root := newRootCmd(&stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	stdio.hookd.Wait() // the hooks under way, each within its time limit
	code := ExitCode(err)
	if err != nil && !isExitError(err) {
		say := stdio.reporter()
		say.Error(err.Error())
		var h *hintError
		var ru *runner.UsageError
		if errors.As(err, &h) && h.hint != "" {
			say.Hint(h.hint)
		} else if errors.As(err, &ru) && ru.Hint != "" {
			say.Hint(ru.Hint)
		}
		switch {
		case errors.Is(err, store.ErrCorrupt):
			say.Hint("jlgcli did not write this: mend the file where it says, or remove the run's directory")
		case code == engine.ExitUsage && !isConfigError(err):
			say.Hint("run 'jlgcli help' for usage")
		}
	}
	return code
}

// ExitCode maps an error to the exit code of the contract: the one place
// where that is decided.
func ExitCode(err error) int {
	var (
		exit  *exitError
		usage *usageError
		cfg   *config.Error
	)
	switch {
	case err == nil:
		return engine.ExitOK
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &usage), errors.As(err, &cfg), runner.IsUsage(err),
		// A run named wrong, or whose files the user must repair or remove.
		errors.Is(err, store.ErrEmptyID), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous),
		errors.Is(err, store.ErrCorrupt):
		return engine.ExitUsage
	case errors.Is(err, context.Canceled):
		return engine.ExitInterrupted
	case errors.Is(err, flow.ErrNoServer):
		return engine.ExitUnreachable
	}
	return engine.ExitError
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
	root.AddCommand(
		newRunCmd(stdio, false),
		newRunCmd(stdio, true),
		newTaskCmd(stdio),
		newWorkerCmd(stdio),
		newBatchCmd(stdio),
		newResumeCmd(stdio),
		newRunsCmd(stdio),
		newShowCmd(stdio),
		newReportCmd(stdio),
		newStatsCmd(stdio),
		newConfigCmd(stdio),
		newBackendsCmd(stdio),
		newServeCmd(stdio),
		newLogsCmd(stdio),
		newStopCmd(stdio),
		newHooksCmd(stdio),
		exitCodesHelp(),
	)
	// Unknown commands and wrong argument counts are usage errors too.
	for _, c := range root.Commands() {
		if c.Args != nil {
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &usageError{err}
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
		return &usageError{fe} // "--attempts must be at least 1, not 0"
	}
	msg := err.Error()
	first, _, multiline := strings.Cut(msg, "\n")
	_, arg, _ := strings.Cut(first, " in -") // pflag: unknown shorthand flag 'x' in -xyz
	prompt := multiline || strings.HasPrefix(msg, "bad flag syntax") || strings.ContainsAny(arg, " \t")
	if multiline {
		err = fmt.Errorf("%s …", first)
	}
	if !prompt || cmd.Flags().Lookup("prompt-file") == nil {
		return &usageError{err}
	}
	return &hintError{&usageError{err}, fmt.Sprintf("a prompt that starts with '-' (such as a task sheet's '---' front matter) goes after '--': jlgcli %s [flags] -- \"$(cat FILE)\"; or read it from the file with -f FILE", cmd.Name())}
}

func exitCodesHelp() *cobra.Command {
	var b strings.Builder
	for _, row := range engine.ExitCodes {
		fmt.Fprintf(&b, "%3d  %-24s %s\n", row.Code, row.Name, row.Meaning)
	}
	b.WriteString("other                         the agent exited non-zero: its code is passed through\n")
	b.WriteString("                              (an API error the agent reported with status 0 gives 1)")
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of jlgcli and what they mean",
		Long:  b.String(),
	}
}
