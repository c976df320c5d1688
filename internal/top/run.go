package top

import (
	"context"
	"errors"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/jlgcli/jlgcli/internal/tty"
)

// Options are what the view runs with: the terminal's streams and
// environment, the colours, and the runs.
type Options struct {
	// In is the terminal's input (when it is not a terminal, the
	// controlling terminal is opened instead); Out the terminal.
	In  io.Reader
	Out io.Writer
	// Env is the environment, TERM included (nil: this process's).
	Env     []string
	Palette tty.Palette
	Source  Source
}

// Run shows the view on the terminal until q or Ctrl-C, or ctx is done,
// then leaves the terminal as it was (the alternate screen left).
func Run(ctx context.Context, o Options) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(o.Out), tea.WithEnvironment(o.Env)}
	if f, ok := o.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts = append(opts, tea.WithInput(f))
	}
	_, err := tea.NewProgram(New(ctx, o.Source, o.Palette), opts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return nil // Ctrl-C as a signal (input that is no terminal): as q
	}
	return err
}
