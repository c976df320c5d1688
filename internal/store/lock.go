package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Lock kinds for flock.
const (
	lockEx = syscall.LOCK_EX
	lockSh = syscall.LOCK_SH
)

// flockTry takes a flock on f without waiting; false when another open file
// holds a conflicting lock. flock locks belong to the open file: a process
// killed with SIGKILL loses them with its files, and Go opens every file
// close-on-exec, so an agent started by the run never inherits one.
func flockTry(f *os.File, how int) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

// errLockTimeout is returned by flockWait when the lock stays taken.
var errLockTimeout = errors.New("still locked by another process")

// flockWait takes a flock on f, polling until timeout.
func flockWait(f *os.File, how int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		ok, err := flockTry(f, how)
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return errLockTimeout
		}
		time.Sleep(delay)
	}
}

// probeLocked tells whether some open file holds an exclusive flock on path.
// It takes a shared lock for an instant, so it never blocks a holder; a
// writer trying to lock during that instant retries (see lockRetry).
func probeLocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false // never locked: no lock file
	}
	defer f.Close()
	ok, err := flockTry(f, lockSh)
	return err == nil && !ok
}

// Claim takes the exclusive flock of the file at path (made, with its
// directory, when missing) for holder, and writes holder in it: release
// lets it go. When another open file holds it, release is nil and other is
// the holder it names. A killed holder loses its claim with its files.
func Claim(path, holder string) (release func(), other string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", err
	}
	ok, err := flockTry(f, lockEx)
	if err != nil || !ok {
		b, _ := os.ReadFile(path)
		f.Close()
		return nil, strings.TrimSpace(string(b)), err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return func() { f.Close() }, "", nil
}
