package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func openIndex(t *testing.T, root string) *Index {
	t.Helper()
	x, err := OpenIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func ids(rows []RunRow) []string {
	var s []string
	for _, r := range rows {
		s = append(s, r.ID)
	}
	return s
}

// makeRun creates a run on disk with a checkpoint, and closes it.
func makeRun(t *testing.T, root, id string, started time.Time, p Progress) {
	t.Helper()
	r, err := Create(root, id, Meta{Command: "loop", Backend: "codex", StartedAt: started})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.WriteCheckpoint(p); err != nil {
		t.Fatal(err)
	}
}

func TestIndexUpsertListGet(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	x := openIndex(t, root)
	for i, id := range []string{"b", "a", "c"} {
		makeRun(t, root, id, t0.Add(time.Duration(i)*time.Minute), Progress{})
	}
	rows := []RunRow{
		{ID: "b", Command: "loop", Status: "done", Backend: "claude", Iterations: 2, CostUSD: 0.25, CostKnown: true, DurationMs: 1500, StartedAt: t0, UpdatedAt: t0.Add(time.Hour)},
		{ID: "a", Command: "run", Status: "max-iterations", Backend: "codex", Iterations: 10, StartedAt: t0.Add(time.Minute), UpdatedAt: t0.Add(time.Hour)},
		{ID: "c", Command: "loop", Status: Running, Backend: "claude", Iterations: 1, StartedAt: t0.Add(2 * time.Minute), UpdatedAt: t0.Add(time.Hour)},
	}
	for _, row := range rows {
		if err := x.Upsert(row); err != nil {
			t.Fatal(err)
		}
	}
	got, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, ids(got)); diff != "" {
		t.Errorf("List is not newest first (-want +got):\n%s", diff)
	}
	want := rows[0]
	want.Dir = filepath.Join(root, "runs", "b")
	if diff := cmp.Diff(want, got[2]); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{Status: "done"}, []string{"b"}},
		{Filter{Command: "loop"}, []string{"c", "b"}},
		{Filter{Backend: "claude", Limit: 1}, []string{"c"}},
		{Filter{Status: "timeout"}, nil},
	} {
		got, err := x.List(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
			t.Errorf("List(%+v) (-want +got):\n%s", tc.f, diff)
		}
	}

	// An older write cannot move a run back.
	stale := rows[0]
	stale.Status, stale.UpdatedAt = Running, t0
	if err := x.Upsert(stale); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Get("b"); err != nil || got.Status != "done" {
		t.Errorf("after a stale upsert: %+v, %v", got, err)
	}
	newer := rows[0]
	newer.Iterations, newer.UpdatedAt = 3, t0.Add(2*time.Hour)
	if err := x.Upsert(newer); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Get("b"); err != nil || got.Iterations != 3 {
		t.Errorf("after a newer upsert: %+v, %v", got, err)
	}
	if _, err := x.Get("zzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing run: %v", err)
	}
	if err := x.Upsert(RunRow{ID: "../x"}); err == nil {
		t.Error("Upsert of a bad id accepted")
	}

	// The JSON of `jlgcli runs --json`.
	data, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	for _, k := range []string{"id", "status", "command", "backend", "iterations", "costUsd", "startedAt", "live"} {
		if _, ok := m[k]; !ok {
			t.Errorf("row JSON has no %q: %s", k, data)
		}
	}
}

func TestIndexFollowsTheRunDirectories(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	x := openIndex(t, root)
	// Runs on disk that nobody indexed.
	makeRun(t, root, "r1", t0, Progress{Status: "done", Iterations: 4, CostUSD: 0.5, CostKnown: true, DurationMs: 900, Heartbeat: t0.Add(time.Minute)})
	makeRun(t, root, "r2", t0.Add(time.Minute), Progress{Status: Running, Iterations: 1})
	live, err := Create(root, "r3", Meta{Command: "task", Backend: "claude", StartedAt: t0.Add(2 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// Not a run: no meta.json.
	if err := os.MkdirAll(filepath.Join(root, "runs", "r4"), 0o755); err != nil {
		t.Fatal(err)
	}

	rows, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []RunRow{
		{ID: "r3", Command: "task", Status: Running, Backend: "claude", StartedAt: t0.Add(2 * time.Minute), Live: true},
		{ID: "r2", Command: "loop", Status: Running, Backend: "codex", Iterations: 1, StartedAt: t0.Add(time.Minute)},
		{ID: "r1", Command: "loop", Status: "done", Backend: "codex", Iterations: 4, CostUSD: 0.5, CostKnown: true, DurationMs: 900,
			StartedAt: t0, UpdatedAt: t0.Add(time.Minute)},
	}
	opts := []cmp.Option{cmpopts.IgnoreFields(RunRow{}, "Dir")}
	rows[0].UpdatedAt, rows[1].UpdatedAt = time.Time{}, time.Time{} // file times
	if diff := cmp.Diff(want, rows, opts...); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	live.Close()
	// A process another test forks at that instant holds a copy of the lock's
	// descriptor until it execs (close-on-exec): the lock is dropped then,
	// not necessarily at Close. Wait for it, within a bound that only stops
	// a hang.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rows, _ := x.List(Filter{})
		if !rows[0].Live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed run is still live")
		}
	}
	// A run removed from disk leaves the index.
	if err := os.RemoveAll(filepath.Join(root, "runs", "r2")); err != nil {
		t.Fatal(err)
	}
	rows, err = x.List(Filter{})
	if err != nil || !slices.Equal(ids(rows), []string{"r3", "r1"}) {
		t.Errorf("after removing r2: %v, %v", ids(rows), err)
	}
	var n int
	if err := x.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d rows in the table, %v", n, err)
	}
	// Get reads a run that is on disk only.
	makeRun(t, root, "r5", t0, Progress{Status: "timeout"})
	if row, err := x.Get("r5"); err != nil || row.Status != "timeout" {
		t.Errorf("Get of a run on disk only: %+v, %v", row, err)
	}
	if err := os.RemoveAll(filepath.Join(root, "runs", "r5")); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Get("r5"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a removed run: %v", err)
	}
}

// The engine's checkpoint keeps its counts in "state".
func TestRowOfTheEnginesCheckpoint(t *testing.T) {
	t.Parallel()
	_, r := newRun(t, "r1")
	cp := json.RawMessage(`{"runId":"r1","state":{"iterations":3,"elapsedMs":4200,"prompt":"p"},"status":"done","heartbeat":"2026-11-22T05:00:00Z","costUsd":0.75}`)
	if err := r.WriteCheckpoint(cp); err != nil {
		t.Fatal(err)
	}
	row, err := r.Row()
	if err != nil {
		t.Fatal(err)
	}
	if row.Iterations != 3 || row.DurationMs != 4200 || row.Status != "done" || row.CostUSD != 0.75 || !row.CostKnown ||
		!row.UpdatedAt.Equal(t0.Add(45*time.Minute)) || !row.Live {
		t.Errorf("row = %+v", row)
	}
}

// The process running a run writes its row when its status changes: List
// and Get bring the row of a run that has not stopped up to the checkpoint
// it wrote since, and leave the row of a stopped run as it is.
func TestIndexFollowsTheCheckpointsOfRunsGoingOn(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	x := openIndex(t, root)
	going, err := Create(root, "r1", Meta{Command: "loop", Backend: "codex", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	defer going.Close()
	stopped, err := Create(root, "r2", Meta{Command: "loop", Backend: "codex", StartedAt: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	defer stopped.Close()
	write := func(r *Run, p Progress, index bool) {
		t.Helper()
		if err := r.WriteJournaledCheckpoint(p); err != nil {
			t.Fatal(err)
		}
		if !index {
			return
		}
		row, err := r.Row()
		if err == nil {
			err = x.Upsert(row)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	write(going, Progress{Status: Running, Iterations: 1, Heartbeat: t0.Add(time.Minute)}, true)
	write(going, Progress{Status: Running, Iterations: 4, CostUSD: 0.5, Heartbeat: t0.Add(4 * time.Minute)}, false)
	write(stopped, Progress{Status: "done", Iterations: 2, Heartbeat: t0.Add(2 * time.Minute)}, true)
	write(stopped, Progress{Status: "done", Iterations: 9, Heartbeat: t0.Add(9 * time.Minute)}, false)

	rows, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range rows {
		got[r.ID] = r.Iterations
	}
	if got["r1"] != 4 || got["r2"] != 2 {
		t.Errorf("iterations listed: %v, want r1 at its checkpoint's 4 and r2 at its row's 2", got)
	}
	write(going, Progress{Status: Running, Iterations: 5, Heartbeat: t0.Add(5 * time.Minute)}, false)
	if row, err := x.Get("r1"); err != nil || row.Iterations != 5 || !row.UpdatedAt.Equal(t0.Add(5*time.Minute)) || !row.Live {
		t.Errorf("Get of a run going on: %+v, %v", row, err)
	}
	if row, err := x.Get("r2"); err != nil || row.Iterations != 2 {
		t.Errorf("Get of a stopped run: %+v, %v", row, err)
	}
	// A checkpoint older than the row leaves it.
	write(going, Progress{Status: Running, Iterations: 3, Heartbeat: t0.Add(3 * time.Minute)}, false)
	if row, err := x.Get("r1"); err != nil || row.Iterations != 5 {
		t.Errorf("Get after an older checkpoint: %+v, %v", row, err)
	}
}

func TestIndexRebuild(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 5 {
		makeRun(t, root, fmt.Sprintf("r%d", i), t0.Add(time.Duration(i)*time.Minute), Progress{Status: "done", Iterations: i})
	}
	check := func(what string, x *Index) {
		t.Helper()
		var n int
		if err := x.db.QueryRow(`SELECT count(*) FROM runs WHERE status = 'done'`).Scan(&n); err != nil || n != 5 {
			t.Errorf("%s: %d rows, %v", what, n, err)
		}
	}
	// A missing index is built from the runs.
	x := openIndex(t, root)
	check("new index", x)
	if n, err := x.Rebuild(); n != 5 || err != nil {
		t.Errorf("Rebuild = %d, %v", n, err)
	}
	x.Close()

	// A damaged index is moved aside and rebuilt.
	for _, damage := range []func(path string) error{
		func(path string) error {
			return os.WriteFile(path, []byte("this is not a database, but it is long enough to look like one............................"), 0o644)
		},
		func(path string) error { // a page in the middle
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte(strings.Repeat("\xff", 4096)), 4096)
			return err
		},
	} {
		path := filepath.Join(root, "index.db")
		if err := damage(path); err != nil {
			t.Fatal(err)
		}
		x := openIndex(t, root)
		check("damaged index", x)
		x.Close()
		aside, _ := filepath.Glob(path + ".corrupt-*")
		if len(aside) == 0 {
			t.Error("the damaged index was not kept aside")
		}
		for _, a := range aside {
			os.Remove(a)
		}
	}
}

func TestIndexNewerSchema(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	x := openIndex(t, root)
	if _, err := x.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := OpenIndex(root); err == nil || !strings.Contains(err.Error(), "newer jlgcli") {
		t.Errorf("OpenIndex of a newer schema: %v", err)
	}
}

func TestIndexPathWithSpecialCharacters(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "a?b#c%20d e")
	x := openIndex(t, root)
	if err := x.Upsert(RunRow{ID: "r1", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "index.db")); err != nil {
		t.Error(err)
	}
	var mode string
	if err := x.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
}

// integrity fails the test unless the index passes SQLite's integrity check
// and holds n rows.
func integrity(t *testing.T, root string, n int) {
	t.Helper()
	db, err := openDB(filepath.Join(root, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q, %v", check, err)
	}
	var got int
	if err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&got); err != nil || got != n {
		t.Errorf("%d rows, want %d (%v)", got, n, err)
	}
}

func TestIndexConcurrentHandles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			x, err := OpenIndex(root) // at once, on a new root
			if err != nil {
				t.Error(err)
				return
			}
			defer x.Close()
			if err := upsertMany(x, fmt.Sprint("g", g), 100); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	integrity(t, root, 300)
}

func TestIndexConcurrentProcesses(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var cmds []*exec.Cmd
	for p := range 2 {
		cmd := child(t, "index", "STORE_ROOT="+root, fmt.Sprint("STORE_ID=p", p), "STORE_N=100")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	x := openIndex(t, root) // at once with the children, on a new root
	if err := upsertMany(x, "parent", 100); err != nil {
		t.Error(err)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
	integrity(t, root, 300)
	rows, err := x.List(Filter{Status: "done"})
	if err != nil || len(rows) != 300 {
		t.Errorf("List: %d rows, %v", len(rows), err)
	}
}

// A task's checkpoint, in the shape taskengine.Checkpoint writes it.
const taskCheckpoint = `{"runId":"t1","status":"done","iterations":4,"costUsd":0.42,"costKnown":true,"durationMs":61000,
	"heartbeat":"2026-11-22T05:00:00Z",
	"tiers":[{"name":"fast","attempts":3,"costUsd":0.02,"passed":0},{"name":"smart","attempts":1,"costUsd":0.4,"passed":1}],
	"state":{"attempts":4,"step":0,"tier":1,"inTier":1,"detections":0,"start":"abc","stepBase":"abc","elapsedMs":61000,"waitedMs":0,"ledger":{}}}`

var taskTiers = []TierStat{{Name: "fast", Attempts: 3, CostUSD: 0.02}, {Name: "smart", Attempts: 1, CostUSD: 0.4, Passed: 1}}

func makeTaskRun(t *testing.T, root, id string, started time.Time) {
	t.Helper()
	r, err := Create(root, id, Meta{Command: "task", Backend: "claude", StartedAt: started})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.WriteCheckpoint(json.RawMessage(taskCheckpoint)); err != nil {
		t.Fatal(err)
	}
}

func TestIndexTiers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	makeTaskRun(t, root, "t1", t0)
	makeRun(t, root, "l1", t0.Add(time.Minute), Progress{Status: "done", Iterations: 2})

	// Read from the checkpoint.
	r, err := Open(root, "t1")
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Row()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(taskTiers, row.Tiers); diff != "" || row.Iterations != 4 || row.DurationMs != 61000 || row.Status != "done" {
		t.Errorf("Row: %+v (tiers -want +got):\n%s", row, diff)
	}

	// Indexed from disk, and written by Upsert.
	x := openIndex(t, root)
	rows, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].ID != "t1" || rows[0].Tiers != nil {
		t.Fatalf("List: %+v", rows)
	}
	if diff := cmp.Diff(taskTiers, rows[1].Tiers); diff != "" {
		t.Errorf("tiers of the listed row (-want +got):\n%s", diff)
	}
	up := rows[1]
	up.Tiers = append(slices.Clone(up.Tiers), TierStat{Name: "best", Attempts: 2, CostUSD: 1.5, Passed: 1})
	up.UpdatedAt = up.UpdatedAt.Add(time.Hour)
	if err := x.Upsert(up); err != nil {
		t.Fatal(err)
	}
	got, err := x.Get("t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(up.Tiers, got.Tiers); diff != "" {
		t.Errorf("tiers after Upsert (-want +got):\n%s", diff)
	}
	// Back to none.
	up.Tiers, up.UpdatedAt = nil, up.UpdatedAt.Add(time.Hour)
	if err := x.Upsert(up); err != nil {
		t.Fatal(err)
	}
	if got, err := x.Get("t1"); err != nil || got.Tiers != nil {
		t.Errorf("tiers after an Upsert without: %+v, %v", got.Tiers, err)
	}

	// The JSON of `jlgcli runs --json`: "tiers" only when there are some.
	data, _ := json.Marshal(rows[1])
	if !strings.Contains(string(data), `"tiers":[{"name":"fast","attempts":3,"costUsd":0.02,"passed":0},`) {
		t.Errorf("row JSON: %s", data)
	}
	if data, _ := json.Marshal(rows[0]); strings.Contains(string(data), `"tiers"`) {
		t.Errorf("row JSON of a loop: %s", data)
	}
}

func TestIndexSince(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	x := openIndex(t, root)
	for i, id := range []string{"a", "b", "c"} {
		makeRun(t, root, id, t0.Add(time.Duration(i)*time.Hour), Progress{Status: "done"})
	}
	for _, tc := range []struct {
		since time.Time
		want  []string
	}{
		{time.Time{}, []string{"c", "b", "a"}},
		{t0, []string{"c", "b", "a"}},
		{t0.Add(time.Nanosecond), []string{"c", "b"}},
		{t0.Add(time.Hour).In(time.FixedZone("x", 5*3600)), []string{"c", "b"}}, // any zone
		{t0.Add(3 * time.Hour), nil},
	} {
		rows, err := x.List(Filter{Since: tc.since})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(rows)); diff != "" {
			t.Errorf("Since %v (-want +got):\n%s", tc.since, diff)
		}
	}
}

// An index of the first schema (without tiers) is migrated: its rows stay,
// and the task runs come back with their tiers.
func TestIndexMigratesTheFirstSchema(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	makeTaskRun(t, root, "t1", t0)
	makeRun(t, root, "l1", t0.Add(time.Minute), Progress{Status: "done", Iterations: 2})
	db, err := openDB(filepath.Join(root, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0],
		`PRAGMA user_version = 1`,
		`INSERT INTO runs (id, command, status, backend, iterations, started_at, updated_at) VALUES
			('l1', 'loop', 'done', 'codex', 7, '2026-11-22T04:16:00.000000000Z', '2026-11-22T04:16:00.000000000Z'),
			('t1', 'task', 'done', 'claude', 4, '2026-11-22T04:15:00.000000000Z', '2026-11-22T04:15:00.000000000Z')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openIndex(t, root)
	var v int
	if err := x.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != len(migrations) {
		t.Errorf("user_version = %d, %v; want %d", v, err, len(migrations))
	}
	rows, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("List: %+v", rows)
	}
	// The loop's row is read again from disk (2, not the 7 the old index
	// held): the third schema's migration drops every row, for its title.
	if rows[0].ID != "l1" || rows[0].Iterations != 2 || rows[0].Tiers != nil {
		t.Errorf("loop row: %+v", rows[0])
	}
	if diff := cmp.Diff(taskTiers, rows[1].Tiers); rows[1].ID != "t1" || diff != "" {
		t.Errorf("task row: %+v (tiers -want +got):\n%s", rows[1], diff)
	}
}

// An index of the second schema (without model, title or parent) is
// migrated: its rows are read again from the run directories, a task's
// backend and model being those of its last attempt.
func TestIndexMigratesTheSecondSchema(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	r, err := Create(root, "t1", Meta{Command: "task", Backend: "claude", StartedAt: t0, Parent: "b1",
		Prompt: "# Add the parser\n\nWith tests."})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCheckpoint(Progress{Status: "done", Iterations: 3, Backend: "codex", Model: "gpt-5"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	db, err := openDB(filepath.Join(root, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0], migrations[1],
		`PRAGMA user_version = 2`,
		`INSERT INTO runs (id, command, status, backend, iterations, started_at, updated_at) VALUES
			('t1', 'task', 'done', 'claude', 3, '2026-11-22T04:15:00.000000000Z', '2026-11-22T04:15:00.000000000Z')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openIndex(t, root)
	rows, err := x.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("List: %+v", rows)
	}
	if got := rows[0]; got.Backend != "codex" || got.Model != "gpt-5" || got.Title != "Add the parser" || got.Parent != "b1" {
		t.Errorf("row: %+v", got)
	}
	// The new columns are stored, not only read from disk.
	got, err := x.Get("t1")
	if err != nil || got.Title != "Add the parser" || got.Parent != "b1" || got.Model != "gpt-5" {
		t.Errorf("Get: %+v, %v", got, err)
	}
}

// An index of the fourth schema (without rerun_of) is migrated: its task
// rows are read again from the run directories, with the earlier run a
// task run follows and whether each tier's cost is known; other rows stay.
func TestIndexMigratesTheFourthSchema(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	r, err := Create(root, "t2", Meta{Command: "task", Backend: "claude", StartedAt: t0, Parent: "b1", RerunOf: "t1",
		Prompt: "# Add the parser"})
	if err != nil {
		t.Fatal(err)
	}
	tiers := []TierStat{{Name: "strong", Attempts: 1, CostUSD: 0.5, CostKnown: true, Passed: 1}, {Name: "free", Attempts: 1}}
	if err := r.WriteCheckpoint(Progress{Status: "done", Iterations: 2, CostUSD: 0.5, CostKnown: true, Tiers: tiers}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	db, err := openDB(filepath.Join(root, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(slices.Clone(migrations[:4]),
		`PRAGMA user_version = 4`,
		`INSERT INTO runs (id, command, status, backend, iterations, started_at, updated_at, tiers) VALUES
			('t2', 'task', 'done', 'claude', 2, '2026-11-22T04:15:00.000000000Z', '2099-11-22T04:15:00.000000000Z', '[]')`) {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	x := openIndex(t, root)
	got, err := x.Get("t2")
	if err != nil || got.RerunOf != "t1" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	if diff := cmp.Diff(tiers, got.Tiers); diff != "" {
		t.Errorf("tiers (-want +got):\n%s", diff)
	}
}
