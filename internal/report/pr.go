package report

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// PR is a pull-request run as its report tells it: what local.PRResult
// holds (this package cannot import local, which writes a task's reports
// with it). Its title, reason, checks and blockers come from the forge or
// say what the forge holds: anyone who can write on the pull request wrote
// them, and every format escapes them.
type PR struct {
	RunID  string
	Number int
	URL    string
	Title  string
	Branch string
	Base   string
	Target string
	// From is the task run that opened the pull request ("" for one
	// taken over).
	From     string
	Status   string
	ExitCode int
	Reason   string
	Head     string
	Looks    int
	// Waiting is what a running run waits for.
	Waiting []string
	Checks  []PRCheck
	Rounds  []PRRound
	// Current is the round begun and not ended (nil for none).
	Current    *PRRound
	Merged     string
	CostUSD    float64
	DurationMs millis.Duration
	// Comment is the address of the comment the run left on the pull
	// request when it gave up.
	Comment string
	// Resumable: jlgcli resume goes on with the run.
	Resumable bool
}

// PRCheck is a check at the pull request's head, as the run last saw it.
type PRCheck struct {
	Name, State, URL string
}

// PRRound is one round of a pull-request run: its task run, what it was
// begun for, and what came of it.
type PRRound struct {
	Round    int
	RunID    string
	Blockers []string
	Status   string
	Pushed   string
	Rejected bool
	Replied  int
	CostUSD  float64
	Details  string
}

// pushedText says what a round pushed.
func (r PRRound) pushedText() string {
	switch {
	case r.Pushed != "":
		return short(r.Pushed)
	case r.Rejected:
		return "refused: the branch had moved"
	case r.Status == "":
		return "under way"
	}
	return "nothing"
}

// Recommendation says what to do about a pull-request run that did not
// reach its target; "" for one that did.
func (p PR) Recommendation() string {
	again := fmt.Sprintf("jlgcli pr %d --until %s", p.Number, p.Target)
	switch {
	case p.Status == "done":
		return ""
	case p.Status == "needs-you":
		return "a person must see to what is in the way (the reason above, and the comment on the pull request); then " + again + " takes it up again"
	case p.Status == "budget-exceeded":
		return "the budget is spent: raise it (--budget), then " + again
	case p.Resumable:
		return "jlgcli resume " + p.RunID + " goes on where it stopped"
	}
	return "see the reason above, then " + again
}

// costText is the run's cost: what its rounds spent (each round's task
// run counts it too).
func (p PR) costText() string {
	return money(p.CostUSD, p.CostUSD != 0, false) + " (its rounds' task runs)"
}

// webLink is u when it is an http(s) address that can be written as a
// link as it is, "" otherwise: a forge's address is shown, never followed,
// when it is anything else.
func webLink(u string) string {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || strings.ContainsAny(u, " \t\r\n()<>[]`\"'\\") {
		return ""
	}
	return u
}

// mdLink is u as a Markdown link when it is a plain web address, else in
// code.
func mdLink(text, u string) string {
	if l := webLink(u); l != "" {
		return "[" + mdText(text) + "](" + l + ")"
	}
	return mdText(text) + " " + mdCode(u, true)
}

// PRMarkdown is a pull-request run's report as Markdown: the pull
// request, how the run ended and why, each round, the checks last seen,
// the merge, the comment it left, and what to do next. It is safe for a
// terminal (termsafe.Text).
func PRMarkdown(pr PR) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Pull-request report: %s\n\n", mdText(pr.Status))
	p("| Field | Value |\n|---|---|\n")
	p("| Run | %s |\n", mdCode(pr.RunID, true))
	p("| Pull request | %s |\n", mdLink(fmt.Sprintf("#%d", pr.Number), pr.URL))
	if pr.Title != "" {
		p("| Title | %s |\n", mdText(pr.Title))
	}
	p("| Branch | %s into %s |\n", mdCode(pr.Branch, true), mdCode(pr.Base, true))
	p("| Until | %s |\n", mdText(pr.Target))
	if pr.From != "" {
		p("| Opened by | task run %s |\n", mdCode(pr.From, true))
	}
	p("| Status | %s |\n", mdText(fmt.Sprintf("%s (exit %d)", pr.Status, pr.ExitCode)))
	if pr.Reason != "" {
		p("| Reason | %s |\n", mdText(pr.Reason))
	}
	if len(pr.Waiting) > 0 {
		p("| Waiting for | %s |\n", mdText(strings.Join(pr.Waiting, ", ")))
	}
	if pr.Head != "" {
		p("| Head | %s |\n", mdCode(short(pr.Head), true))
	}
	p("| Looks | %d |\n", pr.Looks)
	p("| Rounds | %d |\n", len(pr.Rounds))
	if pr.Merged != "" {
		p("| Merged as | %s |\n", mdCode(short(pr.Merged), true))
	}
	p("| Cost | %s |\n", mdText(pr.costText()))
	p("| Duration | %s |\n", duration(pr.DurationMs))
	if pr.Comment != "" {
		p("| Told the pull request | %s |\n", mdLink("its comment", pr.Comment))
	}

	p("\n## Rounds\n\n")
	rounds := pr.Rounds
	if pr.Current != nil {
		rounds = append(rounds[:len(rounds):len(rounds)], *pr.Current)
	}
	if len(rounds) == 0 {
		p("No round: no agent was woken.\n")
	} else {
		p("| Round | Task run | For | Status | Pushed | Threads answered | Cost | Details |\n|---:|---|---|---|---|---:|---:|---|\n")
		for _, r := range rounds {
			p("| %d | %s | %s | %s | %s | %d | %s | %s |\n", r.Round, mdCode(r.RunID, true), mdText(strings.Join(r.Blockers, "; ")),
				mdText(or(r.Status, "under way")), mdText(r.pushedText()), r.Replied, mdText(money(r.CostUSD, r.CostUSD != 0, false)), mdText(r.Details))
		}
	}

	p("\n## Checks at the head\n\n")
	if len(pr.Checks) == 0 {
		p("None seen.\n")
	} else {
		p("| Check | State |\n|---|---|\n")
		for _, c := range pr.Checks {
			name := mdText(c.Name)
			if l := webLink(c.URL); l != "" {
				name = mdLink(c.Name, l)
			}
			p("| %s | %s |\n", name, mdText(c.State))
		}
	}

	p("\n## Recommendation\n\n")
	if r := pr.Recommendation(); r != "" {
		p("%s\n", mdText(r))
	} else {
		p("The pull request reached its target (%s).\n", mdText(pr.Target))
	}
	return termsafe.Text(b.String())
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// PRHTML is a pull-request run's report as one self-contained HTML page
// (inline CSS, no script, nothing loaded): what PRMarkdown tells. Every
// text is escaped by html/template, which also keeps a link to the forge
// from being anything but a web address; the page is safe for a terminal
// (termsafe.Text).
func PRHTML(pr PR) string {
	type round struct {
		PRRound
		Status, Pushed, Cost, For string
	}
	v := struct {
		P                                                   PR
		Link, CommentLink, Class, Cost, Duration, Head, Rec string
		Merged                                              string
		Rounds                                              []round
	}{P: pr, Link: webLink(pr.URL), CommentLink: webLink(pr.Comment), Class: statusClass(pr.Status), Cost: pr.costText(),
		Duration: duration(pr.DurationMs), Head: short(pr.Head), Merged: short(pr.Merged), Rec: pr.Recommendation()}
	rounds := pr.Rounds
	if pr.Current != nil {
		rounds = append(rounds[:len(rounds):len(rounds)], *pr.Current)
	}
	for _, r := range rounds {
		v.Rounds = append(v.Rounds, round{PRRound: r, Status: or(r.Status, "under way"), Pushed: r.pushedText(),
			Cost: money(r.CostUSD, r.CostUSD != 0, false), For: strings.Join(r.Blockers, "; ")})
	}
	var b strings.Builder
	if err := prPage.Execute(&b, v); err != nil {
		panic(fmt.Sprintf("report: pull request html: %v", err)) // a fixed template over plain values
	}
	return termsafe.Text(b.String())
}

var prPage = template.Must(template.New("pr").Funcs(template.FuncMap{"link": webLink}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pull-request report: {{.P.Status}} — #{{.P.Number}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .6rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; background: #f6f8fa; padding: .05rem .3rem; border-radius: 4px; }
.badge { display: inline-block; padding: .1rem .6rem; border-radius: 1rem; color: #fff; font-weight: 600; }
.badge.ok { background: #1a7f37; } .badge.stop { background: #cf222e; }
</style>
</head>
<body>
<h1>Pull-request report <span class="badge {{.Class}}">{{.P.Status}}</span></h1>
<table>
<tr><th>Run</th><td><code>{{.P.RunID}}</code></td></tr>
<tr><th>Pull request</th><td>{{if .Link}}<a href="{{.Link}}">#{{.P.Number}}</a>{{else}}#{{.P.Number}} <code>{{.P.URL}}</code>{{end}}</td></tr>
{{if .P.Title}}<tr><th>Title</th><td>{{.P.Title}}</td></tr>{{end}}
<tr><th>Branch</th><td><code>{{.P.Branch}}</code> into <code>{{.P.Base}}</code></td></tr>
<tr><th>Until</th><td>{{.P.Target}}</td></tr>
{{if .P.From}}<tr><th>Opened by</th><td>task run <code>{{.P.From}}</code></td></tr>{{end}}
<tr><th>Status</th><td>{{.P.Status}} (exit {{.P.ExitCode}})</td></tr>
{{if .P.Reason}}<tr><th>Reason</th><td>{{.P.Reason}}</td></tr>{{end}}
{{if .P.Waiting}}<tr><th>Waiting for</th><td>{{range $i, $w := .P.Waiting}}{{if $i}}, {{end}}{{$w}}{{end}}</td></tr>{{end}}
{{if .Head}}<tr><th>Head</th><td><code>{{.Head}}</code></td></tr>{{end}}
<tr><th>Looks</th><td>{{.P.Looks}}</td></tr>
<tr><th>Rounds</th><td>{{len .P.Rounds}}</td></tr>
{{if .Merged}}<tr><th>Merged as</th><td><code>{{.Merged}}</code></td></tr>{{end}}
<tr><th>Cost</th><td>{{.Cost}}</td></tr>
<tr><th>Duration</th><td>{{.Duration}}</td></tr>
{{if .P.Comment}}<tr><th>Told the pull request</th><td>{{if .CommentLink}}<a href="{{.CommentLink}}">its comment</a>{{else}}<code>{{.P.Comment}}</code>{{end}}</td></tr>{{end}}
</table>
<h2>Rounds</h2>
{{if .Rounds}}<table>
<tr><th>Round</th><th>Task run</th><th>For</th><th>Status</th><th>Pushed</th><th>Threads answered</th><th>Cost</th><th>Details</th></tr>
{{range .Rounds}}<tr><td class="num">{{.Round}}</td><td><code>{{.RunID}}</code></td><td>{{.For}}</td><td>{{.Status}}</td><td>{{.Pushed}}</td><td class="num">{{.Replied}}</td><td class="num">{{.Cost}}</td><td>{{.Details}}</td></tr>
{{end}}</table>{{else}}<p>No round: no agent was woken.</p>{{end}}
<h2>Checks at the head</h2>
{{if .P.Checks}}<table>
<tr><th>Check</th><th>State</th></tr>
{{range .P.Checks}}<tr><td>{{with link .URL}}<a href="{{.}}">{{end}}{{.Name}}{{if link .URL}}</a>{{end}}</td><td>{{.State}}</td></tr>
{{end}}</table>{{else}}<p>None seen.</p>{{end}}
<h2>Recommendation</h2>
<p>{{if .Rec}}{{.Rec}}{{else}}The pull request reached its target ({{.P.Target}}).{{end}}</p>
</body>
</html>
`))
