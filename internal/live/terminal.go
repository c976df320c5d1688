package live

import (
	"io"

	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Terminal is what a run started from the command line reports to: its
// messages through Say, its progress drawn on Err (live lines when Live,
// else a log), the environment its agents start from, and the hooks of its
// configuration. It makes the run's local.Parts.
type Terminal struct {
	// Say is the one writer of jlgcli's messages on Err.
	Say *Reporter
	// Err is the stream progress is drawn on.
	Err io.Writer
	// Live: Err takes cursor codes (IsLive).
	Live bool
	// Width is Err's width in cells (Screen.Width).
	Width func() int
	// Palette colours the status words of the live lines (when Live).
	Palette tty.Palette
	// Environ, Getenv and EnvValue are the parts' (local.Parts).
	Environ  []string
	Getenv   func(string) string
	EnvValue local.EnvValue
	// Hooks are the configuration's hooks; nil: none.
	Hooks *hooks.Dispatcher
}

// Screen is Err as the progress lines see it.
func (t Terminal) Screen() Screen {
	s := NewScreen(t.Err, t.Live, t.Width)
	if t.Live {
		s.Palette = t.Palette
	}
	return s
}

// Base are the parts without live progress or hooks: the environment and
// the reporter, as is.
func (t Terminal) Base() local.Parts {
	return local.Parts{Environ: t.Environ, Getenv: t.Getenv, EnvValue: t.EnvValue, Say: t.Say}
}

// Parts are the parts of a run: the environment, the reporter (quiet or
// not), the hooks, and live progress unless quiet. Only the observers
// asked for are set: a task's line (task), a loop's (loop). Close ends them.
func (t Terminal) Parts(quiet, task, loop bool) local.Parts {
	t.Say.SetQuiet(quiet)
	p := t.Base()
	p.Hooks = t.Hooks
	screen := t.Screen()
	if !quiet && task {
		l := NewTaskLine(screen)
		p.TaskObserver = l
		if screen.Live {
			t.Say.Attach(l)
		}
	}
	if !quiet && loop {
		l := NewProgress(screen)
		p.LoopObserver = l
		if screen.Live {
			t.Say.Attach(l)
		}
	}
	return p
}

// Close ends the live lines of each of ps (Parts): their last frame is
// drawn.
func Close(ps ...local.Parts) {
	for _, p := range ps {
		for _, obs := range []any{p.TaskObserver, p.LoopObserver} {
			if c, ok := obs.(interface{ Close() }); ok {
				c.Close()
			}
		}
	}
}

// BatchParts are the parts of a batch of total tasks: on a live terminal a
// board (a live line per running task and a summary line), elsewhere one
// line per event; each task's messages and attempts after its id. The
// batch's own parts carry the hooks. close ends the board.
func (t Terminal) BatchParts(quiet bool, total int) (bp local.BatchParts, close func()) {
	say := t.Say
	say.SetQuiet(quiet)
	bp = local.BatchParts{Parts: t.Base()}
	bp.Hooks = t.Hooks
	task := func(w io.Writer, obs taskengine.Observer) local.Parts {
		p := t.Base()
		p.Say, p.TaskObserver = NewReporter(w, quiet), obs
		return p
	}
	if screen := t.Screen(); !quiet && screen.Live {
		board := NewBatchBoard(screen, total)
		say.Attach(board)
		bp.Observer = board.Event
		bp.ForTask = func(id string) local.Parts {
			p := task(board.Writer(id), board.Task(id))
			// Its progress messages are cut to the width its "[id] " leaves.
			r := NewReporter(board.Writer(id), quiet)
			r.SetWidth(func() int { return screen.width() - cells("["+printable(id)+"] ") })
			p.Say = r
			return p
		}
		return bp, func() { board.Close(); say.Attach(nil) }
	}
	err := NewLockedWriter(t.Err)
	log := NewScreen(err, false, nil) // its lines carry the time
	lines := NewBatchLines(log.W, total)
	bp.ForTask = func(id string) local.Parts {
		var obs taskengine.Observer
		if !quiet {
			obs = lines.Observe(id, NewPrefixedTaskLine(log, id))
		}
		return task(PrefixWriter(err, id), obs)
	}
	if !quiet {
		bp.Observer = lines.Event
	}
	return bp, func() {}
}
