package plain

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/tty"
)

func listed() []runs.Listed {
	started := time.Date(2026, 11, 22, 4, 15, 0, 0, time.Local)
	return []runs.Listed{
		{RunRow: store.RunRow{ID: "20261122T041500Z-3fa91c07", Command: "task", Status: "max-iterations", Backend: "claude", Iterations: 4,
			Parent: "20261122T041400Z-0b1c2d3e", Title: "Add rate limiting to the API endpoints, with tests", StartedAt: started, DurationMs: 61_000}},
		{RunRow: store.RunRow{ID: "20261122T041400Z-0b1c2d3e", Command: "batch", Status: "done", Backend: "claude", Iterations: 1,
			Title: "backlog", StartedAt: started, CostUSD: 1.5, CostKnown: true}},
	}
}

// On a terminal of 80 columns the runs table fits: the random part of
// each id, a task's command without its batch, fewer columns, the title
// cut; at 160, every column and the
// whole ids; its statuses coloured when the terminal takes colours.
func TestRunsFitATerminal(t *testing.T) {
	var b strings.Builder
	if err := Runs(&b, listed(), tty.Terminal{Width: 80}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ID        COMMAND  STATUS          COST     STARTED      LIVE  TITLE\n" +
		"3fa91c07  task     max-iterations  unknown  11-22 04:15  no    Add rate limitin…\n" +
		"0b1c2d3e  batch    done            $1.5000  11-22 04:15  no    backlog\n"
	if b.String() != want {
		t.Errorf("at 80 columns:\n%s\nwant\n%s", b.String(), want)
	}
	for line := range strings.Lines(b.String()) {
		if n := tty.Cells(strings.TrimSuffix(line, "\n")); n > 80 {
			t.Errorf("at 80 columns a line is %d cells wide: %q", n, line)
		}
		if strings.Contains(line, "20261122T") {
			t.Errorf("at 80 columns a whole id: %q", line)
		}
	}
	b.Reset()
	if err := Runs(&b, listed(), tty.Terminal{Width: 160, Palette: tty.Palette{On: true}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "20261122T041500Z-3fa91c07  task<0b1c2d3e  \x1b[31mmax-iterations\x1b[0m  claude   4     unknown  1m1s      2026-11-22 04:15  no    Add rate limiting to the API endpoints, wit…\n") {
		t.Errorf("at 160 columns:\n%s", out)
	}
}

// show's values wrap between words on a terminal, under one another; off a
// terminal each is on its line, whole.
func TestFieldsWrap(t *testing.T) {
	var f fields
	f.add("status", "max-iterations")
	f.add("details", "the last tier, fake2, spent its attempts after 2 attempts: fail (fix_required): 1 test failure")
	var b strings.Builder
	if err := f.write(&b, tty.Terminal{Width: 40, Palette: tty.Palette{On: true}}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"status   \x1b[31mmax-iterations\x1b[0m\n" +
		"details  the last tier, fake2, spent its\n" +
		"         attempts after 2 attempts: fail\n" +
		"         (fix_required): 1 test failure\n"
	if b.String() != want {
		t.Errorf("at 40 columns:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := f.write(&b, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	if want := "status   max-iterations\ndetails  the last tier, fake2, spent its attempts after 2 attempts: fail (fix_required): 1 test failure\n"; b.String() != want {
		t.Errorf("off a terminal:\n%q\nwant\n%q", b.String(), want)
	}
}

// A batch's table at 80 columns: the run ids short; why a task stopped
// wrapped between words.
func TestBatchTableFits(t *testing.T) {
	id := "20261122T041500Z-3fa91c07"
	res := batch.Summary{Tasks: []batch.TaskSummary{{ID: "add-rate-limits", Status: "failed", Attempts: 3, RunID: &id,
		Details: "max-iterations: the last tier, claude:opus, spent its 3 attempts: fail (fix_required): 2 test failures in the API package"}}}
	var b strings.Builder
	if err := BatchTable(&b, res, tty.Terminal{Width: 60}); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(b.String()) {
		if n := tty.Cells(strings.TrimSuffix(line, "\n")); n > 60 {
			t.Errorf("a line is %d cells wide: %q", n, line)
		}
	}
	if !strings.Contains(b.String(), " 3fa91c07 ") || !strings.Contains(b.String(), "\n  ") {
		t.Errorf("at 60 columns:\n%s", b.String())
	}
}
