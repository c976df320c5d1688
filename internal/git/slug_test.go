package git

import (
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	for task, want := range map[string]string{
		"Add a greeting":                    "add-a-greeting",
		"  Fix   the BUG #42!! ":            "fix-the-bug-42",
		"Créer l'API « hello » façon Œuvre": "creer-l-api-hello-facon-oeuvre",
		"":                                  "task",
		"!!! ??? 日本語":                       "task",
		"Straße":                            "strasse",
		"implement the persistent retry loop with exponential backoff": "implement-the-persistent-retry-loop-with",
		strings.Repeat("a", 100):                 strings.Repeat("a", 40),
		"x-" + strings.Repeat("b", 60):           "x-" + strings.Repeat("b", 38),
		"refactor internal/engine: split step()": "refactor-internal-engine-split-step",
	} {
		got := Slug(task)
		if got != want {
			t.Errorf("Slug(%q) = %q, want %q", task, got, want)
		}
		if len(got) > MaxSlug || strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Errorf("Slug(%q) = %q is not a clean slug", task, got)
		}
	}
}

func TestBranchName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ id, task, want string }{
		{"20261122T041500Z-3fa91c07", "Add a greeting", "jlgcli/add-a-greeting-3fa91c07"},
		{"t1", "Add a greeting", "jlgcli/add-a-greeting-" + shortID("t1")},
		{"run-ABCD", "x", "jlgcli/x-abcd"},
	} {
		if got := BranchName(c.id, c.task); got != c.want {
			t.Errorf("BranchName(%q, %q) = %q, want %q", c.id, c.task, got, c.want)
		}
	}
	if s := shortID("t1"); len(s) != 8 || s == shortID("t2") {
		t.Errorf("shortID(t1) = %q", s)
	}
}
