package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/git"
)

// Two calls under way at once in one repository (a batch's tasks): the one
// that begins after the other's agent changed the repository's config does
// not take that change for the state to keep, and once both ended, in any
// order, the config is as it was before either.
func TestControlWatchesShareTheirRecord(t *testing.T) {
	dir := gitRepo(t)
	config := filepath.Join(dir, ".git", "config")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := git.ControlPaths(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var s said
	a := newControlWatch(paths, dir, nil, Parts{Say: &s})
	b := newControlWatch(paths, dir, nil, Parts{Say: &s})
	if err := a.begin(); err != nil {
		t.Fatal(err)
	}
	// a's agent changes the config while b's call begins.
	if err := os.WriteFile(config, append(before, "[core]\n\tfsmonitor = /tmp/payload\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.begin(); err != nil {
		t.Fatal(err)
	}
	// a ends first and undoes its agent's change; b, ending after it,
	// must not put back what it found when it began.
	ca, err := a.end("agent")
	if err != nil || len(ca) != 1 || ca[0].Change != "modified" {
		t.Fatalf("a's end = %v, %v: want the change undone", ca, err)
	}
	if cb, err := b.end("agent"); err != nil || len(cb) != 0 {
		t.Errorf("b's end = %v, %v: the change was undone already", cb, err)
	}
	if after, _ := os.ReadFile(config); string(after) != string(before) {
		t.Errorf("config once both ended:\n%s", after)
	}
	if len(sharedRoots.m) != 0 {
		t.Errorf("records left: %d", len(sharedRoots.m))
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "warning: the agent changed git's control files and jlgcli undid it: modified .git/config") {
		t.Errorf("said:\n%s", strings.Join(s.lines, "\n"))
	}
}
