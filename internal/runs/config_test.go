package runs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/trust"
)

// The hooks of the project file found are honoured once the user trusted
// the file as it is, in their configuration directory, and no longer once
// it changed; a damaged record of trusted files stops the commands it
// decides for, naming it, and no other.
func TestLoadConfigTrustsTheProjectFile(t *testing.T) {
	hooked := "[[hooks]]\non = [\"*\"]\ncommand = [\"true\"]\n"
	getenv, dir, _ := world(t, "", hooked)
	file := filepath.Join(dir, config.ProjectFile)
	load := func() Config {
		t.Helper()
		c, err := LoadConfig(getenv, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := load(); len(c.Hooks) != 0 || len(c.Ignored) != 1 || c.Ignored[0].File != file {
		t.Fatalf("untrusted: hooks %v, ignored %v", c.Hooks, c.Ignored)
	}
	store := trust.Store{Path: config.TrustFile(getenv)}
	if _, err := store.Add(file, trust.Sum([]byte(hooked)), time.Now()); err != nil {
		t.Fatal(err)
	}
	if c := load(); len(c.Hooks) != 1 || len(c.Ignored) != 0 {
		t.Fatalf("trusted: hooks %v, ignored %v", c.Hooks, c.Ignored)
	}
	if err := os.WriteFile(file, []byte(hooked+"[[hooks]]\non = [\"*\"]\ncommand = [\"false\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := load(); len(c.Hooks) != 0 || len(c.Ignored) != 2 {
		t.Fatalf("changed after the trust: hooks %v, ignored %v", c.Hooks, c.Ignored)
	}

	if err := os.WriteFile(store.Path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(getenv, dir, nil)
	var te *trust.Error
	if !errors.As(err, &te) || te.File != store.Path {
		t.Errorf("a damaged record: %v, want a trust.Error naming %s", err, store.Path)
	}
	if err := os.WriteFile(file, []byte("backend = \"codex\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := load(); c.Backend != "codex" {
		t.Errorf("a project file that needs no trust: backend %q", c.Backend)
	}
}
