// Package store keeps the state of runs on disk, so that a run can be listed,
// shown and resumed after its process is gone.
//
// The state root (see StateDir) holds one directory per run and an index:
//
//	<root>/runs/<id>/meta.json        what the run was started with (written once, atomically)
//	<root>/runs/<id>/events.jsonl     append-only event log: the source of truth
//	<root>/runs/<id>/checkpoint.json  the engine's latest state (replaced atomically)
//	<root>/runs/<id>/output/<n>.log   raw agent output of iteration n (bounded)
//	<root>/runs/<id>/lock             flock held by the process running the run
//	<root>/runs/<id>/stop             a request that the process running the run stop it (RequestStop)
//	<root>/index.db                   SQLite index of the runs (a cache, rebuilt from the runs)
//
// One process at a time writes a run: it holds the run's lock (Create, Lock),
// and every write method refuses to work without it. An event counts once
// Append has returned: the line was written with one write and fsync'd. A
// process killed at any moment leaves at worst a torn last line, which is
// detected and cut away before the next write (Lock) or when read (Events).
//
// What waits for the disk: each event (Append: the one fsync of a loop's
// iteration), meta.json, the reports, and the checkpoints that hold more
// than the journal (a heartbeat's time, a run's last status:
// WriteCheckpoint). The rest reaches the operating system at once, so that
// a killed process loses none of it, and is rebuilt from the journal after
// a crash of the machine: the checkpoint written after each event
// (WriteJournaledCheckpoint), the output logs (the events hold the replies),
// the index.
package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DirName is the name of the state directory at the root of a git
// repository.
const DirName = ".jlgcli"

// excludeLine is the pattern added to .git/info/exclude.
const excludeLine = DirName + "/"

// Errors of the package, to be tested with errors.Is. The errors returned
// wrap them with the run and path concerned.
var (
	// ErrNotFound: no run has that id or id prefix.
	ErrNotFound = errors.New("no such run")
	// ErrAmbiguous: an id prefix matches several runs; the message names them.
	ErrAmbiguous = errors.New("ambiguous run id")
	// ErrExists: Create was given the id of a run that exists.
	ErrExists = errors.New("run already exists")
	// ErrLive: another process holds the run's lock (it is running it).
	ErrLive = errors.New("the run is live in another process")
	// ErrNotLocked: a write on a Run whose lock this handle does not hold.
	ErrNotLocked = errors.New("the run is not locked by this handle")
	// ErrCorrupt: a run's files cannot be read back (not a torn last line,
	// which is repaired, but damage in the middle of the event log, or an
	// unreadable meta.json or checkpoint.json).
	ErrCorrupt = errors.New("corrupt run state")
	// ErrEmptyID: Open was given an empty run id.
	ErrEmptyID = errors.New("empty run id: name a run by its id or a unique prefix of it")
)

// CorruptError is damage in one of a run's files: it is ErrCorrupt
// (errors.Is), and names the file and, when known, the line, as
// "PATH:LINE: corrupt run state: WHAT".
type CorruptError struct {
	Path string
	// Line is the 1-based line of the damage; 0 when unknown.
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *CorruptError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return where + ": " + ErrCorrupt.Error() + ": " + e.Msg
}

// Is makes a CorruptError ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// corrupt is a CorruptError.
func corrupt(path string, line int, format string, a ...any) error {
	return &CorruptError{Path: path, Line: line, Msg: fmt.Sprintf(format, a...)}
}

// StateDir returns the state root for a command working in dir.
//
// Precedence: override (the --state-dir flag) when it is not empty, made
// absolute; else <repo>/.jlgcli when dir is inside a git repository, whose
// root is the nearest parent holding a .git directory or file (a worktree or
// a submodule); else $XDG_STATE_HOME/jlgcli, or ~/.local/state/jlgcli when
// XDG_STATE_HOME is unset or relative (as the XDG spec says).
//
// Inside a repository it also adds ".jlgcli/" to the repository's
// info/exclude (git's own, per-clone ignore file), once: the file is created
// when missing, the line is never duplicated, even by two processes at once.
// For a worktree the exclude file of the main repository is used (git reads
// info/exclude from the common directory); when a .git file cannot be
// resolved the exclude step is skipped without error. An error writing the
// exclude file is returned: the run would otherwise show up in `git status`.
//
// getenv reads the environment (nil: os.Getenv). StateDir creates no
// directory besides info/: Create and OpenIndex make what they need.
func StateDir(dir string, getenv func(string) string, override string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if override != "" {
		return filepath.Abs(override)
	}
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // git too works from the resolved directory
	}
	if root, ok := repoRoot(abs); ok {
		if err := excludeStateDir(root); err != nil {
			return "", err
		}
		return filepath.Join(root, DirName), nil
	}
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("cannot choose a state directory outside a git repository: neither XDG_STATE_HOME nor HOME is set (pass --state-dir)")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "jlgcli"), nil
}

// repoRoot is the nearest directory from dir up that holds a .git directory
// or file.
func repoRoot(dir string) (string, bool) {
	for {
		if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// gitCommonDir is the directory whose info/exclude git reads for the
// repository rooted at root: .git itself, or for a .git file ("gitdir: X",
// a worktree or a submodule) X, or the common directory X/commondir names.
func gitCommonDir(root string) (string, bool) {
	gitdir := filepath.Join(root, ".git")
	fi, err := os.Stat(gitdir)
	if err != nil {
		return "", false
	}
	if !fi.IsDir() {
		data, err := os.ReadFile(gitdir)
		if err != nil {
			return "", false
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", false
		}
		gitdir = resolve(root, strings.TrimSpace(target))
	}
	if data, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		gitdir = resolve(gitdir, strings.TrimSpace(string(data)))
	}
	if fi, err := os.Stat(gitdir); err != nil || !fi.IsDir() {
		return "", false
	}
	return gitdir, true
}

// resolve is p, relative to base unless absolute.
func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// excludeStateDir adds excludeLine to the repository's info/exclude unless a
// line already excludes the state directory. The file is locked while it is
// read and extended, so two processes never both add the line.
func excludeStateDir(root string) error {
	common, ok := gitCommonDir(root)
	if !ok {
		return nil
	}
	info := filepath.Join(common, "info")
	path := filepath.Join(info, "exclude")
	if data, err := os.ReadFile(path); err == nil && excludes(data) {
		return nil // the usual case: no write, no lock
	}
	if err := os.MkdirAll(info, 0o755); err != nil {
		return fmt.Errorf("keep %s out of git: %w", DirName, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("keep %s out of git: %w", DirName, err)
	}
	defer f.Close()
	if err := flockWait(f, lockEx, 10*time.Second); err != nil {
		return fmt.Errorf("keep %s out of git: lock %s: %w", DirName, path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("keep %s out of git: %w", DirName, err)
	}
	if excludes(data) {
		return nil
	}
	var add []byte
	if len(data) > 0 && data[len(data)-1] != '\n' {
		add = append(add, '\n')
	}
	add = append(add, excludeLine+"\n"...)
	if _, err := f.WriteAt(add, int64(len(data))); err != nil {
		return fmt.Errorf("keep %s out of git: %w", DirName, err)
	}
	return nil
}

// excludes tells whether an exclude file already has a line that ignores the
// state directory.
func excludes(data []byte) bool {
	for line := range bytes.Lines(data) {
		switch string(bytes.TrimSpace(line)) {
		case DirName, DirName + "/", "/" + DirName, "/" + DirName + "/":
			return true
		}
	}
	return false
}

// idTimeLayout is the time part of a run id.
const idTimeLayout = "20060102T150405Z"

// NewRunID returns a new run id: the UTC time to the second then 8 random
// hex digits, e.g. 20261122T041500Z-3fa91c07. Ids sort by start time (to the
// second); the random part keeps two runs started in the same second apart
// (and Create refuses an id that exists, so a collision is never silent).
func NewRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return now.UTC().Format(idTimeLayout) + "-" + hex.EncodeToString(b[:])
}

// checkID refuses ids that are not a plain directory name.
func checkID(id string) error {
	if id == "" {
		return errors.New("empty run id")
	}
	if len(id) > 128 || id[0] == '.' {
		return fmt.Errorf("invalid run id %q", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("invalid run id %q: only letters, digits, '-', '_' and '.' are allowed", id)
		}
	}
	return nil
}
