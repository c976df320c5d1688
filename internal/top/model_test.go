package top

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// fakeSource is a Source of plain values that notes what it was asked.
type fakeSource struct {
	snap    Snapshot
	out     map[string]Output
	detail  map[string]Detail
	stopped []string
	resumed []string
}

func (f *fakeSource) Snapshot(context.Context) (Snapshot, error) { return f.snap, nil }
func (f *fakeSource) Output(id string, _ int) (Output, error)    { return f.out[id], nil }
func (f *fakeSource) Detail(_ context.Context, id string, _ int) (Detail, error) {
	return f.detail[id], nil
}
func (f *fakeSource) Stop(_ context.Context, id string) (string, error) {
	f.stopped = append(f.stopped, id)
	return "run " + id + " stopped: interrupted", nil
}
func (f *fakeSource) Resume(id string) (string, error) {
	f.resumed = append(f.resumed, id)
	return "started jlgcli resume " + id, nil
}
func (f *fakeSource) Board(_ context.Context, id string) string { return "no board shows " + id }

// world is a batch with a failed task and a running one, a loop that
// ended done, and a task killed.
func world() *fakeSource {
	batchID := "20261128T040000Z-aaaa1111"
	return &fakeSource{
		snap: Snapshot{Items: []Item{
			{Key: batchID, RunID: batchID, Title: "2 tasks: a, b", Kind: "batch", Status: "running", Word: "running", Live: true, Needs: true,
				Duration: 75 * time.Second, Children: []Item{
					{Key: "20261128T040001Z-bbbb2222", RunID: "20261128T040001Z-bbbb2222", Batch: batchID, Title: "Fail its check", Kind: "task",
						Status: "max-iterations", Word: "max-iterations", Tier: "fast", Attempt: 2, CostUSD: 0.12, CostKnown: true, Needs: true,
						Why: "the last tier, fast, spent its attempts"},
					{Key: "20261128T040002Z-cccc3333", RunID: "20261128T040002Z-cccc3333", Batch: batchID, Title: "Keep working", Kind: "task",
						Status: "running", Word: "running", Tier: "strong", Attempt: 3, Live: true, Duration: 70 * time.Second},
					{Key: batchID + "#c", Batch: batchID, Title: "Blocked one", Kind: "task", Status: "blocked", Word: "blocked", Needs: true,
						Why: "blocked by failed dependency a"},
				}},
			{Key: "20261128T030000Z-dddd4444", RunID: "20261128T030000Z-dddd4444", Title: "Killed task", Kind: "task", Status: "running",
				Word: "killed", Needs: true},
			{Key: "20261128T020000Z-eeee5555", RunID: "20261128T020000Z-eeee5555", Title: "A loop that ended", Kind: "loop", Status: "done",
				Word: "done", Attempt: 4, Duration: 3*time.Minute + 12*time.Second},
		}},
		out: map[string]Output{
			"20261128T040002Z-cccc3333": {Found: true, N: 3, Backend: "claude", Activity: agent.Activity{
				Lines: []string{"reading the tests", "writing main.go"},
				Tools: []agent.ToolCall{{Name: "Bash", Input: "go test ./...", Done: true, Error: true}, {Name: "Edit", Input: "main.go"}}}},
		},
		detail: map[string]Detail{
			"20261128T040001Z-bbbb2222": {Text: "status     max-iterations\ngate       fail", Attempt: 2,
				Files: []git.FileChange{{Path: "main.go", Status: "M", Added: 12, Deleted: 3}},
				Diff:  "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-old\n+new"},
		},
	}
}

// model is a model of src at w×h with its first snapshot read.
func model(t *testing.T, src *fakeSource, w, h int) Model {
	t.Helper()
	m := New(context.Background(), src, tty.Palette{})
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	snap, _ := src.Snapshot(context.Background())
	return update(t, m, snapshotMsg{snap: snap})
}

// update gives m msg.
func update(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(msg)
	return next.(Model)
}

// press gives m the keys, running what each one asks for (but the ticks)
// and giving m what that answers.
func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		next, cmd := m.key(k)
		m = next.(Model)
		m = settle(t, m, cmd)
	}
	return m
}

// settle runs cmd and gives m its message, and so on.
func settle(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	for cmd != nil {
		msg := cmd()
		switch msg.(type) {
		case tea.QuitMsg, tickMsg, nil:
			return m
		}
		var next tea.Model
		next, cmd = m.Update(msg)
		m = next.(Model)
		if _, ok := msg.(snapshotMsg); ok {
			cmd = m.loadPane() // not the tick the snapshot asks for
		}
	}
	return m
}

// screen is the view's lines, checked: h lines of at most w cells.
func screen(t *testing.T, m Model, w, h int) []string {
	t.Helper()
	lines := m.view()
	if len(lines) != h {
		t.Fatalf("%d lines at %dx%d, want %d:\n%s", len(lines), w, h, h, strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		if c := tty.Cells(stripSGR(l)); c > w {
			t.Errorf("line %d is %d cells wide at %dx%d: %q", i, c, w, h, l)
		}
	}
	return lines
}

// line is the first line of lines that contains s.
func line(t *testing.T, lines []string, s string) string {
	t.Helper()
	for _, l := range lines {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line has %q:\n%s", s, strings.Join(lines, "\n"))
	return ""
}

func TestViewSizes(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}, {100, 30}, {120, 24}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			m := model(t, world(), w, h)
			lines := screen(t, m, w, h)
			if got := lines[0]; !strings.HasPrefix(got, "jlgcli top · 3 runs · 1 running · 3 need you") {
				t.Errorf("header %q", got)
			}
			// The batch is selected, open, its tasks under it; what needs
			// you is marked, the failed task's title before its id.
			if l := line(t, lines, "2 tasks: a, b"); !strings.HasPrefix(l, "›! ") || !strings.Contains(l, "▾ 2 tasks") {
				t.Errorf("batch line %q", l)
			}
			if l := line(t, lines, "Fail its check"); !strings.HasPrefix(l, " ! ") || !strings.Contains(l, "max-iterations") {
				t.Errorf("failed task line %q", l)
			}
			if l := line(t, lines, "Keep working"); !strings.HasPrefix(l, "    running") {
				t.Errorf("running task line %q", l)
			}
			line(t, lines, "Blocked one")
			if l := line(t, lines, "Killed task"); !strings.HasPrefix(l, " ! ") || !strings.Contains(l, "killed") {
				t.Errorf("killed task line %q", l)
			}
			if w >= 100 {
				l := line(t, lines, "Fail its check")
				if !strings.Contains(l, "fast #2") || !strings.Contains(l, "$0.12") {
					t.Errorf("failed task line without tier, attempt and cost: %q", l)
				}
				if strings.Index(l, "Fail its check") > strings.Index(l, "bbbb2222") && strings.Contains(l, "bbbb2222") {
					t.Errorf("the id before the title: %q", l)
				}
			}
			line(t, lines, "↑↓ select")
			if w >= wide {
				if l := line(t, lines, "[output]"); !strings.Contains(l, " │ ") {
					t.Errorf("the pane is not beside the list at %d: %q", w, l)
				}
			} else if l := line(t, lines, "[output]"); !strings.HasPrefix(l, "[output]") {
				t.Errorf("the pane is not under the list at %d: %q", w, l)
			}
		})
	}
}

func TestResize(t *testing.T) {
	m := model(t, world(), 160, 45)
	screen(t, m, 160, 45)
	m = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	lines := screen(t, m, 80, 24)
	if l := line(t, lines, "[output]"); !strings.HasPrefix(l, "[output]") {
		t.Errorf("not laid out again for 80 columns: %q", l)
	}
}

func TestKeys(t *testing.T) {
	src := world()
	m := model(t, src, 80, 24)
	if m.Selected() != "20261128T040000Z-aaaa1111" {
		t.Fatalf("selected %q first, want the batch", m.Selected())
	}
	// Down twice: the running task, its output.
	m = press(t, m, "j", "down")
	if m.Selected() != "20261128T040002Z-cccc3333" {
		t.Fatalf("selected %q", m.Selected())
	}
	lines := screen(t, m, 80, 24)
	line(t, lines, "newest agent call: attempt 3 · claude")
	line(t, lines, "✗ Bash go test ./...")
	line(t, lines, "… Edit main.go")
	line(t, lines, "writing main.go")
	// Up: the failed task; tab: its diff, +N −M per file; tab: details.
	m = press(t, m, "k", "tab")
	lines = screen(t, m, 80, 24)
	line(t, lines, "[diff]")
	line(t, lines, "+12 −3       M main.go")
	line(t, lines, "+new")
	m = press(t, m, "tab")
	lines = screen(t, m, 80, 24)
	line(t, lines, "[details]")
	line(t, lines, "gate       fail")
	line(t, lines, "the last tier, fast, spent its attempts")
	m = press(t, m, "tab")
	line(t, screen(t, m, 80, 24), "[output]")

	// s on a run that has ended: nothing to stop.
	m = press(t, m, "s")
	if !strings.Contains(m.Status(), "is not running") || len(src.stopped) > 0 {
		t.Errorf("s on an ended run: %q, stopped %v", m.Status(), src.stopped)
	}
	// s on the running task, then n: not stopped; then s, y: stopped.
	m = press(t, m, "j", "s")
	if !strings.Contains(m.Status(), "? y: stop it") {
		t.Fatalf("no confirmation: %q", m.Status())
	}
	m = press(t, m, "n")
	if len(src.stopped) > 0 || m.Status() != "not stopped" {
		t.Fatalf("stopped without y: %v %q", src.stopped, m.Status())
	}
	m = press(t, m, "s", "y")
	if !slices.Equal(src.stopped, []string{"20261128T040002Z-cccc3333"}) {
		t.Fatalf("stopped %v", src.stopped)
	}
	line(t, screen(t, m, 80, 24), "stopped: interrupted")
	// r on a batch's task resumes its batch; on a run of its own, the run.
	m = press(t, m, "r")
	m = press(t, m, "G", "r")
	if !slices.Equal(src.resumed, []string{"20261128T040000Z-aaaa1111", "20261128T020000Z-eeee5555"}) {
		t.Errorf("resumed %v", src.resumed)
	}
	m = press(t, m, "o")
	if m.Status() != "no board shows 20261128T020000Z-eeee5555" {
		t.Errorf("o says %q", m.Status())
	}
	// enter closes the batch: its tasks leave the list.
	m = press(t, m, "g", "enter")
	lines = screen(t, m, 80, 24)
	if l := line(t, lines, "2 tasks: a, b"); !strings.Contains(l, "▸ 2 tasks: a, b (3)") {
		t.Errorf("closed batch %q", l)
	}
	if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Keep working") }) {
		t.Errorf("a closed batch's task is listed:\n%s", strings.Join(lines, "\n"))
	}
	m = press(t, m, "space")
	line(t, screen(t, m, 80, 24), "Keep working")
	// ? shows the help, any key leaves it; q quits.
	m = press(t, m, "?")
	line(t, screen(t, m, 80, 24), "stop the selected run as jlgcli stop does")
	m = press(t, m, "x")
	line(t, screen(t, m, 80, 24), "↑↓ select")
	if _, cmd := m.key("q"); cmd == nil {
		t.Error("q does not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit")
	}
	if _, cmd := m.key("ctrl+c"); cmd == nil {
		t.Error("ctrl+c does not quit")
	}
}

// hostile is what an agent writes to attack the terminal: OSC 52 (the
// clipboard), OSC 8 (a link), a screen clear, a carriage return that
// rewrites the line, a C1 CSI, a line of 2000 characters, wide and
// combining characters.
var hostile = strings.Join([]string{
	"\x1b]52;c;cHduZWQ=\a",
	"\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"\x1b[2Jcleared",
	"innocent\rEVIL",
	"\u009b31mred",
	"LONG" + strings.Repeat("x", 2000),
	strings.Repeat("漢字", 60),
	strings.Repeat("e\u0301", 120),
}, "\n")

// problems are what hostile text did to the lines: an escape or control
// character that reached them, a line wider than w.
func problems(lines []string, w int) []string {
	var out []string
	for i, l := range lines {
		if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			out = append(out, fmt.Sprintf("line %d holds a control character: %q", i, l))
		}
		if c := tty.Cells(l); c > w {
			out = append(out, fmt.Sprintf("line %d is %d cells wide: %.60q…", i, c, l))
		}
	}
	return out
}

func TestHostileOutput(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			src := world()
			id := "20261128T040002Z-cccc3333"
			src.out[id] = Output{Found: true, N: 1, Backend: "x\x1b[2J", Activity: agent.Activity{Lines: strings.Split(hostile, "\n"),
				Tools: []agent.ToolCall{{Name: "Bash\x1b]52;c;eA==\a", Input: hostile[:min(len(hostile), 40)]}}}}
			src.snap.Items[0].Children[1].Title = "title \x1b]52;c;eA==\a\x1b[2J"
			src.detail[id] = Detail{Attempt: 1, Files: []git.FileChange{{Path: "a\x1b[2J.go", Status: "A", Added: 1}}, Diff: "+" + hostile}
			view := func(safe func(string) string) (out, diff []string) {
				m := model(t, src, w, h) // no colours: no escape code of jlgcli's either
				if safe != nil {
					m.safe = safe
				}
				m = press(t, m, "j", "j")
				out = m.view()
				m = press(t, m, "tab")
				return out, m.view()
			}
			out, diff := view(nil)
			if p := append(problems(out, w), problems(diff, w)...); len(p) > 0 {
				t.Fatalf("hostile text reached the screen:\n%s\n\n%s", strings.Join(p, "\n"), strings.Join(out, "\n"))
			}
			for _, want := range []string{`\x1b]52;c;cHduZWQ=\a`, `\x1b[2Jcleared`, `innocent\rEVIL`, `\u009b31mred`, "LONGxxxx", "漢字", "title \\x1b]52;c;eA==\\a\\x1b[2J"} {
				line(t, out, want)
			}
			line(t, diff, `a\x1b[2J.go`)
			if l := line(t, out, "LONGxxx"); !strings.HasSuffix(l, "…") {
				t.Errorf("the long line is not cut with …: %q", l)
			}
			// The same test, the protection taken away, fails.
			out, diff = view(func(s string) string { return s })
			if p := append(problems(out, w), problems(diff, w)...); len(p) == 0 {
				t.Fatalf("without termsafe, the hostile output is not found:\n%s", strings.Join(out, "\n"))
			}
		})
	}
}

func TestColours(t *testing.T) {
	m := model(t, world(), 160, 45)
	m.pal = tty.Palette{On: true}
	lines := m.view()
	if l := line(t, lines, "Fail its check"); !strings.Contains(l, "\x1b[31mmax-iterations\x1b[0m") {
		t.Errorf("failed status not red: %q", l)
	}
	if l := line(t, lines, "Killed task"); !strings.Contains(l, "\x1b[33mkilled") {
		t.Errorf("killed not yellow: %q", l)
	}
	if l := line(t, lines, "2 tasks: a, b"); !strings.HasPrefix(l, "\x1b[7m") {
		t.Errorf("selected line not in reverse video: %q", l)
	}
	m.pal = tty.Palette{}
	for _, l := range m.view() {
		if strings.Contains(l, "\x1b") {
			t.Fatalf("colours with the palette off: %q", l)
		}
	}
}
