package intake

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// The labels jlgcli puts on the issues it works: Claimed while its task
// is this batch's (with jlgcli's login assigned where the forge allows),
// then one outcome.
const (
	LabelClaimed = "jlgcli:claimed"
	LabelDone    = "jlgcli:done"
	LabelFailed  = "jlgcli:failed"
	LabelBlocked = "jlgcli:blocked"
)

// OutcomeLabels are the labels of an outcome: a new outcome takes the
// others off.
var OutcomeLabels = []string{LabelDone, LabelFailed, LabelBlocked}

// markerRe is the first line of jlgcli's status comment on an issue: the
// run (a batch's id) that wrote it, and whether its claim holds (active)
// or was let go (ended: the task ended, or the claim was released). It is
// an HTML comment, unseen on the forge's page.
var markerRe = regexp.MustCompile(`^<!-- jlgcli:status run=([0-9A-Za-z_.-]+) (active|ended) -->`)

// Marker is the first line of the status comment of the batch run.
func Marker(run string, active bool) string {
	state := "ended"
	if active {
		state = "active"
	}
	return "<!-- jlgcli:status run=" + run + " " + state + " -->"
}

// RunOf is the run whose status comment body is ("" when it is not one)
// and whether its claim holds: only a comment jlgcli itself posted
// counts, which the caller checks by its author.
func RunOf(body string) (run string, active bool) {
	if m := markerRe.FindStringSubmatch(body); m != nil {
		return m[1], m[2] == "active"
	}
	return "", false
}

// Active tells whether the task's claim holds in state.
func Active(state string) bool {
	switch state {
	case "done", "failed", "blocked", "skipped", "released":
		return false
	}
	return true
}

// Status is what an issue's status comment tells.
type Status struct {
	// Run is the batch's id; Task the task.
	Run, Task string
	// State is one word: claimed, running, done, failed, blocked,
	// stopped, skipped.
	State string
	// Tier and Attempt are the attempt under way or the last one; Gate the
	// last verdict of the checks ("pass", "fail"…).
	Tier    string
	Attempt int
	Gate    string
	// CostUSD and CostKnown are the task's cost so far.
	CostUSD   float64
	CostKnown bool
	// Branch is the task's branch; Commit the commit it landed as; PR the
	// pull request's address.
	Branch, Commit, PR string
	// Reason says why it failed, is blocked or stopped.
	Reason string
	// Notes are the comments the task was told, by their ids.
	Notes []string
	// Warnings are what the reading said (settings not taken).
	Warnings []string
	// Updated is when the comment was written.
	Updated time.Time
}

// Body is the status comment of s: the marker, then a short Markdown
// summary, one fact a line.
func (s Status) Body() string {
	var b strings.Builder
	b.WriteString(Marker(s.Run, Active(s.State)))
	b.WriteString("\n")
	fmt.Fprintf(&b, "**jlgcli: %s**", headline(s))
	if s.Reason != "" {
		fmt.Fprintf(&b, " — %s", code(oneLine(s.Reason, 500)))
	}
	b.WriteString("\n\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "- %s: %s\n", k, v)
		}
	}
	if s.Attempt > 0 {
		row("attempt", fmt.Sprintf("%d, tier %s", s.Attempt, s.Tier))
	}
	row("checks", s.Gate)
	if s.CostKnown {
		row("cost", fmt.Sprintf("$%.2f", s.CostUSD))
	}
	row("branch", code(s.Branch))
	row("commit", code(s.Commit))
	row("pull request", s.PR)
	if len(s.Notes) > 0 {
		row("comments read", strings.Join(s.Notes, ", "))
	}
	for _, w := range s.Warnings {
		row("note", code(oneLine(w, 300)))
	}
	row("run", fmt.Sprintf("`jlgcli show %s` (task %s)", s.Run, s.Task))
	if !s.Updated.IsZero() {
		row("updated", s.Updated.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if Active(s.State) {
		b.WriteString("\n<sub>One comment, edited as the work goes. Close the issue or take its label off to stop the task; " +
			"a comment from someone who can push reaches its next attempt.</sub>\n")
	}
	return b.String()
}

func headline(s Status) string {
	switch s.State {
	case "claimed":
		return "claimed, waiting to start"
	case "running":
		return "working on it"
	case "done":
		return "done"
	case "failed":
		return "failed"
	case "blocked":
		return "blocked"
	case "stopped":
		return "stopped (resumable)"
	case "released":
		return "let go"
	}
	return s.State
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "`", "") + "`"
}

// oneLine is s on one line, at most n bytes, its @mentions made inert
// (what a check printed must not call people to the issue). What the
// comment quotes is also put in code (code): anyone's text, it must not
// be read as HTML, a link or a reference to another issue.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "@", "@\u200b")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
