package plain

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// titleWidth bounds the TITLE column of Runs, the last one, so that a long
// prompt does not wrap the table (off a terminal; on one, the title takes
// the width the other columns leave).
const titleWidth = 24

// Runs writes the runs as `jlgcli runs` lists them, one row each: a task
// of a batch reads task<XXXXXXXX (the end of the batch's id), as do a
// pull-request run's rounds (of the pr run's id) and a pull-request run
// that a task opened (pr<, the task's); the title is cut to its column,
// after a pull request's number and target, or a round's number. When a run listed has subscription windows, a WINDOWS
// column before the title gives the use of each ("5h 92%, weekly 50%").
// Each cell is safe for a terminal (termsafe.Line): a title is a prompt's,
// a task sheet's.
//
// On a terminal (t) the table fits its width: too wide, it shows the
// random part of each run id (which names the run as well: show, resume)
// and the start without its year, then leaves out, in this order, ITER,
// BACKEND, DURATION, WINDOWS, RE-RUN, COMMAND, LIVE, STARTED and COST, the
// title taking what is left (at least 16 cells, cut with "…"); the
// statuses are coloured. Elsewhere it is printed whole, for scripts.
func Runs(w io.Writer, list []runs.Listed, t tty.Terminal) error {
	withWindows := slices.ContainsFunc(list, func(r runs.Listed) bool { return len(r.Windows) > 0 })
	withReruns := slices.ContainsFunc(list, func(r runs.Listed) bool { return r.RerunOf != "" || r.RerunAs != "" })
	cols := []tty.Column{
		{Head: "ID", Short: batchShort},
		{Head: "COMMAND", Short: shortCommand, Drop: 6},
		{Head: "STATUS", Status: true},
		{Head: "BACKEND", Drop: 2},
		{Head: "ITER", Drop: 1},
		{Head: "COST", Drop: 9},
		{Head: "DURATION", Drop: 3},
		{Head: "STARTED", Short: shortStarted, Drop: 8},
		{Head: "LIVE", Drop: 7},
	}
	if withWindows {
		cols = append(cols, tty.Column{Head: "WINDOWS", Drop: 4})
	}
	if withReruns {
		cols = append(cols, tty.Column{Head: "RE-RUN", Drop: 5})
	}
	cols = append(cols, tty.Column{Head: "TITLE", Flex: true, Min: 16, Max: titleWidth})
	tb := tty.Table{Columns: cols}
	for _, r := range list {
		command := r.Command
		if r.Parent != "" {
			command += "<" + batchShort(r.Parent) // a task of batch r.Parent
		}
		row := []string{r.ID, command, r.Status, r.Backend, fmt.Sprint(r.Iterations),
			cost.Amount(r.CostUSD, r.CostKnown, false),
			r.DurationMs.Duration().Round(time.Second).String(), r.StartedAt.Local().Format("2006-01-02 15:04"), yesNo(r.Live)}
		if withWindows {
			row = append(row, dash(windowUse(r.Windows)))
		}
		if withReruns {
			row = append(row, dash(rerunCell(r)))
		}
		tb.Rows = append(tb.Rows, safeCells(append(row, titleOf(r))...))
	}
	return tb.Write(w, t)
}

// titleOf is the title of a listed run: a pull-request run's is its pull
// request's, after its number and target ("#42 until merged: …"), a
// round's begins with its number ("round 2: …").
func titleOf(r runs.Listed) string {
	switch {
	case r.PR != nil:
		return fmt.Sprintf("#%d until %s: %s", r.PR.Number, r.PR.Target, cmp.Or(r.PR.Title, r.Title))
	case r.Round > 0:
		return fmt.Sprintf("round %d: %s", r.Round, r.Title)
	}
	return r.Title
}

// rerunCell says, for a task run its batch ran again after a conflict,
// which run it is and which landed: "as 1a2b3c4d, which landed" for the
// first run (its second run is 1a2b3c4d), "of 5e6f7a8b, landed" for the
// second (the first run is 5e6f7a8b).
func rerunCell(r runs.Listed) string {
	switch {
	case r.RerunAs != "" && r.RerunLanded:
		return "as " + batchShort(r.RerunAs) + ", which landed"
	case r.RerunAs != "":
		return "as " + batchShort(r.RerunAs) + ", which did not land"
	case r.RerunOf != "" && r.Landed != nil && *r.Landed:
		return "of " + batchShort(r.RerunOf) + ", landed"
	case r.RerunOf != "" && r.Landed != nil:
		return "of " + batchShort(r.RerunOf) + ", not landed"
	case r.RerunOf != "":
		return "of " + batchShort(r.RerunOf)
	}
	return ""
}

// windowUse is the use of each window, without resets: "5h 92%, weekly
// 50%", each after its backend when they are of more than one.
func windowUse(ws []store.Window) string {
	many := slices.ContainsFunc(ws, func(w store.Window) bool { return w.Backend != ws[0].Backend })
	var parts []string
	for _, w := range ws {
		s := w.Kind + " " + engine.Percent(w.Used)
		if many {
			s = w.Backend + " " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Usage writes the windows as `jlgcli usage` lists them: backend, window,
// use, reset and how long ago the agent reported it; then the backends that
// reported none, or a sentence when none reported any; safe for a
// terminal (termsafe: the windows are as the agents reported them).
func Usage(w io.Writer, u runs.Usage, now time.Time) (err error) {
	w, end := safe(w)
	defer end(&err)
	const who = "only an agent logged in with a subscription reports its windows (claude with a claude.ai login)"
	if len(u.Windows) == 0 {
		by := "" // the backends of the runs kept here
		if len(u.Silent) > 0 {
			by = " by " + strings.Join(u.Silent, ", ")
		}
		_, err := fmt.Fprintf(w, "no subscription window reported yet%s: %s\n", by, who)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tWINDOW\tUSED\tRESETS\tREPORTED")
	for _, x := range u.Windows {
		resets := "-"
		if !x.ResetsAt.IsZero() {
			resets = x.ResetsAt.Local().Format("2006-01-02 15:04")
			if !x.ResetsAt.After(now) {
				resets += " (past)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ago\n", termsafe.Line(x.Backend), termsafe.Line(x.Kind), engine.Percent(x.Used), resets,
			x.AgeMs.Duration().Round(time.Second))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(u.Silent) > 0 {
		_, err := fmt.Fprintf(w, "no window reported by %s: %s\n", strings.Join(u.Silent, ", "), who)
		return err
	}
	return nil
}

// Backends writes the backends as `jlgcli backends` lists them: a table,
// then under it how to install a missing built-in one, why one cannot be
// used, and what will make its calls fail; safe for a terminal (termsafe:
// a version is what the CLI printed).
func Backends(w io.Writer, rows []runs.Backend) (err error) {
	w, end := safe(w)
	defer end(&err)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tINSTALLED\tVERSION\tSTATUS\tPATH")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(r.Name), yesNo(r.Installed), dash(termsafe.Line(r.Version)), r.Status,
			dash(termsafe.Line(r.Path)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		switch {
		case r.Status == agent.Missing && r.Package != "":
			fmt.Fprintf(w, "%s: not installed; install it with: %s\n", r.Name, agent.InstallCommand(r.Name))
		case r.Details != "" && r.Status != agent.Missing:
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Details)
		}
		if r.Note != "" {
			fmt.Fprintf(w, "%s: note: %s\n", r.Name, r.Note)
		}
	}
	return nil
}

// Config writes the settings as `jlgcli config` prints them: a table,
// "-" for an empty value, each cell safe for a terminal (termsafe.Line: a
// value may be a project file's); or a JSON array, "<redacted>" as it is.
func Config(w io.Writer, settings []config.Setting, asJSON bool) (err error) {
	if asJSON {
		enc := json.NewEncoder(termsafe.JSONWriter(w))
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // "<redacted>" as it is
		return enc.Encode(settings)
	}
	w, end := safe(w)
	defer end(&err)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, s := range settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(s.Key), dash(termsafe.Line(s.Value)), termsafe.Line(s.Source))
	}
	return tw.Flush()
}

// Stopped writes that run stopped (stop) on w, and on say how to go on
// with it: resume it, or, for a batch's task, its batch.
func Stopped(w io.Writer, say Say, run runs.Listed) {
	fmt.Fprintf(w, "stopped %s run %s: %s\n", run.Command, run.ID, termsafe.Line(run.Status))
	if run.Parent != "" {
		say.Hint("its batch goes on without it; 'jlgcli resume " + run.Parent + "' runs it later")
	} else {
		say.Hint("'jlgcli resume " + run.ID + "' continues it")
	}
}

// ExitCodes is the table of jlgcli's exit codes and what they mean
// (exit.Table), then what an agent's own code becomes.
func ExitCodes() string {
	var b strings.Builder
	for _, row := range exit.Table {
		fmt.Fprintf(&b, "%3d  %-24s %s\n", row.Code, row.Name, row.Meaning)
	}
	b.WriteString("other                         the agent exited non-zero: its code is passed through\n")
	b.WriteString("                              (an API error the agent reported with status 0 gives 1)")
	return b.String()
}

// Completions are the shell's completions of a run id that starts with
// prefix among list (newest first): each id with its command, status and
// title (safe for a terminal: termsafe.Line), then "last" when there is a
// run.
func Completions(list []runs.Listed, prefix string) []string {
	var out []string
	for _, r := range list {
		if strings.HasPrefix(r.ID, prefix) {
			out = append(out, r.ID+"\t"+r.Command+" "+r.Status+": "+Cut(termsafe.Line(r.Title), 40))
		}
	}
	if strings.HasPrefix("last", prefix) && len(list) > 0 {
		out = append(out, "last\tthe newest run")
	}
	return out
}

// Cut is s cut to n runes, "…" ending it when it was longer.
func Cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// batchShort is the random part of a run id (the 8 hex digits after the
// time), enough to tell a task's batch among the runs listed.
func batchShort(id string) string {
	if _, after, ok := strings.Cut(id, "-"); ok && after != "" {
		return after
	}
	return id
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// SandboxCheck writes what `jlgcli sandbox check` found: the sandbox, then
// one line per thing the probe tried, "!" before those that are not as the
// sandbox promises, then how the limits are enforced.
func SandboxCheck(w io.Writer, p sandbox.Probe, backend string) error {
	who := "a command backend's agent"
	if backend != "" {
		who = backend + "'s agent"
	}
	fmt.Fprintf(w, "sandbox: %s\n", p.Record)
	if !p.Record.Confined {
		return nil
	}
	fmt.Fprintf(w, "what %s could do, confined, in %s:\n", who, p.Dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range p.Findings {
		mark := " "
		if !f.OK {
			mark = "!"
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\n", mark, f.Area, f.What, f.Result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range p.Limits {
		fmt.Fprintf(w, "limit: %s\n", l)
	}
	bad := 0
	for _, f := range p.Findings {
		if !f.OK {
			bad++
		}
	}
	if bad == 0 {
		fmt.Fprintf(w, "all %d as the sandbox promises\n", len(p.Findings))
	} else {
		fmt.Fprintf(w, "%d of %d NOT as the sandbox promises (marked !)\n", bad, len(p.Findings))
	}
	return nil
}
