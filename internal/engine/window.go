package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Window is the last known use of one subscription window of a backend.
type Window = store.Window

// Windows is a set of windows, one per backend and kind.
type Windows []Window

// Note returns ws with the windows a call on backend reported at time at,
// each replacing the same backend's window of its kind unless that one is
// newer.
func (ws Windows) Note(backend string, at time.Time, reported []agent.Window) Windows {
	out := append(Windows(nil), ws...)
	for _, r := range reported {
		w := Window{Backend: backend, Kind: r.Kind, Used: r.Used, ResetsAt: r.ResetsAt, At: at}
		i := out.index(backend, r.Kind)
		switch {
		case i < 0:
			out = append(out, w)
		case !out[i].At.After(at):
			out[i] = w
		}
	}
	return out
}

// Merge returns ws with the windows of other that are newer than its own.
func (ws Windows) Merge(other Windows) Windows {
	out := append(Windows(nil), ws...)
	for _, w := range other {
		i := out.index(w.Backend, w.Kind)
		switch {
		case i < 0:
			out = append(out, w)
		case w.At.After(out[i].At):
			out[i] = w
		}
	}
	return out
}

func (ws Windows) index(backend, kind string) int {
	for i, w := range ws {
		if w.Backend == backend && w.Kind == kind {
			return i
		}
	}
	return -1
}

// WindowBook holds the last known windows of every backend for the runs of
// one process: a batch's tasks share it, so that a window one task filled
// holds back the others on that backend. Its methods are safe for
// concurrent use; the zero value is empty.
type WindowBook struct {
	mu sync.Mutex
	ws Windows
}

// NewWindowBook is a book that starts with ws (known from earlier runs).
func NewWindowBook(ws Windows) *WindowBook { return &WindowBook{ws: ws} }

// Merge adds windows newer than the book's and returns all it holds.
func (b *WindowBook) Merge(ws Windows) Windows {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ws = b.ws.Merge(ws)
	return append(Windows(nil), b.ws...)
}

// WindowLimits are the --window-limit of each backend, in percent: a key ""
// for every backend without its own; 0 or none: no limit.
type WindowLimits map[string]float64

// Of is backend's limit, 0 for none.
func (l WindowLimits) Of(backend string) float64 {
	if v, ok := l[backend]; ok {
		return v
	}
	return l[""]
}

// WindowHold says that a call may not start on a backend: one of its windows
// is at or above the limit.
type WindowHold struct {
	Window Window
	// Limit is the backend's --window-limit, in percent.
	Limit float64
	// Wait is how long until the window resets (and a second more); OK
	// tells whether MaxWait allows waiting that long.
	Wait time.Duration
	OK   bool
	// Details says it in one line: which window, its use, its reset, and
	// why it cannot be waited for when it cannot.
	Details string
}

// WindowWait decides whether a call may start on backend at now: nil when it
// may (no limit, or every known window of the backend below it or already
// reset); else the window over the limit that resets last, and whether
// maxWait, of which waited is spent, allows waiting for its reset. A
// window whose reset time was not reported cannot be waited for and is left
// out: nothing is guessed.
func WindowWait(now time.Time, ws Windows, backend string, limits WindowLimits, waited, maxWait time.Duration) *WindowHold {
	limit := limits.Of(backend)
	if limit <= 0 {
		return nil
	}
	var over *Window
	for i, w := range ws {
		if w.Backend != backend || w.ResetsAt.IsZero() || !w.ResetsAt.After(now) || w.Used*100 < limit-1e-9 {
			continue
		}
		if over == nil || w.ResetsAt.After(over.ResetsAt) {
			over = &ws[i]
		}
	}
	if over == nil {
		return nil
	}
	h := &WindowHold{Window: *over, Limit: limit, Wait: over.ResetsAt.Sub(now) + time.Second}
	h.Details = fmt.Sprintf("%s %s window at %s (--window-limit %s%%), resets at %s",
		backend, over.Kind, Percent(over.Used), trimFloat(limit), over.ResetsAt.Format(time.RFC3339))
	left := maxWait - waited
	switch {
	case maxWait <= 0:
		h.Details += "; --max-wait is 0"
	case left <= 0:
		h.Details += fmt.Sprintf("; --max-wait %s is spent", maxWait)
	case h.Wait > left:
		h.Details += fmt.Sprintf("; waiting %s would pass --max-wait %s", h.Wait.Round(time.Second), maxWait)
	default:
		h.OK = true
	}
	return h
}

// Percent writes a share 0..1 as a whole percentage: "92%".
func Percent(used float64) string { return fmt.Sprintf("%.0f%%", used*100) }

func trimFloat(f float64) string { return fmt.Sprintf("%g", f) }

// Text writes the windows as the progress line, show and the report print
// them, in the order kept: "5h 92% (resets 14:05), weekly 50% (resets Nov
// 26 00:00)", each after its backend ("claude 5h 92% …") when they are of
// more than one. A reset more than a day after now has its date; times are
// in loc. "" when there are none.
func (ws Windows) Text(now time.Time, loc *time.Location) string {
	backends := map[string]bool{}
	for _, w := range ws {
		backends[w.Backend] = true
	}
	var b []byte
	for i, w := range ws {
		if i > 0 {
			b = append(b, ", "...)
		}
		if len(backends) > 1 {
			b = append(b, w.Backend+" "...)
		}
		b = append(b, w.Kind+" "+Percent(w.Used)...)
		if !w.ResetsAt.IsZero() {
			layout := "15:04"
			if w.ResetsAt.Sub(now) > 24*time.Hour {
				layout = "Jan 2 15:04"
			}
			verb := "resets"
			if !w.ResetsAt.After(now) {
				verb = "reset"
			}
			b = append(b, " ("+verb+" "+w.ResetsAt.In(loc).Format(layout)+")"...)
		}
	}
	return string(b)
}
