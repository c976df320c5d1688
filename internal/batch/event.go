package batch

import "time"

// EventKind is what happened to a batch.
type EventKind string

// The kinds of events.
const (
	// EventStarted: a task's run started.
	EventStarted EventKind = "started"
	// EventFinished: a task's run ended (Task.RunStatus says how).
	EventFinished EventKind = "finished"
	// EventMergeStarted and EventMerged: a task's merge began and ended.
	EventMergeStarted EventKind = "merge-started"
	EventMerged       EventKind = "merged"
	// EventBlocked: a task is blocked by a failed dependency.
	EventBlocked EventKind = "blocked"
	// EventStopped: the batch stops starting tasks (Reason says why).
	EventStopped EventKind = "stopped"
	// EventRerunStarted: a task's second run started, its first run's
	// change having been refused at its merge (Task.Rerun). The merger
	// tells it, not the scheduler.
	EventRerunStarted EventKind = "rerun-started"
)

// Event is something that happened to a batch, for progress.
type Event struct {
	Kind EventKind
	// Time is the scheduler's clock's.
	Time time.Time
	// Task is the task's state after the event; empty for EventStopped.
	Task TaskResult
	// Reason says why the batch stopped (EventStopped).
	Reason string
}
