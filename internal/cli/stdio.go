// This file holds the world a command of jlgcli's command line runs in
// (Stdio): its streams, environment and working directory, the
// configuration it resolves, the hooks of that configuration, where its
// runs are kept, and the runtime parts of the runs it starts, which report
// on stderr (package live). It parses no flag: the commands give it their
// values.

package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/live"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plain"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/temporal"
	"github.com/jlgcli/jlgcli/internal/tty"
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
	// OutWidth is Out's width in cells, read when a table is printed on it
	// (a terminal); nil or ≤ 0: 80.
	OutWidth func() int
	// NoColor: --no-color; nothing is coloured on either stream.
	NoColor bool
	// Getenv reads the environment; nil: os.Getenv.
	Getenv func(string) string
	// Environ is the environment agents start from; nil: os.Environ().
	Environ []string
	// Dir is the working directory; "": the process's own.
	Dir string

	say *live.Reporter // every message on Err goes through it

	hooksMade bool
	hookd     *hooks.Dispatcher // the configuration's hooks; nil: none
	// cfg is the configuration the command resolved with its flags (the
	// first it resolved), where its hooks are read; nil before.
	cfg *config.Config
	// untrustedSaid are the untrusted project files whose ignored
	// settings were said.
	untrustedSaid map[string]bool
	// completing: the command completes a run id for the shell, and
	// leaves a landing to settle to the next command, which says what it
	// did.
	completing bool
}

// The command line is the front end of the runs it starts.
var _ runs.Front = (*Stdio)(nil)

// Hooks are the hooks of the configuration (the command's, --cwd's project
// file included, once it is resolved), with the desktop notification
// when stderr is a terminal (unless notify = false), made once; nil when
// there are none (or the configuration cannot be read: the command says
// why).
func (s *Stdio) Hooks() *hooks.Dispatcher {
	if s.hooksMade {
		return s.hookd
	}
	s.hooksMade = true
	cfg := s.cfg
	if cfg == nil {
		var err error
		if cfg, err = s.LoadConfig(nil); err != nil {
			return nil
		}
	}
	s.hookd = s.HooksOf(cfg)
	return s.hookd
}

// HooksOf are the hooks of cfg, with the desktop notification when stderr
// is a terminal (unless notify = false); nil when there are none.
func (s *Stdio) HooksOf(cfg *config.Config) *hooks.Dispatcher {
	var terminal io.Writer // rings the bell at a long run's end
	if s.ErrIsTerminal {
		terminal = s.Err
	}
	return cfg.Dispatcher(s.Environ, s.Reporter().Warn, terminal)
}

// WaitHooks waits for the hooks under way, each within its time limit.
func (s *Stdio) WaitHooks() { s.hookd.Wait() }

// Reporter is the one writer of jlgcli's messages on Err.
func (s *Stdio) Reporter() *live.Reporter {
	if s.say == nil {
		s.say = live.NewReporter(s.Err, false)
		if live.IsLive(s.ErrIsTerminal, s.Env("TERM")) {
			s.say.SetWidth(s.ErrWidth)
		}
	}
	return s.say
}

// Env reads the environment variable k (Getenv).
func (s *Stdio) Env(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

// WorkDir is the working directory (Dir).
func (s *Stdio) WorkDir() (string, error) {
	if s.Dir != "" {
		return s.Dir, nil
	}
	return os.Getwd()
}

// Term is Err as a run started from the command line reports to it
// (live.Terminal), without the hooks.
func (s *Stdio) Term() live.Terminal {
	return live.Terminal{Say: s.Reporter(), Err: s.Err, Live: live.IsLive(s.ErrIsTerminal, s.Env("TERM")), Width: s.ErrWidth,
		Palette: s.ErrPalette(), Environ: s.Environ, Getenv: s.Env}
}

// ErrPalette colours the status words written on Err: on a terminal only,
// unless --no-color or NO_COLOR (tty.ColorOn, the one decision).
func (s *Stdio) ErrPalette() tty.Palette {
	return tty.Palette{On: tty.ColorOn(s.ErrIsTerminal, s.NoColor, s.Env)}
}

// OutTerminal is Out as the tables printed on it are laid out: on a
// terminal that takes escape codes (not TERM=dumb), its width (OutWidth)
// and its colours (tty.ColorOn); elsewhere (a pipe, a file: scripts parse
// it) the zero tty.Terminal, printed whole and plain.
func (s *Stdio) OutTerminal() tty.Terminal {
	if !live.IsLive(s.OutIsTerminal, s.Env("TERM")) {
		return tty.Terminal{}
	}
	w := 80
	if s.OutWidth != nil {
		if n := s.OutWidth(); n > 0 {
			w = n
		}
	}
	return tty.Terminal{Width: w, Palette: tty.Palette{On: tty.ColorOn(true, s.NoColor, s.Env)}}
}

// Base are the parts of the command line without live progress: the
// environment and the reporter on stderr, as is.
func (s *Stdio) Base() local.Parts { return s.Term().Base() }

// Parts are the runtime parts of a run started from the command line
// (live.Terminal.Parts), with the configuration's hooks.
func (s *Stdio) Parts(quiet, task, loop bool) local.Parts {
	return s.Hooked().Parts(quiet, task, loop)
}

// Once are the parts of a single agent call (run): Base, with the call's
// live line on Err (live.Progress) unless quiet.
func (s *Stdio) Once(quiet bool) local.Parts {
	p := s.Base()
	if !quiet {
		p.LoopObserver = live.NewProgress(s.Term().Screen())
	}
	return p
}

// Hooked is Term with the configuration's hooks.
func (s *Stdio) Hooked() live.Terminal {
	t := s.Term()
	t.Hooks = s.Hooks()
	return t
}

// BatchParts are the parts of a batch of total tasks started from the
// command line (live.Terminal.BatchParts), with the configuration's
// hooks, and what ends its board.
func (s *Stdio) BatchParts(quiet bool, total int) (local.BatchParts, func()) {
	return s.Hooked().BatchParts(quiet, total)
}

// TaskChanged says, unless quiet, a line of a task whose status changed
// in a batch on Temporal that the command follows (plain.TaskChanged).
func (s *Stdio) TaskChanged(t batch.TaskSummary) { s.Reporter().Progress(plain.TaskChanged(t)) }

// LoadConfig resolves the configuration for a command run in the working
// directory, with its flags (nil: none) on top (LoadLayers).
func (s *Stdio) LoadConfig(flags *config.Layer) (*config.Config, error) {
	c, err := s.LoadLayers(flags)
	return c.Config, err
}

// LoadLayers resolves the configuration for a command run in the working
// directory, with the layers it was resolved from (runs.LoadConfig); an
// error of the flags names the flag. The first one resolved with flags is
// the command's: its hooks are read there. What it ignored of a project
// file that is not trusted (its hooks, ...) is said once on Err.
//
// Every command that works in a repository or keeps runs resolves its
// directory here first: a landing that a stopped jlgcli left half done in
// the checkout that holds it is settled then (local.SettleLanding), before
// the command does anything else there; what was done is said on Err, and
// a landing that the user's changes stopped from ending is the command's
// error.
func (s *Stdio) LoadLayers(flags *config.Layer) (runs.Config, error) {
	dir, err := s.WorkDir()
	if err != nil {
		return runs.Config{}, err
	}
	c, err := runs.LoadConfig(s.Env, dir, flags)
	var cerr *config.Error
	if errors.As(err, &cerr) {
		cerr.NameFlag()
	}
	if err == nil && !s.completing {
		notice, err := local.SettleLanding(context.Background(), c.Cwd)
		if err != nil {
			return runs.Config{}, err
		}
		if notice != "" {
			s.Reporter().Notice(notice)
		}
	}
	if err == nil && flags != nil && s.cfg == nil {
		s.cfg = c.Config // the command's own: its --cwd's project file
	}
	if err == nil {
		s.sayUntrusted(c.Config)
	}
	return c, err
}

// sayUntrusted says, once for each file, what cfg ignored of a project
// file that the user has not trusted, and how to trust it.
func (s *Stdio) sayUntrusted(cfg *config.Config) {
	warning, hint := cfg.UntrustedNote()
	if warning == "" || s.untrustedSaid[cfg.Ignored[0].File] {
		return
	}
	if s.untrustedSaid == nil {
		s.untrustedSaid = map[string]bool{}
	}
	s.untrustedSaid[cfg.Ignored[0].File] = true
	s.Reporter().Warn(warning)
	s.Reporter().Hint(hint)
}

// StateRoot finds the state root as a loop started here would: stateDir,
// else the configuration's.
func (s *Stdio) StateRoot(stateDir string) (string, error) {
	cfg, err := s.LoadConfig(nil)
	if err != nil {
		return "", err
	}
	if stateDir == "" {
		stateDir = cfg.StateDir
	}
	return local.StateRoot(s.Parts(true, false, false), cfg.Cwd, stateDir)
}

// Completions are the shell's completions of a run id that starts with
// prefix among the runs kept here (plain.Completions); none when they
// cannot be read.
func (s *Stdio) Completions(prefix string) []string {
	s.completing = true
	root, err := s.StateRoot("")
	if err != nil {
		return nil
	}
	list, err := runs.List(root, store.Filter{})
	if err != nil {
		return nil
	}
	return plain.Completions(list, prefix)
}

// Connect is how to reach the server of a run on Temporal: as its record
// says, each setting that the configuration (as the run's directory sees
// it) or flags (the command's connection flags) give overriding the
// record's.
func (s *Stdio) Connect(flags *config.Layer) runs.Connect {
	return func(run *store.Run) (temporal.Connection, error) {
		cfg, err := s.RunConfig(flags, run.Meta.Cwd)
		if err != nil {
			return temporal.Connection{}, err
		}
		return temporal.RunConnection(run.Meta.Temporal, run.ID, cfg, s.Env), nil
	}
}

// RunConfig is the configuration as dir, the directory a run was started
// in, sees it (when it still exists), with flags.
func (s *Stdio) RunConfig(flags *config.Layer, dir string) (*config.Config, error) {
	l := *flags
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() && l.Cwd == nil {
		l.Cwd = &dir
	}
	return s.LoadConfig(&l)
}

// ResumeParts are the parts of a resume on the command line
// (runs.ResumeParts), quiet or not, flags its --env and connection flags:
// the resumed run's recorded environment and its hooks are those of the
// configuration as the run's directory sees it, with flags. The function
// returned ends the live lines of the runs resumed, once the result is
// printed.
func (s *Stdio) ResumeParts(quiet bool, flags *config.Layer) (runs.ResumeParts, func()) {
	var started []local.Parts
	observed := func(p local.Parts) local.Parts {
		started = append(started, p)
		return p
	}
	rp := runs.ResumeParts{
		Parts: s.Parts(quiet, false, false),
		Quiet: quiet,
		Env: func(dir string) (local.EnvValue, error) {
			cfg, err := s.RunConfig(flags, dir)
			if err != nil {
				return nil, err
			}
			return cfg.EnvValue(s.Env), nil
		},
		Task:    func() local.Parts { return observed(s.Parts(quiet, true, false)) },
		Loop:    func() local.Parts { return observed(s.Parts(quiet, false, true)) },
		Batch:   func(total int) (local.BatchParts, func()) { return s.BatchParts(quiet, total) },
		Connect: s.Connect(flags),
		Hooks: func(dir string) *hooks.Dispatcher { // the run's, as it was started
			cfg, err := s.RunConfig(flags, dir)
			if err != nil {
				return s.Hooks()
			}
			return s.HooksOf(cfg)
		},
	}
	return rp, func() { live.Close(started...) }
}
