// Package plain renders runs and their results as the plain text the
// command line prints on stdout: a task's summary, a batch's table and its
// plan, the show of one run, the list of runs, the backends and the
// configuration. Each function writes to the io.Writer it is given from
// plain values (results, rows, states); it reads no file and asks nothing
// of the runtime. The reports of a task and of a batch (Markdown, HTML,
// JSON), the stats and the hints are package report's.
//
// It is a package of its own, above runs, because what it renders is
// runs' and local's values (runs.State, runs.Listed, local.BatchSpec),
// while package report sits below them (runner writes a task's report).
package plain

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/sheet"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// TaskSummary writes what a task did: its summary, each tier that made
// attempts, the loops detected, and where its work is, safe for a
// terminal (termsafe).
func TaskSummary(w io.Writer, res taskengine.Result) {
	sw := termsafe.NewWriter(w)
	defer sw.Flush()
	w = sw
	if res.Summary != "" {
		fmt.Fprintln(w, res.Summary)
	}
	for _, t := range res.Tiers {
		if t.Attempts == 0 {
			continue
		}
		fmt.Fprintf(w, "  tier %s: %s, %s, %s\n", t.Name, plural.N(t.Attempts, "attempt"), cost.Phrase(t.CostUSD, t.CostKnown, t.CostEstimated), t.Outcome)
	}
	for _, d := range res.Detections {
		fmt.Fprintf(w, "  loop %s (attempts %s, tier %s): %s\n", d.Names(), joinInts(d.Attempts), d.Tier, d.Action)
	}
	g := res.Git
	if g == nil {
		return
	}
	switch {
	case g.Merge != nil && g.Merge.Status.Landed() && g.Merge.Commit == "":
		// A batch merged it, and its branch held no change for the base.
		fmt.Fprintf(w, "nothing merged into %s: branch %s holds no change for it\n", orText(g.Merge.Into, "the base branch"), g.Branch)
	case g.Merge != nil && g.Merge.Status == git.MergeFastForwarded:
		fmt.Fprintf(w, "committed on %s, fast-forwarded to %s\n", g.Merge.Into, ShortSHA(g.Merge.Commit))
	case g.Merge != nil && g.Merge.Status == git.MergeMerged:
		fmt.Fprintf(w, "merged into %s as %s (branch %s keeps the attempts)\n", g.Merge.Into, ShortSHA(g.Merge.Commit), g.Branch)
	case g.Merge != nil && g.Merge.Status == git.MergeSkipped && g.Merge.Command == "" && g.Merge.Reason != "":
		fmt.Fprintf(w, "branch %s passed the checks; not merged here: %s\n", g.Branch, g.Merge.Reason)
	case g.Merge != nil && g.Merge.Command != "":
		fmt.Fprintf(w, "branch %s passed the checks; not merged (%s). To merge:\n  %s\n", g.Branch, orText(g.Merge.Reason, string(g.Merge.Status)), g.Merge.Command)
	case g.Discarded:
		fmt.Fprintf(w, "no attempt ran: branch %s and its worktree were removed (nothing to keep)\n", g.Branch)
	case g.WIP != "":
		fmt.Fprintf(w, "manual intervention required: review branch %s (WIP commit %s); attempts under %s\n", g.Branch, ShortSHA(g.WIP), g.Refs)
	default:
		fmt.Fprintf(w, "branch %s; attempts under %s\n", g.Branch, g.Refs)
	}
}

// LoopEnd is the line that says how a loop went: its run id, status,
// iterations, cost and duration.
func LoopEnd(res engine.Result) string {
	return fmt.Sprintf("run %s ended %s after %s · %s · %s", res.RunID, res.Status, plural.N(res.Iterations, "iteration"),
		cost.Phrase(res.CostUSD, res.CostKnown, false), res.DurationMs.Duration().Round(100*time.Millisecond))
}

// BatchTable writes a batch's tasks, one row each, then why each task that
// is not done stopped, safe for a terminal (termsafe). On a terminal (t)
// the table fits its width: too wide, it shows the random part of each
// run id, then leaves out DURATION, ATTEMPTS, COST, RUN and COMMIT in this
// order, a task's id taking what is left (cut with "…"); the lines that
// say why are wrapped between words, and the statuses coloured.
func BatchTable(w io.Writer, res batch.Summary, t tty.Terminal) error {
	tb := tty.Table{Columns: []tty.Column{
		{Head: "TASK", Flex: true, Min: 16}, {Head: "STATUS", Status: true}, {Head: "ATTEMPTS", Drop: 2},
		{Head: "COST", Drop: 3}, {Head: "DURATION", Drop: 1}, {Head: "RUN", Short: batchShort, Drop: 4}, {Head: "COMMIT", Drop: 5},
	}}
	for _, task := range res.Tasks {
		run, commit := "-", "-"
		if task.RunID != nil {
			run = *task.RunID
		}
		if task.Commit != nil {
			commit = ShortSHA(*task.Commit)
		}
		tb.Rows = append(tb.Rows, safeCells(task.ID, task.Status, fmt.Sprint(task.Attempts), cost.Amount(task.CostUSD, task.CostKnown, false),
			task.DurationMs.Duration().Round(time.Second).String(), run, commit))
	}
	if err := tb.Write(w, t); err != nil {
		return err
	}
	var why strings.Builder
	for _, task := range res.Tasks {
		switch {
		case task.Status != string(batch.StatusDone) && task.Details != "":
			fmt.Fprintf(&why, "%s: %s\n", task.ID, task.Details)
		case task.Rerun != nil:
			// Which of the task's two runs landed, and what both cost.
			fmt.Fprintf(&why, "%s: %s\n", task.ID, task.Rerun.As())
		}
	}
	return wrapLines(w, t, why.String())
}

// BatchStopped is the line that says how far a batch that is not done
// went: its status, how many of its tasks are done, and why.
func BatchStopped(res batch.Summary) string {
	done := 0
	for _, t := range res.Tasks {
		if t.Status == string(batch.StatusDone) {
			done++
		}
	}
	msg := fmt.Sprintf("%s: %d of %s done", res.Status, done, plural.N(len(res.Tasks), "task"))
	if res.Details != "" {
		msg += "; " + res.Details
	}
	return msg
}

// TaskChanged is the line that says a batch's task has a new status.
func TaskChanged(t batch.TaskSummary) string {
	line := fmt.Sprintf("[%s] %s", t.ID, t.Status)
	if t.Details != "" {
		line += ": " + t.Details
	}
	return line
}

// BatchPlan writes what a batch would run, level by level: each task with
// its sheet, dependencies, tiers, checks, budget and timeout, safe for a
// terminal (termsafe: a sheet's id and title are the repository's).
func BatchPlan(w io.Writer, spec local.BatchSpec, levels [][]string) {
	sw := termsafe.NewWriter(w)
	defer sw.Flush()
	w = sw
	byID := map[string]local.BatchTask{}
	for _, t := range spec.Tasks {
		byID[t.ID] = t
	}
	base := spec.BaseBranch
	if base == "" {
		base = "the checked-out branch"
	}
	fmt.Fprintf(w, "batch of %s, %d at a time, each merged into %s\n", plural.N(len(spec.Tasks), "task"), spec.Jobs, base)
	order := 0
	for i, ids := range levels {
		fmt.Fprintf(w, "\nlevel %d:\n", i)
		for _, id := range ids {
			order++
			t := byID[id]
			fmt.Fprintf(w, "  %d. %s (%s): %s\n", order, termsafe.Line(t.ID), termsafe.Line(t.File), termsafe.Line(t.Title))
			if len(t.Depends) > 0 {
				from := ""
				if t.DependsFrom == string(sheet.FromBody) {
					from = " (from the sheet's dependency lines)"
				}
				fmt.Fprintf(w, "     depends on: %s%s\n", strings.Join(t.Depends, ", "), from)
			}
			var tiers []string
			for _, tr := range t.Spec.Tiers {
				s := tr.Backend
				if tr.Model != "" {
					s += ":" + tr.Model
				}
				tiers = append(tiers, fmt.Sprintf("%s ×%d", s, tr.Attempts))
			}
			fmt.Fprintf(w, "     tiers: %s\n", strings.Join(tiers, " → "))
			var checks []string
			for _, c := range t.Spec.Checks {
				checks = append(checks, c.Name)
			}
			if len(checks) == 0 {
				checks = []string{"the detected defaults"}
			}
			fmt.Fprintf(w, "     checks: %s\n", strings.Join(checks, "; "))
			budget := "none"
			if t.Spec.BudgetUSD > 0 {
				budget = fmt.Sprintf("$%.2f", t.Spec.BudgetUSD)
			}
			fmt.Fprintf(w, "     budget: %s, timeout: %s\n", budget, t.Spec.TimeoutMs.Duration())
		}
	}
}

// Resumed writes the result of a resume: the line that says that nothing
// was resumed when the run had ended done (NothingToResume), then the
// run's result as its kind writes it (a batch's table laid out for t).
// code is the result's exit code.
func Resumed(w io.Writer, say Say, asJSON bool, out runs.Resumed, t tty.Terminal) (code int, err error) {
	if out.Done {
		say.Notice(NothingToResume(out.Kind, out.ID))
	}
	switch out.Kind {
	case "task":
		return out.Task.ExitCode, TaskResult(w, say, asJSON, out.Task)
	case "batch":
		return out.Batch.ExitCode, BatchResult(w, say, asJSON, out.Batch, t)
	case "pr":
		return out.PR.ExitCode, PRResult(w, say, asJSON, out.PR)
	}
	return out.Loop.ExitCode, LoopResult(w, say, asJSON, out.Loop)
}

// NothingToResume is the line that says a run of kind (its command) has
// ended done and that resume has nothing to do.
func NothingToResume(kind, id string) string {
	if kind != "task" && kind != "batch" && kind != "pr" {
		kind = "run"
	}
	return fmt.Sprintf("%s %s is already done; nothing to resume", kind, id)
}

// ShortSHA is a commit's id cut to 10 hex digits.
func ShortSHA(s string) string { return git.ShortSHA(s) }

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ",")
}
