package temporal

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/taskengine"
	"go.temporal.io/sdk/worker"
)

// usedInfo and releaseInfo are what the SDK tells a slot supplier of a
// permit.
type usedInfo struct {
	worker.SlotMarkUsedInfo
	p *worker.SlotPermit
}

func (i usedInfo) Permit() *worker.SlotPermit { return i.p }

type releaseInfo struct {
	worker.SlotReleaseInfo
	p *worker.SlotPermit
}

func (i releaseInfo) Permit() *worker.SlotPermit { return i.p }

// reserved reports whether a reservation is given within a short wait.
func reserved(m *machine) (*worker.SlotPermit, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	p, err := m.ReserveSlot(ctx, nil)
	return p, err == nil
}

// TestMachineSlots: with --concurrency 2 over any number of backends, the
// pollers of every backend may poll while the machine has room (an idle
// backend's poll holds nothing); once two attempts are taken, no poller of
// any backend gets a slot until one of them ends.
func TestMachineSlots(t *testing.T) {
	m := newMachine(2)
	var idle []*worker.SlotPermit
	for range 5 { // five pollers, of several backends
		p, ok := reserved(m)
		if !ok {
			t.Fatal("a poller waits while the machine has room")
		}
		idle = append(idle, p)
	}
	m.MarkSlotUsed(usedInfo{p: idle[0]})
	m.MarkSlotUsed(usedInfo{p: idle[1]})
	if _, ok := reserved(m); ok {
		t.Fatal("a slot was given with two attempts of two under way")
	}
	// A poll that got nothing gives its slot back: still full.
	m.ReleaseSlot(releaseInfo{p: idle[2]})
	if _, ok := reserved(m); ok {
		t.Fatal("an unused slot given back made room")
	}
	got := make(chan bool)
	go func() { _, ok := reserved(m); got <- ok }()
	m.ReleaseSlot(releaseInfo{p: idle[0]}) // an attempt ends
	if !<-got {
		t.Fatal("no slot once an attempt ended")
	}
	if m.MaxSlots() != 2 || m.TryReserveSlot(nil) != nil {
		t.Errorf("MaxSlots %d, eager slot given", m.MaxSlots())
	}
}

// TestMachineGate: attempts of a workflow from before ChangeTaskRoom that
// pollers took at the moment the machine filled wait for a place: never
// more agents than allowed at once.
func TestMachineGate(t *testing.T) {
	m := newMachine(1)
	leave, err := m.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan error)
	go func() {
		l, err := m.enter(context.Background())
		if err == nil {
			l()
		}
		entered <- err
	}()
	select {
	case <-entered:
		t.Fatal("a second agent started beside the first with --concurrency 1")
	case <-time.After(100 * time.Millisecond):
	}
	leave()
	if err := <-entered; err != nil {
		t.Fatal(err)
	}
	// A worker that stops ends the wait.
	leave, _ = m.enter(context.Background())
	defer leave()
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errWorkerStopping)
	if _, err := m.enter(ctx); !errors.Is(err, errWorkerStopping) {
		t.Errorf("err %v, want the worker's stop", err)
	}
	var none *machine
	if l, err := none.enter(context.Background()); err != nil {
		t.Error(err)
	} else {
		l()
	}
}

// TestMachineTake: a place is taken at once or not at all; an attempt or
// plan that finds none is handed back before it does anything (no clone,
// no agent), as an error of type ErrHandedBack that the workflow knows.
func TestMachineTake(t *testing.T) {
	m := newMachine(1)
	leave, ok := m.take()
	if !ok {
		t.Fatal("no place on an idle machine")
	}
	if _, ok := m.take(); ok {
		t.Fatal("a second place with --concurrency 1")
	}
	if n, of := m.running(); n != 1 || of != 1 {
		t.Errorf("running %d of %d, want 1 of 1", n, of)
	}
	acts := &Activities{StateDir: t.TempDir(), machine: m}
	in := AttemptInput{RunID: "r", Repo: "file:///nowhere.git", HandBack: true, Next: taskengine.Next{Number: 2}}
	if _, err := acts.Attempt(context.Background(), in); !IsHandedBack(err) || !strings.Contains(err.Error(), "attempt 2 of run r handed back") {
		t.Errorf("attempt on a full worker: %v, want it handed back", err)
	}
	if _, err := acts.Plan(context.Background(), in); !IsHandedBack(err) {
		t.Errorf("plan on a full worker: %v, want it handed back", err)
	}
	if entries, _ := os.ReadDir(acts.StateDir); len(entries) != 0 {
		t.Errorf("a handed back attempt made %v", entries)
	}
	leave()
	if _, ok := m.take(); !ok {
		t.Error("no place once the agent left")
	}
}
