package live

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// BatchLines shows a batch's progress on w: for each event a line that
// starts with the task's id in brackets ("jlgcli: [a] merged into main as
// 1a2b3c4d5e"), followed by a summary line of where the batch stands (done,
// running, waiting, failed, blocked, cost so far, running tasks included). Each task's own attempts are told
// by TaskLines that prefix their lines the same way. It is safe for
// concurrent use.
type BatchLines struct {
	mu    sync.Mutex
	w     io.Writer
	tasks map[string]batch.TaskResult
	live  map[string]taskengine.Progress // the last progress of each running task
	total int
}

// NewBatchLines returns a BatchLines of a batch of total tasks.
func NewBatchLines(w io.Writer, total int) *BatchLines {
	return &BatchLines{w: w, tasks: map[string]batch.TaskResult{}, live: map[string]taskengine.Progress{}, total: total}
}

// Progress records where running task id is (its cost so far), for the
// summary.
func (b *BatchLines) Progress(id string, p taskengine.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live[id] = p
}

// Observe returns an observer of task id's attempts that records its
// progress (Progress) and passes each call on to obs (nil: none).
func (b *BatchLines) Observe(id string, obs taskengine.Observer) taskengine.Observer {
	return progressObserver{b: b, id: id, next: obs}
}

type progressObserver struct {
	b    *BatchLines
	id   string
	next taskengine.Observer
}

func (o progressObserver) AttemptStarted(p taskengine.Progress) {
	o.b.Progress(o.id, p)
	if o.next != nil {
		o.next.AttemptStarted(p)
	}
}

func (o progressObserver) Phase(p taskengine.Progress, phase string) {
	o.b.Progress(o.id, p)
	if o.next != nil {
		o.next.Phase(p, phase)
	}
}

// AgentLine passes the agent's retry or error line on to the observer
// passed on to, when it shows them (engine.AgentObserver).
func (o progressObserver) AgentLine(line string) {
	if a, ok := o.next.(engine.AgentObserver); ok {
		a.AgentLine(line)
	}
}

// Waiting passes a wait for a window on to the observer passed on to, when
// it shows them (engine.WaitObserver).
func (o progressObserver) Waiting(until time.Time, reason string) {
	if w, ok := o.next.(engine.WaitObserver); ok {
		w.Waiting(until, reason)
	}
}

// Close closes the observer passed on to, when it has a Close.
func (o progressObserver) Close() {
	if c, ok := o.next.(interface{ Close() }); ok {
		c.Close()
	}
}

func (o progressObserver) AttemptDone(p taskengine.Progress, a taskengine.Attempt) {
	o.b.Progress(o.id, p)
	if o.next != nil {
		o.next.AttemptDone(p, a)
	}
}

// Event implements the scheduler's observer.
func (b *BatchLines) Event(e batch.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.Kind == batch.EventStopped {
		fmt.Fprintf(b.w, "jlgcli: batch: no more task is started: %s\n", e.Reason)
		return
	}
	t := e.Task
	b.tasks[t.ID] = t
	if t.Status != batch.StatusRunning && e.Kind != batch.EventRerunStarted {
		delete(b.live, t.ID)
	}
	var line string
	switch e.Kind {
	case batch.EventStarted:
		line = "started"
		if t.Resumed || t.RunID != "" {
			line = "resumed run " + t.RunID
		}
	case batch.EventFinished:
		// How it ended and why first, the long run id last.
		line = fmt.Sprintf("ended %s", t.RunStatus)
		if t.Status.Failed() && t.Details != "" {
			line += ": " + t.Details
		}
		line += " · run " + t.RunID
	case batch.EventMergeStarted:
		line = "merging"
	case batch.EventMerged:
		switch m := t.Merge; {
		case m != nil && m.Status == batch.MergeMerged && m.Commit == "":
			// Its run changed nothing that the base branch lacks.
			why := strings.TrimSuffix(m.Details, ": nothing was merged")
			if why == "" {
				why = "its run left no change"
			}
			line = "nothing merged: " + why
		case m != nil && m.Status == batch.MergeMerged:
			line = "merged as " + shortID(m.Commit)
		case m != nil:
			line = fmt.Sprintf("not merged (%s): %s", m.Status, m.Details)
		}
	case batch.EventBlocked:
		line = "blocked: " + t.Reason
	case batch.EventRerunStarted:
		line = fmt.Sprintf("run %s did not land after %s; re-run as %s", t.RunID, t.Rerun.After(), t.Rerun.RunID)
	default:
		line = string(e.Kind)
	}
	fmt.Fprintln(b.w, clip(fmt.Sprintf("jlgcli: [%s] %s", t.ID, line), 300))
	fmt.Fprintf(b.w, "jlgcli: batch: %s\n", b.summary())
}

// Summary is the summary line: the tasks by where they stand, and the
// cost so far.
func (b *BatchLines) Summary() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.summary()
}

// summary counts the tasks by where they stand (those that ran and wait
// for their merge apart from the running ones, blocked ones apart from the
// failed, each only when there are some), and the cost so far: that of the
// runs that ended, and of the running ones up to now (a second run's
// too).
func (b *BatchLines) summary() string {
	var done, running, merging, failed, blocked int
	var spent float64
	known := false // until a run reports a cost
	for _, t := range b.tasks {
		switch {
		case t.Status == batch.StatusDone:
			done++
		case t.Status == batch.StatusRunning:
			running++
		case t.Status == batch.StatusUnmerged:
			merging++
		case t.Status == batch.StatusBlocked:
			blocked++
		case t.Status.Failed():
			failed++
		}
		spent += t.CostUSD
		known = known || t.CostKnown
		rerun := t.Status == batch.StatusUnmerged && t.Rerun != nil && t.Rerun.Status == ""
		if p, ok := b.live[t.ID]; ok && (t.Status == batch.StatusRunning || rerun) {
			spent += p.CostUSD
			known = known || p.CostKnown
		}
	}
	waiting := b.total - done - running - merging - failed - blocked
	s := fmt.Sprintf("%d done, %d running", done, running)
	if merging > 0 {
		s += fmt.Sprintf(", %d to merge", merging)
	}
	s += fmt.Sprintf(", %d waiting, %d failed", waiting, failed)
	if blocked > 0 {
		s += fmt.Sprintf(", %d blocked", blocked)
	}
	return s + " · " + cost.Phrase(spent, known, false)
}

func shortID(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// PrefixedTaskLine is a TaskLine for one task of a batch: plain lines, each
// after the task's id in brackets.
type PrefixedTaskLine struct {
	*TaskLine
}

// NewPrefixedTaskLine returns the plain progress lines of task id on s, a
// screen that is no terminal.
func NewPrefixedTaskLine(s Screen, id string) PrefixedTaskLine {
	return PrefixedTaskLine{NewTaskLine(Screen{W: prefixWriter{w: s.W, prefix: "jlgcli: [" + id + "] "}})}
}

// prefixWriter puts prefix in place of each line's "jlgcli: ".
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	var out strings.Builder
	for line := range strings.Lines(string(b)) {
		out.WriteString(p.prefix + strings.TrimPrefix(line, "jlgcli: "))
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// PrefixWriter is w with each line's "jlgcli: " replaced by "jlgcli: [id] ".
func PrefixWriter(w io.Writer, id string) io.Writer {
	return prefixWriter{w: w, prefix: "jlgcli: [" + id + "] "}
}

var _ taskengine.Observer = PrefixedTaskLine{}

// LockedWriter is a writer that several goroutines may share: each Write is
// whole.
type LockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLockedWriter returns w behind a lock.
func NewLockedWriter(w io.Writer) *LockedWriter { return &LockedWriter{w: w} }

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
