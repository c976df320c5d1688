package live

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// vt is a terminal of a given width as far as the live lines use it: it
// keeps every row written (the scrollback and the screen), wraps text at
// its width, and applies the cursor moves and line erasures jlgcli writes.
// It records each Write. Erasing the end of the screen (ED) is refused: a
// terminal may keep a copy of what it erases (tmux's scroll-on-clear).
type vt struct {
	mu     sync.Mutex
	width  int
	rows   [][]rune // cells; a wide character takes its cell and a 0 after it
	row    int
	col    int
	writes []string
}

func newVT(width int) *vt { return &vt{width: width, rows: [][]rune{nil}} }

var csi = regexp.MustCompile(`^\x1b\[(\??)([0-9;]*)([A-Za-z])`)

func (t *vt) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writes = append(t.writes, string(p))
	s := string(p)
	for s != "" {
		if m := csi.FindStringSubmatch(s); m != nil {
			s = s[len(m[0]):]
			n, _ := strconv.Atoi(m[2])
			switch {
			case m[1] == "?": // private modes: nothing to draw
			case m[3] == "A":
				t.row = max(0, t.row-max(n, 1))
			case m[3] == "B":
				t.row = min(len(t.rows)-1, t.row+max(n, 1))
			case m[3] == "K" && n == 2:
				t.rows[t.row] = nil
			case m[3] == "K":
				t.rows[t.row] = t.rows[t.row][:min(t.col, len(t.rows[t.row]))]
			default:
				panic(fmt.Sprintf("escape %q not simulated", m[0]))
			}
			continue
		}
		r := []rune(s)[0]
		s = s[len(string(r)):]
		switch r {
		case '\r':
			t.col = 0
		case '\n':
			t.down()
		default:
			if r < ' ' || r == 0x7f {
				panic(fmt.Sprintf("control %q not simulated", r))
			}
			c := tty.RuneCells(r)
			if t.col+c > t.width {
				t.down()
			}
			line := t.rows[t.row]
			for len(line) < t.col+c {
				line = append(line, ' ')
			}
			line[t.col] = r
			if c == 2 {
				line[t.col+1] = 0
			}
			t.rows[t.row] = line
			t.col += c
		}
	}
	return len(p), nil
}

func (t *vt) down() {
	t.row++
	t.col = 0
	if t.row == len(t.rows) {
		t.rows = append(t.rows, nil)
	}
}

// lines are the rows written, scrollback and screen, without the last one
// when it is empty.
func (t *vt) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, r := range t.rows {
		out = append(out, strings.ReplaceAll(string(r), "\x00", ""))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func (t *vt) frames() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.writes...)
}

func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func isLiveLine(s string) bool {
	s = strings.TrimPrefix(s, "\r")
	return strings.HasPrefix(s, "⟳") || strings.HasPrefix(s, "batch: ")
}

var escape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// checkFrames says whether each write is one whole frame (synchronized
// output around it) whose live lines fit width cells (the lines above them,
// which stay, may wrap).
func checkFrames(t *testing.T, term *vt, width int) {
	t.Helper()
	frames := term.frames()
	if len(frames) == 0 {
		t.Fatal("nothing drawn")
	}
	for _, f := range frames {
		if !strings.HasPrefix(f, syncBegin) || !strings.HasSuffix(f, syncEnd) || strings.Count(f, syncBegin) != 1 {
			t.Fatalf("a write that is not one frame: %q", f)
		}
		for _, line := range strings.Split(escape.ReplaceAllString(f, ""), "\n") {
			line = strings.TrimPrefix(line, "\r")
			if !isLiveLine(line) {
				continue
			}
			if c := cells(line); c > width {
				t.Errorf("a line of %d cells on a terminal of %d: %q", c, width, line)
			}
		}
	}
}

// A long task id, a reply in wide characters and long messages, redrawn many
// times on an 80-column terminal: every write is one frame, every line
// fits, and the terminal holds one copy of the board under the messages.
func TestBoardOnANarrowTerminal(t *testing.T) {
	term := newVT(80)
	b := NewBatchBoard(Screen{W: term, Live: true, Width: func() int { return 80 }}, 4)
	now := time.Now()
	ids := []string{"a-task-with-a-rather-long-name-that-goes-on-and-on", "数据库迁移任务的名字很长很长很长很长很长很长很长很长", "c"}
	for _, id := range ids {
		b.Event(batch.Event{Kind: batch.EventStarted, Time: now, Task: batch.TaskResult{ID: id, Status: batch.StatusRunning}})
		b.Task(id).AttemptStarted(taskengine.Progress{Tier: "fast", Tiers: 2, InTier: 1, Attempts: 3, Number: 1, BudgetUSD: 5})
	}
	say := NewReporter(term, false)
	say.Attach(b)
	for i := range 30 {
		b.Task(ids[i%3]).Phase(taskengine.Progress{Tier: "fast", Tiers: 2, InTier: 1, Attempts: 3, Number: 1}, "gate")
		if i%10 == 0 {
			say.Notice(fmt.Sprintf("message %d %s", i, strings.Repeat("long ", 30)))
		}
		b.l.redraw()
	}
	b.Task(ids[0]).AttemptDone(taskengine.Progress{Tier: "fast", Tiers: 2, InTier: 1, Attempts: 3, Number: 1}, taskengine.Attempt{Tier: "fast", Action: taskengine.ActionRetry})
	b.l.redraw()
	lines := term.lines()
	if n := count(lines, "batch: "); n != 1 {
		t.Errorf("%d summary lines on the terminal, want 1:\n%s", n, strings.Join(lines, "\n"))
	}
	for _, id := range ids {
		if n := count(lines, "⟳ ["+id[:1]); n != 1 {
			t.Errorf("%d lines of task %.6s on the terminal, want 1:\n%s", n, id, strings.Join(lines, "\n"))
		}
	}
	if n := count(lines, "jlgcli: message"); n != 3 {
		t.Errorf("%d messages, want 3:\n%s", n, strings.Join(lines, "\n"))
	}
	checkFrames(t, term, 80)
	b.Close()
	lines = term.lines()
	if n := count(lines, "batch: ") + count(lines, "⟳"); n != 0 {
		t.Errorf("Close leaves the board:\n%s", strings.Join(lines, "\n"))
	}
}

// A task's and a loop's status lines fit the terminal and follow its
// resizes; each draw is one write; a message through the reporter stands
// above the line, which appears once.
func TestStatusLinesFitAndFollowTheWidth(t *testing.T) {
	width := 80
	var mu sync.Mutex
	widthNow := func() int { mu.Lock(); defer mu.Unlock(); return width }
	for _, name := range []string{"task", "loop"} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			width = 80
			mu.Unlock()
			term := newVT(80)
			s := Screen{W: term, Live: true, Width: widthNow}
			say := NewReporter(term, false)
			var redraw func()
			var closeIt func()
			switch name {
			case "task":
				l := NewTaskLine(s)
				say.Attach(l)
				l.AttemptStarted(taskengine.Progress{Step: 2, Steps: 3, Tier: "a-long-tier-name", Tiers: 3, InTier: 2, Attempts: 5, BudgetUSD: 10, LastGate: "fail"})
				redraw, closeIt = l.l.redraw, l.Close
			case "loop":
				p := NewProgress(s)
				say.Attach(p)
				p.IterationStarted(3, 10, time.Now())
				p.IterationDone(engine.Entry{Iteration: 3, Response: strings.Repeat("日本語の長い返事 ", 20)}, &engine.Result{})
				redraw, closeIt = p.l.redraw, p.Close
			}
			for i := range 20 {
				if i == 10 {
					mu.Lock()
					width = 40
					mu.Unlock()
					term.mu.Lock()
					term.width = 40
					term.mu.Unlock()
				}
				if i%7 == 0 {
					say.Warn("something " + strings.Repeat("x", 100))
				}
				redraw()
			}
			checkFrames(t, term, 80)
			for _, f := range term.frames()[len(term.frames())-5:] {
				for _, line := range strings.Split(escape.ReplaceAllString(f, ""), "\n") {
					if c := cells(strings.TrimPrefix(line, "\r")); isLiveLine(line) && c > 40 {
						t.Errorf("after the resize to 40 columns, a line of %d cells: %q", c, line)
					}
				}
			}
			lines := term.lines()
			if n := count(lines, "⟳"); n != 1 {
				t.Errorf("%d status lines on the terminal, want 1:\n%s", n, strings.Join(lines, "\n"))
			}
			closeIt()
			if n := count(term.lines(), "⟳"); n != 0 {
				t.Errorf("Close leaves the status line:\n%s", strings.Join(term.lines(), "\n"))
			}
		})
	}
}

var stamped = regexp.MustCompile(`^\d\d:\d\d:\d\d jlgcli: `)

// Off a terminal (or with TERM=dumb) no escape code is written and each
// line starts with the time of day.
func TestLogLines(t *testing.T) {
	if IsLive(true, "dumb") || IsLive(false, "xterm") || !IsLive(true, "xterm-256color") {
		t.Fatal("IsLive: a dumb terminal or a file takes no cursor codes")
	}
	var buf syncBuffer
	s := NewScreen(&buf, IsLive(true, "dumb"), func() int { return 20 })
	l := NewTaskLine(s)
	p := NewProgress(s)
	bl := NewBatchLines(s.W, 2)
	pt := NewPrefixedTaskLine(s, "a")
	tp := taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3, Number: 1}
	l.AttemptStarted(tp)
	pt.AttemptStarted(tp)
	p.IterationStarted(1, 3, time.Now())
	p.IterationDone(engine.Entry{Iteration: 1, Response: "\x1b[31mred\x1b[0m reply"}, &engine.Result{})
	bl.Event(batch.Event{Kind: batch.EventStarted, Task: batch.TaskResult{ID: "a", Status: batch.StatusRunning}})
	l.AttemptDone(tp, taskengine.Attempt{Tier: "fast", Action: taskengine.ActionRetry})
	l.Close()
	p.Close()
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("escape codes off a terminal: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Errorf("%d lines, want 6:\n%s", len(lines), out)
	}
	for _, line := range lines {
		if !stamped.MatchString(line) {
			t.Errorf("a line without its time: %q", line)
		}
	}
	if !strings.Contains(out, " jlgcli: [a] tier fast") {
		t.Errorf("a batch task's line lost its id:\n%s", out)
	}
}

func TestFit(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"日本語", 6, "日本語"},
		{"日本語", 5, "日本…"},
		{"日本語", 4, "日…"},
		{"a\x1b[31mred\x1b[0m\tb", 10, `a\x1b[31m…`},
		{"a\x1b[31mred\x1b[0m\tb\r\nc", 40, `a\x1b[31mred\x1b[0m b c`},
		{"\u202eabc\u009b", 20, `\u202eabc\u009b`},
		{"é", 1, "é"},
	} {
		if got := fit(c.in, c.n); got != c.want || cells(got) > c.n {
			t.Errorf("fit(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// The agent's retry lines: on the live line at once (a frame is drawn for
// each), off a terminal each once, at most maxAgentLines of them a call.
func TestAgentLines(t *testing.T) {
	term := newVT(120)
	l := NewTaskLine(Screen{W: term, Live: true, Width: func() int { return 120 }})
	defer l.Close()
	l.AttemptStarted(taskengine.Progress{Tier: "fast", Tiers: 1, InTier: 1, Attempts: 3})
	l.AgentLine("API retry 1/10 in 1.2s: 529 overloaded_error")
	if lines := term.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], "⟳ agent: API retry 1/10 in 1.2s: 529 overloaded_error · tier fast (1/1) · attempt 1/3") {
		t.Errorf("the live line after a retry: %q", lines)
	}

	var buf syncBuffer
	p := NewProgress(NewScreen(&buf, false, nil))
	p.IterationStarted(1, 3, time.Now())
	for i := range 60 {
		p.AgentLine(fmt.Sprintf("retrying %d", i/2)) // each line twice
	}
	out := buf.String()
	if n := strings.Count(out, "jlgcli: agent: retrying"); n != maxAgentLines {
		t.Errorf("%d agent lines printed, want %d:\n%s", n, maxAgentLines, out)
	}
	if !stamped.MatchString(out) || strings.Count(out, "retrying 0\n") != 1 {
		t.Errorf("agent lines off a terminal:\n%s", out)
	}
}
