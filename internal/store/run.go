package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"

	"github.com/jlgcli/jlgcli/internal/durable"
)

// Names inside the state root and a run directory.
const (
	runsDirName    = "runs"
	metaFile       = "meta.json"
	eventsFile     = "events.jsonl"
	checkpointFile = "checkpoint.json"
	lockFile       = "lock"
	outputDirName  = "output"
	reportJSONFile = "report.json"
	reportMDFile   = "report.md"
	progressFile   = "progress.md"
)

// FormatVersion is the version of the run directory layout, written in
// meta.json. 2: every setting in camelCase with durations in milliseconds
// (a check's timeoutMs), a loop's handoff explicit. Runs of format 1 are
// read and resumed too.
const FormatVersion = 2

// Running is the status of a run that has not ended (the engine's statuses
// name how a run ended). A row that says Running but is not Live is a run
// whose process died: it can be resumed.
const Running = "running"

// OutputLimit bounds each iteration's output log; what comes after is
// counted and dropped, and the log ends with a line that says so.
const OutputLimit = 64 << 20

// outputLimit is OutputLimit, smaller in tests.
var outputLimit int64 = OutputLimit

// lockRetry is how long Lock retries before it reports the run live: a
// `jlgcli runs` probing the lock holds it (shared) for an instant.
const lockRetry = 250 * time.Millisecond

// Meta is what a run was started with; written once, by Create, to
// meta.json.
type Meta struct {
	// Format is FormatVersion (set by Create).
	Format int `json:"format"`
	// ID is the run id (set by Create).
	ID string `json:"id"`
	// Command is the command that started the run: "loop", "run", "task".
	Command string `json:"command"`
	// Backend is the agent backend's name.
	Backend string `json:"backend"`
	// Prompt is the first prompt.
	Prompt string `json:"prompt"`
	// Options are the resolved options, as JSON, for resume to reuse.
	Options json.RawMessage `json:"options,omitempty"`
	// Cwd is the agent's working directory.
	Cwd string `json:"cwd"`
	// StartedAt is when the run started (Create sets the current time
	// when zero).
	StartedAt time.Time `json:"startedAt"`
	// Parent is the run of the batch that started this task run; "" for a
	// run of its own.
	Parent string `json:"parent,omitempty"`
	// RerunOf is, for a task run that its batch made because the change of
	// an earlier run of the task passed its checks but could not land,
	// that run.
	RerunOf string `json:"rerunOf,omitempty"`
	// Temporal, for a run submitted to a Temporal server, says where it
	// runs: show, report and resume ask the server. Options then hold the
	// workflow's input.
	Temporal *Temporal `json:"temporal,omitempty"`
	// Sandbox is the confinement its agents and checks had when it started.
	Sandbox *sandbox.Record `json:"sandbox,omitempty"`
}

// Temporal is the server a run was submitted to, and how jlgcli connected
// to it: no secret (the API key's variable, never the key).
type Temporal struct {
	Address       string `json:"address"`
	Namespace     string `json:"namespace"`
	Queue         string `json:"queue"`
	TLSCA         string `json:"tlsCa,omitempty"`
	TLSCert       string `json:"tlsCert,omitempty"`
	TLSKey        string `json:"tlsKey,omitempty"`
	TLSServerName string `json:"tlsServerName,omitempty"`
	APIKeyEnv     string `json:"apiKeyEnv,omitempty"`
}

// Event is one line of events.jsonl. The store reads only Type and
// Iteration; Data is the engine's payload for that type (prompt, reply,
// usage, verdicts...).
type Event struct {
	// Type says what happened: "iteration", "gate", "stall",
	// "rate-limit-wait", "stop", "resume"...
	Type string `json:"type"`
	// Iteration is the iteration the event belongs to (0: none).
	Iteration int `json:"iteration,omitempty"`
	// Time is when it happened (Append sets the current time when zero).
	Time time.Time `json:"time"`
	// Data is the payload, any JSON value; Append stores it compacted.
	Data json.RawMessage `json:"data,omitempty"`
}

// Progress is the part of a checkpoint that the store reads, to fill the
// index (Row, Rebuild). The engine's checkpoint type embeds it (or has the
// same JSON fields); every other field is the engine's own.
type Progress struct {
	// Status is Running while the run goes on, then how it ended (the
	// engine's status).
	Status string `json:"status"`
	// Iterations is the number of iterations recorded.
	Iterations int `json:"iterations"`
	// CostUSD is the cost so far; CostKnown tells whether the agent
	// reported any.
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
	// DurationMs is the run's duration so far, in milliseconds.
	DurationMs millis.Duration `json:"durationMs"`
	// Heartbeat is when the live process last wrote the checkpoint. The
	// engine refreshes it (by rewriting the checkpoint) while an iteration
	// runs; it tells how recent the state is. Whether the run is running is
	// told by its lock (Live), which dies with the process.
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// Tiers are what each tier of a task did; none for other commands.
	Tiers []TierStat `json:"tiers,omitempty"`
	// Backend and Model are those of a task's last attempt ("" before
	// one, and for other commands).
	Backend string `json:"backend,omitempty"`
	Model   string `json:"model,omitempty"`
	// Windows are the last known use of the subscription windows the run's
	// agents reported, one per backend and kind.
	Windows []Window `json:"windows,omitempty"`
	// Journaled marks a checkpoint written right after an event of the
	// journal that holds everything it says (an iteration's, an attempt's,
	// a plan's, a wait's), while the run goes on: it need not wait for the
	// disk (WriteJournaledCheckpoint), the event being the record. Not
	// stored.
	Journaled bool `json:"-"`
}

// Window is the use of one subscription window (5-hour, weekly) of a
// backend, as its agent last reported it.
type Window struct {
	Backend string `json:"backend"`
	// Kind is the window: "5h", "weekly", ... (agent.Window).
	Kind string `json:"kind"`
	// Used is the share of the window used, 0..1.
	Used float64 `json:"used"`
	// ResetsAt is when the window resets (zero: not said); At when the
	// agent reported it.
	ResetsAt time.Time `json:"resetsAt,omitzero"`
	At       time.Time `json:"at,omitzero"`
}

// Repair describes a torn last line cut from events.jsonl: what a process
// killed in the middle of Append leaves. The event it held was never
// acknowledged, so the iteration it recorded does not count.
type Repair struct {
	// Path is the events file.
	Path string
	// Offset is where the file was cut; Dropped how many bytes went.
	Offset  int64
	Dropped int64
}

// String is a message to log.
func (r *Repair) String() string {
	return fmt.Sprintf("%s: cut a torn last line (%d bytes at offset %d) left by an interrupted write", r.Path, r.Dropped, r.Offset)
}

// Run is one run directory. Its exported fields are read-only. The methods
// are safe for concurrent use by goroutines.
type Run struct {
	// ID is the run id; Dir its directory; Meta its meta.json.
	ID   string
	Dir  string
	Meta Meta

	mu     sync.Mutex
	lock   *os.File // the run's lock file, flocked exclusive; nil when not held
	events *os.File // events.jsonl, open for appending while locked
	size   int64    // length of events.jsonl up to its last complete event
	failed error    // set when a write left the log in an unknown state
	repair *Repair  // a repair made by Lock, not yet reported by Events
}

// Root is the state root the run is kept under.
func (r *Run) Root() string { return filepath.Dir(filepath.Dir(r.Dir)) }

// RunDir is the directory of run id under the state root.
func RunDir(root, id string) string { return filepath.Join(root, runsDirName, id) }

// WriteMeta writes the run's meta.json again from r.Meta: a run on
// Temporal learns from its server how its worker confined it. The handle
// must hold the lock (ErrNotLocked).
func (r *Run) WriteMeta() error {
	r.mu.Lock()
	err := r.writable()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r.Meta, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(r.Dir, metaFile, append(data, '\n'))
}

// Create makes the directory of a new run and returns it locked by this
// handle (Live is true until Close or the unlock function of Lock): the
// caller is its only writer. meta.Format and meta.ID are set, and
// meta.StartedAt when zero. ErrExists when the id is taken.
func Create(root, id string, meta Meta) (*Run, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	runs := filepath.Join(root, runsDirName)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(runs, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s", ErrExists, dir)
		}
		return nil, err
	}
	meta.Format, meta.ID = FormatVersion, id
	if meta.StartedAt.IsZero() {
		meta.StartedAt = time.Now()
	}
	meta.StartedAt = meta.StartedAt.UTC()
	r := &Run{ID: id, Dir: dir, Meta: meta}
	err := func() error {
		if err := os.Mkdir(filepath.Join(dir, outputDirName), 0o755); err != nil {
			return err
		}
		if err := r.acquire(); err != nil {
			return err
		}
		data, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			return err
		}
		// meta.json last: a run directory without it is one whose Create
		// was interrupted, and is ignored.
		if err := writeAtomic(dir, metaFile, append(data, '\n')); err != nil {
			return err
		}
		return durable.SyncDir(runs)
	}()
	if err != nil {
		r.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("create run %s: %w", id, err)
	}
	return r, nil
}

// Open returns the run whose id is id or, failing that, starts with id
// (ErrAmbiguous, naming the candidates, when several do; ErrNotFound when
// none does). The run is not locked: reading needs no lock; call Lock to
// write (resume).
func Open(root, id string) (*Run, error) {
	full, err := resolveID(root, id)
	if err != nil {
		return nil, err
	}
	return openDir(RunDir(root, full), full)
}

// openDir reads the meta.json of the run in dir.
func openDir(dir, id string) (*Run, error) {
	data, err := os.ReadFile(filepath.Join(dir, metaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, corrupt(filepath.Join(dir, metaFile), 0, "missing: the creation of run %s was interrupted", id)
	}
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, corrupt(filepath.Join(dir, metaFile), 0, "%v", err)
	}
	if m.Format > FormatVersion {
		return nil, fmt.Errorf("run %s was written by a newer jlgcli (format %d, this one reads %d)", id, m.Format, FormatVersion)
	}
	return &Run{ID: id, Dir: dir, Meta: m}, nil
}

// Last names the newest run that the user started (a batch's task runs are
// its batch's) wherever a run id is asked for.
const Last = "last"

// resolveID finds the run named id, else the only one whose id starts or
// ends with it (the random part after the time is enough); Last is the
// newest run that is no batch's task (ids begin with their start time).
func resolveID(root, id string) (string, error) {
	if id == "" {
		return "", ErrEmptyID
	}
	// A whole id names its directory: no need to list them all.
	if checkID(id) == nil {
		if fi, err := os.Stat(RunDir(root, id)); err == nil && fi.IsDir() {
			return id, nil
		}
	}
	names, err := runNames(root)
	if err != nil {
		return "", err
	}
	if id == Last {
		// Ids are made to the second: two runs started in one second are
		// told apart by their start time.
		newest, at := "", time.Time{}
		for _, n := range names {
			r, err := openDir(RunDir(root, n), n)
			if err != nil || r.Meta.Parent != "" {
				continue
			}
			if t := r.Meta.StartedAt; newest == "" || t.After(at) || t.Equal(at) && n > newest {
				newest, at = n, t
			}
		}
		if newest == "" {
			return "", fmt.Errorf("%w: no run yet, so no %q (in %s)", ErrNotFound, id, filepath.Join(root, runsDirName))
		}
		return newest, nil
	}
	var found []string
	for _, n := range names {
		if n == id {
			return n, nil
		}
		if strings.HasPrefix(n, id) || strings.HasSuffix(n, id) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: %q (in %s)", ErrNotFound, id, filepath.Join(root, runsDirName))
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	more := ""
	if len(found) > 10 {
		more = fmt.Sprintf(" and %d more", len(found)-10)
		found = found[:10]
	}
	return "", fmt.Errorf("%w: %q matches %s%s", ErrAmbiguous, id, strings.Join(found, ", "), more)
}

// runNames lists the run directories under root, in no order; none when
// root has no runs directory.
func runNames(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, runsDirName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() && checkID(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Lock takes the run's lock for this handle: it is then the run's only
// writer, and Live reports it running, until unlock (or Close) is called or
// the process dies. ErrLive, naming the holder's pid, when another process
// (or another handle) holds it. Calling Lock on a handle that holds the lock
// returns it again.
//
// Before it returns, Lock cuts a torn last line from events.jsonl (see
// Events, which reports the repair), so that appending continues cleanly;
// it fails with ErrCorrupt when the log is damaged elsewhere.
func (r *Run) Lock() (unlock func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lock == nil {
		if err := r.acquire(); err != nil {
			return nil, err
		}
	}
	return func() { r.Close() }, nil
}

// acquire takes the lock and opens the events file; r.mu is held.
func (r *Run) acquire() error {
	path := filepath.Join(r.Dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := flockWait(f, lockEx, lockRetry); err != nil {
		f.Close()
		if errors.Is(err, errLockTimeout) {
			return fmt.Errorf("%w: %s%s", ErrLive, r.ID, holder(path))
		}
		return err
	}
	// Who holds it, for the message of a process that is refused and for
	// a stop request (RequestStop).
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holderText()), 0)
	}
	ev, err := os.OpenFile(filepath.Join(r.Dir, eventsFile), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		f.Close()
		return err
	}
	good, size, err := tailCheck(ev)
	if err == nil && good < size {
		err = truncateDurably(ev, good)
		if err == nil {
			r.repair = &Repair{Path: ev.Name(), Offset: good, Dropped: size - good}
		}
	}
	if err != nil {
		ev.Close()
		f.Close()
		return err
	}
	r.lock, r.events, r.size, r.failed = f, ev, good, nil
	return nil
}

// holder is " (pid N)" from the lock file at path, or "".
func holder(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if pid, ok := strings.CutPrefix(line, "pid "); ok {
		if _, err := strconv.Atoi(pid); err == nil {
			return " (pid " + pid + ")"
		}
	}
	return ""
}

// Close releases the lock and the files the handle holds; the run can no
// longer be written through it until Lock. Closing twice is harmless.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if r.events != nil {
		errs = append(errs, r.events.Close())
		r.events = nil
	}
	if r.lock != nil {
		errs = append(errs, r.lock.Close()) // closing the file drops the flock
		r.lock = nil
	}
	return errors.Join(errs...)
}

// Live tells whether a process is running the run: whether its lock is held,
// by this handle or by anyone (a try, that never blocks). A process killed
// even with SIGKILL loses the lock, so a dead run is never reported live.
func (r *Run) Live() bool {
	r.mu.Lock()
	held := r.lock != nil
	r.mu.Unlock()
	return held || probeLocked(filepath.Join(r.Dir, lockFile))
}

// Append adds ev to events.jsonl as one line, with a single write, and
// fsyncs it: once Append returns nil the event is durable, and the
// iteration it records counts. When the write fails the log is cut back to
// its previous end; when that or the fsync fails, the handle refuses every
// later write (the state of the file is unknown), and a new Lock is needed.
// The handle must hold the lock (ErrNotLocked).
func (r *Run) Append(ev Event) error {
	if ev.Type == "" {
		return errors.New("append: event without a type")
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Time = ev.Time.UTC()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil { // one line: Encode compacts Data, and ends with '\n'
		return fmt.Errorf("append %s event: %w", ev.Type, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writable(); err != nil {
		return err
	}
	if _, err := r.events.Write(buf.Bytes()); err != nil {
		if terr := r.events.Truncate(r.size); terr != nil {
			r.failed = fmt.Errorf("append to %s failed (%v) and its end could not be restored: %w", r.events.Name(), err, terr)
		}
		return fmt.Errorf("append to %s: %w", r.events.Name(), err)
	}
	if err := r.events.Sync(); err != nil {
		r.failed = fmt.Errorf("fsync %s: %w", r.events.Name(), err)
		return r.failed
	}
	r.size += int64(buf.Len())
	return nil
}

// writable is nil when the handle may write; r.mu is held.
func (r *Run) writable() error {
	if r.lock == nil {
		return fmt.Errorf("%w: %s (call Lock first)", ErrNotLocked, r.ID)
	}
	return r.failed
}

// Events reads every event of the run, in order.
//
// The last line may be torn: cut short, or not valid JSON, by a process
// killed in the middle of Append. Such a line is not an event. When no
// process holds the run's lock, or this handle does, it is cut from the file
// (durably) and the returned *Repair says so (it also reports a repair made
// by Lock, once); when another process holds the lock, the line is a write
// in progress and is left alone. A line that is not valid JSON anywhere
// else is damage no crash explains: ErrCorrupt, naming the line.
func (r *Run) Events() ([]Event, *Repair, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	path := filepath.Join(r.Dir, eventsFile)
	evs, torn, err := readEvents(path)
	if err != nil || !torn {
		rep := r.repair
		r.repair = nil
		return evs, rep, err
	}
	if r.lock != nil {
		// Ours: Lock left no torn line and Append leaves none, unless a
		// failed write could not be undone.
		if r.failed != nil {
			return evs, nil, r.failed
		}
		return evs, nil, corrupt(path, 0, "torn last line while this handle holds the lock")
	}
	// Not ours: repair only if nobody holds the lock. The writer may have
	// completed its line and left meanwhile, so the repair checks again
	// under the lock, and the events are read again after it.
	rep, err := repairUnlocked(r.Dir)
	if err != nil || rep == nil {
		return evs, nil, err // live: a write in progress, not an event yet
	}
	// A torn line now is a new writer's write in progress.
	evs, _, err = readEvents(path)
	return evs, rep, err
}

// repairUnlocked cuts a torn last line from the events of the run in dir if
// no process holds its lock; nil when it did nothing.
func repairUnlocked(dir string) (*Repair, error) {
	lf, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	ok, err := flockTry(lf, lockEx)
	if err != nil || !ok {
		return nil, err
	}
	ev, err := os.OpenFile(filepath.Join(dir, eventsFile), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	good, size, err := tailCheck(ev)
	if err != nil || good == size {
		return nil, err
	}
	if err := truncateDurably(ev, good); err != nil {
		return nil, err
	}
	return &Repair{Path: ev.Name(), Offset: good, Dropped: size - good}, nil
}

// readEvents decodes the events in path; torn tells whether bytes follow
// the last event (a torn last line).
func readEvents(path string) (evs []Event, torn bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		line    int
		bad     error // the last complete line did not decode
		badLine int
	)
	for {
		b, rerr := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			if bad != nil {
				return nil, false, corrupt(path, badLine, "%v", bad)
			}
			if b[len(b)-1] != '\n' {
				return evs, true, nil // cut short
			}
			var ev Event
			if err := json.Unmarshal(b, &ev); err != nil {
				bad, badLine = err, line
			} else {
				evs = append(evs, ev)
			}
		}
		if rerr == io.EOF {
			return evs, bad != nil, nil
		}
		if rerr != nil {
			return nil, false, rerr
		}
	}
}

// lineAt is the 1-based line of f that starts at offset; 0 when f cannot
// be read.
func lineAt(f *os.File, offset int64) int {
	n := 1
	buf := make([]byte, 64<<10)
	for pos := int64(0); pos < offset; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), offset-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil && pos < offset {
			return 0
		}
	}
	return n
}

// tailCheck finds a torn last line in the events file f: it returns the
// length to keep (good) and the file's size. The line before a torn one must
// decode, or the damage is not a torn write: ErrCorrupt.
func tailCheck(f *os.File) (good, size int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = fi.Size()
	if size == 0 {
		return 0, 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, 0, err
	}
	complete := last[0] == '\n'
	end := size
	if complete {
		end = size - 1
	}
	start, err := lineStart(f, end)
	if err != nil {
		return 0, 0, err
	}
	if complete {
		if ok, err := decodes(f, start, size); err != nil || ok {
			return size, size, err
		}
	}
	// [start, size) is torn; the line before it must be sound.
	if start > 0 {
		prev, err := lineStart(f, start-1)
		if err != nil {
			return 0, 0, err
		}
		if ok, err := decodes(f, prev, start); err != nil {
			return 0, 0, err
		} else if !ok {
			return 0, 0, corrupt(f.Name(), lineAt(f, prev), "not a valid event, and not the last line")
		}
	}
	return start, size, nil
}

// lineStart is the offset just after the last '\n' before end, or 0.
func lineStart(f *os.File, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// decodes tells whether f[from:to) is an event.
func decodes(f *os.File, from, to int64) (bool, error) {
	b := make([]byte, to-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return false, err
	}
	var ev Event
	return json.Unmarshal(b, &ev) == nil, nil
}

// truncateDurably cuts f to size and fsyncs it.
func truncateDurably(f *os.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// WriteCheckpoint replaces checkpoint.json with v as JSON, atomically: a
// temporary file in the run directory is written and fsync'd, renamed over
// checkpoint.json, and the directory fsync'd. A reader, or a process after
// a crash, sees the old checkpoint or the new one, whole. v should embed
// Progress (see there). The handle must hold the lock (ErrNotLocked).
func (r *Run) WriteCheckpoint(v any) error { return r.writeFiles(checkpointFile, v, "", "") }

// WriteJournaledCheckpoint replaces checkpoint.json with v as
// WriteCheckpoint does, atomically (a temporary file renamed over it: a
// reader, or a process killed at any point, sees the old checkpoint or the
// new one, whole), without waiting for the disk: for a checkpoint that
// says nothing the run's last event, which Append made durable, does not
// (Progress.Journaled). After a crash of the machine, checkpoint.json may
// be an older one, as after a kill between that Append and this write, or
// empty, on a file system that does not order a rename after the file's
// data (ReadCheckpoint then finds none): the journal has the run, and
// resume goes on from it. The handle must hold the lock (ErrNotLocked).
func (r *Run) WriteJournaledCheckpoint(v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", checkpointFile, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writable(); err != nil {
		return err
	}
	return replaceFile(filepath.Join(r.Dir, checkpointFile), append(data, '\n'))
}

// replaceFile replaces path with data through a temporary file beside it
// (path + ".tmp": the lock holder is the only writer) renamed over it, with
// no fsync. On error the temporary file is removed and path is as it was.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// writeFiles writes v as indented JSON to name, then text to textName when
// that is set, each atomically, holding the lock.
func (r *Run) writeFiles(name string, v any, textName, text string) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writable(); err != nil {
		return err
	}
	if err := writeAtomic(r.Dir, name, append(data, '\n')); err != nil || textName == "" {
		return err
	}
	return writeAtomic(r.Dir, textName, []byte(text))
}

// ReadCheckpoint decodes checkpoint.json into v; an error wrapping
// fs.ErrNotExist when the run has none yet (it died before its first
// iteration was checkpointed), or an empty one, which only a crash of the
// machine leaves (WriteJournaledCheckpoint).
func (r *Run) ReadCheckpoint(v any) error {
	path := filepath.Join(r.Dir, checkpointFile)
	data, err := os.ReadFile(path)
	if err == nil && len(data) == 0 {
		err = fmt.Errorf("%s is empty: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return fmt.Errorf("run %s: checkpoint: %w", r.ID, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return corrupt(path, 0, "%v", err)
	}
	return nil
}

// writeAtomic replaces dir/name with data (durable.WriteFile). The lock
// holder is the only writer.
func writeAtomic(dir, name string, data []byte) error {
	return durable.WriteFile(filepath.Join(dir, name), data)
}

// WriteReport writes a stopped task's final report, atomically: its result
// as JSON (report.json) and the same as Markdown (report.md). The handle must
// hold the lock (ErrNotLocked).
func (r *Run) WriteReport(result any, markdown string) error {
	return r.writeFiles(reportJSONFile, result, reportMDFile, markdown)
}

// ReadReport decodes the report.json of a task into v; found is false when
// the run has none (it has not stopped, or it is not a task).
func (r *Run) ReadReport(v any) (found bool, err error) {
	path := r.ReportPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("run %s: %s: %w", r.ID, path, err)
	}
	return true, nil
}

// ReportPath is the report.json of a task.
func (r *Run) ReportPath() string { return filepath.Join(r.Dir, reportJSONFile) }

// MarkdownReportPath is the report.md of a task (a pull request's body).
func (r *Run) MarkdownReportPath() string { return filepath.Join(r.Dir, reportMDFile) }

// ProgressPath is the file where an agent with a handoff keeps its progress
// notes (the agent writes it, not jlgcli).
func (r *Run) ProgressPath() string { return filepath.Join(r.Dir, progressFile) }

// EventsPath is the run's journal, events.jsonl: one event a line, each
// written whole by one write (a line without its newline is a write in
// progress, or torn).
func (r *Run) EventsPath() string { return filepath.Join(r.Dir, eventsFile) }

// OutputDir is the directory of the iterations' output logs (OutputPath).
func (r *Run) OutputDir() string { return filepath.Join(r.Dir, outputDirName) }

// OutputPath is the file that holds the raw output of an iteration.
func (r *Run) OutputPath(iteration int) string {
	return filepath.Join(r.Dir, outputDirName, strconv.Itoa(iteration)+".log")
}

// Output creates (or, for an iteration done again after a crash, replaces)
// the log of an iteration's raw agent output. The writer keeps the first
// OutputLimit bytes and counts the rest, which Close notes at the end of the
// file; it never fails a write, so that logging cannot break the agent's
// pipe: a write error is kept and returned by Close. Each write goes to
// the operating system at once (a kill of jlgcli loses none of it); the
// log is not fsync'd: the iteration's event, which Append makes durable,
// holds what the agent replied. The handle must hold the lock
// (ErrNotLocked).
func (r *Run) Output(iteration int) (io.WriteCloser, error) {
	r.mu.Lock()
	err := r.writable()
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, outputDirName), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(r.OutputPath(iteration), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &outputLog{f: f, limit: outputLimit}, nil
}

// outputLog is the bounded writer of Output.
type outputLog struct {
	mu      sync.Mutex
	f       *os.File
	limit   int64
	written int64
	dropped int64
	err     error
}

func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	keep := min(int64(len(p)), max(o.limit-o.written, 0))
	if keep > 0 && o.err == nil {
		n, err := o.f.Write(p[:keep])
		o.written += int64(n)
		o.err = err
	}
	o.dropped += int64(len(p)) - keep
	return len(p), nil
}

func (o *outputLog) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return o.err
	}
	if o.dropped > 0 && o.err == nil {
		_, o.err = fmt.Fprintf(o.f, "\n[jlgcli: output truncated: the first %d bytes were kept, %d more were dropped]\n", o.written, o.dropped)
	}
	if err := o.f.Close(); o.err == nil {
		o.err = err
	}
	o.f = nil
	return o.err
}
