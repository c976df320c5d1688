package runs

import (
	"errors"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Open opens run id (or a unique prefix of it) under the state root root: a
// missing or ambiguous id is a usage error whose hint says where the runs
// are listed.
func Open(root, id string) (*store.Run, error) {
	run, err := store.Open(root, id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAmbiguous) {
		return nil, &exit.UsageError{Err: err, Hint: "'jlgcli runs' lists the runs kept in " + root}
	}
	return run, err
}

// events reads run's journal as engine events, telling p of a torn last
// line that was repaired, unless quiet.
func events(run *store.Run, p local.Parts, quiet bool) ([]engine.Event, error) {
	evs, repair, err := local.Events(run)
	if err != nil {
		return nil, err
	}
	if repair != nil && !quiet {
		say(p).Notice(repair.String())
	}
	return evs, nil
}

// say is p's reporter, or one that says nothing.
func say(p local.Parts) local.Reporter {
	if p.Say != nil {
		return p.Say
	}
	return silent{}
}

// silent is a reporter that says nothing.
type silent struct{}

func (silent) Progress(string) {}
func (silent) Notice(string)   {}
func (silent) Warn(string)     {}

// closeObserver ends an observer of a task or of a loop that has an end
// (a live line).
func closeObserver(obs any) {
	if c, ok := obs.(interface{ Close() }); ok {
		c.Close()
	}
}
