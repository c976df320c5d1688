package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// BatchRecommendation says what to do about one task of a batch that is
// not done; "" for a done one.
func BatchRecommendation(s batch.Summary, t batch.TaskSummary) string {
	resume := "jlgcli resume " + s.RunID
	branch := ""
	if t.Branch != "" {
		branch = " (branch " + t.Branch + ")"
	}
	switch t.Status {
	case "done":
		return ""
	case "blocked":
		return "fix the failed dependency first; " + resume + " then starts it"
	case "pending", "interrupted", "unmerged", "running":
		return resume + " continues it"
	case "conflict":
		return "its change conflicts with work merged since; merge its branch by hand" + branch + ", or change the sheet and " + resume
	case "merge-failed":
		return "its work passed its checks but was not merged: see the details, then " + resume
	case "budget-exceeded":
		return "its budget is spent: raise the sheet's budget or --budget, then " + resume
	case "backend-missing", "backend-unauthenticated", "backend-unknown", "backend-unsupported":
		return "install or log in to its agent CLI, then " + resume
	case "max-iterations", "no-progress":
		return "its tiers could not pass the checks: review the work" + branch + ", make the sheet more precise or add a stronger tier, then " + resume
	}
	return "see the details and the task's report (jlgcli report RUN), then " + resume
}

// BatchMarkdown is a batch's report as Markdown: its status, every task with
// its status, tier outcomes, attempts, cost and duration, the dependency
// graph by level, the timeline of the tasks, and a recommendation for each
// task that is not done. It is safe for a terminal (termsafe.Text).
func BatchMarkdown(s batch.Summary) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Batch report: %s\n\n", mdText(s.Status))
	p("| Field | Value |\n|---|---|\n")
	p("| Run | %s |\n", mdCode(s.RunID, true))
	p("| Status | %s |\n", mdText(fmt.Sprintf("%s (exit %d)", s.Status, s.ExitCode)))
	if s.Details != "" {
		p("| Details | %s |\n", mdText(s.Details))
	}
	p("| Tasks | %s |\n", mdText(batchCounts(s)))
	p("| Base branch | %s |\n", mdCode(s.BaseBranch, true))
	p("| Jobs | %d |\n", s.Jobs)
	p("| Started | %s |\n", when(s.StartedAt))
	p("| Duration | %s |\n", duration(s.DurationMs))
	p("| Cost | %s |\n\n", mdText(money(s.CostUSD, s.CostKnown, false)))

	p("## Tasks\n\n| Task | Status | Tiers | Attempts | Cost | Duration | Run | Merge commit |\n|---|---|---|---:|---:|---:|---|---|\n")
	for _, t := range s.Tasks {
		run, commit := "-", "-"
		if t.RunID != nil {
			run = mdCode(*t.RunID, true)
		}
		if r := t.Rerun; r != nil {
			run += ", re-run " + mdCode(r.RunID, true)
		}
		if t.Commit != nil {
			commit = mdCode(short(*t.Commit), true)
		}
		p("| %s | %s | %s | %d | %s | %s | %s | %s |\n", mdCode(t.ID, true), mdText(t.Status), mdText(strings.Join(t.Tiers, ", ")),
			t.Attempts, mdText(money(t.CostUSD, t.CostKnown || t.CostUSD != 0, false)), duration(t.DurationMs), run, commit)
	}

	reruns(s, p)

	p("\n## Dependencies\n\n")
	for level, ids := range batchLevels(s) {
		p("- Level %d: %s\n", level, mdText(strings.Join(ids, ", ")))
	}
	for _, t := range s.Tasks {
		if len(t.DependsOn) > 0 {
			p("- %s depends on %s\n", mdCode(t.ID, false), mdText(strings.Join(t.DependsOn, ", ")))
		}
	}

	p("\n## Timeline\n\n")
	g := gantt(s)
	if len(g.Bars) == 0 {
		p("No task ran.\n")
	} else {
		p("| Task | Start | End | Status |\n|---|---:|---:|---|\n")
		for _, bar := range g.Bars {
			p("| %s | +%s | +%s | %s |\n", mdCode(bar.ID, true), duration(bar.FromMs), duration(bar.ToMs), mdText(bar.Status))
		}
	}

	p("\n## Recommendations\n\n")
	n := 0
	for _, t := range s.Tasks {
		if r := BatchRecommendation(s, t); r != "" {
			n++
			p("- %s (%s): %s", mdCode(t.ID, false), mdText(t.Status), mdText(r))
			if t.Details != "" {
				p(". %s", mdText(t.Details))
			}
			p("\n")
		}
	}
	if n == 0 {
		p("Every task is done and merged into %s.\n", mdCode(s.BaseBranch, false))
	}
	return termsafe.Text(b.String())
}

// reruns writes the tasks run again because their first run's change could
// not land: which run landed, and what each cost.
func reruns(s batch.Summary, p func(string, ...any)) {
	n := 0
	for _, t := range s.Tasks {
		r := t.Rerun
		if r == nil {
			continue
		}
		if n == 0 {
			p("\n## Runs again\n\n")
		}
		n++
		first := "-"
		if t.RunID != nil {
			first = mdCode(*t.RunID, false)
		}
		own := money(r.CostUSD, r.CostKnown, false)
		before := money(t.CostUSD-r.CostUSD, t.CostKnown, false)
		as := "re-run as " + mdCode(r.RunID, false) + " " + mdText(strings.TrimPrefix(r.As(), "re-run as "+r.RunID+" "))
		p("- %s: its first run %s (%s) was %s; the task cost %s in all (%s, then %s)\n", mdCode(t.ID, false), first, mdText(before),
			as, mdText(money(t.CostUSD, t.CostKnown, false)), mdText(before), mdText(own))
	}
}

func batchCounts(s batch.Summary) string {
	counts := map[string]int{}
	var order []string
	for _, t := range s.Tasks {
		if counts[t.Status] == 0 {
			order = append(order, t.Status)
		}
		counts[t.Status]++
	}
	parts := []string{fmt.Sprintf("%d", len(s.Tasks))}
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	return strings.Join(parts, ", ")
}

func batchLevels(s batch.Summary) [][]string {
	var levels [][]string
	for _, t := range s.Tasks {
		for len(levels) <= t.Level {
			levels = append(levels, nil)
		}
		levels[t.Level] = append(levels[t.Level], t.ID)
	}
	return levels
}

// ganttChart is the tasks of a batch over time.
type ganttChart struct {
	Width, Height, PlotX, PlotW int
	Bars                        []ganttBar
	Ticks                       []ganttTick
}

type ganttBar struct {
	ID, Status, Class, Title string
	FromMs, ToMs             millis.Duration
	X, Y, W, H, TextY        int
}

type ganttTick struct {
	X     int
	Label string
}

const (
	ganttLabelW = 160
	ganttPlotW  = 640
	ganttRow    = 26
	ganttTop    = 24
)

// gantt lays out each task that ran as a bar from its start to its end,
// relative to the batch's start.
func gantt(s batch.Summary) ganttChart {
	g := ganttChart{PlotX: ganttLabelW, PlotW: ganttPlotW, Width: ganttLabelW + ganttPlotW + 20}
	var end millis.Duration = 1
	for _, t := range s.Tasks {
		if t.StartedAt == nil {
			continue
		}
		from := max(millis.Of(t.StartedAt.Sub(s.StartedAt)), 0)
		r := t.Rerun
		if r == nil {
			to := from + t.DurationMs
			end = max(end, to)
			g.Bars = append(g.Bars, ganttBar{ID: t.ID, Status: t.Status, FromMs: from, ToMs: to, Class: ganttClass(t.Status)})
			continue
		}
		// A task run again: its first run (done, not landed), then its
		// second run on a bar of its own.
		to := from + t.DurationMs - r.DurationMs
		end = max(end, to)
		g.Bars = append(g.Bars, ganttBar{ID: t.ID, Status: "re-run", FromMs: from, ToMs: to, Class: "waiting"})
		if !r.StartedAt.IsZero() {
			from := max(millis.Of(r.StartedAt.Sub(s.StartedAt)), 0)
			to := from + r.DurationMs
			end = max(end, to)
			status := string(r.Status)
			if r.Landed {
				status = t.Status
			}
			g.Bars = append(g.Bars, ganttBar{ID: t.ID + " (re-run)", Status: status, FromMs: from, ToMs: to, Class: ganttClass(status)})
		}
	}
	end = max(end, s.DurationMs)
	for i := range g.Bars {
		bar := &g.Bars[i]
		bar.X = ganttLabelW + ganttPlotW*int(bar.FromMs)/int(end)
		bar.W = max(2, ganttPlotW*int(bar.ToMs-bar.FromMs)/int(end))
		bar.Y = ganttTop + i*ganttRow
		bar.H = ganttRow - 8
		bar.TextY = bar.Y + bar.H - 4
		bar.Title = fmt.Sprintf("%s: %s, +%s to +%s", bar.ID, bar.Status, duration(bar.FromMs), duration(bar.ToMs))
	}
	g.Height = ganttTop + len(g.Bars)*ganttRow + 8
	for i := 0; i <= 4; i++ {
		ms := end * millis.Duration(i) / 4
		g.Ticks = append(g.Ticks, ganttTick{X: ganttLabelW + ganttPlotW*i/4, Label: duration(ms)})
	}
	return g
}

func ganttClass(status string) string {
	switch status {
	case "done":
		return "done"
	case "interrupted", "pending", "unmerged", "running":
		return "waiting"
	case "blocked":
		return "blocked"
	}
	return "failed"
}

// BatchHTML is a batch's report as one self-contained HTML page: inline CSS
// and SVG, no script, nothing loaded from anywhere; the tasks, the
// dependency levels, a Gantt chart of the tasks over time coloured by
// status, and the recommendations. Every text is escaped by html/template;
// the page is safe for a terminal (termsafe.Text).
func BatchHTML(s batch.Summary) string {
	type row struct {
		batch.TaskSummary
		Run, Commit, Cost, Duration, Tiers, Recommendation, Class string
	}
	v := struct {
		S                                       batch.Summary
		Counts, Started, Duration, Cost, Status string
		Rows                                    []row
		Levels                                  [][]string
		Chart                                   ganttChart
	}{S: s, Counts: batchCounts(s), Started: when(s.StartedAt), Duration: duration(s.DurationMs),
		Cost: money(s.CostUSD, s.CostKnown, false), Status: statusClass(s.Status), Levels: batchLevels(s), Chart: gantt(s)}
	for _, t := range s.Tasks {
		r := row{TaskSummary: t, Run: "-", Commit: "-", Cost: money(t.CostUSD, t.CostKnown || t.CostUSD != 0, false),
			Duration: duration(t.DurationMs), Tiers: strings.Join(t.Tiers, ", "), Recommendation: BatchRecommendation(s, t),
			Class: ganttClass(t.Status)}
		if t.RunID != nil {
			r.Run = *t.RunID
		}
		if t.Commit != nil {
			r.Commit = short(*t.Commit)
		}
		v.Rows = append(v.Rows, r)
	}
	var b strings.Builder
	if err := batchPage.Execute(&b, v); err != nil {
		panic(fmt.Sprintf("report: batch html: %v", err)) // a fixed template over plain values
	}
	return termsafe.Text(b.String())
}

var batchPage = template.Must(template.New("batch").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Batch report: {{.S.Status}} — {{.S.RunID}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; background: #f6f8fa; padding: .05rem .3rem; border-radius: 4px; }
.badge { display: inline-block; padding: .1rem .6rem; border-radius: 1rem; color: #fff; font-weight: 600; }
.badge.ok { background: #1a7f37; } .badge.stop { background: #cf222e; }
.st.done { color: #1a7f37; } .st.failed { color: #cf222e; } .st.blocked { color: #8250df; } .st.waiting { color: #9a6700; }
.bar.done { fill: #2da44e; } .bar.failed { fill: #cf222e; } .bar.blocked { fill: #8250df; } .bar.waiting { fill: #d4a72c; }
.tick { stroke: #d0d7de; } .label { font-size: 12px; fill: #1f2328; } .ticklabel { font-size: 11px; fill: #57606a; }
</style>
</head>
<body>
<h1>Batch report <span class="badge {{.Status}}">{{.S.Status}}</span></h1>
<table>
<tr><th>Run</th><td><code>{{.S.RunID}}</code></td></tr>
<tr><th>Status</th><td>{{.S.Status}} (exit {{.S.ExitCode}})</td></tr>
{{if .S.Details}}<tr><th>Details</th><td>{{.S.Details}}</td></tr>{{end}}
<tr><th>Tasks</th><td>{{.Counts}}</td></tr>
<tr><th>Base branch</th><td><code>{{.S.BaseBranch}}</code></td></tr>
<tr><th>Jobs</th><td>{{.S.Jobs}}</td></tr>
<tr><th>Started</th><td>{{.Started}}</td></tr>
<tr><th>Duration</th><td>{{.Duration}}</td></tr>
<tr><th>Cost</th><td>{{.Cost}}</td></tr>
</table>
<h2>Timeline</h2>
{{if .Chart.Bars}}<svg role="img" aria-label="The tasks over time" width="{{.Chart.Width}}" height="{{.Chart.Height}}" viewBox="0 0 {{.Chart.Width}} {{.Chart.Height}}">
{{range .Chart.Ticks}}<line class="tick" x1="{{.X}}" y1="16" x2="{{.X}}" y2="{{$.Chart.Height}}"/><text class="ticklabel" x="{{.X}}" y="12" text-anchor="middle">+{{.Label}}</text>
{{end}}{{range .Chart.Bars}}<text class="label" x="4" y="{{.TextY}}">{{.ID}}</text><rect class="bar {{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}</svg>{{else}}<p>No task ran.</p>{{end}}
<h2>Tasks</h2>
<table>
<tr><th>Task</th><th>Title</th><th>Status</th><th>Tiers</th><th>Attempts</th><th>Cost</th><th>Duration</th><th>Run</th><th>Merge commit</th></tr>
{{range .Rows}}<tr><td><code>{{.ID}}</code></td><td>{{.Title}}</td><td class="st {{.Class}}">{{.Status}}</td><td>{{.Tiers}}</td><td class="num">{{.Attempts}}</td><td class="num">{{.Cost}}</td><td class="num">{{.Duration}}</td><td><code>{{.Run}}</code></td><td><code>{{.Commit}}</code></td></tr>
{{end}}</table>
<h2>Dependencies</h2>
<ul>{{range $i, $ids := .Levels}}<li>Level {{$i}}: {{range $j, $id := $ids}}{{if $j}}, {{end}}<code>{{$id}}</code>{{end}}</li>{{end}}
{{range .Rows}}{{if .DependsOn}}<li><code>{{.ID}}</code> depends on {{range $j, $id := .DependsOn}}{{if $j}}, {{end}}<code>{{$id}}</code>{{end}}</li>{{end}}{{end}}</ul>
<h2>Recommendations</h2>
<ul>{{range .Rows}}{{if .Recommendation}}<li><code>{{.ID}}</code> ({{.Status}}): {{.Recommendation}}{{if .Details}}. {{.Details}}{{end}}</li>{{end}}{{end}}</ul>
</body>
</html>
`))
