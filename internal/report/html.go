package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// HTML is the report as one self-contained HTML page: inline CSS, no
// script, nothing loaded from anywhere. It holds what Markdown does and a
// timeline of the attempts drawn in inline SVG: one bar per attempt, in
// order, its height proportional to its cost, its colour the gate's
// verdict, grouped by tier with the tier changes and the loops detected
// marked. Every text from the result is escaped by html/template, and the
// page is safe for a terminal (termsafe.Text: an agent's control
// characters and bidi overrides show as \x1b, \u202e in it).
func (r Report) HTML() string {
	var b strings.Builder
	v := htmlView{Report: r, Chart: timeline(r), Status: r.statusLine(), Started: when(r.StartedAt),
		Attempts: r.attemptsLine(), Duration: duration(r.DurationMs), Cost: r.costLine(),
		Tokens: fmt.Sprintf("%d in, %d out", r.InputTokens, r.OutputTokens), Windows: r.windowsLine(), StatusClass: statusClass(r.Status),
		Rerun: r.rerunLine()}
	for _, t := range r.TiersUsed {
		v.Tiers = append(v.Tiers, htmlTier{Tier: t, Model: model(t.Backend, t.Model), Cost: money(t.CostUSD, t.CostKnown, t.CostEstimated)})
	}
	for i, a := range r.Attempts {
		ha := htmlAttempt{Attempt: a, Step: stepText(a.Step), Cost: money(a.CostUSD, a.CostKnown, a.CostEstimated),
			Duration: duration(a.DurationMs), Action: a.actionText(), Files: a.filesText(), Class: gateClass(a.GateStatus)}
		if i < len(r.GateResults) {
			ha.Gate = r.GateResults[i]
		}
		v.Rows = append(v.Rows, ha)
	}
	for _, d := range r.Detections {
		v.Detections = append(v.Detections, htmlDetection{Detection: d, Attempts: attemptList(d.Attempts)})
	}
	if g := r.Git; g != nil {
		v.BaseShort = short(g.Base)
		for _, c := range g.Commits {
			v.Commits = append(v.Commits, short(c))
		}
		v.Merge = mergeLine(g.Merge)
		if g.needsMergeCommand() {
			v.MergeCommand = g.Merge.Command
		}
	}
	if err := page.Execute(&b, v); err != nil {
		// The template is fixed and its data plain values: this cannot
		// happen short of a bug, which the tests catch.
		panic(fmt.Sprintf("report: html: %v", err))
	}
	return termsafe.Text(b.String())
}

type htmlView struct {
	Report
	Chart                                             chart
	StatusClass                                       string
	Status, Started, Attempts, Duration, Cost, Tokens string
	Rerun                                             string
	Windows                                           string
	Tiers                                             []htmlTier
	Rows                                              []htmlAttempt
	Detections                                        []htmlDetection
	BaseShort, Merge, MergeCommand                    string
	Commits                                           []string
}

type htmlTier struct {
	Tier
	Model, Cost string
}

type htmlAttempt struct {
	Attempt
	Gate                                       GateResult
	Step, Cost, Duration, Action, Files, Class string
}

type htmlDetection struct {
	Detection
	Attempts string
}

// statusClass colours the status: ok for done, stop otherwise.
func statusClass(status string) string {
	if status == "done" {
		return "ok"
	}
	return "stop"
}

// gateClass is the CSS class of a gate status.
func gateClass(status string) string {
	switch status {
	case "pass", "fail", "warning":
		return status
	}
	return "none"
}

// Geometry of the timeline, in SVG user units.
const (
	chartLeft   = 72 // room for the cost axis labels
	chartRight  = 16
	chartTop    = 30 // room for the loop markers and step labels
	chartPlot   = 150
	chartSlot   = 34
	chartBarW   = 22
	chartNumGap = 15 // baseline to attempt numbers
	chartBandY  = 24 // baseline to the tier band
	chartBandH  = 20
	chartMinW   = 360
)

// chart is the timeline of the attempts.
type chart struct {
	Width, Height int
	// Base is the y of the baseline, Top that of the highest bar, AxisX
	// the x of the cost axis.
	Base, Top, AxisX, LabelX int
	MaxCost                  string
	// Uniform: no attempt had a known cost; the bars are of equal height.
	Uniform    bool
	Bars       []chartBar
	Bands      []chartBand
	Boundaries []chartLine
	Marks      []chartMark
}

type chartBar struct {
	X, Y, W, H   int
	NumX, NumY   int
	Number       int
	Class, Title string
}

// chartBand is a tier's run of consecutive attempts.
type chartBand struct {
	X, Y, W, H   int
	TextX, TextY int
	Name, Class  string
}

// chartLine is a tier change (or a step change) between two attempts.
type chartLine struct {
	X, Y1, Y2    int
	TextX, TextY int
	Class, Label string
}

// chartMark marks a loop detected at an attempt.
type chartMark struct {
	Points string
	Title  string
}

// timeline lays the attempts out.
func timeline(r Report) chart {
	n := len(r.Attempts)
	c := chart{Width: max(chartMinW, chartLeft+n*chartSlot+chartRight), Base: chartTop + chartPlot, Top: chartTop,
		AxisX: chartLeft - 4, LabelX: chartLeft - 8}
	c.Height = c.Base + chartBandY + chartBandH + 8
	if n == 0 {
		return c
	}
	maxCost := 0.0
	for _, a := range r.Attempts {
		maxCost = max(maxCost, a.CostUSD)
	}
	c.Uniform = maxCost <= 0
	c.MaxCost = fmt.Sprintf("$%.4f", maxCost)
	marks := map[int][]string{}
	for _, d := range r.Detections {
		if k := len(d.Attempts); k > 0 {
			last := d.Attempts[k-1]
			marks[last] = append(marks[last], d.Names()+": "+d.Details)
		}
	}
	bandStart, band := 0, 0
	closeBand := func(end int) {
		a := r.Attempts[bandStart]
		x := chartLeft + bandStart*chartSlot + 2
		w := (end-bandStart)*chartSlot - 4
		c.Bands = append(c.Bands, chartBand{X: x, Y: c.Base + chartBandY, W: w, H: chartBandH, TextX: x + w/2,
			TextY: c.Base + chartBandY + 14, Name: a.Tier, Class: fmt.Sprintf("band%d", band%2)})
		band++
	}
	for i, a := range r.Attempts {
		slot := chartLeft + i*chartSlot
		h := chartPlot / 2
		if !c.Uniform {
			h = max(2, int(float64(chartPlot)*a.CostUSD/maxCost+0.5))
		}
		title := fmt.Sprintf("attempt %d · tier %s (%d in tier)", a.Number, a.Tier, a.InTier)
		if a.Step > 0 {
			title += fmt.Sprintf(" · step %d", a.Step)
		}
		title += fmt.Sprintf(" · gate %s · %s · %s", a.GateStatus, money(a.CostUSD, a.CostKnown, a.CostEstimated), a.actionText())
		x := slot + (chartSlot-chartBarW)/2
		c.Bars = append(c.Bars, chartBar{X: x, Y: c.Base - h, W: chartBarW, H: h, NumX: slot + chartSlot/2,
			NumY: c.Base + chartNumGap, Number: a.Number, Class: gateClass(a.GateStatus), Title: title})
		if i > 0 {
			prev := r.Attempts[i-1]
			switch {
			case prev.Step != a.Step:
				c.Boundaries = append(c.Boundaries, chartLine{X: slot, Y1: chartTop - 14, Y2: c.Base + chartBandY + chartBandH,
					TextX: slot + 3, TextY: chartTop - 18, Class: "step", Label: fmt.Sprintf("step %d", a.Step)})
			case prev.Tier != a.Tier || prev.TierIndex != a.TierIndex:
				c.Boundaries = append(c.Boundaries, chartLine{X: slot, Y1: chartTop - 6, Y2: c.Base + chartBandY + chartBandH,
					Class: "tier"})
			}
			if prev.Tier != a.Tier || prev.TierIndex != a.TierIndex || prev.Step != a.Step {
				closeBand(i)
				bandStart = i
			}
		}
		if m := marks[a.Number]; len(m) > 0 {
			cx, y := slot+chartSlot/2, c.Base-h-3
			c.Marks = append(c.Marks, chartMark{Points: fmt.Sprintf("%d,%d %d,%d %d,%d", cx-7, y-12, cx+7, y-12, cx, y),
				Title: "loop detected at attempt " + fmt.Sprint(a.Number) + ": " + strings.Join(m, "; ")})
		}
	}
	closeBand(n)
	return c
}

var page = template.Must(template.New("report").Parse(pageTemplate))

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Task report: {{.Status}} — {{.RunID}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .3rem; }
h2 { font-size: 1.2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
code { background: #f6f8fa; padding: .05rem .3rem; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; border-radius: 6px; white-space: pre; }
pre.task { white-space: pre-wrap; }
.badge { display: inline-block; padding: .1rem .6rem; border-radius: 1rem; color: #fff; font-weight: 600; }
.badge.ok { background: #1a7f37; }
.badge.stop { background: #cf222e; }
.recommendation { border-left: 4px solid #0969da; background: #ddf4ff; padding: .6rem .9rem; margin: 1rem 0; }
.gate { font-weight: 600; }
.gate.pass { color: #1a7f37; }
.gate.fail { color: #cf222e; }
.gate.warning { color: #9a6700; }
.gate.none { color: #57606a; }
.chart { overflow-x: auto; }
.bar.pass { fill: #2da44e; }
.bar.fail { fill: #cf222e; }
.bar.warning { fill: #d4a72c; }
.bar.none { fill: #8c959f; }
.band0 { fill: #eaeef2; }
.band1 { fill: #d8dee4; }
.axis { stroke: #8c959f; stroke-width: 1; }
.boundary.tier { stroke: #57606a; stroke-width: 1.5; stroke-dasharray: 4 3; }
.boundary.step { stroke: #0969da; stroke-width: 1.5; }
.mark { fill: #8250df; }
svg text { font-size: 11px; fill: #1f2328; }
svg text.axislabel { text-anchor: end; fill: #57606a; }
svg text.num { text-anchor: middle; fill: #57606a; }
svg text.tiername { text-anchor: middle; font-weight: 600; }
.legend span { margin-right: 1.2rem; white-space: nowrap; }
.swatch { display: inline-block; width: .8rem; height: .8rem; vertical-align: -.1rem; margin-right: .3rem; border-radius: 2px; }
.swatch.pass { background: #2da44e; }
.swatch.fail { background: #cf222e; }
.swatch.warning { background: #d4a72c; }
.swatch.none { background: #8c959f; }
.swatch.mark { background: #8250df; }
.note { color: #57606a; font-size: .9em; }
</style>
</head>
<body>
<h1>Task report: <span class="badge {{.StatusClass}}">{{.Report.Status}}</span></h1>
<p class="recommendation"><strong>Recommendation:</strong> {{.Recommendation}}</p>

<h2>Summary</h2>
<table>
<tr><th>Run</th><td><code>{{.RunID}}</code></td></tr>
<tr><th>Status</th><td>{{.Status}}</td></tr>
{{- if .Details}}
<tr><th>Details</th><td>{{.Details}}</td></tr>
{{- end}}
{{- with .Failure}}
<tr><th>Agent failure</th><td>{{.Kind}}: {{.Message}}</td></tr>
{{- end}}
{{- if .Backend}}
<tr><th>Backend</th><td><code>{{.Backend}}</code></td></tr>
{{- end}}
{{- if .Sandbox}}
<tr><th>Sandbox</th><td>{{.Sandbox}}</td></tr>
{{- end}}
{{- if .Rerun}}
<tr><th>Re-run</th><td>{{.Rerun}}</td></tr>
{{- end}}
<tr><th>Started</th><td>{{.Started}}</td></tr>
<tr><th>Attempts</th><td>{{.Attempts}}</td></tr>
<tr><th>Duration</th><td>{{.Duration}}</td></tr>
<tr><th>Cost</th><td>{{.Cost}}</td></tr>
<tr><th>Tokens</th><td>{{.Tokens}}</td></tr>{{if .Windows}}
<tr><th>Windows</th><td>{{.Windows}}</td></tr>{{end}}
{{- with .Git}}
<tr><th>Branch</th><td><code>{{.Branch}}</code></td></tr>
{{- end}}
</table>

<h2>Task</h2>
<pre class="task">{{.Task}}</pre>
{{- if .Plan}}

<h2>Plan</h2>
<ol>
{{- range .Plan}}
<li>{{.}}</li>
{{- end}}
</ol>
{{- end}}

<h2>Timeline</h2>
{{- if .Report.Attempts}}
<div class="chart">
<svg width="{{.Chart.Width}}" height="{{.Chart.Height}}" viewBox="0 0 {{.Chart.Width}} {{.Chart.Height}}" role="img" aria-label="Attempts: cost and gate result of each, by tier">
<line class="axis" x1="{{.Chart.AxisX}}" y1="{{.Chart.Top}}" x2="{{.Chart.AxisX}}" y2="{{.Chart.Base}}"/>
<line class="axis" x1="{{.Chart.AxisX}}" y1="{{.Chart.Base}}" x2="{{.Chart.Width}}" y2="{{.Chart.Base}}"/>
{{- if not .Chart.Uniform}}
<text class="axislabel" x="{{.Chart.LabelX}}" y="{{.Chart.Top}}" dy="4">{{.Chart.MaxCost}}</text>
<text class="axislabel" x="{{.Chart.LabelX}}" y="{{.Chart.Base}}">$0</text>
{{- end}}
{{- range .Chart.Bands}}
<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="3"/>
<text class="tiername" x="{{.TextX}}" y="{{.TextY}}">{{.Name}}</text>
{{- end}}
{{- range .Chart.Boundaries}}
<line class="boundary {{.Class}}" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}"/>
{{- if .Label}}
<text x="{{.TextX}}" y="{{.TextY}}">{{.Label}}</text>
{{- end}}
{{- end}}
{{- range .Chart.Bars}}
<rect class="bar {{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
<text class="num" x="{{.NumX}}" y="{{.NumY}}">{{.Number}}</text>
{{- end}}
{{- range .Chart.Marks}}
<polygon class="mark" points="{{.Points}}"><title>{{.Title}}</title></polygon>
{{- end}}
</svg>
</div>
<p class="legend"><span><i class="swatch pass"></i>gate passed</span><span><i class="swatch warning"></i>warning</span><span><i class="swatch fail"></i>failed</span><span><i class="swatch none"></i>gate not run</span><span><i class="swatch mark"></i>loop detected</span><span>dashed line: tier change</span><span>blue line: next plan step</span></p>
<p class="note">{{if .Chart.Uniform}}No attempt reported a cost: the bars are of equal height.{{else}}Bar height is proportional to the attempt's cost.{{end}} Hover a bar or a marker for its details.</p>
{{- else}}
<p>No attempt was made.</p>
{{- end}}

<h2>Tiers</h2>
{{- if .Tiers}}
<table>
<tr><th>Tier</th><th>Backend / model</th><th>Attempts</th><th>Passed</th><th>Cost</th><th>Outcome</th></tr>
{{- range .Tiers}}
<tr><td>{{.Name}}</td><td><code>{{.Model}}</code></td><td class="num">{{.Attempts}}</td><td class="num">{{.Passed}}</td><td class="num">{{.Cost}}</td><td>{{.Outcome}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No tier made an attempt.</p>
{{- end}}
{{- if .TiersUnused}}
<p>Not used: {{range $i, $t := .TiersUnused}}{{if $i}}, {{end}}{{$t}}{{end}}.</p>
{{- end}}

<h2>Attempts</h2>
{{- if .Rows}}
<table>
<tr><th>#</th><th>Step</th><th>Tier</th><th>In tier</th><th>Gate</th><th>Cost</th><th>Duration</th><th>Action</th><th>Files changed</th></tr>
{{- range .Rows}}
<tr><td class="num">{{.Number}}</td><td class="num">{{.Step}}</td><td>{{.Tier}}</td><td class="num">{{.InTier}}</td><td class="gate {{.Class}}">{{.GateStatus}}</td><td class="num">{{.Cost}}</td><td class="num">{{.Duration}}</td><td>{{.Action}}</td><td class="num">{{.Files}}</td></tr>
{{- end}}
</table>
<p class="note">Files changed count the state each attempt left against the task's base. Costs after ~ are estimated from tokens.</p>

<h2>Gate results</h2>
<table>
<tr><th>#</th><th>Tier</th><th>Status</th><th>Recommendation</th><th>Summary</th></tr>
{{- range .Rows}}
<tr><td class="num">{{.Gate.Number}}</td><td>{{.Gate.Tier}}</td><td class="gate {{.Class}}">{{.Gate.Status}}</td><td><code>{{.Gate.Recommendation}}</code></td><td>{{.Gate.Summary}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No attempt was made.</p>
{{- end}}
{{- range .TestsJudged}}
<p class="tests">{{.}}</p>
{{- end}}

<h2>Loops detected</h2>
{{- if .Detections}}
<table>
<tr><th>Rule</th><th>Attempts</th><th>Tier</th><th>Action</th><th>Details</th></tr>
{{- range .Detections}}
<tr><td><code>{{.Names}}</code></td><td>{{.Attempts}}</td><td>{{.Tier}}</td><td>{{.Action}}</td><td>{{.Details}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>None.</p>
{{- end}}

<h2>Unique errors</h2>
{{- if .UniqueErrors}}
<ol>
{{- range .UniqueErrors}}
<li><code>{{.}}</code></li>
{{- end}}
</ol>
{{- if .UniqueErrorsLeftOut}}
<p>{{.UniqueErrorsLeftOut}} more left out.</p>
{{- end}}
{{- else}}
<p>None.</p>
{{- end}}

<h2>Flaky tests</h2>
{{- if .FlakyTests}}
<p>Failed, then passed when run again:</p>
<ul>
{{- range .FlakyTests}}
<li><code>{{.}}</code></li>
{{- end}}
</ul>
{{- else}}
<p>None.</p>
{{- end}}

<h2>Git</h2>
{{- with .Git}}
<table>
<tr><th>Branch</th><td><code>{{.Branch}}</code> from <code>{{$.BaseShort}}</code>{{with .BaseBranch}} on <code>{{.}}</code>{{end}}</td></tr>
{{- if .Mode}}
<tr><th>Mode</th><td>{{.Mode}}</td></tr>
{{- end}}
{{- if .Repo}}
<tr><th>Repository</th><td><code>{{.Repo}}</code></td></tr>
{{- end}}
{{- if .Worktree}}
<tr><th>Worktree</th><td><code>{{.Worktree}}</code>{{if .Removed}} (removed){{end}}</td></tr>
{{- end}}
{{- if .Refs}}
<tr><th>Attempt snapshots</th><td><code>{{.Refs}}&lt;n&gt;</code> (the state before attempt n) and <code>{{.Refs}}&lt;n&gt;-result</code> (the state it left)</td></tr>
{{- end}}
<tr><th>Commits</th><td>{{range $i, $c := $.Commits}}{{if $i}}, {{end}}<code>{{$c}}</code>{{else}}none{{end}}</td></tr>
{{- if .WIP}}
<tr><th>WIP commit</th><td><code>{{.WIP}}</code></td></tr>
{{- end}}
{{- if .DirtyIncluded}}
<tr><th>Uncommitted changes</th><td>included as the branch's first commit</td></tr>
{{- end}}
{{- if .DirtyLeftOut}}
<tr><th>Uncommitted changes</th><td>left out of the task</td></tr>
{{- end}}
{{- if $.Merge}}
<tr><th>Merge</th><td>{{$.Merge}}</td></tr>
{{- end}}
<tr><th>Pushed</th><td>{{if .Pushed}}yes{{with .Remote}}, to <code>{{.}}</code>{{end}}{{else}}no{{end}}</td></tr>
{{- if .PR}}
<tr><th>Pull request</th><td><code>{{.PR}}</code></td></tr>
{{- end}}
{{- range .Warnings}}
<tr><th>Warning</th><td>{{.}}</td></tr>
{{- end}}
</table>
{{- if $.MergeCommand}}
<p>Merge it with:</p>
<pre>{{$.MergeCommand}}</pre>
{{- end}}
{{- else}}
<p>The task ran without git: its changes are in the working tree.</p>
{{- end}}

<h2>Recommendation</h2>
<p>{{.Recommendation}}</p>

<h2>Last diff</h2>
{{- if .LastDiff}}
{{- if .LastDiffNote}}
<p class="note">Note: {{.LastDiffNote}}.</p>
{{- end}}
<pre class="diff">{{.LastDiff}}</pre>
{{- else}}
<p>No diff.</p>
{{- end}}
</body>
</html>
`
