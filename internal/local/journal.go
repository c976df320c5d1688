package local

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// journal keeps a run in its store directory and the index: the engine's
// Journal and TaskJournal.
type journal struct {
	run   *store.Run
	idx   *store.Index // nil when the index could not be opened
	hooks hookRun
	// indexed is the status of the run's row as this journal last wrote
	// it to the index (nil: none yet, as for an empty one).
	indexed *indexState
}

// indexState is the status a journal last wrote to the index.
type indexState struct {
	mu     sync.Mutex
	status string
}

// Record appends ev to the journal, then tells the hooks of it.
func (j journal) Record(ev engine.Event) error {
	if err := j.run.Append(ev); err != nil {
		return err
	}
	j.hooks.recorded(ev)
	return nil
}

func (j journal) Checkpoint(cp engine.Checkpoint) error { return j.checkpoint(cp, cp.Progress) }

func (j journal) CheckpointTask(cp taskengine.Checkpoint) error {
	return j.checkpoint(cp, cp.Progress)
}

// checkpoint writes a loop's or a task's checkpoint cp, whose progress is p:
// without waiting for the disk when the journal holds it (p.Journaled),
// else durably. The run's row in the index is written when its status
// changes; in between, the index brings it up to the checkpoint when it is
// read (store.Index.List).
func (j journal) checkpoint(cp any, p store.Progress) error {
	write := j.run.WriteCheckpoint
	if p.Journaled {
		write = j.run.WriteJournaledCheckpoint
	}
	if err := write(cp); err != nil {
		return err
	}
	if j.idx == nil {
		return nil
	}
	ix := j.indexed
	if ix == nil {
		ix = &indexState{}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.status == p.Status {
		return nil
	}
	if row, err := j.run.Row(); err == nil && j.idx.Upsert(row) == nil { // the index is a cache; the directory is the truth
		ix.status = p.Status
	}
	return nil
}

// running writes the run's row to the index as running now, before the
// first checkpoint of a resume (which can be minutes away; until then the
// checkpoint says how the run stopped), so that `runs --status running`
// finds it at once. The checkpoint is left as it is: a kill before the
// first one leaves a row that says running with no process, which reads
// killed, resumable, as any run killed while it ran.
func (j journal) running() {
	if j.idx == nil {
		return
	}
	row, err := j.run.Row()
	if err != nil {
		return
	}
	row.Status, row.UpdatedAt = store.Running, time.Now().UTC()
	if j.idx.Upsert(row) == nil && j.indexed != nil {
		j.indexed.mu.Lock()
		j.indexed.status = store.Running
		j.indexed.mu.Unlock()
	}
}

func (j journal) Output(i int) io.WriteCloser {
	w, err := j.run.Output(i)
	if err != nil {
		return nil
	}
	return w
}

func (j journal) close() {
	if j.idx != nil {
		j.idx.Close()
	}
}

// openJournal opens the index beside run; without one the run goes on and
// `runs` rebuilds the index later.
func openJournal(p Parts, root string, run *store.Run) journal {
	idx, err := store.OpenIndex(root)
	if err != nil {
		p.warn("run index: %v (the run is kept; 'jlgcli runs' rebuilds the index)", err)
		idx = nil
	}
	return journal{run: run, idx: idx, hooks: hookRun{d: p.Hooks, run: run}, indexed: &indexState{}}
}

// lockedEvents locks run for this process (another jlgcli holding it is
// an error naming the run) and reads its journal.
func lockedEvents(run *store.Run) ([]engine.Event, error) {
	if _, err := run.Lock(); err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	events, _, err := Events(run)
	return events, err
}

// Events reads a run's journal as engine events; repair, when not nil, says
// that a torn last line was cut away.
func Events(run *store.Run) (events []engine.Event, repair *store.Repair, err error) {
	events, repair, err = run.Events()
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	return events, repair, nil
}
