package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// stopFile is the request, written by another process, that the process
// running a run stop it (RequestStop). It names the process it is meant
// for, as the lock file does ("pid N", "host H"), so that a request left
// behind (its process died before it saw it) never stops the next process
// that runs the run.
const stopFile = "stop"

// ErrNotLive: a stop was asked of a run that no process runs.
var ErrNotLive = errors.New("the run is not live")

// RequestStop asks the process that runs the run (holds its lock) to stop
// it: it writes the run's stop file naming that process, which watches for
// it (StopRequested). It does not wait. ErrNotLive when no process holds
// the lock.
func (r *Run) RequestStop() error {
	holder, err := r.holderLines()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(r.Dir, stopFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("ask run %s to stop: %w", r.ID, err)
	}
	_, err = f.WriteString(holder)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(r.Dir, stopFile))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("ask run %s to stop: %w", r.ID, err)
	}
	return nil
}

// holderLines are the "pid" and "host" lines of the lock file of a live
// run. The holder writes them just after it takes the lock: they are
// waited for an instant.
func (r *Run) holderLines() (string, error) {
	path := filepath.Join(r.Dir, lockFile)
	deadline := time.Now().Add(time.Second)
	for {
		if !r.Live() {
			return "", fmt.Errorf("%w: %s", ErrNotLive, r.ID)
		}
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if s := string(data); strings.HasPrefix(s, "pid ") && strings.HasSuffix(s, "\n") && strings.Contains(s, "\nhost ") {
			return s, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("ask run %s to stop: its lock file does not say which process holds it", r.ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// StopRequested tells whether a stop of the run was asked of this process
// (RequestStop while it held the run's lock). A request meant for another
// process (one that died before it saw it) is removed.
func (r *Run) StopRequested() bool {
	path := filepath.Join(r.Dir, stopFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if string(data) == holderText() {
		return true
	}
	_ = os.Remove(path)
	return false
}

// holderText is what a lock holder writes in the lock file: this process.
func holderText() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d\nhost %s\n", os.Getpid(), host)
}

// ClearStop removes the run's stop request, once the process it was meant
// for has stopped the run.
func (r *Run) ClearStop() {
	_ = os.Remove(filepath.Join(r.Dir, stopFile))
}
