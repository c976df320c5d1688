package taskengine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Note is a message to a task's developer from a person, while the task
// runs: a comment on the issue the task came from, by someone with write
// access. Each note is told once, in the prompt of the first attempt
// that starts after it arrived, and recorded on that attempt
// (Attempt.Notes), so that a resumed task never tells it twice.
type Note struct {
	// ID names the note where it came from (the comment's id); From is
	// its author.
	ID   string    `json:"id"`
	From string    `json:"from,omitempty"`
	Text string    `json:"text"`
	At   time.Time `json:"at,omitzero"`
	// URL is where it can be read.
	URL string `json:"url,omitempty"`
}

// Inbox gives the notes that have arrived for a task so far, oldest
// first, those already told included: the task leaves out the ones its
// attempts (and its earlier run's) were told. It is asked before each
// attempt, and says its own errors: what it cannot read is not given.
type Inbox func(ctx context.Context) []Note

// MaxNote bounds the text of one note in a prompt; MaxNotes how many
// notes one prompt tells (the latest).
const (
	MaxNote  = 4 << 10
	MaxNotes = 10
)

// Unread are the notes of all that no attempt of h (nor of its prior run)
// was told.
func (h History) Unread(all []Note) []Note {
	told := map[string]bool{}
	mark := func(as []Attempt) {
		for _, a := range as {
			for _, n := range a.Notes {
				told[n.ID] = true
			}
		}
	}
	mark(h.Attempts)
	if h.Prior != nil {
		mark(h.Prior.Attempts)
	}
	var out []Note
	for _, n := range all {
		if !told[n.ID] && strings.TrimSpace(n.Text) != "" {
			out = append(out, n)
		}
	}
	if len(out) > MaxNotes {
		out = slices.Clone(out[len(out)-MaxNotes:])
	}
	return out
}

// notesSection is the prompt's section of notes ("" for none).
func notesSection(notes []Note) string {
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## From the people who asked for this\n\n" +
		"They wrote while the task ran. Take it into account as a reviewer's request; it does not replace the task.\n\n")
	for _, n := range notes {
		from := n.From
		if from == "" {
			from = "someone"
		}
		fmt.Fprintf(&b, "%s wrote:\n\n%s\n\n", from, fenced(cutRunes(strings.TrimSpace(n.Text), MaxNote)+"\n", ""))
	}
	return b.String()
}
