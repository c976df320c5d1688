// Package top is jlgcli's full-screen terminal view of the runs kept under
// a state root (jlgcli top): the runs, newest first and those that need
// someone first, a batch's tasks under it; the selected one's live agent
// output, diff and details; keys to stop and resume it and to find it on
// the web board. It is a Bubble Tea model over a Source (Store: package
// runs and plain, as the command line reads and acts), so that it is
// tested with plain values: Update with key messages, View at a size.
//
// Everything the records hold that jlgcli did not write (titles, an
// agent's output, a diff, a reason) is made safe (termsafe.Line, one line
// each) before it is laid out and cut to its width (tty.Fit), so that it
// can neither run an escape sequence nor move the layout.
package top

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Tabs of the pane of the selected line.
const (
	TabOutput = iota
	TabDiff
	TabDetails
	tabs
)

var tabNames = [tabs]string{"output", "diff", "details"}

// Poll is how often the runs and the selected one's pane are read again.
const Poll = time.Second

// outputLines bounds the tail of output asked for.
const outputLines = 200

// Model is the state of the view.
type Model struct {
	src Source
	ctx context.Context
	pal tty.Palette
	// safe makes text the records hold safe for the terminal, on one line
	// (termsafe.Line); a test takes it away to see its checks fail.
	safe func(string) string

	width, height int
	snap          Snapshot
	loaded        bool
	err           error

	// expanded are the batches opened or closed by hand, by key (the
	// others are open while they run or need someone).
	expanded map[string]bool
	// sel is the key of the selected line; tab the pane's tab; scroll the
	// lines of the diff or details scrolled down.
	sel    string
	tab    int
	scroll int

	out       Output
	outErr    error
	detail    Detail
	detailErr error
	// paneFor is the key the pane's output and detail were read for.
	paneFor string

	// status is the status line's message; confirm the run whose stop
	// waits for y.
	status  string
	confirm string
	help    bool
}

// New is the model of the view over src, colouring with pal.
func New(ctx context.Context, src Source, pal tty.Palette) Model {
	return Model{src: src, ctx: ctx, pal: pal, safe: termsafe.Line, expanded: map[string]bool{}, width: 80, height: 24}
}

// The messages of the model's commands.
type (
	tickMsg     struct{}
	snapshotMsg struct {
		snap Snapshot
		err  error
	}
	outputMsg struct {
		key string
		out Output
		err error
	}
	detailMsg struct {
		key string
		d   Detail
		err error
	}
	// doneMsg is what an action (stop, resume, board) says.
	doneMsg struct {
		text string
		err  error
	}
)

func (m Model) Init() tea.Cmd { return tea.Batch(m.load(), m.loadPane()) }

// tick asks for the next reading.
func tick() tea.Cmd { return tea.Tick(Poll, func(time.Time) tea.Msg { return tickMsg{} }) }

// load reads the runs.
func (m Model) load() tea.Cmd {
	src, ctx := m.src, m.ctx
	return func() tea.Msg {
		snap, err := src.Snapshot(ctx)
		return snapshotMsg{snap, err}
	}
}

// loadPane reads what the pane's tab shows of the selected line.
func (m Model) loadPane() tea.Cmd {
	it, ok := m.selected()
	if !ok || it.RunID == "" {
		return nil
	}
	src, ctx, key, id := m.src, m.ctx, it.Key, it.RunID
	if m.tab == TabOutput {
		return func() tea.Msg {
			out, err := src.Output(id, outputLines)
			return outputMsg{key, out, err}
		}
	}
	width := m.paneWidth()
	return func() tea.Msg {
		d, err := src.Detail(ctx, id, width)
		return detailMsg{key, d, err}
	}
}

func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		if m.tab != TabOutput {
			return m, m.loadPane() // the details are laid out for the pane's width
		}
	case tickMsg:
		return m, tea.Batch(m.load(), m.loadPane())
	case snapshotMsg:
		first := !m.loaded
		m.snap, m.err, m.loaded = msg.snap, msg.err, m.loaded || msg.err == nil
		rows := m.rows()
		if _, ok := m.selected(); !ok && len(rows) > 0 {
			m.sel = rows[0].item.Key
			return m, tea.Batch(tick(), m.loadPane())
		}
		if first {
			return m, tea.Batch(tick(), m.loadPane())
		}
		return m, tick()
	case outputMsg:
		if msg.key == m.sel {
			m.out, m.outErr, m.paneFor = msg.out, msg.err, msg.key
		}
	case detailMsg:
		if msg.key == m.sel {
			m.detail, m.detailErr, m.paneFor = msg.d, msg.err, msg.key
		}
	case doneMsg:
		m.status = msg.text
		if msg.err != nil {
			m.status = "error: " + msg.err.Error()
		}
		return m, m.load()
	case tea.KeyPressMsg:
		return m.key(msg.String())
	}
	return m, nil
}

// key acts on a key pressed.
func (m Model) key(k string) (tea.Model, tea.Cmd) {
	if m.confirm != "" {
		id := m.confirm
		m.confirm = ""
		if k == "y" || k == "Y" {
			m.status = "stopping run " + id + "…"
			src, ctx := m.src, m.ctx
			return m, func() tea.Msg {
				text, err := src.Stop(ctx, id)
				return doneMsg{text, err}
			}
		}
		m.status = "not stopped"
		return m, nil
	}
	if m.help && k != "ctrl+c" {
		m.help = false
		if k == "?" || k == "esc" || k == "q" {
			return m, nil
		}
	}
	switch k {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "?":
		m.help = true
	case "up", "k":
		return m.move(-1)
	case "down", "j":
		return m.move(1)
	case "home", "g":
		return m.move(-len(m.rows()))
	case "end", "G":
		return m.move(len(m.rows()))
	case "enter", "space":
		if it, ok := m.selected(); ok && len(it.Children) > 0 {
			m.expanded[it.Key] = !m.open(it)
		}
	case "tab", "shift+tab":
		step := 1
		if k == "shift+tab" {
			step = tabs - 1
		}
		m.tab, m.scroll, m.paneFor = (m.tab+step)%tabs, 0, ""
		return m, m.loadPane()
	case "pgdown", "pgup":
		if k == "pgdown" {
			m.scroll += max(1, m.paneHeight()-1)
		} else {
			m.scroll = max(0, m.scroll-max(1, m.paneHeight()-1))
		}
	case "s":
		it, ok := m.selected()
		switch {
		case !ok:
		case it.RunID == "":
			m.status = "task " + m.safe(it.Title) + " has no run to stop"
		case it.Status != "running":
			m.status = "run " + it.RunID + " is not running (" + m.safe(it.Word) + "): nothing to stop"
		default:
			m.confirm = it.RunID
			m.status = "stop run " + it.RunID + " (" + m.safe(it.Title) + ")? y: stop it, any other key: no"
		}
	case "r":
		it, ok := m.selected()
		if !ok {
			break
		}
		id := it.RunID
		if it.Batch != "" {
			// A batch's task goes on with its batch, which runs it.
			id = it.Batch
		}
		if id == "" {
			break
		}
		m.status = "resuming run " + id + "…"
		src := m.src
		return m, func() tea.Msg {
			text, err := src.Resume(id)
			return doneMsg{text, err}
		}
	case "o":
		it, ok := m.selected()
		if !ok {
			break
		}
		id := it.RunID
		if id == "" {
			id = it.Batch
		}
		src, ctx := m.src, m.ctx
		return m, func() tea.Msg { return doneMsg{text: src.Board(ctx, id)} }
	}
	return m, nil
}

// move selects the line n lines down (up when n < 0).
func (m Model) move(n int) (tea.Model, tea.Cmd) {
	rows := m.rows()
	if len(rows) == 0 {
		return m, nil
	}
	i := m.index(rows) + n
	i = max(0, min(i, len(rows)-1))
	if rows[i].item.Key == m.sel {
		return m, nil
	}
	m.sel, m.scroll, m.paneFor, m.status = rows[i].item.Key, 0, "", ""
	m.out, m.detail, m.outErr, m.detailErr = Output{}, Detail{}, nil, nil
	return m, m.loadPane()
}

// row is a line of the list as shown: an item, under a batch or not.
type row struct {
	item  Item
	child bool
}

// open says whether it's children are shown: as toggled, else while it
// runs or needs someone.
func (m Model) open(it Item) bool {
	if v, ok := m.expanded[it.Key]; ok {
		return v
	}
	return it.Status == "running" || it.Needs
}

// rows are the lines of the list, in order.
func (m Model) rows() []row {
	var out []row
	for _, it := range m.snap.Items {
		out = append(out, row{item: it})
		if m.open(it) {
			for _, c := range it.Children {
				out = append(out, row{item: c, child: true})
			}
		}
	}
	return out
}

// index is the selected line's place in rows (0 when none is).
func (m Model) index(rows []row) int {
	for i, r := range rows {
		if r.item.Key == m.sel {
			return i
		}
	}
	return 0
}

// selected is the selected line's item, among those shown.
func (m Model) selected() (Item, bool) {
	for _, r := range m.rows() {
		if r.item.Key == m.sel {
			return r.item, true
		}
	}
	return Item{}, false
}

// Selected is the key of the selected line (for tests).
func (m Model) Selected() string { return m.sel }

// Status is the status line's message (for tests).
func (m Model) Status() string { return m.status }

// statusLine is what the last line says: the message, else the keys.
func (m Model) statusLine() string {
	if m.status != "" {
		return m.status
	}
	if m.err != nil {
		return "error: " + m.err.Error()
	}
	return "↑↓ select · enter open · tab output/diff/details · s stop · r resume · o board · ? help · q quit"
}

// help is the text of ?.
var helpText = []string{
	"jlgcli top: the runs kept here, newest first; those that need you first, marked !",
	"",
	"↑ ↓ or k j    select a run or a batch's task (g G: first, last)",
	"enter, space  open or close a batch (its tasks under it)",
	"tab           the selected one's live output, its diff, its details (shift+tab: back)",
	"pgup pgdn     scroll the diff or the details",
	"s             stop the selected run as jlgcli stop does (y to confirm): resumable",
	"r             resume it: jlgcli resume ID in a process of its own, its output in",
	"              the run's resume.log (a batch's task: its batch)",
	"o             where the web board shows it (jlgcli serve), or how to start one",
	"q, ctrl+c     quit: the runs go on",
	"",
	"The agent's output and the records are shown as text: escape sequences and",
	"control characters are written out (\\x1b), never run.",
	"",
	"any key: back",
}

// view is the text laid out at the model's size, one string a line, each
// line at most width cells.
func (m Model) view() []string {
	w, h := max(m.width, 20), max(m.height, 6)
	lines := []string{m.header(w)}
	body := h - 2
	if m.help {
		for _, l := range helpText {
			lines = append(lines, tty.Fit(l, w))
		}
	} else if w >= wide {
		lw := w * 11 / 20
		list := m.list(lw, body)
		pane := m.pane(w-lw-3, body)
		sep := m.pal.Paint(" │ ", dimSGR)
		for i := range body {
			lines = append(lines, pad(list[i], lw)+sep+pane[i])
		}
	} else {
		lh := m.listHeight(body)
		lines = append(lines, m.list(w, lh)...)
		lines = append(lines, m.pane(w, body-lh)...)
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = lines[:h-1]
	status := tty.Fit(m.safe(m.statusLine()), w)
	if m.confirm != "" {
		status = m.pal.Paint(status, "1;33")
	}
	return append(lines, status)
}

// wide is the width from which the list and the pane are side by side.
const wide = 120

const dimSGR = "2"

// listHeight is the lines the list takes when the pane is under it.
func (m Model) listHeight(body int) int {
	return max(4, min(len(m.rows())+1, body*2/5))
}

// paneWidth and paneHeight are the pane's size at the model's.
func (m Model) paneWidth() int {
	w := max(m.width, 20)
	if w >= wide {
		return w - w*11/20 - 3
	}
	return w
}

func (m Model) paneHeight() int {
	body := max(m.height, 6) - 2
	if max(m.width, 20) >= wide {
		return body - 2
	}
	return body - m.listHeight(body) - 2
}

// View is the screen: the alternate screen, left as it was on quitting.
func (m Model) View() tea.View {
	v := tea.NewView(strings.Join(m.view(), "\n"))
	v.AltScreen = true
	v.WindowTitle = "jlgcli top"
	return v
}

// header is the first line: what the runs add up to.
func (m Model) header(w int) string {
	var need, running, n int
	var spent float64
	var known bool
	var count func(its []Item)
	count = func(its []Item) {
		for _, it := range its {
			if it.Needs && len(it.Children) == 0 {
				need++
			}
			if it.Word == "running" && len(it.Children) == 0 {
				running++
			}
			count(it.Children)
		}
	}
	for _, it := range m.snap.Items {
		n++
		spent += it.CostUSD
		known = known || it.CostKnown
	}
	count(m.snap.Items)
	s := fmt.Sprintf("jlgcli top · %s · %d running · ", plural.N(n, "run"), running)
	needs := fmt.Sprintf("%d need you", need)
	if need == 1 {
		needs = "1 needs you"
	}
	plainNeeds := needs
	if need > 0 {
		needs = m.pal.Paint(needs, "1;33")
	}
	tail := " · " + money(spent, known)
	if !m.loaded {
		tail += " · reading…"
	}
	if tty.Cells(s)+tty.Cells(plainNeeds)+tty.Cells(tail) > w {
		return tty.Fit(s+plainNeeds+tail, w)
	}
	return s + needs + tail
}

// pad is s (a line at most n cells wide, colours aside) padded to n.
func pad(s string, n int) string {
	c := tty.Cells(stripSGR(s))
	if c >= n {
		return s
	}
	return s + strings.Repeat(" ", n-c)
}

// stripSGR is s without the colours that the palette put in it.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return b.String()
		}
		s = s[i+j+1:]
	}
}

// money is a cost as the list shows it.
func money(usd float64, known bool) string {
	if !known {
		return "-"
	}
	return fmt.Sprintf("$%.2f", usd)
}
