package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// pages are the board's HTML templates.
type pages struct {
	t map[string]*template.Template
	// sent are the live parts sent lately, that a delta starts from.
	sent versions
}

var funcs = template.FuncMap{
	"cost": func(usd float64, known bool) string { return cost.Amount(usd, known, false) },
	"ms": func(ms millis.Duration) string {
		return ms.Duration().Round(time.Second).String()
	},
	"when":    func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"status":  statusClass,
	"short":   shortHash,
	"gate":    gateOf,
	"merge":   mergeWords,
	"subject": taskengine.Subject,
	"add":     func(a, b float64) float64 { return a + b },
	"plus":    func(a, b int) int { return a + b },
	// liveEveryMs is how soon a page asks again for a worktree under way,
	// which is measured at most that often (runs.LiveEvery).
	"liveEveryMs": func() int64 { return runs.LiveEvery.Milliseconds() },
	"yes":         func(b *bool) bool { return b != nil && *b },
	// runShort is the last 8 characters of a run id (its random part),
	// enough to tell it among the runs listed; pages give the whole id
	// in a title.
	"runShort": runShort,
	"standing": standing,
	"n":        plural.N,
	"diff":     diffLines,
	"files":    filesOf,
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}

func loadPages() (*pages, error) {
	p := &pages{t: map[string]*template.Template{}}
	for _, name := range []string{"runs", "run", "login"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/parts.html", "assets/"+name+".html")
		if err != nil {
			return nil, err
		}
		p.t[name] = t
	}
	return p, nil
}

// render writes the page name with data; a fragment request (?fragment=1,
// what the pages ask for when an event arrives) gets the live part only.
func (p *pages) render(w http.ResponseWriter, code int, name string, data any) {
	p.renderPart(w, code, name, "layout.html", data)
}

func (p *pages) renderPart(w http.ResponseWriter, code int, name, part string, data any) {
	var b bytes.Buffer
	if err := p.t[name].ExecuteTemplate(&b, part, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// serve answers page name: the whole page, or its live part for a page
// that asks for it again (?fragment=1). The live part's version is in the
// X-Live-Version header; a page that gives the version it has (?have=)
// gets 204 when it has not changed, else a delta from it when the server
// still has it and the delta is the smaller (application/json).
func (p *pages) serve(w http.ResponseWriter, r *http.Request, name string, data any) {
	if r.URL.Query().Get("fragment") == "" {
		p.render(w, http.StatusOK, name, data)
		return
	}
	var b bytes.Buffer
	if err := p.t[name].ExecuteTemplate(&b, "live", data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	text := b.String()
	v := versionOf(text)
	p.sent.keep(v, text)
	w.Header().Set("X-Live-Version", v)
	w.Header().Set("Cache-Control", "no-store")
	have := r.URL.Query().Get("have")
	if have == v {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if old, ok := p.sent.get(have); ok && have != "" {
		if d, ok := deltaJSON(have, old, v, text); ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(d)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

type loginData struct {
	Next  string
	Wrong bool
}

// statusClass is the colour class of a status.
func statusClass(s string) string {
	s, _, _ = strings.Cut(s, " ")
	s = strings.TrimSuffix(s, ",")
	switch s {
	case "done", "pass", "passed", "success":
		return "ok"
	case "running":
		return "run"
	case "pending", "waiting", "blocked", "unmerged", "neutral", "under":
		return "wait"
	case "interrupted", "timeout", "rate-limited", "incomplete", "re-run", "killed":
		return "stop"
	case "needs-you":
		return "you"
	}
	return "bad"
}

// filterRows keeps the rows of status and kind ("" for any).
func filterRows(rows []runs.Listed, status, kind string) []runs.Listed {
	out := []runs.Listed{}
	for _, r := range rows {
		if (status == "" || r.Status == status) && (kind == "" || r.Command == kind) {
			out = append(out, r)
		}
	}
	return out
}

// rowsDigest changes whenever a run of rows moves, and whenever the agent
// of one that runs writes (nowDigest).
func rowsDigest(ctx context.Context, src Source, rows []runs.Listed) string {
	h := sha256.New()
	for _, r := range rows {
		fmt.Fprintf(h, "%s %s %d %v %v %d\n", r.ID, r.Status, r.Iterations, r.CostUSD, r.Live, r.UpdatedAt.UnixNano())
	}
	nowDigest(ctx, src, rows, h)
	return hex.EncodeToString(h.Sum(nil))
}

type runsData struct {
	// Rows are the runs of the page shown, of Matched that the filter
	// keeps (of Total).
	Rows         []runs.Listed
	Matched      int
	Status, Kind string
	// Page is the page shown, from 1, of Pages; From and To number its
	// first and last rows among Matched; Newer and Older link to the pages
	// beside it ("" for none).
	Page, Pages  int
	From, To     int
	Newer, Older string
	Statuses     []string
	Kinds        []string
	Total        int
	Error        string
	// Glance is the first screen: what needs the user, what runs,
	// whatever the filter.
	Glance glance
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	rows, err := s.src.List(r.Context())
	d := runsData{Status: r.URL.Query().Get("status"), Kind: r.URL.Query().Get("kind"), Kinds: []string{"loop", "task", "batch", "pr", "run"}}
	if err != nil {
		d.Error = err.Error()
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if !seen[row.Status] {
			seen[row.Status] = true
			d.Statuses = append(d.Statuses, row.Status)
		}
	}
	slices.Sort(d.Statuses)
	d.Glance = glanceOf(r.Context(), s.src, rows, time.Now())
	d.Total = len(rows)
	d.paged(filterRows(rows, d.Status, d.Kind), r.URL.Query().Get("page"))
	s.pages.serve(w, r, "runs", d)
}

// runsPerPage is how many runs the table of the runs page shows at once.
const runsPerPage = 50

// paged shows page (its number, from 1: "" or anything else is the first;
// beyond the last, the last) of rows, runsPerPage a page.
func (d *runsData) paged(rows []runs.Listed, page string) {
	d.Matched = len(rows)
	d.Pages = max(1, (len(rows)+runsPerPage-1)/runsPerPage)
	d.Page, _ = strconv.Atoi(page)
	d.Page = min(max(d.Page, 1), d.Pages)
	lo, hi := (d.Page-1)*runsPerPage, min(d.Page*runsPerPage, len(rows))
	d.Rows, d.From, d.To = rows[lo:hi], lo+1, hi
	link := func(p int) string {
		q := url.Values{}
		if d.Status != "" {
			q.Set("status", d.Status)
		}
		if d.Kind != "" {
			q.Set("kind", d.Kind)
		}
		if p > 1 {
			q.Set("page", strconv.Itoa(p))
		}
		return "/?" + q.Encode()
	}
	if d.Page > 1 {
		d.Newer = link(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.Older = link(d.Page + 1)
	}
}

// runData is what a run's page shows.
type runData struct {
	Shown
	Status   string
	Details  string
	CostUSD  float64
	Known    bool
	Duration millis.Duration
	// CanStop and CanResume say which actions the page offers.
	CanStop, CanResume bool
	// Columns is a batch's board; Groups its tasks table; Graph its DAG;
	// Chart its Gantt.
	Columns []column
	Groups  []taskGroup
	Graph   *graph
	Chart   *chart
	// Waiting is what a running pull-request run waits for.
	Waiting []string
	// Now is what the agent of a running run is doing.
	Now *preview
}

type column struct {
	// Name is the column's key (data-col); Label its heading ("" for the
	// name).
	Name, Label string
	Tasks       []card
}

// card is a task on the board; a running one's with what its agent is
// doing.
type card struct {
	batch.TaskSummary
	Now *preview
}

// cardsShown is how many cards a column of the board shows; the others
// are folded under "N more".
const cardsShown = 6

// Shown are the cards the column shows, More those it folds.
func (c column) Shown() []card { return c.Tasks[:min(len(c.Tasks), cardsShown)] }
func (c column) More() []card  { return c.Tasks[min(len(c.Tasks), cardsShown):] }

// taskGroup is a group of a batch's tasks table: the tasks of a few
// statuses, open or folded (a <details>).
type taskGroup struct {
	Name, Label string
	Open        bool
	Tasks       []batch.TaskSummary
}

// groupOpenUpTo is how many tasks a group that may fold shows open.
const groupOpenUpTo = 20

// groupsOf sorts a batch's tasks into its table's groups, in the order a
// user reads them: those that failed (they need you), those that run, the
// merge queue, those blocked by a failure, those waiting, those done. The
// first three are open; blocked and waiting fold beyond groupOpenUpTo
// tasks; done is folded, with its count. Empty groups are left out.
func groupsOf(b batch.Summary) []taskGroup {
	gs := []taskGroup{{Name: "failed", Label: "Failed: they need you", Open: true}, {Name: "running", Label: "Running", Open: true},
		{Name: "merging", Label: "Merge queue", Open: true}, {Name: "blocked", Label: "Blocked or skipped"}, {Name: "waiting", Label: "Waiting"},
		{Name: "done", Label: "Done"}}
	for _, t := range b.Tasks {
		i := 0
		switch s := batch.Status(t.Status); s {
		case batch.StatusRunning:
			i = 1
		case batch.StatusUnmerged:
			i = 2
		case batch.StatusBlocked, batch.StatusSkipped:
			i = 3
		case batch.StatusPending, batch.StatusInterrupted:
			i = 4
		case batch.StatusDone:
			i = 5
		}
		gs[i].Tasks = append(gs[i].Tasks, t)
	}
	out := gs[:0]
	for _, g := range gs {
		if len(g.Tasks) == 0 {
			continue
		}
		if g.Name == "blocked" || g.Name == "waiting" {
			g.Open = len(g.Tasks) <= groupOpenUpTo
		}
		out = append(out, g)
	}
	return out
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.src.Show(r.Context(), r.PathValue("id"))
	if err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	d := factsOf(run)
	running := strings.HasPrefix(d.Status, "running")
	d.CanStop = running && run.Live
	d.CanResume = !run.Live && d.Status != "done"
	if run.PR != nil {
		// One that gave up or spent its budget is taken up again by
		// jlgcli pr, not resumed.
		d.CanResume = !run.Live && run.PR.Resumable()
	}
	if running && run.Live && agentRuns(run.Command) {
		d.Now = previewOf(r.Context(), s.src, run.ID, run.Command, pageLines, pageTools)
	}
	if b := run.Batch; b != nil {
		d.Columns = boardOf(*b)
		for _, col := range d.Columns {
			for i := range col.Tasks {
				if c := &col.Tasks[i]; c.Status == string(batch.StatusRunning) && c.RunID != nil {
					c.Now = previewOf(r.Context(), s.src, *c.RunID, "task", cardLines, cardTools)
				}
			}
		}
		d.Groups = groupsOf(*b)
		d.Graph = graphOf(*b)
		d.Chart = chartOf(*b, run.Tasks, time.Now())
	}
	s.pages.serve(w, r, "run", d)
}

// factsOf is what every run's page says of run: its status, details,
// cost and duration, whatever its kind.
func factsOf(run Shown) runData {
	d := runData{Shown: run}
	switch {
	case run.Task != nil:
		t := run.Task
		d.Status, d.Details, d.CostUSD, d.Known, d.Duration = string(t.Status), t.Details, t.CostUSD, t.CostKnown, t.DurationMs
	case run.Batch != nil:
		b := run.Batch
		d.Status, d.Details, d.CostUSD, d.Known, d.Duration = b.Status, b.Details, b.CostUSD, b.CostKnown, b.DurationMs
	case run.Loop != nil:
		l := run.Loop
		d.Status, d.Details, d.CostUSD, d.Known, d.Duration = string(l.Status), l.Details, l.CostUSD, l.CostKnown, l.DurationMs
	case run.PR != nil:
		p := run.PR
		d.Status, d.Details, d.CostUSD, d.Known, d.Duration = string(p.Status), p.Reason, p.CostUSD, p.CostUSD != 0, p.DurationMs
		if a := p.Last; a != nil && a.Do == pull.Wait && p.Status == store.Running {
			d.Waiting = a.Waiting
		}
	}
	if d.Status == store.Running {
		// Its journal cannot tell whether a process runs it ("it is
		// live, or it was killed"); the server can (its lock).
		if run.Loop != nil || run.Task != nil {
			d.Details = ""
		}
		if !run.Live {
			d.Details = killedWhy
		}
	}
	return d
}

// boardOf sorts a batch's tasks into the board's columns: those that run
// (at most the batch's jobs), apart from those whose run ended done and
// that wait for their merge or are being merged (the merge queue, a task's
// second run after its first run's change could not land included).
func boardOf(b batch.Summary) []column {
	cols := []column{{Name: "waiting"}, {Name: "running"}, {Name: "merging", Label: "merge queue"}, {Name: "done"}, {Name: "failed"}, {Name: "blocked"}}
	for _, t := range b.Tasks {
		i := 4
		switch batch.Status(t.Status) {
		case batch.StatusPending, batch.StatusInterrupted:
			i = 0
		case batch.StatusRunning:
			i = 1
		case batch.StatusUnmerged:
			i = 2
		case batch.StatusDone:
			i = 3
		case batch.StatusBlocked:
			i = 5
		}
		cols[i].Tasks = append(cols[i].Tasks, card{TaskSummary: t})
	}
	return cols
}

// diffLine is a line of a diff with its colour class.
type diffLine struct {
	Class, Text string
}

// diffLines classes each line of a unified diff.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "):
			c = "dh"
		case strings.HasPrefix(l, "@@"):
			c = "dk"
		case strings.HasPrefix(l, "+"):
			c = "da"
		case strings.HasPrefix(l, "-"):
			c = "dd"
		}
		out = append(out, diffLine{Class: c, Text: l})
	}
	return out
}

// runShort is the last 8 characters of id.
func runShort(id string) string {
	if r := []rune(id); len(r) > 8 {
		return string(r[len(r)-8:])
	}
	return id
}
