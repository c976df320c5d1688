package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile replaces a file whole and leaves no temporary file; Remove
// takes a file away and accepts one that is gone already.
func TestWriteFileAndRemove(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, data := range []string{"one\n", "two, longer\n", "3\n"} {
		if err := WriteFile(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	if err := Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("removed file still there: %v", err)
	}
	if err := Remove(p); err != nil {
		t.Errorf("removing a missing file: %v", err)
	}
}

// A write into a directory that does not exist fails and creates nothing.
func TestWriteFileFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "state.json")
	if err := WriteFile(p, []byte("x")); err == nil {
		t.Fatal("no error writing into a missing directory")
	}
}
