package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// NoReportError is a batch that has no report yet: it has not stopped.
type NoReportError struct{ ID string }

func (e *NoReportError) Error() string {
	return fmt.Sprintf("batch %s has no report yet: it has not stopped", e.ID)
}

// Report is the final report of run id (a whole id or a unique prefix)
// in format: "json", "html", else Markdown. A task's is made from the
// result it wrote when it stopped, or, for a task still going or killed,
// from its journal (TaskResult, saying on p.Say what it repaired); a
// batch's from the summary it wrote when it stopped (else a
// *NoReportError); a pull-request run's from its journal, as it stands
// (local.PRResultOf, its JSON; report.PRMarkdown, report.PRHTML). A run of
// another kind has none: a *exit.UsageError.
// A run on Temporal is brought up to date first, reached through connect.
func Report(ctx context.Context, root, id, format string, p local.Parts, connect Connect) ([]byte, error) {
	run, err := Open(root, id)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	if err := Refresh(ctx, run, connect); err != nil {
		return nil, err
	}
	switch run.Meta.Command {
	case "task":
		res, err := TaskResult(run, p)
		if err != nil {
			return nil, err
		}
		r := report.New(res)
		r.Alive(run.Meta.Temporal != nil || run.Live()) // on Temporal, Refresh says whether it runs
		if sb := run.Meta.Sandbox; sb != nil {
			r.Sandbox = sb.String()
		}
		switch format {
		case "json":
			return r.JSON()
		case "html":
			return []byte(r.HTML()), nil
		}
		return []byte(r.Markdown()), nil
	case "batch":
		var res batch.Summary
		found, err := run.ReadReport(&res)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &NoReportError{ID: run.ID}
		}
		switch format {
		case "json":
			data, err := json.MarshalIndent(res, "", "  ")
			return append(termsafe.JSON(data), '\n'), err
		case "html":
			return []byte(report.BatchHTML(res)), nil
		}
		return []byte(report.BatchMarkdown(res)), nil
	case "pr":
		evs, err := events(run, p, false)
		if err != nil {
			return nil, err
		}
		res, err := local.PRResultOf(run, evs)
		if err != nil {
			return nil, err
		}
		switch format {
		case "json":
			data, err := json.MarshalIndent(res, "", "  ")
			return append(termsafe.JSON(data), '\n'), err
		case "html":
			return []byte(report.PRHTML(PRReport(res))), nil
		}
		return []byte(report.PRMarkdown(PRReport(res))), nil
	}
	command := run.Meta.Command
	if command == "" {
		command = "unknown"
	}
	return nil, &exit.UsageError{Err: fmt.Errorf("run %s is a %s run, not a task, a batch or a pull request: it has no report", run.ID, command),
		Hint: "'jlgcli show " + run.ID + "' prints it"}
}

// PRReport is what the report of pull-request run res tells.
func PRReport(res local.PRResult) report.PR {
	r := report.PR{RunID: res.RunID, Number: res.Number, URL: res.URL, Title: res.Title, Branch: res.Branch, Base: res.Base,
		Target: string(res.Target), From: res.From, Status: string(res.Status), ExitCode: res.ExitCode, Reason: res.Reason, Head: res.Head,
		Looks: res.Looks, Merged: res.Merged, CostUSD: res.CostUSD, DurationMs: res.DurationMs, Comment: res.Comment, Resumable: res.Resumable()}
	if a := res.Last; a != nil && a.Do == pull.Wait && res.Status == store.Running {
		r.Waiting = a.Waiting
	}
	for _, c := range res.Checks {
		r.Checks = append(r.Checks, report.PRCheck{Name: c.Name, State: string(c.State), URL: c.URL})
	}
	for _, x := range res.Rounds {
		r.Rounds = append(r.Rounds, report.PRRound{Round: x.Round, RunID: x.RunID, Blockers: x.Blockers, Status: x.Status, Pushed: x.Pushed,
			Rejected: x.Rejected, Replied: x.Replied, CostUSD: x.CostUSD, Details: x.Details})
	}
	if c := res.Current; c != nil {
		r.Current = &report.PRRound{Round: c.Round, RunID: c.RunID, Blockers: c.Blockers}
	}
	return r
}

// ReportFormats are the formats of a report (Report).
var ReportFormats = []string{"md", "json", "html"}

// ReportFormat is the format of a report asked for: format when given (one of
// ReportFormats, any case; "markdown" is "md"), "json" when asJSON (a format
// given must then be json), else the one the extension of output (the
// file it is written to) names, else "md". A format it does not know, or
// one that asJSON contradicts, is an error.
func ReportFormat(format string, given, asJSON bool, output string) (string, error) {
	f := strings.ToLower(format)
	if f == "markdown" {
		f = "md"
	}
	if given {
		valid := false
		for _, a := range ReportFormats {
			valid = valid || f == a
		}
		if !valid {
			return "", fmt.Errorf("invalid --format %q: want one of %s", format, strings.Join(ReportFormats, ", "))
		}
	}
	if asJSON {
		if f != "" && f != "json" {
			return "", fmt.Errorf("--json and --format %s disagree: give one of them", format)
		}
		return "json", nil
	}
	if f != "" {
		return f, nil
	}
	switch strings.ToLower(filepath.Ext(output)) {
	case ".json":
		return "json", nil
	case ".html", ".htm":
		return "html", nil
	}
	return "md", nil
}

// WriteReport writes a report, out, to the file path: when path is
// relative, in the directory that dir gives; "": to w.
func WriteReport(w io.Writer, dir func() (string, error), path string, out []byte) error {
	if path == "" {
		_, err := w.Write(out)
		return err
	}
	if !filepath.IsAbs(path) {
		d, err := dir()
		if err != nil {
			return err
		}
		path = filepath.Join(d, path)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// ParseSince reads the start of the runs that TaskStats counts: a date
// (midnight, local time) or an RFC 3339 time; "": the zero time (all).
// Anything else is a *exit.UsageError.
func ParseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("invalid --since %q: want a date (2006-01-02) or an RFC 3339 time (2006-01-02T15:04:05Z07:00)", s)
}

// TaskStats are the metrics across the task runs under root started at or
// after since (zero: all), those still running left out (report.Stats),
// with the pull-request runs' (report.PRStats): their rounds are task runs,
// each counted once.
func TaskStats(root string, since time.Time) (report.Summary, error) {
	idx, err := store.OpenIndex(root)
	if err != nil {
		return report.Summary{}, err
	}
	defer idx.Close()
	rows, err := idx.List(store.Filter{Command: "task", Since: since})
	if err != nil {
		return report.Summary{}, err
	}
	prRows, err := idx.List(store.Filter{Command: "pr", Since: since})
	if err != nil {
		return report.Summary{}, err
	}
	prs := make([]report.PRRow, len(prRows))
	isPR := map[string]bool{}
	for i, r := range prRows {
		prs[i], isPR[r.ID] = report.PRRow{ID: r.ID, Status: r.Status}, true
	}
	out := make([]report.TaskRow, len(rows))
	for i, r := range rows {
		tr := report.TaskRow{ID: r.ID, Status: r.Status, Iterations: r.Iterations, CostUSD: r.CostUSD,
			CostKnown: r.CostKnown, DurationMs: r.DurationMs, StartedAt: r.StartedAt, RerunOf: r.RerunOf}
		if isPR[r.Parent] {
			tr.PR = r.Parent
		}
		for _, t := range r.Tiers {
			tr.Tiers = append(tr.Tiers, taskengine.TierStat{Name: t.Name, Attempts: t.Attempts, CostUSD: t.CostUSD, CostKnown: t.CostKnown || t.CostUSD != 0, Passed: t.Passed})
		}
		out[i] = tr
	}
	s := report.Stats(out)
	s.PullRequests = report.PRStats(prs, out)
	return s, nil
}
