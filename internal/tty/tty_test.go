package tty

import (
	"strings"
	"testing"
	"text/tabwriter"
)

func TestFit(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"gate fail · retry", 80, "gate fail · retry"},
		{"gate fail · retry", 17, "gate fail · retry"},
		{"gate fail · retry", 12, "gate fail ·…"},
		{"日本語のテキスト", 7, "日本語…"}, // wide characters take 2 cells
		{"abc", 0, ""},
	} {
		if got := Fit(c.s, c.n); got != c.want || Cells(got) > max(c.n, 0) {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := Wrap("the last tier, fake2, spent its attempts after 2 attempts", 20)
	want := []string{"the last tier,", "fake2, spent its", "attempts after 2", "attempts"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
	// A path longer than a line is cut after a slash, never shortened.
	got = Wrap("/home/u/repo/.jlgcli/runs/20261122T041500Z-3fa91c07", 20)
	if strings.Join(got, "") != "/home/u/repo/.jlgcli/runs/20261122T041500Z-3fa91c07" || got[0] != "/home/u/repo/" {
		t.Errorf("Wrap of a path = %q", got)
	}
	for _, l := range got {
		if Cells(l) > 20 {
			t.Errorf("Wrap of a path: %q is wider than 20", l)
		}
	}
	if got := Wrap("short", 0); len(got) != 1 || got[0] != "short" {
		t.Errorf("Wrap without a width = %q", got)
	}
}

// The one decision of colour: a terminal, not TERM=dumb, no --no-color,
// no NO_COLOR (set to anything but "").
func TestColorOn(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		name     string
		terminal bool
		flag     bool
		getenv   func(string) string
		want     bool
	}{
		{"a terminal", true, false, env("TERM", "xterm-256color"), true},
		{"no terminal", false, false, env("TERM", "xterm-256color"), false},
		{"--no-color", true, true, env("TERM", "xterm-256color"), false},
		{"NO_COLOR=1", true, false, env("TERM", "xterm-256color", "NO_COLOR", "1"), false},
		{"NO_COLOR=0", true, false, env("NO_COLOR", "0"), false},
		{"NO_COLOR empty", true, false, env("NO_COLOR", ""), true},
		{"TERM=dumb", true, false, env("TERM", "dumb"), false},
	} {
		if got := ColorOn(c.terminal, c.flag, c.getenv); got != c.want {
			t.Errorf("%s: ColorOn = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPalette(t *testing.T) {
	on := Palette{On: true}
	for word, want := range map[string]string{
		"done": "\x1b[32mdone\x1b[0m", "failed": "\x1b[31mfailed\x1b[0m", "needs-you": "\x1b[33mneeds-you\x1b[0m",
		"interrupted": "\x1b[2minterrupted\x1b[0m", "unheard-of": "unheard-of",
		"running (not live: killed)": "\x1b[36mrunning (not live: killed)\x1b[0m",
	} {
		if got := on.Status(word); got != want {
			t.Errorf("Status(%q) = %q, want %q", word, got, want)
		}
	}
	if got := (Palette{}).Status("done"); got != "done" {
		t.Errorf("off: Status(done) = %q", got)
	}
}

// runsTable is a table as jlgcli runs lists: a long id, a flexible title.
func runsTable() Table {
	short := func(s string) string { _, after, _ := strings.Cut(s, "-"); return after }
	return Table{
		Columns: []Column{
			{Head: "ID", Short: short}, {Head: "STATUS", Status: true}, {Head: "BACKEND", Drop: 1},
			{Head: "STARTED", Drop: 2}, {Head: "TITLE", Flex: true, Min: 10, Max: 24},
		},
		Rows: [][]string{
			{"20261122T041500Z-3fa91c07", "done", "claude", "2026-11-22 04:15", "Add rate limiting to the API endpoints"},
			{"20261122T041700Z-0b1c2d3e", "max-iterations", "codex", "2026-11-22 04:17", "Fix the flaky parser tests"},
		},
	}
}

// Off a terminal a table is laid out as text/tabwriter lays it out, its
// Flex column cut to its Max.
func TestTableOffATerminal(t *testing.T) {
	var got, want strings.Builder
	if err := runsTable().Write(&got, Terminal{}); err != nil {
		t.Fatal(err)
	}
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	tw.Write([]byte("ID\tSTATUS\tBACKEND\tSTARTED\tTITLE\n"))
	tw.Write([]byte("20261122T041500Z-3fa91c07\tdone\tclaude\t2026-11-22 04:15\tAdd rate limiting to th…\n"))
	tw.Write([]byte("20261122T041700Z-0b1c2d3e\tmax-iterations\tcodex\t2026-11-22 04:17\tFix the flaky parser te…\n"))
	tw.Flush()
	if got.String() != want.String() {
		t.Errorf("off a terminal:\n%s\nwant\n%s", got.String(), want.String())
	}
}

// On a terminal the table fits the width: whole when it can, else the ids
// short, then columns left out, the title taking what is left; a width too
// narrow for all that cuts each line; never a line wider than the width.
func TestTableFits(t *testing.T) {
	for _, c := range []struct {
		width int
		want  string
	}{
		{160, "" +
			"ID                         STATUS          BACKEND  STARTED           TITLE\n" +
			"20261122T041500Z-3fa91c07  done            claude   2026-11-22 04:15  Add rate limiting to the API endpoints\n" +
			"20261122T041700Z-0b1c2d3e  max-iterations  codex    2026-11-22 04:17  Fix the flaky parser tests\n"},
		{80, "" + // the whole ids would leave the title less than its 24
			"ID        STATUS          BACKEND  STARTED           TITLE\n" +
			"3fa91c07  done            claude   2026-11-22 04:15  Add rate limiting to the A…\n" +
			"0b1c2d3e  max-iterations  codex    2026-11-22 04:17  Fix the flaky parser tests\n"},
		{60, "" +
			"ID        STATUS          STARTED           TITLE\n" +
			"3fa91c07  done            2026-11-22 04:15  Add rate limiti…\n" +
			"0b1c2d3e  max-iterations  2026-11-22 04:17  Fix the flaky p…\n"},
		{50, "" +
			"ID        STATUS          TITLE\n" +
			"3fa91c07  done            Add rate limiting to th…\n" +
			"0b1c2d3e  max-iterations  Fix the flaky parser te…\n"},
		{30, "" + // too narrow even so: each line cut
			"ID        STATUS          TIT…\n" +
			"3fa91c07  done            Add…\n" +
			"0b1c2d3e  max-iterations  Fix…\n"},
	} {
		var b strings.Builder
		if err := runsTable().Write(&b, Terminal{Width: c.width}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("at %d columns:\n%s\nwant\n%s", c.width, b.String(), c.want)
		}
		for line := range strings.Lines(b.String()) {
			if Cells(strings.TrimSuffix(line, "\n")) > c.width {
				t.Errorf("at %d columns, a line is wider: %q", c.width, line)
			}
		}
	}
}

// The status column is coloured on a terminal that takes colours, its
// alignment kept (the codes take no cell).
func TestTableColours(t *testing.T) {
	var b strings.Builder
	if err := runsTable().Write(&b, Terminal{Width: 160, Palette: Palette{On: true}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "20261122T041500Z-3fa91c07  \x1b[32mdone\x1b[0m            claude") ||
		!strings.Contains(b.String(), "\x1b[31mmax-iterations\x1b[0m  codex") || strings.Contains(b.String(), "\x1b[32mSTATUS") {
		t.Errorf("coloured:\n%q", b.String())
	}
}
