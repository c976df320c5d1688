package taskengine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A note is told to the first attempt that starts after it arrived, once,
// and recorded on it; a note an earlier run's attempt was told is not told
// again.
func TestNotesToldOnce(t *testing.T) {
	w := newWorld("Fix it", []tierSpec{{name: "cheap", attempts: 3, replies: []reply{
		edit("a.go", "first try"), edit("a.go", "second try"), edit("a.go", "right answer")}}},
		answer("right answer", map[string]string{"first try": "wrong one", "second try": "wrong two"}))
	n1 := Note{ID: "101", From: "alice", Text: "Use the helper in util.go, please."}
	n2 := Note{ID: "102", From: "bob", Text: "Also keep the old name as an alias."}
	calls := 0
	w.opts.Inbox = func(context.Context) []Note {
		calls++
		switch calls {
		case 1:
			return nil
		case 2:
			return []Note{n1, {ID: "103", Text: "  "}} // an empty one is not told
		}
		return []Note{n1, n2}
	}
	res := w.run(context.Background())
	if res.Status != "done" || len(res.Attempts) != 3 {
		t.Fatalf("status %s after %d attempts, want done after 3: %s", res.Status, len(res.Attempts), res.Details)
	}
	got := [][]Note{res.Attempts[0].Notes, res.Attempts[1].Notes, res.Attempts[2].Notes}
	if diff := cmp.Diff([][]Note{nil, {n1}, {n2}}, got); diff != "" {
		t.Errorf("notes of each attempt (-want +got):\n%s", diff)
	}
	prompts := w.agents["cheap"].prompts()
	mustNotContain(t, "attempt 1's prompt", prompts[0], "## From the people")
	mustContain(t, "attempt 2's prompt", prompts[1], "## From the people who asked for this", "alice wrote:", n1.Text)
	mustNotContain(t, "attempt 2's prompt", prompts[1], n2.Text)
	mustContain(t, "attempt 3's prompt", prompts[2], "bob wrote:", n2.Text)
	mustNotContain(t, "attempt 3's prompt", prompts[2], n1.Text)

	// A later run of the task (a resume replays these attempts; a second
	// run has them as its prior) tells neither again.
	h := History{Prior: &Prior{Attempts: res.Attempts[:2]}, Attempts: res.Attempts[2:]}
	if u := h.Unread([]Note{n1, n2, {ID: "104", Text: "new"}}); len(u) != 1 || u[0].ID != "104" {
		t.Errorf("unread after the notes were told = %+v, want only 104", u)
	}
}

// Without an inbox the prompt has no section of notes.
func TestNoInboxNoSection(t *testing.T) {
	w := newWorld("Fix it", []tierSpec{{name: "cheap", attempts: 1, replies: []reply{edit("a.go", "right answer")}}},
		answer("right answer", nil))
	res := w.run(context.Background())
	if res.Status != "done" {
		t.Fatalf("status %s: %s", res.Status, res.Details)
	}
	mustNotContain(t, "the prompt", w.agents["cheap"].prompts()[0], "## From the people")
}
