package serve

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Sizes of the drawings, in SVG units (pixels at 100%).
const (
	nodeW, nodeH   = 150, 28
	colGap, rowGap = 50, 12
	chartLabel     = 130 // the task ids left of the bars
	chartW         = 560 // the bars' width
	chartRow       = 22
	// chartOpenUpTo is how many bars a timeline shows open: a longer one
	// (a page as tall as several screens) starts folded.
	chartOpenUpTo = 40
	// tierColours is how many colours the attempts are drawn in
	// (style.css's .seg.t0 to .t3), by tier.
	tierColours = 4
)

// graph is a batch's DAG laid out by level: a column per level, its tasks
// one under the other, an edge from each dependency to its dependent.
type graph struct {
	W, H  int
	Nodes []node
	Edges []edge
}

type node struct {
	X, Y    int
	ID      string
	Status  string
	RunID   string
	Details string
}

type edge struct {
	Path string
	// Status is the dependency's: an edge from a task not done is drawn
	// dashed.
	Status string
}

func graphOf(b batch.Summary) *graph {
	g := &graph{}
	at := map[string]node{}
	rows := map[int]int{}
	levels := 0
	for _, t := range b.Tasks {
		n := node{X: t.Level * (nodeW + colGap), Y: rows[t.Level] * (nodeH + rowGap), ID: t.ID, Status: t.Status, Details: t.Details}
		if t.RunID != nil {
			n.RunID = *t.RunID
		}
		rows[t.Level]++
		levels = max(levels, t.Level+1)
		at[t.ID] = n
		g.Nodes = append(g.Nodes, n)
	}
	for _, t := range b.Tasks {
		to := at[t.ID]
		for _, d := range t.DependsOn {
			from, ok := at[d]
			if !ok {
				continue
			}
			x1, y1 := from.X+nodeW, from.Y+nodeH/2
			x2, y2 := to.X, to.Y+nodeH/2
			mid := (x1 + x2) / 2
			g.Edges = append(g.Edges, edge{Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2), Status: from.Status})
		}
	}
	most := 0
	for _, n := range rows {
		most = max(most, n)
	}
	g.W = max(levels*(nodeW+colGap)-colGap, nodeW) + 2
	g.H = max(most*(nodeH+rowGap)-rowGap, nodeH) + 2
	return g
}

// chart is a batch's Gantt: a bar per task that started, from its start to
// its end (now, for a running task), with its attempts inside coloured by
// tier.
type chart struct {
	W, H int
	// Fold: the chart has more bars than chartOpenUpTo, and starts
	// folded.
	Fold  bool
	Label int
	// BarsW is the bars' frame's width in pixels, SpanMs in milliseconds
	// (its scale).
	BarsW  int
	SpanMs int64
	Rows   []chartRowData
	Span   string
	Ticks  []tick
	// Legend names the tiers that the attempts' colours stand for.
	Legend []tierColour
}

// tierColour is a colour of the chart's attempts (seg tN) and the tiers
// drawn in it.
type tierColour struct {
	Class int
	Names string
}

// chartRowData is a bar: Y in pixels, X and W in milliseconds from the
// chart's start.
type chartRowData struct {
	Y        int
	ID       string
	RunID    string
	Status   string
	X, W     int64
	Attempts []segment
}

type segment struct {
	Y     int
	X, W  int64
	Tier  int
	Title string
}

type tick struct {
	X    int
	Text string
}

// rerunRow is what a task's id is followed by on the row of its second
// run, in the chart and in Run.Tasks.
const rerunRow = " (re-run)"

func chartOf(b batch.Summary, tasks map[string]*taskengine.Result, now time.Time) *chart {
	type bar struct {
		t          batch.TaskSummary
		start, end time.Time
	}
	var bars []bar
	begin, end := b.StartedAt, b.StartedAt
	add := func(t batch.TaskSummary, s time.Time, ms millis.Duration, running bool) {
		e := s.Add(ms.Duration())
		if running && now.After(e) {
			e = now
		}
		if begin.IsZero() || s.Before(begin) {
			begin = s
		}
		if e.After(end) {
			end = e
		}
		bars = append(bars, bar{t, s, e})
	}
	for _, t := range b.Tasks {
		if t.StartedAt == nil || t.StartedAt.IsZero() {
			continue
		}
		r := t.Rerun
		if r == nil {
			add(t, *t.StartedAt, t.DurationMs, t.Status == string(batch.StatusRunning))
			continue
		}
		// A task run again: its first run, then its second run on a
		// row of its own (its duration is the task's less the first's).
		first := t
		first.Status = "re-run" // done, and not landed: run again
		add(first, *t.StartedAt, t.DurationMs-r.DurationMs, false)
		if !r.StartedAt.IsZero() {
			second := t
			second.ID, second.RunID, second.Status = t.ID+rerunRow, &r.RunID, string(r.Status)
			if r.Status == "" {
				second.Status = string(batch.StatusRunning)
			}
			add(second, r.StartedAt, r.DurationMs, r.Status == "")
		}
	}
	if len(bars) == 0 {
		return nil
	}
	slices.SortStableFunc(bars, func(a, b bar) int { return a.start.Compare(b.start) })
	span := end.Sub(begin)
	if span <= 0 {
		span = time.Second
	}
	// The bars are drawn in milliseconds from the start, in a frame
	// scaled to the chart's width: a bar's place does not change as the
	// batch goes on (a page's live update sends what changed), only the
	// frame's scale and the running bars.
	x := func(t time.Time) int { return chartLabel + int(float64(chartW)*float64(t.Sub(begin))/float64(span)) }
	ms := func(t time.Time) int64 { return t.Sub(begin).Milliseconds() }
	// The least width of a bar: 2 px or somewhat more, in steps (a
	// power of two of milliseconds) that do not change with each second.
	least := int64(1)
	for least < span.Milliseconds()*2/chartW {
		least *= 2
	}
	width := func(s, e time.Time) int64 { return max(ms(e)-ms(s), least) }
	c := &chart{W: chartLabel + chartW + 60, H: len(bars)*chartRow + 20, Label: chartLabel, BarsW: chartW, SpanMs: max(span.Milliseconds(), 1),
		Span: span.Round(time.Second).String(), Fold: len(bars) > chartOpenUpTo}
	for i, br := range bars {
		row := chartRowData{Y: i * chartRow, ID: br.t.ID, Status: br.t.Status, X: ms(br.start), W: width(br.start, br.end)}
		if br.t.RunID != nil {
			row.RunID = *br.t.RunID
		}
		if res := tasks[br.t.ID]; res != nil {
			for _, a := range res.Attempts {
				s := a.StartedAt
				e := s.Add(a.DurationMs.Duration())
				if a.DurationMs == 0 && br.t.Status == string(batch.StatusRunning) {
					e = now
				}
				row.Attempts = append(row.Attempts, segment{X: ms(s), Y: row.Y, W: width(s, e), Tier: a.TierIndex % tierColours,
					Title: fmt.Sprintf("attempt %d, tier %s: gate %s, %s", a.Number, a.Tier, a.Gate.Status, a.Action)})
			}
		}
		c.Rows = append(c.Rows, row)
	}
	c.Legend = legendOf(c.Rows, tasks)
	for i := 0; i <= 4; i++ {
		at := begin.Add(span * time.Duration(i) / 4)
		c.Ticks = append(c.Ticks, tick{X: x(at), Text: at.Local().Format("15:04:05")})
	}
	return c
}

// legendOf names, for each colour the chart's attempts are drawn in, the
// tiers drawn in it (tasks may name their tiers differently), in the
// tiers' order.
func legendOf(rows []chartRowData, tasks map[string]*taskengine.Result) []tierColour {
	names := make([][]string, tierColours)
	for _, r := range rows {
		res := tasks[r.ID]
		if res == nil {
			continue
		}
		for _, a := range res.Attempts {
			i := a.TierIndex % tierColours
			if a.Tier != "" && !slices.Contains(names[i], a.Tier) {
				names[i] = append(names[i], a.Tier)
			}
		}
	}
	var out []tierColour
	for i, n := range names {
		if len(n) > 0 {
			out = append(out, tierColour{Class: i, Names: strings.Join(n, ", ")})
		}
	}
	return out
}
