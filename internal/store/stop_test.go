package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A stop request reaches the process that holds the run's lock, is
// cleared once handled, is refused for a run nobody runs, and one left for
// another process (that died) is dropped, not obeyed.
func TestStopRequest(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "20261122T041500Z-aaaa2222")
	if r.StopRequested() {
		t.Fatal("a stop is requested before any request")
	}
	other, err := Open(root, r.ID) // another handle, as another process would open it
	if err != nil {
		t.Fatal(err)
	}
	if err := other.RequestStop(); err != nil {
		t.Fatal(err)
	}
	if !r.StopRequested() {
		t.Fatal("the request is not seen by the lock holder")
	}
	r.ClearStop()
	if r.StopRequested() {
		t.Fatal("the request is seen after ClearStop")
	}

	// A request meant for another process is dropped.
	path := filepath.Join(r.Dir, stopFile)
	if err := os.WriteFile(path, []byte("pid 1\nhost elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r.StopRequested() {
		t.Error("a request for another process is obeyed")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a request for another process is kept: %v", err)
	}

	r.Close()
	if err := other.RequestStop(); !errors.Is(err, ErrNotLive) {
		t.Errorf("RequestStop of a run that is not live: %v", err)
	}
}
