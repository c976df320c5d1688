package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/store"
)

// Kind tells what a followed Event holds.
type Kind string

// The kinds of Event.
const (
	// KindJournal is a line of the run's journal (events.jsonl).
	KindJournal Kind = "journal"
	// KindOutput is a piece of the raw output of the agent call under way.
	KindOutput Kind = "output"
)

// Event is what Follow hands out, in the order it was written: a line of
// the run's journal, or a piece of the agent's output as it grows.
//
// A journal line comes both raw and parsed: a web server sends Line as it
// is (the JSON the engine wrote, fields it adds later included) and
// Next as the SSE event's id; a terminal or a hook reads Event. Positions
// are byte offsets in the journal, which is only ever appended to: Next
// given back to Follow as FollowOptions.From goes on just after this event,
// in this process or another (a reconnecting browser's Last-Event-ID).
type Event struct {
	Kind Kind `json:"kind"`
	// Offset is where the line starts in the journal; for output, where
	// the piece starts in its log.
	Offset int64 `json:"offset"`
	// Next is the journal offset after everything handed out so far: the
	// From that follows on after this event.
	Next int64 `json:"next"`
	// Line is a journal line as written, without its newline.
	Line json.RawMessage `json:"line,omitempty"`
	// Event is Line parsed (journal only).
	Event engine.Event `json:"event,omitzero"`
	// Output is a piece of the agent's raw output (output only): of the
	// call of iteration (loop) or attempt (task; 0: the planner) N, kept in
	// the run's output log N (store.Run.OutputPath). Pieces end at a
	// newline when the agent wrote one.
	Output []byte `json:"output,omitempty"`
	N      int    `json:"n,omitempty"`
}

// FollowOptions say where Follow starts and what it hands out.
type FollowOptions struct {
	// From is the journal offset to start at: 0, or the Next of an event
	// handed out before. An offset that is not the start of a line is a
	// exit.UsageError.
	From int64
	// NoOutput leaves out the agent's output: journal lines only.
	NoOutput bool
}

// followPoll is how often Follow looks for what was written.
var followPoll = 100 * time.Millisecond

// outputTail bounds what Follow hands out of an output log that was
// already long when it started following it: its end only.
const outputTail = 256 << 10

// maxPiece bounds a piece of output.
const maxPiece = 64 << 10

// Follow hands fn the events of run id (its id or a unique prefix) under
// the state root as they are written: the journal's lines from o.From on,
// and, while the run is live, the output of its agent call under way (the
// newest output log, from its start or its last outputTail bytes, then as
// it grows; a newer one takes over once the older is drained). It never
// hands out a partial line of the journal: a line being written (or torn
// by a kill) waits for its newline.
//
// Follow waits and polls the files itself, every followPoll. It returns
// nil once the run has ended: no process holds it (its stop journaled and
// its process gone, or its process killed) and every line written is
// handed out; ctx.Err() when ctx is done first; fn's error when fn fails.
// A batch's task ends its own follow when it stops, whatever the batch
// does. A run on a Temporal server is followed in its local record, which
// no process holds: Follow hands out what it has and returns.
func Follow(ctx context.Context, root, id string, o FollowOptions, fn func(Event) error) error {
	run, err := store.Open(root, id)
	if err != nil {
		return err
	}
	defer run.Close()
	f := follower{run: run, fn: fn, next: o.From, output: !o.NoOutput, outN: -1}
	if err := f.checkFrom(); err != nil {
		return err
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		// Live is read before the files: a run not live then has written
		// everything it will.
		live := run.Live()
		if err := f.journal(); err != nil {
			return err
		}
		if f.output && (live || f.outN >= 0) {
			if err := f.agentOutput(!live); err != nil {
				return err
			}
		}
		if !live {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// follower is the state of one Follow.
type follower struct {
	run    *store.Run
	fn     func(Event) error
	next   int64 // the journal offset handed out to
	output bool
	outN   int   // the output log followed; -1: none yet
	outOff int64 // how far it was handed out
}

// checkFrom refuses a From that is not the start of a journal line.
func (f *follower) checkFrom() error {
	if f.next == 0 {
		return nil
	}
	bad := func(why string) error {
		return &exit.UsageError{Err: fmt.Errorf("follow run %s from offset %d: %s", f.run.ID, f.next, why),
			Hint: "give 0, or the next offset of an event handed out before"}
	}
	if f.next < 0 {
		return bad("negative")
	}
	file, err := os.Open(f.run.EventsPath())
	if err != nil {
		return bad(err.Error())
	}
	defer file.Close()
	var b [1]byte
	if _, err := file.ReadAt(b[:], f.next-1); err != nil {
		return bad("beyond the end of its journal")
	}
	if b[0] != '\n' {
		return bad("not the start of a line of its journal")
	}
	return nil
}

// journal hands out the journal's complete lines after f.next.
func (f *follower) journal() error {
	lines, next, err := readLines(f.run.EventsPath(), f.next)
	if err != nil {
		return err
	}
	for _, ln := range lines {
		if err := f.fn(Event{Kind: KindJournal, Offset: ln.Offset, Next: ln.Next, Line: ln.Raw, Event: ln.Event}); err != nil {
			return err
		}
		f.next = ln.Next
	}
	f.next = next
	return nil
}

// agentOutput hands out what the newest output log holds after what was
// handed out; final: the run has ended, hand out the rest.
func (f *follower) agentOutput(final bool) error {
	newest, err := newestOutput(f.run.OutputDir())
	if err != nil {
		return err
	}
	if newest > f.outN {
		if f.outN >= 0 {
			if err := f.outputPiece(true); err != nil { // the rest of the older log
				return err
			}
			f.outOff = 0
		} else if fi, err := os.Stat(f.run.OutputPath(newest)); err == nil && fi.Size() > outputTail {
			f.outOff = fi.Size() - outputTail // a long log found under way: its end
		}
		f.outN = newest
	}
	if f.outN < 0 {
		return nil
	}
	return f.outputPiece(final)
}

// outputPiece hands out what output log f.outN holds after f.outOff, up
// to its last newline unless all is true.
func (f *follower) outputPiece(all bool) error {
	file, err := os.Open(f.run.OutputPath(f.outN))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < f.outOff {
		f.outOff = 0 // made again (an iteration redone after a kill)
	}
	for f.outOff < fi.Size() {
		buf := make([]byte, min(fi.Size()-f.outOff, maxPiece))
		n, err := file.ReadAt(buf, f.outOff)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		buf = buf[:n]
		if !all {
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				buf = buf[:i+1]
			} else if n < maxPiece {
				return nil // a line being written
			}
		}
		if len(buf) == 0 {
			return nil
		}
		if err := f.fn(Event{Kind: KindOutput, Offset: f.outOff, Next: f.next, Output: buf, N: f.outN}); err != nil {
			return err
		}
		f.outOff += int64(len(buf))
	}
	return nil
}

// newestOutput is the highest N of the output logs N.log in dir; -1 when
// there is none.
func newestOutput(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	newest := -1
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log")); err == nil && strings.HasSuffix(e.Name(), ".log") && n > newest {
			newest = n
		}
	}
	return newest, nil
}

// line is a complete line of a journal.
type line struct {
	Offset, Next int64
	Raw          []byte
	Event        engine.Event
}

// readLines reads the complete lines of the journal at path from offset
// from on, and returns them and the offset after the last one. A partial
// last line (being written, or torn by a kill) is left for later; a
// complete line that is no event is store.ErrCorrupt. A missing journal
// has no line.
func readLines(path string, from int64) ([]line, int64, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, err
	}
	defer file.Close()
	if _, err := file.Seek(from, io.SeekStart); err != nil {
		return nil, from, err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return nil, from, err
	}
	var out []line
	off := from
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return out, off, nil
		}
		raw := data[:i]
		ln := line{Offset: off, Next: off + int64(i) + 1, Raw: raw}
		if err := json.Unmarshal(raw, &ln.Event); err != nil {
			return out, off, fmt.Errorf("%s: offset %d: %w: %v", path, off, store.ErrCorrupt, err)
		}
		out = append(out, ln)
		off, data = ln.Next, data[i+1:]
	}
}

// LastOutput is the raw output log of the newest agent call of run id
// under root (its iteration or attempt N, and the file); found is false
// when no call has written one yet.
func LastOutput(root, id string) (n int, path string, found bool, err error) {
	run, err := Open(root, id)
	if err != nil {
		return 0, "", false, err
	}
	defer run.Close()
	n, err = newestOutput(run.OutputDir())
	if err != nil || n < 0 {
		return 0, "", false, err
	}
	return n, run.OutputPath(n), true, nil
}

// Live reports whether a process runs run id under root now.
func Live(root, id string) bool {
	run, err := store.Open(root, id)
	if err != nil {
		return false
	}
	defer run.Close()
	return run.Live()
}
