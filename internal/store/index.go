package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/millis"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Files of the index, in the state root.
const (
	indexFile     = "index.db"
	indexLockFile = "index.lock" // held while the index is opened, migrated or recovered
)

// migrations[i] takes the schema from version i to i+1 (PRAGMA user_version).
// Append only; never edit a released one.
var migrations = []string{
	`CREATE TABLE runs (
		id          TEXT PRIMARY KEY,
		command     TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL DEFAULT '',
		backend     TEXT NOT NULL DEFAULT '',
		iterations  INTEGER NOT NULL DEFAULT 0,
		cost_usd    REAL NOT NULL DEFAULT 0,
		cost_known  INTEGER NOT NULL DEFAULT 0,
		duration_ms INTEGER NOT NULL DEFAULT 0,
		started_at  TEXT NOT NULL DEFAULT '',
		updated_at  TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_by_start ON runs (started_at, id);`,
	// The tiers of a task run, for stats. Task rows indexed before the
	// column existed are dropped: List and Get add them again from their
	// run directories, tiers included.
	`ALTER TABLE runs ADD COLUMN tiers TEXT NOT NULL DEFAULT '[]';
	DELETE FROM runs WHERE command = 'task';`,
	// The model of a task's last attempt, the title and the parent batch
	// of every run. Every row is dropped: List and Get add them again from
	// their run directories, with these and the backend of a task's last
	// attempt.
	`ALTER TABLE runs ADD COLUMN model TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN title TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN parent TEXT NOT NULL DEFAULT '';
	DELETE FROM runs;`,
	// The subscription windows a run's agents last reported. Every row is
	// dropped: List and Get add them again from their run directories.
	`ALTER TABLE runs ADD COLUMN windows TEXT NOT NULL DEFAULT '[]';
	DELETE FROM runs;`,
	// The earlier run of the task that a task run follows (a batch's
	// re-run), and whether each tier's cost is known. Task rows are
	// dropped: List and Get add them again from their run directories.
	`ALTER TABLE runs ADD COLUMN rerun_of TEXT NOT NULL DEFAULT '';
	DELETE FROM runs WHERE command = 'task';`,
}

// timeLayout stores times in UTC at a fixed width, so that they sort as
// text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Index is the SQLite index of the runs under a state root: what `jlgcli
// runs` lists. It is a cache of the run directories: rows missing from it
// are added from disk when listed, rows whose directory is gone are dropped,
// and Rebuild makes it again from scratch. Any number of processes may use
// it at once (WAL mode, a busy timeout, writes in immediate transactions).
// Its methods are safe for concurrent use by goroutines.
type Index struct {
	root string
	db   *sql.DB
}

// RunRow is one run in the index. Its JSON is one element of `jlgcli runs
// --json`.
type RunRow struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	Status  string `json:"status"`
	// Title is the first line of the run's prompt (for a batch, its
	// tasks); Parent the batch run that started a task run ("" for none).
	Title  string `json:"title"`
	Parent string `json:"parent,omitempty"`
	// RerunOf is, for a task run that a batch made because the change of
	// an earlier run of the task could not land, that run ("" for none):
	// stats counts the two as one task.
	RerunOf string `json:"rerunOf,omitempty"`
	// Backend is the run's backend: for a task, that of its last attempt
	// (its first tier's before one), with Model, the attempt's model.
	Backend    string          `json:"backend"`
	Model      string          `json:"model,omitempty"`
	Iterations int             `json:"iterations"`
	CostUSD    float64         `json:"costUsd"`
	CostKnown  bool            `json:"costKnown"`
	DurationMs millis.Duration `json:"durationMs"`
	StartedAt  time.Time       `json:"startedAt"`
	// Tiers are what each tier of a task run did (none for other runs).
	Tiers []TierStat `json:"tiers,omitempty"`
	// Windows are the subscription windows its agents last reported.
	Windows []Window `json:"windows,omitempty"`
	// UpdatedAt is when the row's state was written (Upsert sets the
	// current time when zero); an Upsert older than the row is ignored.
	UpdatedAt time.Time `json:"updatedAt"`
	// Dir is the run directory; Live whether a process is running the run
	// (its lock is held). Both are computed when read, not stored.
	Dir  string `json:"dir"`
	Live bool   `json:"live"`
}

// TierStat is a tier's line in a task's checkpoint (its top-level "tiers")
// and in its row of the index, for stats.
type TierStat struct {
	Name     string  `json:"name"`
	Attempts int     `json:"attempts"`
	CostUSD  float64 `json:"costUsd"`
	// CostKnown: an attempt of the tier reported a cost or had one
	// estimated (a row written before this field says so by a cost that
	// is not 0).
	CostKnown bool `json:"costKnown,omitempty"`
	Passed    int  `json:"passed"`
}

// Filter selects rows for List; zero fields select everything.
type Filter struct {
	Status  string    // only runs with this status
	Command string    // only runs of this command
	Backend string    // only runs on this backend
	Since   time.Time // only runs started at or after this time
	Limit   int       // at most this many rows (the newest); 0: all
}

// OpenIndex opens <root>/index.db, creating it (and root) when missing. A
// new index is filled from the run directories; an index that is not a
// database or fails its integrity check is moved aside (index.db.corrupt-*)
// and rebuilt. The schema is migrated to this version; an index written by
// a newer jlgcli is refused.
func OpenIndex(root string) (*Index, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("open the run index: %w", err)
	}
	// Opening, migrating and recovering are serialised between processes,
	// so that two never move the index aside or rebuild it at once.
	lf, err := os.OpenFile(filepath.Join(root, indexLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the run index: %w", err)
	}
	defer lf.Close()
	if err := flockWait(lf, lockEx, 30*time.Second); err != nil {
		return nil, fmt.Errorf("open the run index: lock %s: %w", lf.Name(), err)
	}

	path := filepath.Join(root, indexFile)
	_, err = os.Stat(path)
	fresh := errors.Is(err, fs.ErrNotExist)
	db, err := openDB(path)
	if err == nil {
		err = setup(db)
		if err != nil && isCorrupt(err) {
			db.Close()
			if err = moveAside(path); err == nil {
				fresh = true
				if db, err = openDB(path); err == nil {
					err = setup(db)
				}
			}
		}
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open the run index %s: %w", path, err)
	}
	x := &Index{root: root, db: db}
	if fresh {
		if _, err := x.Rebuild(); err != nil {
			db.Close()
			return nil, err
		}
	}
	return x, nil
}

// openDB opens the database at path with the settings every connection
// needs: a busy timeout (concurrent writers wait instead of failing), WAL
// (readers never block the writer), synchronous=NORMAL (enough for a cache
// in WAL mode) and BEGIN IMMEDIATE transactions (no deadlock upgrading a
// read transaction to a write one).
func openDB(path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path}
	dsn := u.String() + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate"
	return sql.Open("sqlite", dsn)
}

// setup checks the database and migrates its schema.
func setup(db *sql.DB) error {
	var check string
	if err := db.QueryRow(`PRAGMA quick_check(1)`).Scan(&check); err != nil {
		return err
	}
	if check != "ok" {
		return fmt.Errorf("%w: %s", errIndexCorrupt, check)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("the index was written by a newer jlgcli (schema %d, this one knows %d): upgrade jlgcli, or remove it to rebuild it", v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(migrations[i]); err != nil {
			return fmt.Errorf("migrate the index to schema %d: %w", i+1, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// errIndexCorrupt is a failed integrity check.
var errIndexCorrupt = errors.New("the index is corrupt")

// isCorrupt tells whether err says the database file is damaged or not a
// database.
func isCorrupt(err error) bool {
	if errors.Is(err, errIndexCorrupt) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// moveAside renames a damaged index and its WAL files out of the way.
func moveAside(path string) error {
	suffix := ".corrupt-" + time.Now().UTC().Format(idTimeLayout)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Rename(p, p+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Close closes the database.
func (x *Index) Close() error { return x.db.Close() }

const upsertSQL = `INSERT INTO runs (id, command, status, backend, iterations, cost_usd, cost_known, duration_ms, started_at, updated_at, tiers,
		model, title, parent, windows, rerun_of)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET
		command = excluded.command, status = excluded.status, backend = excluded.backend,
		iterations = excluded.iterations, cost_usd = excluded.cost_usd, cost_known = excluded.cost_known,
		duration_ms = excluded.duration_ms, started_at = excluded.started_at, updated_at = excluded.updated_at,
		tiers = excluded.tiers, model = excluded.model, title = excluded.title, parent = excluded.parent,
		windows = excluded.windows, rerun_of = excluded.rerun_of
	WHERE excluded.updated_at >= runs.updated_at`

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// Upsert adds the row of a run or updates it; an update older (UpdatedAt)
// than what the index holds is ignored, so writes that cross cannot move a
// run back. Dir and Live are not stored. Upsert a run after Create: a row
// whose directory is missing is dropped by List.
func (x *Index) Upsert(row RunRow) error {
	if err := checkID(row.ID); err != nil {
		return err
	}
	if err := upsert(x.db, upsertSQL, row); err != nil {
		return fmt.Errorf("index run %s: %w", row.ID, err)
	}
	return nil
}

func upsert(db execer, query string, row RunRow) error {
	if row.UpdatedAt.IsZero() {
		row.UpdatedAt = time.Now()
	}
	tiers := []byte("[]")
	if len(row.Tiers) > 0 {
		var err error
		if tiers, err = json.Marshal(row.Tiers); err != nil {
			return err
		}
	}
	windows := []byte("[]")
	if len(row.Windows) > 0 {
		var err error
		if windows, err = json.Marshal(row.Windows); err != nil {
			return err
		}
	}
	_, err := db.Exec(query, row.ID, row.Command, row.Status, row.Backend, row.Iterations, row.CostUSD,
		row.CostKnown, row.DurationMs, fmtTime(row.StartedAt), fmtTime(row.UpdatedAt), string(tiers), row.Model, row.Title, row.Parent,
		string(windows), row.RerunOf)
	return err
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

func parseTime(s string) time.Time {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

const selectSQL = `SELECT id, command, status, backend, iterations, cost_usd, cost_known, duration_ms, started_at, updated_at, tiers,
	model, title, parent, windows, rerun_of FROM runs`

// List returns the runs that f selects, newest first (by start time). It
// first brings the index in line with the run directories: runs on disk
// but not in the index (created while it was missing, or by a process that
// could not write it) are added, rows whose directory is gone are dropped,
// and the rows of runs that have not stopped are brought up to their
// checkpoints (their process writes a run's row when its status changes).
func (x *Index) List(f Filter) ([]RunRow, error) {
	if err := x.reconcile(); err != nil {
		return nil, err
	}
	q, args := selectSQL, []any{}
	var where []string
	for _, c := range []struct{ col, val string }{{"status", f.Status}, {"command", f.Command}, {"backend", f.Backend}} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !f.Since.IsZero() {
		// Times are stored at a fixed width in UTC: they compare as text.
		where = append(where, "started_at >= ?")
		args = append(args, fmtTime(f.Since))
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := x.db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	list := []RunRow{}
	for rows.Next() {
		row, err := x.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		list = append(list, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return list, nil
}

// Get returns the run id (a full id; Open resolves prefixes). A run on disk
// but not in the index is read from disk and added, one that has not
// stopped is brought up to its checkpoint (see List); ErrNotFound when
// there is neither.
func (x *Index) Get(id string) (RunRow, error) {
	if err := checkID(id); err != nil {
		return RunRow{}, err
	}
	dir := RunDir(x.root, id)
	row, err := x.scan(x.db.QueryRow(selectSQL+` WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return RunRow{}, fmt.Errorf("get run %s: %w", id, err)
	case hasMeta(dir) && row.Status == Running:
		if fresh, err := x.refresh(id, row.UpdatedAt); err != nil || !fresh {
			return row, err
		}
		return x.scan(x.db.QueryRow(selectSQL+` WHERE id = ?`, id))
	case hasMeta(dir):
		return row, nil
	default: // its directory is gone
		if _, err := x.db.Exec(`DELETE FROM runs WHERE id = ?`, id); err != nil {
			return RunRow{}, fmt.Errorf("get run %s: %w", id, err)
		}
	}
	if !hasMeta(dir) {
		return RunRow{}, fmt.Errorf("%w: %q (in %s)", ErrNotFound, id, filepath.Join(x.root, runsDirName))
	}
	r, err := openDir(dir, id)
	if err != nil {
		return RunRow{}, err
	}
	if row, err = r.Row(); err != nil {
		return RunRow{}, err
	}
	return row, x.Upsert(row)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func (x *Index) scan(s scanner) (RunRow, error) {
	var row RunRow
	var started, updated, tiers, windows string
	err := s.Scan(&row.ID, &row.Command, &row.Status, &row.Backend, &row.Iterations, &row.CostUSD,
		&row.CostKnown, &row.DurationMs, &started, &updated, &tiers, &row.Model, &row.Title, &row.Parent, &windows, &row.RerunOf)
	if err != nil {
		return RunRow{}, err
	}
	row.StartedAt, row.UpdatedAt = parseTime(started), parseTime(updated)
	// A column that cannot be read is a cache entry without tiers, not a
	// reason to fail the listing.
	if json.Unmarshal([]byte(tiers), &row.Tiers) != nil || len(row.Tiers) == 0 {
		row.Tiers = nil
	}
	if json.Unmarshal([]byte(windows), &row.Windows) != nil || len(row.Windows) == 0 {
		row.Windows = nil
	}
	row.Dir = RunDir(x.root, row.ID)
	row.Live = probeLocked(filepath.Join(row.Dir, lockFile))
	return row, nil
}

// hasMeta tells whether dir is a complete run directory.
func hasMeta(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, metaFile))
	return err == nil
}

// diskRuns lists the complete run directories under root.
func diskRuns(root string) (map[string]bool, error) {
	names, err := runNames(root)
	if err != nil {
		return nil, fmt.Errorf("list the run directories: %w", err)
	}
	onDisk := make(map[string]bool, len(names))
	for _, n := range names {
		if hasMeta(RunDir(root, n)) {
			onDisk[n] = true
		}
	}
	return onDisk, nil
}

// reconcile adds the runs on disk that the index lacks, drops the rows
// whose directory is gone, and brings the rows of the runs that have not
// stopped up to their checkpoints (refresh).
func (x *Index) reconcile() error {
	onDisk, err := diskRuns(x.root)
	if err != nil {
		return err
	}
	rows, err := x.db.Query(`SELECT id, status, updated_at FROM runs`)
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	indexed := map[string]bool{}
	going := map[string]time.Time{} // the rows of runs that have not stopped, with their time
	for rows.Next() {
		var id, status, updated string
		if err := rows.Scan(&id, &status, &updated); err != nil {
			rows.Close()
			return fmt.Errorf("list runs: %w", err)
		}
		indexed[id] = true
		if status == Running {
			going[id] = parseTime(updated)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	for id := range indexed {
		if !onDisk[id] && !hasMeta(RunDir(x.root, id)) { // check again: it may have been created meanwhile
			if _, err := x.db.Exec(`DELETE FROM runs WHERE id = ?`, id); err != nil {
				return fmt.Errorf("drop run %s from the index: %w", id, err)
			}
		}
	}
	for id := range onDisk {
		if indexed[id] {
			if at, ok := going[id]; ok {
				if _, err := x.refresh(id, at); err != nil {
					return err
				}
			}
			continue
		}
		r, err := openDir(RunDir(x.root, id), id)
		if err != nil {
			continue // unreadable: Open tells why; nothing to list
		}
		row, err := r.Row()
		if err != nil {
			continue
		}
		// Not newer than a row the engine may have written meanwhile.
		if err := x.Upsert(row); err != nil {
			return err
		}
	}
	return nil
}

// refresh updates the row of run id, which has not stopped and was written
// at at, from its checkpoint when the process running the run wrote that
// later (its heartbeat): that process writes the run's row when its status
// changes, not at each checkpoint. false when the checkpoint is no newer,
// or cannot be read: the row stays as it is.
func (x *Index) refresh(id string, at time.Time) (bool, error) {
	r, err := openDir(RunDir(x.root, id), id)
	if err != nil {
		return false, nil
	}
	row, beat, err := r.row()
	if err != nil || !beat.After(at) {
		return false, nil
	}
	return true, x.Upsert(row)
}

// Rebuild makes the index again from the run directories (meta.json and
// checkpoint.json of each) and returns how many runs it holds. Runs whose
// files cannot be read are left out (Open says why).
func (x *Index) Rebuild() (int, error) {
	onDisk, err := diskRuns(x.root)
	if err != nil {
		return 0, err
	}
	rows := make([]RunRow, 0, len(onDisk))
	for id := range onDisk {
		r, err := openDir(RunDir(x.root, id), id)
		if err != nil {
			continue
		}
		row, err := r.Row()
		if err != nil {
			continue
		}
		rows = append(rows, row)
	}
	err = func() error {
		tx, err := x.db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`DELETE FROM runs`); err != nil {
			return err
		}
		for _, row := range rows {
			if err := upsert(tx, upsertSQL, row); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		return 0, fmt.Errorf("rebuild the run index: %w", err)
	}
	return len(rows), nil
}

// Row is the index row of the run, from its meta.json and the Progress in
// its checkpoint.json (status Running, no iterations, when it has none yet).
// The process running the run upserts it when its status changes; List and
// Get bring it up to date in between. A checkpoint that keeps the counts in
// a nested "state" object (iterations, elapsedMs), as the engine's does, is
// understood too. The tiers are those of a task's checkpoint (its
// top-level "tiers").
func (r *Run) Row() (RunRow, error) {
	row, _, err := r.row()
	return row, err
}

// row is Row and the checkpoint's heartbeat (zero when it has none).
func (r *Run) row() (RunRow, time.Time, error) {
	var cp struct {
		Progress
		State struct {
			Iterations int             `json:"iterations"`
			ElapsedMs  millis.Duration `json:"elapsedMs"`
		} `json:"state"`
	}
	err := r.ReadCheckpoint(&cp)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return RunRow{}, time.Time{}, err
	}
	p := cp.Progress
	if p.Iterations == 0 {
		p.Iterations = cp.State.Iterations
	}
	if p.DurationMs == 0 {
		p.DurationMs = cp.State.ElapsedMs
	}
	row := RunRow{
		ID: r.ID, Command: r.Meta.Command, Status: p.Status, Backend: r.Meta.Backend,
		Iterations: p.Iterations, CostUSD: p.CostUSD, CostKnown: p.CostKnown || p.CostUSD != 0, DurationMs: p.DurationMs,
		Tiers: p.Tiers, StartedAt: r.Meta.StartedAt, UpdatedAt: p.Heartbeat, Dir: r.Dir, Live: r.Live(),
		Title: title(r.Meta.Prompt), Parent: r.Meta.Parent, RerunOf: r.Meta.RerunOf, Model: p.Model, Windows: p.Windows,
	}
	if p.Backend != "" {
		row.Backend = p.Backend
	}
	if row.Status == "" {
		row.Status = Running
	}
	if row.UpdatedAt.IsZero() {
		row.UpdatedAt = r.Meta.StartedAt
		if fi, err := os.Stat(filepath.Join(r.Dir, checkpointFile)); err == nil {
			row.UpdatedAt = fi.ModTime()
		}
	}
	return row, p.Heartbeat, nil
}

// title is the first line of a prompt that holds text, without a Markdown
// heading's #, cut to 200 bytes.
func title(prompt string) string {
	for line := range strings.Lines(prompt) {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line == "" {
			continue
		}
		if len(line) > 200 {
			line = strings.ToValidUTF8(line[:200], "") + "…"
		}
		return line
	}
	return ""
}
