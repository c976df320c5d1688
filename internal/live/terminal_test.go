package live

import (
	"strings"
	"sync"
	"testing"

	"github.com/jlgcli/jlgcli/internal/hooks"
)

// lockedBuilder is a strings.Builder safe for the lines' goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A run's parts carry the hooks and only the live lines asked for; quiet,
// none, and the reporter leaves out progress.
func TestTerminalParts(t *testing.T) {
	var err lockedBuilder
	d := &hooks.Dispatcher{}
	term := Terminal{Say: NewReporter(&err, false), Err: &err, Hooks: d}
	p := term.Parts(false, true, false)
	if p.TaskObserver == nil || p.LoopObserver != nil || p.Hooks != d || p.Say == nil {
		t.Errorf("Parts(task) = %+v, want a task line and the hooks", p)
	}
	Close(p)
	p = term.Parts(true, true, true)
	if p.TaskObserver != nil || p.LoopObserver != nil {
		t.Errorf("Parts(quiet) has live lines: %+v", p)
	}
	term.Say.Progress("left out")
	if b := term.Base(); b.Hooks != nil || b.TaskObserver != nil {
		t.Errorf("Base = %+v, want neither hooks nor lines", b)
	}
	if strings.Contains(err.String(), "left out") {
		t.Errorf("a quiet reporter wrote progress: %q", err.String())
	}
}

// Off a terminal, a batch's task writes its messages after its id, the
// batch's own parts carry the hooks and its tasks' none.
func TestTerminalBatchPartsLog(t *testing.T) {
	var err lockedBuilder
	d := &hooks.Dispatcher{}
	term := Terminal{Say: NewReporter(&err, false), Err: &err, Hooks: d}
	bp, closeBoard := term.BatchParts(false, 2)
	defer closeBoard()
	if bp.Hooks != d || bp.Observer == nil {
		t.Errorf("BatchParts = %+v, want the hooks and an observer", bp)
	}
	p := bp.ForTask("t1")
	if p.Hooks != nil {
		t.Errorf("a task's parts carry hooks")
	}
	if p.TaskObserver == nil {
		t.Errorf("a task's parts have no observer")
	}
	p.Say.Notice("checking")
	if got := err.String(); got != "jlgcli: [t1] checking\n" {
		t.Errorf("a task's message wrote %q, want it with the task's id", got)
	}
}
