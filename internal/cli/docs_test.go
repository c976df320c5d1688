package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDocCommands: docs/commands.md is what the command tree gives now.
func TestDocCommands(t *testing.T) {
	got, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := CommandsPage(); string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		line := 0
		for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
			line++
		}
		at := func(l []string) string {
			if line < len(l) {
				return strconv.Quote(l[line])
			}
			return "(end of file)"
		}
		first := "; first difference at line " + strconv.Itoa(line+1) + ": the file has " + at(gl) + ", the command tree gives " + at(wl)
		t.Errorf("docs/commands.md is out of date: run `go run ./internal/cli/docgen` (or `make docs`) and commit it%s", first)
	}
}
