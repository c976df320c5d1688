package temporal

import (
	"context"
	"sync"

	"go.temporal.io/sdk/worker"
)

// machine bounds the attempts and plans that one `jlgcli worker` runs at
// once, all its backends together (--concurrency).
//
// Each backend has its own attempt queue and so its own Temporal worker,
// whose pollers each reserve a slot before they poll. A slot supplier that
// counted reservations would let an idle backend's long poll (a minute)
// hold the machine's only slot while attempts of another backend wait: so
// a reservation is free while the machine has room, and none is given
// while as many attempts as allowed are under way. The worker then stops
// polling when it is full, and other workers get the attempts. A poll
// that was already waiting can still receive an attempt at the moment the
// machine fills (at most one per other backend): such an attempt is handed
// back at once (take: no place, the activity fails as handed back before
// it has done anything, and the workflow schedules it again for a worker
// that has room), so that a full worker never holds an attempt that
// another could start now. Attempts of a workflow from before the hand
// back (ChangeTaskRoom) wait for a place instead (enter), heartbeating.
// Either way no more than the allowed number of agents ever run at once.
type machine struct {
	mu      sync.Mutex
	used    int           // attempts taken (slots marked used)
	changed chan struct{} // closed when used goes down
	max     int

	places chan struct{} // the agents running, at most max
}

func newMachine(n int) *machine {
	return &machine{max: n, changed: make(chan struct{}), places: make(chan struct{}, n)}
}

// ReserveSlot gives a slot to poll with once the machine has room.
func (m *machine) ReserveSlot(ctx context.Context, _ worker.SlotReservationInfo) (*worker.SlotPermit, error) {
	for {
		m.mu.Lock()
		if m.used < m.max {
			m.mu.Unlock()
			return &worker.SlotPermit{}, nil
		}
		changed := m.changed
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// TryReserveSlot gives no slot: attempts are never eager (their queue is
// not the workflow's).
func (m *machine) TryReserveSlot(worker.SlotReservationInfo) *worker.SlotPermit { return nil }

// MarkSlotUsed counts an attempt taken.
func (m *machine) MarkSlotUsed(info worker.SlotMarkUsedInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	info.Permit().UserData = true
	m.used++
}

// ReleaseSlot counts an attempt ended (a slot never used counts nothing).
func (m *machine) ReleaseSlot(info worker.SlotReleaseInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if used, _ := info.Permit().UserData.(bool); !used {
		return
	}
	info.Permit().UserData = false
	m.used--
	close(m.changed)
	m.changed = make(chan struct{})
}

// MaxSlots is the bound on the attempts under way.
func (m *machine) MaxSlots() int { return m.max }

// tuner is the tuner of a backend's worker: its attempts share the
// machine's slots.
func (m *machine) tuner() (worker.WorkerTuner, error) {
	other := func() worker.SlotSupplier {
		s, _ := worker.NewFixedSizeSlotSupplier(1000) // the SDK's default sizes
		return s
	}
	return worker.NewCompositeTuner(worker.CompositeTunerOptions{
		WorkflowSlotSupplier:        other(),
		ActivitySlotSupplier:        m,
		LocalActivitySlotSupplier:   other(),
		NexusSlotSupplier:           other(),
		SessionActivitySlotSupplier: other(),
	})
}

// take takes a place on the machine for an agent if one is free now, and
// reports whether it did; leave gives it back. A nil machine has room for
// any number.
func (m *machine) take() (leave func(), ok bool) {
	if m == nil {
		return func() {}, true
	}
	select {
	case m.places <- struct{}{}:
		return func() { <-m.places }, true
	default:
		return nil, false
	}
}

// running is how many agents run on the machine now, of how many.
func (m *machine) running() (n, of int) {
	if m == nil {
		return 0, 0
	}
	return len(m.places), m.max
}

// enter waits for a place on the machine for an agent; leave gives it
// back. A nil machine has room for any number.
func (m *machine) enter(ctx context.Context) (leave func(), err error) {
	if m == nil {
		return func() {}, nil
	}
	select {
	case m.places <- struct{}{}:
		return func() { <-m.places }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
