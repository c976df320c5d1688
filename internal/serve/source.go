package serve

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Source is what the server reads and does: the runtime (package runs)
// over one state directory. Its values are the CLI's --json objects, so
// that the API mirrors the command line.
type Source interface {
	// List returns the runs, newest first (as runs --json).
	List(ctx context.Context) ([]runs.Listed, error)
	// Show returns one run's state (as show --json); id is any name of a
	// run the command line takes.
	Show(ctx context.Context, id string) (Shown, error)
	// Follow calls fn with each line of run id's journal from the byte
	// offset from on, as it is written, until the run has ended, ctx is
	// done or fn fails.
	Follow(ctx context.Context, id string, from int64, fn func(Event) error) error
	// Output calls fn with what the agent of run id's running attempt or
	// iteration writes, from the byte offset from of its output on, as it
	// is written, until that call ends or ctx is done.
	Output(ctx context.Context, id string, from int64, fn func(Chunk) error) error
	// Stop stops a running run as Ctrl-C does; Resume starts a stopped
	// one again, in a process of its own. Both return what happened, in
	// a sentence.
	Stop(ctx context.Context, id string) (string, error)
	Resume(ctx context.Context, id string) (string, error)
	// Now is what the agent of run id is doing now, or did last
	// (runs.Now): at most lines of its text, its last tool calls, the
	// size of its call's output (which grows while it writes).
	Now(ctx context.Context, id string, lines int) (runs.Activity, error)
}

// Shown is one run as show sees it: what every run has, and the result of
// its kind (show --json's object).
type Shown struct {
	ID        string
	Command   string
	Title     string
	Parent    string
	Live      bool
	StartedAt time.Time
	// Temporal is the address of the server the run is on ("" for a run
	// made here).
	Temporal string

	// ParentCommand is the kind of Parent ("batch", "pr", "task"), Round
	// the round a pull-request run's task run is (runs.State).
	ParentCommand string
	Round         int

	Loop  *engine.Result
	Task  *taskengine.Result
	Batch *batch.Summary
	// PR is a pull-request run's result.
	PR *local.PRResult
	// Tasks are a batch's task runs that have one, by task id: their
	// attempts are drawn in the batch's chart.
	Tasks map[string]*taskengine.Result
	// Working is, for a task whose attempt is under way here, its
	// worktree's change now against its base (runs.LiveDiffs); nil when
	// none is measured. Measuring: its first measurement is under way.
	Working   *taskengine.Change
	Measuring bool
}

// Object is what show --json prints of the run.
func (r Shown) Object() any {
	switch {
	case r.Task != nil:
		return r.Task
	case r.Batch != nil:
		return r.Batch
	case r.Loop != nil:
		return r.Loop
	case r.PR != nil:
		return r.PR
	}
	return struct{}{}
}

// Event is one line of a run's journal: Offset is where the next line
// begins (the SSE id that resumes after it).
type Event struct {
	Offset int64
	Line   json.RawMessage
}

// Chunk is output of an agent: Offset is where the next chunk begins;
// Call names the attempt or iteration it belongs to.
type Chunk struct {
	Call   int
	Offset int64
	Data   []byte
}
