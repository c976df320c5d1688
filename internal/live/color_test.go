package live

import (
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// The word a line leads with is coloured, after its prefixes; a word an
// agent wrote further on is not.
func TestColorLine(t *testing.T) {
	on := tty.Palette{On: true}
	for line, want := range map[string]string{
		"jlgcli: gate fail · retry · exit 1: done": "jlgcli: \x1b[31mgate fail\x1b[0m · retry · exit 1: done",
		"jlgcli: [a] gate pass · pass · $0.01":     "jlgcli: [a] \x1b[32mgate pass\x1b[0m · pass · $0.01",
		"jlgcli: [a] ended failed: x · run r1":     "jlgcli: [a] \x1b[31mended failed\x1b[0m: x · run r1",
		"jlgcli: [a] blocked: b failed":            "jlgcli: [a] \x1b[33mblocked:\x1b[0m b failed",
		"jlgcli: [a] not merged (conflict): x":     "jlgcli: [a] \x1b[31mnot merged\x1b[0m (conflict): x",
		"jlgcli: error: no such run":               "jlgcli: \x1b[31merror:\x1b[0m no such run",
		"jlgcli: hint: run jlgcli resume x":        "jlgcli: \x1b[2mhint:\x1b[0m run jlgcli resume x",
		"jlgcli: max-iterations: the last tier":    "jlgcli: \x1b[31mmax-iterations:\x1b[0m the last tier",
		"batch: 1 done, 0 running, 2 failed · $1":  "batch: \x1b[32m1 done\x1b[0m, 0 running, \x1b[31m2 failed\x1b[0m · $1",
		"jlgcli: agent: done and failed":           "jlgcli: agent: done and failed",
		"⟳ tier fast (1/1) · attempt 1/3":          "⟳ tier fast (1/1) · attempt 1/3",
	} {
		if got := colorLine(on, line); got != want {
			t.Errorf("colorLine(%q) = %q, want %q", line, got, want)
		}
		if got := colorLines(tty.Palette{}, line+"\n"); got != line+"\n" {
			t.Errorf("off: colorLines(%q) = %q", line, got)
		}
	}
}

// On a live terminal an event's line is one row, cut to the width and
// coloured; off one (a log) it is whole and plain.
func TestEventLineOnATerminal(t *testing.T) {
	fail := gate.Report{Status: gate.StatusFail, TestFailures: []gate.TestFailure{{Test: "sh check.sh", Check: "sh check.sh", Error: "exited with status 1:\nFAIL: the answer is 1, want 42"}},
		Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "sh check.sh", ExitCode: 1}}}}
	p := taskengine.Progress{Tier: "fast", Tiers: 2, InTier: 1, Attempts: 3, Number: 1}
	a := taskengine.Attempt{Tier: "fast", Gate: fail, Action: taskengine.ActionRetry}
	for _, width := range []int{80, 160} {
		var out strings.Builder
		l := NewTaskLine(Screen{W: &out, Live: true, Width: func() int { return width }, Palette: tty.Palette{On: true}})
		l.AttemptStarted(p)
		l.AttemptDone(p, a)
		l.Close()
		text := out.String()
		i := strings.Index(text, "jlgcli: ")
		if i < 0 {
			t.Fatalf("at %d: no event line in %q", width, text)
		}
		line, _, _ := strings.Cut(text[i:], "\n")
		if !strings.HasPrefix(line, "jlgcli: \x1b[31mgate fail\x1b[0m · retry · exit 1: FAIL: the answer is 1, want 42 · ") {
			t.Errorf("at %d: %q", width, line)
		}
		plain := strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "").Replace(line)
		switch {
		case width == 80 && (cells(plain) != 79 || !strings.HasSuffix(plain, "…")):
			t.Errorf("at 80, the line is not cut to 79 cells: %q", plain)
		case width == 160 && !strings.HasSuffix(plain, " · check: sh check.sh"):
			t.Errorf("at 160, the line does not end with its check: %q", plain)
		}
	}
	var log strings.Builder
	l := NewTaskLine(Screen{W: &log, Width: func() int { return 40 }})
	l.AttemptDone(p, a)
	if got := log.String(); strings.Contains(got, "…") || strings.Contains(got, "\x1b") || !strings.HasSuffix(got, " · check: sh check.sh\n") {
		t.Errorf("off a terminal: %q", got)
	}
}

// The reporter colours what it writes itself when its palette is on, and
// cuts a progress message to a live terminal's width, never a notice.
func TestReporterOnATerminal(t *testing.T) {
	var out strings.Builder
	r := NewReporter(&out, false)
	r.SetPalette(tty.Palette{On: true})
	r.SetWidth(func() int { return 30 })
	r.Error("no such run")
	r.Progress("task 20261122T041500Z-3fa91c07 on branch jlgcli/x")
	r.Notice("continue it with: jlgcli resume 20261122T041500Z-3fa91c07")
	want := "jlgcli: \x1b[31merror:\x1b[0m no such run\n" +
		"jlgcli: task 20261122T041500…\n" +
		"jlgcli: continue it with: jlgcli resume 20261122T041500Z-3fa91c07\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}

// A batch task's end says how it ended and why first, its run id last.
func TestBatchLineEnded(t *testing.T) {
	var out strings.Builder
	b := NewBatchLines(&out, 1)
	b.Event(batch.Event{Kind: batch.EventFinished, Task: batch.TaskResult{ID: "a", Status: batch.Status("failed"), RunStatus: "max-iterations", RunID: "20261122T041500Z-3fa91c07", Details: "the last tier spent its attempts"}})
	if line, _, _ := strings.Cut(out.String(), "\n"); line != "jlgcli: [a] ended max-iterations: the last tier spent its attempts · run 20261122T041500Z-3fa91c07" {
		t.Errorf("got %q", line)
	}
}
