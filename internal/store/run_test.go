package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 22, 4, 15, 0, 0, time.UTC)

// newRun creates a run in a fresh root; the run is closed at the end of
// the test.
func newRun(t *testing.T, id string) (root string, r *Run) {
	t.Helper()
	root = t.TempDir()
	r, err := Create(root, id, Meta{Command: "loop", Backend: "claude", Prompt: "do it", StartedAt: t0,
		Options: json.RawMessage(`{"maxIterations": 10}`), Cwd: "/src"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return root, r
}

func event(i int, data string) Event {
	return Event{Type: "iteration", Iteration: i, Time: t0.Add(time.Duration(i) * time.Second), Data: json.RawMessage(data)}
}

func TestCreateOpen(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "20261122T041500Z-aaaa1111")
	if r.Dir != filepath.Join(root, "runs", "20261122T041500Z-aaaa1111") {
		t.Errorf("Dir = %s", r.Dir)
	}
	for _, f := range []string{"meta.json", "events.jsonl", "output", "lock"} {
		if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !r.Live() {
		t.Error("a created run is not live")
	}
	if _, err := Create(root, r.ID, Meta{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create of an existing id: %v", err)
	}
	for _, id := range []string{"../evil", "", "a/b"} {
		if _, err := Create(root, id, Meta{}); err == nil {
			t.Errorf("Create(%q) accepted", id)
		}
	}
	for _, id := range []string{"20261122T041500Z-aaaa2222", "20261122T050000Z-bbbb0000"} {
		r, err := Create(root, id, Meta{Command: "run"})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	// A directory whose Create was interrupted before meta.json.
	if err := os.Mkdir(filepath.Join(root, "runs", "20261122T060000Z-cccc0000"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := Open(root, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{Format: FormatVersion, ID: r.ID, Command: "loop", Backend: "claude", Prompt: "do it", StartedAt: t0,
		Options: json.RawMessage(`{"maxIterations": 10}`), Cwd: "/src"}
	var opts bytes.Buffer
	_ = json.Compact(&opts, got.Meta.Options)
	if opts.String() != `{"maxIterations":10}` {
		t.Errorf("options = %s", got.Meta.Options)
	}
	want.Options, got.Meta.Options = nil, nil
	if diff := cmp.Diff(want, got.Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	if got, err := Open(root, "20261122T05"); err != nil || got.ID != "20261122T050000Z-bbbb0000" {
		t.Errorf("Open by unique prefix: %v, %v", got, err)
	}
	if got, err := Open(root, "bbbb0000"); err != nil || got.ID != "20261122T050000Z-bbbb0000" {
		t.Errorf("Open by unique suffix: %v, %v", got, err)
	}
	if _, err := Open(root, "2222"); err != nil {
		t.Errorf("Open by unique suffix: %v", err)
	}
	if _, err := Open(root, "0000"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Open by an ambiguous suffix: %v", err)
	}
	// last: the newest run the user started, not a batch's task run, nor a
	// run whose creation was cut short.
	if got, err := Open(root, Last); err != nil || got.ID != "20261122T050000Z-bbbb0000" {
		t.Errorf("Open(last) = %v, %v", got, err)
	}
	task, err := Create(root, "20261122T070000Z-dddd0000", Meta{Command: "task", Parent: "20261122T050000Z-bbbb0000"})
	if err != nil {
		t.Fatal(err)
	}
	task.Close()
	if got, err := Open(root, Last); err != nil || got.ID != "20261122T050000Z-bbbb0000" {
		t.Errorf("Open(last) with a batch's task newer = %v, %v", got, err)
	}
	if _, err := Open(t.TempDir(), Last); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(last) with no run: %v", err)
	}
	_, err = Open(root, "20261122T0415")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "20261122T041500Z-aaaa1111") ||
		!strings.Contains(err.Error(), "20261122T041500Z-aaaa2222") {
		t.Errorf("Open by an ambiguous prefix: %v", err)
	}
	if _, err := Open(root, "2027"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"2027"`) {
		t.Errorf("Open of a missing run: %v", err)
	}
	if _, err := Open(t.TempDir(), "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open in a root with no runs: %v", err)
	}
	if _, err := Open(root, "20261122T06"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "meta.json") {
		t.Errorf("Open of a run without meta.json: %v", err)
	}
}

func TestAppendEvents(t *testing.T) {
	t.Parallel()
	_, r := newRun(t, "r1")
	want := []Event{
		event(1, `{"prompt": "a\nb <&>", "reply": "ok"}`),
		event(2, `[1, 2,
		3]`),
		{Type: "stop", Time: t0},
	}
	for _, ev := range want {
		if err := r.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Append(Event{}); err == nil {
		t.Error("an event without a type was appended")
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"a\nb <&>"`) {
		t.Fatalf("events.jsonl: one line per event, compact, unescaped HTML:\n%s", data)
	}
	got, rep, err := r.Events()
	if err != nil || rep != nil {
		t.Fatalf("Events: %v, %v", rep, err)
	}
	for i := range want {
		var c bytes.Buffer
		_ = json.Compact(&c, want[i].Data)
		want[i].Data = c.Bytes()
		if len(want[i].Data) == 0 {
			want[i].Data = nil
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestWritesNeedTheLock(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	r.Close()
	o, err := Open(root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Append(event(1, `{}`)); !errors.Is(err, ErrNotLocked) {
		t.Errorf("Append without the lock: %v", err)
	}
	if err := o.WriteCheckpoint(Progress{}); !errors.Is(err, ErrNotLocked) {
		t.Errorf("WriteCheckpoint without the lock: %v", err)
	}
	if _, err := o.Output(1); !errors.Is(err, ErrNotLocked) {
		t.Errorf("Output without the lock: %v", err)
	}
	unlock, err := o.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := o.Lock(); err != nil || again == nil {
		t.Errorf("Lock of a handle that holds it: %v", err)
	}
	if err := o.Append(event(1, `{}`)); err != nil {
		t.Error(err)
	}
	unlock()
	unlock() // harmless
	if err := o.Append(event(2, `{}`)); !errors.Is(err, ErrNotLocked) {
		t.Errorf("Append after unlock: %v", err)
	}
}

// writeEvents replaces the events file of r with content.
func writeEvents(t *testing.T, r *Run, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.Dir, "events.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readEventsFile(t *testing.T, r *Run) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestTornLastLine(t *testing.T) {
	t.Parallel()
	good := `{"type":"iteration","iteration":1,"time":"2026-11-22T04:15:01Z","data":{"a":1}}` + "\n" +
		`{"type":"iteration","iteration":2,"time":"2026-11-22T04:15:02Z","data":{"a":2}}` + "\n"
	for _, tc := range []struct {
		name, content, keep string
	}{
		{"cut short", good + `{"type":"iteration","iteration":3,"da`, good},
		{"invalid json, newline", good + `{"type":"iteration",` + "\n", good},
		{"zeros", good + "\x00\x00\x00\x00", good},
		{"empty line", good + "\n", good},
		{"only a torn line", `{"type":"itera`, ""},
		{"nothing torn", good, good},
	} {
		// Read by a process that does not hold the lock (show), then
		// resumed (Lock) by another: both see the same events.
		t.Run(tc.name+"/events", func(t *testing.T) {
			root, r := newRun(t, "r1")
			r.Close()
			writeEvents(t, r, tc.content)
			o, err := Open(root, "r1")
			if err != nil {
				t.Fatal(err)
			}
			evs, rep, err := o.Events()
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Count(tc.keep, "\n"); len(evs) != want {
				t.Errorf("%d events, want %d", len(evs), want)
			}
			if torn := tc.keep != tc.content; (rep != nil) != torn {
				t.Errorf("repair = %v, want one: %v", rep, torn)
			} else if torn && (rep.Offset != int64(len(tc.keep)) || rep.Dropped != int64(len(tc.content)-len(tc.keep))) {
				t.Errorf("repair = %+v", rep)
			}
			if got := readEventsFile(t, o); got != tc.keep {
				t.Errorf("events.jsonl after repair:\n%q\nwant\n%q", got, tc.keep)
			}
			// Appending continues cleanly.
			if _, err := o.Lock(); err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.Append(event(len(evs)+1, `{"a":3}`)); err != nil {
				t.Fatal(err)
			}
			evs2, rep, err := o.Events()
			if err != nil || rep != nil || len(evs2) != len(evs)+1 {
				t.Errorf("after append: %d events, %v, %v", len(evs2), rep, err)
			}
		})
		t.Run(tc.name+"/lock", func(t *testing.T) {
			root, r := newRun(t, "r1")
			r.Close()
			writeEvents(t, r, tc.content)
			o, err := Open(root, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.Lock(); err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if got := readEventsFile(t, o); got != tc.keep {
				t.Errorf("events.jsonl after Lock:\n%q\nwant\n%q", got, tc.keep)
			}
			if err := o.Append(event(9, `{}`)); err != nil {
				t.Fatal(err)
			}
			evs, rep, err := o.Events()
			if err != nil {
				t.Fatal(err)
			}
			if torn := tc.keep != tc.content; (rep != nil) != torn {
				t.Errorf("Events after Lock: repair = %v, want one: %v", rep, torn)
			}
			if evs[len(evs)-1].Iteration != 9 {
				t.Errorf("last event %+v", evs[len(evs)-1])
			}
			if _, rep, _ := o.Events(); rep != nil {
				t.Errorf("a repair reported twice: %v", rep)
			}
		})
	}
}

func TestCorruptionInTheMiddle(t *testing.T) {
	t.Parallel()
	good := `{"type":"iteration","iteration":1,"time":"2026-11-22T04:15:01Z"}` + "\n"
	root, r := newRun(t, "r1")
	r.Close()
	for _, tc := range []struct {
		content  string
		lockFail bool
	}{
		{good + "not json\n" + good, false},
		{good + "not json\n" + `{"type":"itera`, true},
		{good + "\x00\x00\x00\n" + good + good, false},
	} {
		writeEvents(t, r, tc.content)
		o, err := Open(root, "r1")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = o.Events()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "events.jsonl:2: corrupt run state: ") {
			t.Errorf("%q: Events: %v, want corruption at line 2", tc.content, err)
		}
		if got := readEventsFile(t, o); got != tc.content {
			t.Errorf("%q: a corrupt file was changed: %q", tc.content, got)
		}
		_, err = o.Lock()
		if tc.lockFail != (err != nil) || err != nil && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "events.jsonl:2: corrupt run state: ")) {
			t.Errorf("%q: Lock: %v, want corruption at line 2", tc.content, err)
		}
		o.Close()
	}
}

func TestCheckpoint(t *testing.T) {
	t.Parallel()
	_, r := newRun(t, "r1")
	var p Progress
	if err := r.ReadCheckpoint(&p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadCheckpoint before any: %v", err)
	}
	type cp struct {
		Progress
		N   int    `json:"n"`
		Pad string `json:"pad"`
	}
	// Readers never see a partial checkpoint while it is rewritten, with
	// sizes that change every time.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var c cp
				if err := r.ReadCheckpoint(&c); err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						t.Error(err)
						return
					}
					continue
				}
				if c.Iterations != c.N || len(c.Pad) != c.N%7*10000 {
					t.Errorf("inconsistent checkpoint: n=%d iterations=%d pad=%d", c.N, c.Iterations, len(c.Pad))
					return
				}
			}
		})
	}
	for n := 1; n <= 60; n++ {
		if err := r.WriteCheckpoint(cp{Progress{Status: Running, Iterations: n}, n, strings.Repeat("x", n%7*10000)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	var c cp
	if err := r.ReadCheckpoint(&c); err != nil || c.N != 60 {
		t.Errorf("last checkpoint: %d, %v", c.N, err)
	}
	entries, _ := os.ReadDir(r.Dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if err := r.WriteCheckpoint(func() {}); err == nil {
		t.Error("a checkpoint that is not JSON was written")
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "checkpoint.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadCheckpoint(&c); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReadCheckpoint of a damaged file: %v", err)
	}
}

// A checkpoint the journal holds is replaced whole as a durable one is,
// needs the lock, and leaves no temporary file; an empty checkpoint.json,
// which a crash of the machine can leave after it, is none.
func TestJournaledCheckpoint(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	for n := 1; n <= 3; n++ {
		p := Progress{Status: Running, Iterations: n, Heartbeat: t0.Add(time.Duration(n) * time.Minute), Journaled: true}
		if err := r.WriteJournaledCheckpoint(p); err != nil {
			t.Fatal(err)
		}
	}
	var p Progress
	if err := r.ReadCheckpoint(&p); err != nil || p.Iterations != 3 || p.Journaled {
		t.Errorf("checkpoint read back: %+v, %v", p, err)
	}
	entries, _ := os.ReadDir(r.Dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	o, err := Open(root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.WriteJournaledCheckpoint(Progress{}); !errors.Is(err, ErrNotLocked) {
		t.Errorf("a handle without the lock wrote a checkpoint: %v", err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "checkpoint.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadCheckpoint(&p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadCheckpoint of an empty file: %v", err)
	}
	if row, err := r.Row(); err != nil || row.Status != Running || row.Iterations != 0 {
		t.Errorf("row of a run whose checkpoint is empty: %+v, %v", row, err)
	}
}

func TestOutputBounded(t *testing.T) {
	defer func(l int64) { outputLimit = l }(outputLimit)
	outputLimit = 100
	_, r := newRun(t, "r1")
	w, err := r.Output(3)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if n, err := w.Write([]byte(strings.Repeat("a", 50))); n != 50 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(r.OutputPath(3))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("a", 100) + "\n[jlgcli: output truncated: the first 100 bytes were kept, 150 more were dropped]\n"
	if string(data) != want {
		t.Errorf("output log:\n%q", data)
	}
	// An iteration done again (after a crash) replaces its log.
	w, _ = r.Output(3)
	fmt.Fprint(w, "again")
	w.Close()
	if data, _ := os.ReadFile(r.OutputPath(3)); string(data) != "again" {
		t.Errorf("output log of a redone iteration: %q", data)
	}
}
