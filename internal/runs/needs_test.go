package runs

import (
	"testing"
)

func TestNeedsYou(t *testing.T) {
	for word, want := range map[string]bool{"running": false, "done": false, "interrupted": false, "pending": false,
		"max-iterations": true, "error": true, "blocked": true, "skipped": true, "killed": true, "waiting": true, "conflict": true} {
		if got := NeedsYou(word, "task"); got != want {
			t.Errorf("NeedsYou(%q) = %v, want %v", word, got, want)
		}
	}
	if NeedsYou("incomplete", "batch") || !NeedsYou("incomplete", "task") {
		t.Error("an incomplete batch shows its tasks; an incomplete task needs you")
	}
}

func TestTaskNeedsYou(t *testing.T) {
	for status, want := range map[string]bool{"done": false, "running": false, "pending": false, "skipped": true,
		"failed": true, "blocked": true, "conflict": true} {
		if got := TaskNeedsYou(status); got != want {
			t.Errorf("TaskNeedsYou(%q) = %v, want %v", status, got, want)
		}
	}
}
