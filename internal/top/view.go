package top

import (
	"fmt"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// list is the list laid out in w cells and h lines: a header, then the
// lines around the selected one, each cell made safe.
func (m Model) list(w, h int) []string {
	rows := m.rows()
	tb := tty.Table{Columns: []tty.Column{
		{Head: " "},
		{Head: "STATUS", Status: true},
		{Head: "TITLE", Flex: true, Min: 16},
		{Head: "KIND", Drop: 4},
		{Head: "TIER #", Drop: 3},
		{Head: "COST", Drop: 5},
		{Head: "TIME", Drop: 2},
		{Head: "ID", Drop: 1},
	}}
	for _, r := range rows {
		it := r.item
		mark := " "
		if it.Key == m.sel {
			mark = "›"
		}
		if it.Needs {
			mark += "!"
		} else {
			mark += " "
		}
		title := m.safe(it.Title)
		switch {
		case len(it.Children) > 0 && m.open(it):
			title = "▾ " + title
		case len(it.Children) > 0:
			title = fmt.Sprintf("▸ %s (%d)", title, len(it.Children))
		case r.child:
			title = "  " + title
		}
		tb.Rows = append(tb.Rows, []string{mark, m.safe(it.Word), title, it.Kind, m.safe(standing(it)),
			money(it.CostUSD, it.CostKnown), duration(it.Duration), shortID(it.RunID)})
	}
	var b strings.Builder
	_ = tb.Write(&b, tty.Terminal{Width: w, Palette: m.pal})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	out := []string{m.pal.Paint(lines[0], dimSGR)}
	if len(rows) == 0 {
		out[0] = "no runs kept here yet: jlgcli task, loop or batch start one"
		if !m.loaded {
			out[0] = "reading the runs…"
		}
		if m.err != nil {
			out[0] = tty.Fit("error: "+m.err.Error(), w)
		}
	}
	body := lines[1:]
	// The lines around the selected one.
	room := h - 1
	first := 0
	if sel := m.index(rows); len(body) > room && room > 0 {
		first = max(0, min(sel-room/2, len(body)-room))
	}
	for i := first; i < len(body) && len(out) < h; i++ {
		line := body[i]
		if i < len(rows) && rows[i].item.Key == m.sel && m.pal.On {
			line = "\x1b[7m" + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0;7m") + "\x1b[0m"
		}
		out = append(out, line)
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// standing is where a line's run stands: its tier and attempt, a loop's
// iteration.
func standing(it Item) string {
	switch {
	case it.Tier != "" && it.Attempt > 0:
		return fmt.Sprintf("%s #%d", it.Tier, it.Attempt)
	case it.Tier != "":
		return it.Tier
	case it.Attempt > 0 && it.Kind != "batch":
		return fmt.Sprintf("#%d", it.Attempt)
	}
	return "-"
}

// duration is d as the list shows it: 42s, 3m12s, 2h05m.
func duration(d time.Duration) string {
	switch d = d.Round(time.Second); {
	case d <= 0:
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// shortID is the random part of a run id, which names it as well.
func shortID(id string) string {
	if id == "" {
		return "-"
	}
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id)-i > 4 {
		return id[i+1:]
	}
	return id
}

// pane is the selected line's pane in w cells and h lines: its tabs and
// title, then the tab's text.
func (m Model) pane(w, h int) []string {
	var tabsLine strings.Builder
	for i, name := range tabNames {
		if i > 0 {
			tabsLine.WriteString(" ")
		}
		if i == m.tab {
			tabsLine.WriteString(m.pal.Paint("["+name+"]", "1"))
		} else {
			tabsLine.WriteString(m.pal.Paint(" "+name+" ", dimSGR))
		}
	}
	if rule := w - tty.Cells(stripSGR(tabsLine.String())) - 1; rule > 0 {
		tabsLine.WriteString(" " + m.pal.Paint(strings.Repeat("─", rule), dimSGR))
	}
	out := []string{tabsLine.String()}
	it, ok := m.selected()
	if !ok {
		return fill(out, h)
	}
	title := fmt.Sprintf("%s %s · %s", it.Kind, shortID(cmpOr(it.RunID, it.Batch)), m.safe(it.Title))
	out = append(out, tty.Fit(title, w))
	body := h - len(out)
	var text []string
	switch {
	case it.RunID == "":
		text = []string{"no run: this task never started"}
		if it.Why != "" {
			text = append(text, "", m.safe(it.Why))
		}
		text = wrapAll(text, w)
	case m.tab == TabOutput:
		text = m.outputText(it, w, body)
	case m.paneFor != it.Key:
		text = []string{"reading…"}
	case m.detailErr != nil:
		text = wrapAll([]string{"error: " + m.safe(m.detailErr.Error())}, w)
	case m.tab == TabDiff:
		text = m.diffText(w)
	default:
		text = m.detailsText(it, w)
	}
	if m.tab != TabOutput {
		text = text[min(m.scroll, max(0, len(text)-1)):]
	}
	for _, l := range text {
		if len(out) >= h {
			break
		}
		out = append(out, l)
	}
	return fill(out, h)
}

// outputText is the tail of the output that fits h lines: each line of
// the agent's made safe, then cut to w (never wrapped).
func (m Model) outputText(it Item, w, h int) []string {
	switch {
	case it.Kind == "batch":
		return wrapAll([]string{"a batch's agents work in its tasks: select one (enter opens or closes the batch)"}, w)
	case m.paneFor != it.Key:
		return []string{"reading…"}
	case m.outErr != nil:
		return wrapAll([]string{"error: " + m.safe(m.outErr.Error())}, w)
	case !m.out.Found:
		return []string{"no agent output yet"}
	}
	head := fmt.Sprintf("newest agent call: %s %d", callWord(it.Kind), m.out.N)
	if m.out.Backend != "" {
		head += " · " + m.safe(m.out.Backend)
	}
	if it.Live {
		head += " · live"
	}
	out := []string{m.pal.Paint(tty.Fit(head, w), dimSGR)}
	// Its last tool calls first (at most a third of the pane), then the
	// last lines of its text that fit.
	tools := m.out.Tools
	if n := max(0, (h-1)/3); len(tools) > n {
		tools = tools[len(tools)-n:]
	}
	for _, c := range tools {
		out = append(out, tty.Fit(toolMark(c)+" "+m.safe(c.Name)+" "+m.safe(c.Input), w))
	}
	lines := m.out.Lines
	if room := h - len(out); len(lines) > room {
		lines = lines[len(lines)-max(0, room):]
	}
	for _, l := range lines {
		out = append(out, tty.Fit(m.safe(expandTabs(strings.TrimSuffix(l, "\r"))), w))
	}
	return out
}

// toolMark is how a tool call's state shows: done, failed or going on.
func toolMark(c agent.ToolCall) string {
	switch {
	case c.Error:
		return "✗"
	case c.Done:
		return "✓"
	}
	return "…"
}

// callWord is what a call of kind is: a task's attempt, a loop's
// iteration.
func callWord(kind string) string {
	if kind == "task" {
		return "attempt"
	}
	return "iteration"
}

// diffText is the newest attempt's change (or the worktree's now, for an
// attempt under way): +N −M per file, then the diff,
// its lines made safe and cut to w.
func (m Model) diffText(w int) []string {
	d := m.detail
	if d.NoDiff != "" {
		return wrapAll([]string{d.NoDiff}, w)
	}
	head := fmt.Sprintf("attempt %d's change against the task's base", d.Attempt)
	if d.Live {
		head = fmt.Sprintf("the worktree now, attempt %d under way, against the task's base", d.Attempt)
	}
	out := []string{m.pal.Paint(tty.Fit(head, w), dimSGR)}
	for _, f := range d.Files {
		n := fmt.Sprintf("+%d −%d", f.Added, f.Deleted)
		if f.Binary() {
			n = "binary"
		}
		out = append(out, tty.Fit(fmt.Sprintf("%-12s %s %s", n, f.Status, m.safe(f.Path)), w))
	}
	out = append(out, "")
	for l := range strings.SplitSeq(strings.TrimRight(d.Diff, "\n"), "\n") {
		l = tty.Fit(m.safe(expandTabs(l)), w)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			l = m.pal.Paint(l, "1")
		case strings.HasPrefix(l, "+"):
			l = m.pal.Paint(l, "32")
		case strings.HasPrefix(l, "-"):
			l = m.pal.Paint(l, "31")
		case strings.HasPrefix(l, "@@"):
			l = m.pal.Paint(l, "36")
		}
		out = append(out, l)
	}
	if d.Truncated {
		out = append(out, "(cut: jlgcli show --json has the record, git the whole change)")
	}
	return out
}

// detailsText is the run as show prints it (safe already: plain), and a
// batch task's details.
func (m Model) detailsText(it Item, w int) []string {
	var out []string
	if it.Why != "" {
		out = append(out, wrapAll([]string{m.safe(it.Why)}, w)...)
		out = append(out, "")
	}
	for l := range strings.SplitSeq(strings.TrimRight(m.detail.Text, "\n"), "\n") {
		out = append(out, tty.Fit(expandTabs(l), w))
	}
	return out
}

// wrapAll is lines (safe) wrapped to w between words.
func wrapAll(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, tty.Wrap(l, w)...)
	}
	return out
}

// fill is lines with empty ones up to h.
func fill(lines []string, h int) []string {
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines[:h]
}

// expandTabs is s with its tabs as spaces to the next stop of 4.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += tty.RuneCells(r)
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
