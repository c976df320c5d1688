package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
)

// BatchBoard shows a batch's progress on a terminal: one live line per
// running task and a summary line below them, redrawn in place by one
// goroutine. Lines that stay (a task ended, merged, blocked; a message) are
// written above the board, which is drawn again under them. It is safe for
// concurrent use.
type BatchBoard struct {
	mu      sync.Mutex
	w       io.Writer
	lines   *BatchLines // the batch's state and its summary
	running []string    // ids, in the order they started
	tasks   map[string]*boardTask
	drawn   int // lines of the board on the screen
	closed  bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type boardTask struct {
	start time.Time
	p     engine.TaskProgress
	phase string
}

// NewBatchBoard returns a board of a batch of total tasks drawn on w, a
// terminal.
func NewBatchBoard(w io.Writer, total int) *BatchBoard {
	b := &BatchBoard{w: w, lines: NewBatchLines(io.Discard, total), tasks: map[string]*boardTask{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *BatchBoard) loop() {
	defer close(b.done)
	t := time.NewTicker(redraw)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			b.draw()
			b.mu.Unlock()
		}
	}
}

// Event implements the scheduler's observer.
func (b *BatchBoard) Event(e batch.Event) {
	var out strings.Builder
	b.lines.mu.Lock()
	b.lines.w = &out
	b.lines.mu.Unlock()
	b.lines.Event(e)
	b.mu.Lock()
	defer b.mu.Unlock()
	id := e.Task.ID
	switch e.Kind {
	case batch.EventStarted:
		if _, ok := b.tasks[id]; !ok {
			b.tasks[id] = &boardTask{start: time.Now(), phase: "starting"}
			b.running = append(b.running, id)
		}
	case batch.EventFinished, batch.EventBlocked:
		delete(b.tasks, id)
		for i, r := range b.running {
			if r == id {
				b.running = append(b.running[:i], b.running[i+1:]...)
				break
			}
		}
	}
	// The event's line stays; the summary line is the board's own.
	text := out.String()
	if i := strings.Index(text, "\njlgcli: batch: "); i >= 0 {
		text = text[:i+1]
	}
	b.above(text)
}

// Task returns the observer of task id's attempts, drawn on its line.
func (b *BatchBoard) Task(id string) engine.TaskObserver { return boardObserver{b: b, id: id} }

// Writer returns a writer whose lines stay above the board, each after
// task id in brackets ("" for none).
func (b *BatchBoard) Writer(id string) io.Writer {
	if id == "" {
		return boardWriter{b: b}
	}
	return prefixWriter{w: boardWriter{b: b}, prefix: "jlgcli: [" + id + "] "}
}

// Around implements Live: write's lines stay above the board.
func (b *BatchBoard) Around(write func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	write()
	b.draw()
}

// Close stops the redraws and clears the board; it may be called more than
// once.
func (b *BatchBoard) Close() {
	b.once.Do(func() { close(b.stop) })
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
	b.closed = true
}

// above writes text above the board.
func (b *BatchBoard) above(text string) {
	b.clear()
	io.WriteString(b.w, text)
	b.draw()
}

func (b *BatchBoard) clear() {
	for i := 0; i < b.drawn; i++ {
		io.WriteString(b.w, "\x1b[1A\r\x1b[K")
	}
	b.drawn = 0
}

func (b *BatchBoard) draw() {
	if b.closed {
		return
	}
	b.clear()
	var s strings.Builder
	for _, id := range b.running {
		t := b.tasks[id]
		line := fmt.Sprintf("⟳ [%s] %s", id, t.phase)
		if t.p.Tiers > 0 {
			line = fmt.Sprintf("⟳ [%s] %s · %s", id, taskText(t.p, t.start), t.phase)
		}
		s.WriteString(clip(line, 150) + "\n")
	}
	b.lines.mu.Lock()
	s.WriteString("batch: " + b.lines.summary() + "\n")
	b.lines.mu.Unlock()
	io.WriteString(b.w, s.String())
	b.drawn = len(b.running) + 1
}

// boardObserver draws one task's attempts on its line of the board.
type boardObserver struct {
	b  *BatchBoard
	id string
}

func (o boardObserver) set(p engine.TaskProgress, phase string) {
	o.b.mu.Lock()
	defer o.b.mu.Unlock()
	if t, ok := o.b.tasks[o.id]; ok {
		t.p, t.phase = p, phase
	}
}

func (o boardObserver) AttemptStarted(p engine.TaskProgress)      { o.set(p, "develop") }
func (o boardObserver) Phase(p engine.TaskProgress, phase string) { o.set(p, phase) }
func (o boardObserver) AttemptDone(p engine.TaskProgress, a engine.Attempt) {
	o.set(p, a.Action)
	o.b.mu.Lock()
	defer o.b.mu.Unlock()
	line := fmt.Sprintf("jlgcli: [%s] %s · gate %s · %s", o.id, taskText(p, o.b.tasks[o.id].startOr()), a.Gate.Status, a.Action)
	if a.Detection != nil {
		line += fmt.Sprintf(" (loop: %s)", a.Detection.Names())
	}
	o.b.above(clip(line, 160) + "\n")
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
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	w.b.above(string(p))
	return len(p), nil
}
