package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Formatting shared by the Markdown and HTML renderers.

// money is a cost: "unknown" when no agent reported one, "~" before an
// estimate.
func money(v float64, known, estimated bool) string { return cost.Amount(v, known, estimated) }

// duration is a duration, to the second from one second.
func duration(ms millis.Duration) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", max(ms, 0))
	}
	return ms.Duration().Round(time.Second).String()
}

// when is a time in UTC, to the second; "-" when zero.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// budget is the budget, "none" when 0.
func budget(v float64) string {
	if v <= 0 {
		return "none"
	}
	return fmt.Sprintf("$%.2f", v)
}

// costLine is the task's cost for a summary.
func (r Report) costLine() string {
	s := money(r.CostUSD, r.CostKnown, r.CostEstimated)
	switch {
	case !r.CostKnown:
		s += ": no agent reported one"
	case r.CostEstimated:
		s += ", estimated in part from tokens"
	}
	s += " (budget " + budget(r.BudgetUSD) + ")"
	if o := r.RerunOf; o != nil {
		// Every cent of the task: its first run's too.
		s += fmt.Sprintf("; %s with its first run %s (%s in %d attempts)", money(r.CostUSD+o.CostUSD, r.CostKnown || o.CostKnown, r.CostEstimated),
			o.RunID, money(o.CostUSD, o.CostKnown, false), o.Attempts)
	}
	return s
}

// rerunLine says whose re-run a run is, or as what it was run again; ""
// for neither.
func (r Report) rerunLine() string {
	switch {
	case r.RerunOf != nil:
		return "re-run of " + r.RerunOf.RunID + " after " + r.RerunOf.Reason
	case r.RerunAs != nil:
		return r.RerunAs.Said
	}
	return ""
}

// statusLine is the status and exit code.
func (r Report) statusLine() string {
	if r.Status == string(engine.StatusRunning) {
		return r.Status + " (not stopped)"
	}
	return fmt.Sprintf("%s (exit %d)", r.Status, r.ExitCode)
}

// attemptsLine counts the attempts and tiers.
func (r Report) attemptsLine() string {
	names := make([]string, len(r.TiersUsed))
	for i, t := range r.TiersUsed {
		names[i] = t.Name
	}
	s := fmt.Sprintf("%d", r.TotalAttempts)
	if len(names) > 0 {
		s += " on " + strings.Join(names, " → ")
	}
	return s
}

// firstLine is the first line of s, cut to n bytes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	line, rest, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	cut := len(line) > n
	if cut {
		line = validUTF8Prefix(line[:n])
	}
	if cut || strings.TrimSpace(rest) != "" {
		line += "…"
	}
	return line
}

// model is "backend / model", or the backend alone.
func model(backend, m string) string {
	if m == "" {
		return backend
	}
	return backend + " / " + m
}

// stepText is a plan step's number, "-" without a plan.
func stepText(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// filesText is "N (+A -D)".
func (a Attempt) filesText() string {
	return fmt.Sprintf("%d (+%d -%d)", a.FilesChanged, a.LinesAdded, a.LinesDeleted)
}

// actionText is the action, with the loop found and the nudge.
func (a Attempt) actionText() string {
	s := a.Action
	if a.Review != nil && a.Review.Verdict != taskengine.ReviewApprove {
		s += " (review: " + a.Review.Verdict + ")"
	}
	if a.Detection != "" {
		s += " (" + a.Detection + ")"
	}
	if a.Nudged {
		s += ", nudged"
	}
	return s
}

// attemptList is "1, 2 and 3".
func attemptList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	switch len(s) {
	case 0:
		return "-"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// mergeLine says what became of the branch.
func mergeLine(m *taskengine.MergeInfo) string {
	if m == nil {
		return ""
	}
	s := string(m.Status)
	if m.Into != "" {
		s += " into " + m.Into
	}
	if m.Commit != "" {
		s += " as " + short(m.Commit)
	}
	if m.Reason != "" {
		s += ": " + m.Reason
	}
	return s
}

// needsMergeCommand tells whether the report shows the command that merges
// the branch by hand.
func (g *Git) needsMergeCommand() bool {
	return g != nil && g.Merge != nil && g.Merge.Command != "" && !g.Merge.Status.Landed()
}
