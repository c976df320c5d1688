package live

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// BatchBoard shows a batch's progress on a terminal: one live line per
// running task and a summary line below them, redrawn in place by one
// goroutine. Lines that stay (a task ended, merged, blocked; a message) are
// written above the board, which is drawn again under them. It is safe for
// concurrent use.
type BatchBoard struct {
	l       live
	lines   *BatchLines // the batch's state and its summary
	running []string    // ids, in the order they started
	tasks   map[string]*boardTask
}

type boardTask struct {
	start time.Time
	p     taskengine.Progress
	phase string
	agent agentLines // the agent's retry and error lines this attempt
}

// NewBatchBoard returns a board of a batch of total tasks drawn on s, a
// terminal.
func NewBatchBoard(s Screen, total int) *BatchBoard {
	b := &BatchBoard{lines: NewBatchLines(io.Discard, total), tasks: map[string]*boardTask{}}
	b.l.start(s, b.boardLines)
	return b
}

// Event implements the scheduler's observer.
func (b *BatchBoard) Event(e batch.Event) {
	var out strings.Builder
	b.lines.mu.Lock()
	b.lines.w = &out
	b.lines.mu.Unlock()
	b.lines.Event(e)
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	id := e.Task.ID
	switch e.Kind {
	case batch.EventStarted:
		if _, ok := b.tasks[id]; !ok {
			b.tasks[id] = &boardTask{start: time.Now(), phase: "starting"}
			b.running = append(b.running, id)
		}
	case batch.EventRerunStarted:
		// The task's second run has a line of its own, timed from its
		// start, as long as its merge goes on.
		b.drop(id)
		b.tasks[id] = &boardTask{start: time.Now(), phase: "re-run starting"}
		b.running = append(b.running, id)
	case batch.EventFinished, batch.EventBlocked, batch.EventMerged:
		b.drop(id)
	}
	// The event's line stays; the summary line is the board's own.
	text := out.String()
	if i := strings.Index(text, "\njlgcli: batch: "); i >= 0 {
		text = text[:i+1]
	}
	b.l.event(strings.Split(strings.TrimSuffix(text, "\n"), "\n")...)
}

// drop takes task id's live line away.
func (b *BatchBoard) drop(id string) {
	delete(b.tasks, id)
	for i, r := range b.running {
		if r == id {
			b.running = append(b.running[:i], b.running[i+1:]...)
			break
		}
	}
}

// Task returns the observer of task id's attempts, drawn on its line.
func (b *BatchBoard) Task(id string) taskengine.Observer { return boardObserver{b: b, id: id} }

// Writer returns a writer whose lines stay above the board, each after
// task id in brackets ("" for none).
func (b *BatchBoard) Writer(id string) io.Writer {
	if id == "" {
		return boardWriter{b: b}
	}
	return prefixWriter{w: boardWriter{b: b}, prefix: "jlgcli: [" + id + "] "}
}

// Above implements Live: text stays above the board.
func (b *BatchBoard) Above(text string) { b.l.above(text) }

// Close stops the redraws and clears the board; it may be called more than
// once.
func (b *BatchBoard) Close() { b.l.close() }

// boardLines are the board's lines: one per running task, then the summary.
func (b *BatchBoard) boardLines() []string {
	var lines []string
	for _, id := range b.running {
		t := b.tasks[id]
		line := fmt.Sprintf("⟳ [%s] %s", id, t.phase)
		if t.p.Tiers > 0 {
			line = fmt.Sprintf("⟳ [%s] %s · %s", id, taskText(t.p, t.start), t.phase)
		}
		if t.agent.last != "" {
			// The news first: a narrow terminal cuts the end.
			line = fmt.Sprintf("⟳ [%s] agent: %s · %s", id, t.agent.last, strings.TrimPrefix(line, "⟳ ["+id+"] "))
		}
		lines = append(lines, line)
	}
	b.lines.mu.Lock()
	lines = append(lines, "batch: "+b.lines.summary())
	b.lines.mu.Unlock()
	return lines
}

// boardObserver draws one task's attempts on its line of the board.
type boardObserver struct {
	b  *BatchBoard
	id string
}

func (o boardObserver) set(p taskengine.Progress, phase string) {
	o.b.lines.Progress(o.id, p)
	o.b.l.mu.Lock()
	defer o.b.l.mu.Unlock()
	if t, ok := o.b.tasks[o.id]; ok {
		if phase == "develop" {
			t.agent.reset()
		}
		t.p, t.phase = p, phase
	}
	o.b.l.frame("")
}

func (o boardObserver) AttemptStarted(p taskengine.Progress)      { o.set(p, "develop") }
func (o boardObserver) Phase(p taskengine.Progress, phase string) { o.set(p, phase) }
func (o boardObserver) AttemptDone(p taskengine.Progress, a taskengine.Attempt) {
	o.b.l.mu.Lock()
	defer o.b.l.mu.Unlock()
	t := o.b.tasks[o.id]
	if t != nil {
		t.p, t.phase = p, a.Action
		t.agent.reset()
	}
	o.b.l.event(fmt.Sprintf("jlgcli: [%s] %s", o.id, attemptText(p, a, t.startOr())))
}

// Waiting implements engine.WaitObserver: the task's line says until when
// it waits, and a line above says why (the backend, its window).
func (o boardObserver) Waiting(until time.Time, reason string) {
	o.b.l.mu.Lock()
	defer o.b.l.mu.Unlock()
	if t, ok := o.b.tasks[o.id]; ok {
		t.phase = "waiting until " + until.Local().Format("15:04:05")
	}
	o.b.l.event(fmt.Sprintf("jlgcli: [%s] %s", o.id, waitingText(until, reason)))
}

// AgentLine implements engine.AgentObserver: the agent's retry or error
// line is shown on the task's line.
func (o boardObserver) AgentLine(line string) {
	o.b.l.mu.Lock()
	defer o.b.l.mu.Unlock()
	if t, ok := o.b.tasks[o.id]; ok {
		t.agent.add(line, "")
	}
	o.b.l.frame("")
}

func (t *boardTask) startOr() time.Time {
	if t == nil {
		return time.Now()
	}
	return t.start
}

// boardWriter writes above the board.
type boardWriter struct{ b *BatchBoard }

func (w boardWriter) Write(p []byte) (int, error) {
	w.b.l.above(string(p))
	return len(p), nil
}
