package report

import (
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// Markdown is the report as GitHub-flavoured Markdown: the status, a
// summary, the task, the plan, the tiers, the attempts, the gate results,
// the loops detected, the unique errors, the flaky tests, where the work is
// in git, the recommendation, and the last diff. Every text from the
// result is escaped or put in code, so that it shows as written and no
// HTML in it is rendered; the whole is safe for a terminal (termsafe.Text:
// an agent's escape codes in it are shown, never run).
func (r Report) Markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, section := range []func(printer){r.mdSummary, r.mdTask, r.mdTiers, r.mdAttempts, r.mdReviews, r.mdLoops,
		r.mdErrors, r.mdFlaky, r.mdGit, r.mdEnd} {
		section(p)
	}
	return termsafe.Text(b.String())
}

// printer writes formatted text to a report.
type printer func(format string, a ...any)

// mdSummary writes the title, the recommendation and the summary table.
func (r Report) mdSummary(p printer) {
	p("# Task report: %s\n\n", mdText(r.Status))
	p("**Recommendation:** %s\n\n", r.mdRecommendation())

	p("## Summary\n\n")
	p("| Field | Value |\n|---|---|\n")
	row := func(k, v string) { p("| %s | %s |\n", k, v) }
	row("Run", mdCode(r.RunID, true))
	row("Status", mdText(r.statusLine()))
	row("Task", mdText(firstLine(r.Task, 100)))
	if r.Details != "" {
		row("Details", mdText(r.Details))
	}
	if r.Failure != nil {
		row("Agent failure", mdText(r.Failure.Kind+": "+r.Failure.Message))
	}
	if r.Backend != "" {
		row("Backend", mdCode(r.Backend, true))
	}
	if r.Sandbox != "" {
		row("Sandbox", mdText(r.Sandbox))
	}
	if l := r.rerunLine(); l != "" {
		row("Re-run", mdText(l))
	}
	row("Started", when(r.StartedAt))
	row("Attempts", mdText(r.attemptsLine()))
	row("Duration", duration(r.DurationMs))
	row("Cost", mdText(r.costLine()))
	row("Tokens", fmt.Sprintf("%d in, %d out", r.InputTokens, r.OutputTokens))
	if w := r.windowsLine(); w != "" {
		row("Windows", mdText(w))
	}
	if r.Git != nil {
		row("Branch", mdCode(r.Git.Branch, true))
	}
	p("\n")

}

// mdTask writes the task and its plan.
func (r Report) mdTask(p printer) {
	p("## Task\n\n%s\n", fence(r.Task, "text"))

	if len(r.Plan) > 0 {
		p("## Plan\n\n")
		for i, s := range r.Plan {
			p("%d. %s\n", i+1, mdText(s))
		}
		p("\n")
	}

}

// mdTiers writes the tiers used.
func (r Report) mdTiers(p printer) {
	p("## Tiers\n\n")
	if len(r.TiersUsed) == 0 {
		p("No tier made an attempt.\n")
	} else {
		p("| Tier | Backend / model | Attempts | Passed | Cost | Outcome |\n|---|---|---:|---:|---:|---|\n")
		for _, t := range r.TiersUsed {
			p("| %s | %s | %d | %d | %s | %s |\n", mdText(t.Name), mdCode(model(t.Backend, t.Model), true), t.Attempts,
				t.Passed, mdText(money(t.CostUSD, t.CostKnown, t.CostEstimated)), mdText(t.Outcome))
		}
	}
	if t := r.Reviewer; t != nil {
		p("\nReviewer: %s (%s): %d reviews, %d approved, %s.\n", mdText(t.Name), mdCode(model(t.Backend, t.Model), true), t.Attempts,
			t.Passed, mdText(money(t.CostUSD, t.CostKnown, t.CostEstimated)))
	}
	if len(r.TiersUnused) > 0 {
		p("\nNot used: %s.\n", mdText(strings.Join(r.TiersUnused, ", ")))
	}
	p("\n")

}

// mdAttempts writes the attempts and the gate results.
func (r Report) mdAttempts(p printer) {
	p("## Attempts\n\n")
	if len(r.Attempts) == 0 {
		p("No attempt was made.\n\n")
	} else {
		p("| # | Step | Tier | In tier | Gate | Cost | Duration | Action | Files changed |\n")
		p("|---:|---:|---|---:|---|---:|---:|---|---:|\n")
		for _, a := range r.Attempts {
			p("| %d | %s | %s | %d | %s | %s | %s | %s | %s |\n", a.Number, stepText(a.Step), mdText(a.Tier), a.InTier,
				mdText(a.GateStatus), mdText(money(a.CostUSD, a.CostKnown, a.CostEstimated)), duration(a.DurationMs),
				mdText(a.actionText()), a.filesText())
		}
		p("\nFiles changed count the state each attempt left against the task's base. ")
		p("Costs after ~ are estimated from tokens.\n\n")

		p("## Gate results\n\n")
		p("| # | Tier | Status | Recommendation | Summary |\n|---:|---|---|---|---|\n")
		for _, g := range r.GateResults {
			p("| %d | %s | %s | %s | %s |\n", g.Number, mdText(g.Tier), mdText(g.Status), mdCode(g.Recommendation, true),
				mdText(g.Summary))
		}
		p("\n")
	}
	for _, l := range r.TestsJudged {
		p("%s\n\n", mdText(l))
	}

}

// mdReviews writes each review, when the task had a reviewer.
func (r Report) mdReviews(p printer) {
	if r.Reviewer == nil {
		return
	}
	p("## Reviews\n\n")
	for _, a := range r.Attempts {
		rv := a.Review
		if rv == nil {
			continue
		}
		p("- Attempt %d, by %s: **%s** (%s)", a.Number, mdText(rv.Tier), mdText(rv.Verdict), mdText(money(rv.CostUSD, rv.CostKnown, rv.CostEstimated)))
		if rv.Summary != "" {
			p(": %s", mdText(rv.Summary))
		}
		if rv.Error != "" {
			p(": %s", mdText(rv.Error))
		}
		p("\n")
		for _, c := range rv.Comments {
			where := c.File
			if c.Line > 0 {
				where += fmt.Sprintf(":%d", c.Line)
			}
			p("  - %s %s\n", mdCode(where, true), mdText(c.Text))
		}
		if len(rv.Discarded) > 0 {
			p("  - the reviewer changed %s: put back\n", mdText(strings.Join(rv.Discarded, ", ")))
		}
	}
	p("\n")
}

// mdLoops writes the loops detected.
func (r Report) mdLoops(p printer) {
	p("## Loops detected\n\n")
	if len(r.Detections) == 0 {
		p("None.\n\n")
	} else {
		p("| Rule | Attempts | Tier | Action | Details |\n|---|---|---|---|---|\n")
		for _, d := range r.Detections {
			p("| %s | %s | %s | %s | %s |\n", mdCode(d.Names(), true), attemptList(d.Attempts), mdText(d.Tier),
				mdText(d.Action), mdText(d.Details))
		}
		p("\n")
	}

}

// mdErrors writes the unique errors.
func (r Report) mdErrors(p printer) {
	p("## Unique errors\n\n")
	if len(r.UniqueErrors) == 0 {
		p("None.\n\n")
	} else {
		for i, e := range r.UniqueErrors {
			p("%d. %s\n", i+1, mdCode(e, false))
		}
		if r.UniqueErrorsLeftOut > 0 {
			p("\n%d more left out.\n", r.UniqueErrorsLeftOut)
		}
		p("\n")
	}

}

// mdFlaky writes the flaky tests.
func (r Report) mdFlaky(p printer) {
	p("## Flaky tests\n\n")
	if len(r.FlakyTests) == 0 {
		p("None.\n\n")
	} else {
		p("Failed, then passed when run again:\n\n")
		for _, f := range r.FlakyTests {
			p("- %s\n", mdCode(f, false))
		}
		p("\n")
	}

}

// mdGit writes where the work is in git.
func (r Report) mdGit(p printer) {
	p("## Git\n\n")
	if g := r.Git; g == nil {
		p("The task ran without git: its changes are in the working tree.\n\n")
	} else {
		item := func(k, v string) { p("- %s: %s\n", k, v) }
		branch := mdCode(g.Branch, false) + " from " + mdCode(short(g.Base), false)
		if g.BaseBranch != "" {
			branch += " on " + mdCode(g.BaseBranch, false)
		}
		item("Branch", branch)
		if g.Mode != "" {
			item("Mode", mdText(g.Mode))
		}
		if g.Repo != "" {
			item("Repository", mdCode(g.Repo, false))
		}
		if g.Worktree != "" {
			wt := mdCode(g.Worktree, false)
			if g.Removed {
				wt += " (removed)"
			}
			item("Worktree", wt)
		}
		if g.Refs != "" {
			item("Attempt snapshots", mdCode(g.Refs+"<n>", false)+" (the state before attempt n) and "+
				mdCode(g.Refs+"<n>-result", false)+" (the state it left)")
		}
		if len(g.Commits) > 0 {
			cs := make([]string, len(g.Commits))
			for i, c := range g.Commits {
				cs[i] = mdCode(short(c), false)
			}
			item("Commits", strings.Join(cs, ", "))
		} else {
			item("Commits", "none")
		}
		if g.WIP != "" {
			item("WIP commit", mdCode(g.WIP, false))
		}
		if g.DirtyIncluded {
			item("Uncommitted changes", "included as the branch's first commit")
		}
		if g.DirtyLeftOut {
			item("Uncommitted changes", "left out of the task")
		}
		if g.Merge != nil {
			item("Merge", mdWithCode(mergeLine(g.Merge), g.Merge.Command))
		}
		pushed := "no"
		if g.Pushed {
			pushed = "yes"
			if g.Remote != "" {
				pushed += ", to " + mdCode(g.Remote, false)
			}
		}
		item("Pushed", pushed)
		if g.PR != "" {
			item("Pull request", mdCode(g.PR, false))
		}
		for _, w := range g.Warnings {
			item("Warning", mdText(w))
		}
		p("\n")
		if g.needsMergeCommand() {
			p("Merge it with:\n\n%s\n", fence(g.Merge.Command, "sh"))
		}
	}

}

// mdEnd writes the recommendation and the last diff.
func (r Report) mdEnd(p printer) {
	p("## Recommendation\n\n%s\n\n", r.mdRecommendation())

	p("## Last diff\n\n")
	if r.LastDiff == "" {
		p("No diff.\n")
	} else {
		if r.LastDiffNote != "" {
			p("Note: %s.\n\n", mdText(r.LastDiffNote))
		}
		p("%s", fence(r.LastDiff, "diff"))
	}
}

// mdRecommendation is the recommendation with the commands, branch and
// refs it names in code spans, so that they copy as they are.
func (r Report) mdRecommendation() string {
	codes := []string{"jlgcli resume " + r.RunID}
	if g := r.Git; g != nil {
		if g.Merge != nil {
			codes = append(codes, g.Merge.Command)
		}
		codes = append(codes, g.Branch, g.Refs, g.PR)
	}
	return mdWithCode(r.Recommendation, codes...)
}

// mdWithCode is s on one line, escaped as mdText, but for each occurrence
// of one of codes (the longest that starts there), which is a code span and
// so not escaped: a command copied from it runs as written.
func mdWithCode(s string, codes ...string) string {
	s = squeeze(s)
	var b, text strings.Builder
	for i := 0; i < len(s); {
		best := ""
		for _, c := range codes {
			if c = squeeze(c); c != "" && len(c) > len(best) && strings.HasPrefix(s[i:], c) {
				best = c
			}
		}
		if best == "" {
			text.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(mdEscaper.Replace(text.String()))
		text.Reset()
		b.WriteString(mdCode(best, false))
		i += len(best)
	}
	b.WriteString(mdEscaper.Replace(text.String()))
	return b.String()
}

// mdEscaper escapes the characters that Markdown (or the HTML it lets
// through) would read.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`, `|`, `\|`, `#`, `\#`,
	`~`, `\~`, `&`, `\&`,
)

// mdText is s on one line, escaped.
func mdText(s string) string { return mdEscaper.Replace(squeeze(s)) }

// mdCode is s on one line as a code span, delimited by more backticks than
// it holds. In a table cell (cell), its pipes are escaped, as GitHub's
// tables need even in code.
func mdCode(s string, cell bool) string {
	s = squeeze(s)
	if s == "" {
		return "-"
	}
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// fence is s in a fenced code block whose fence is longer than any run of
// backticks in s, ending with a newline.
func fence(s, lang string) string {
	f := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return f + lang + "\n" + s + f + "\n"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
