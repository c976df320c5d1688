package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

func f(v float64) *float64 { return &v }

func row(id, status string, day, attempts int, cost float64, ms millis.Duration, tiers ...taskengine.TierStat) TaskRow {
	return TaskRow{ID: id, Status: status, Iterations: attempts, CostUSD: cost, CostKnown: cost != 0, DurationMs: ms,
		StartedAt: t0.AddDate(0, 0, day), Tiers: tiers}
}

func tier(name string, attempts int, cost float64, passed int) taskengine.TierStat {
	return taskengine.TierStat{Name: name, Attempts: attempts, CostUSD: cost, Passed: passed}
}

func TestStats(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []TaskRow
		want Summary
	}{
		{
			name: "none",
			want: Summary{Statuses: map[string]int{}, Tiers: []TierFigures{}},
		},
		{
			name: "only running",
			rows: []TaskRow{row("a", "running", 0, 2, 0.5, 100, tier("fast", 2, 0.5, 0)), row("b", "", 1, 0, 0, 0)},
			want: Summary{Running: 2, Statuses: map[string]int{}, Tiers: []TierFigures{}},
		},
		{
			name: "the seed's example and a failure",
			rows: []TaskRow{
				// newest first, as the index lists them: the tiers are
				// still in the order of the oldest run.
				row("c", "no-progress", 2, 6, 0.75, 100000, tier("fast", 3, 0.25, 0), tier("smart", 3, 0.5, 0)),
				row("b", "done", 1, 1, 0.125, 20000, tier("fast", 1, 0.125, 1), tier("smart", 0, 0, 0)),
				row("a", "done", 0, 4, 0.5, 60000, tier("fast", 3, 0.25, 0), tier("smart", 1, 0.25, 1)),
				row("r", "running", 3, 1, 0.25, 1000, tier("fast", 1, 0.25, 0)),
			},
			want: Summary{
				Runs: 3, Running: 1, Succeeded: 2, SuccessRate: f(2.0 / 3),
				Statuses: map[string]int{"done": 2, "no-progress": 1},
				Tiers: []TierFigures{
					{Name: "fast", Tasks: 3, Finished: 1, SuccessRate: f(1.0 / 3), Attempts: 7, CostUSD: 0.625, CostKnown: true},
					{Name: "smart", Tasks: 2, Finished: 1, SuccessRate: f(0.5), Attempts: 4, CostUSD: 0.75, CostKnown: true},
				},
				Attempts: 11, MeanAttemptsToSuccess: f(2.5),
				CostUSD: 1.375, CostKnown: true, CostPerSuccess: f(1.375 / 2), MeanSuccessCost: f(0.3125),
				MeanDurationMs: f(60000),
				FirstStartedAt: t0, LastStartedAt: t0.AddDate(0, 0, 2),
			},
		},
		{
			name: "no success",
			rows: []TaskRow{
				row("a", "budget-exceeded", 0, 2, 1, 1000, tier("fast", 2, 1, 0)),
				row("b", "timeout", 1, 1, 0.5, 3000, tier("fast", 1, 0.5, 0)),
			},
			want: Summary{
				Runs: 2, SuccessRate: f(0), Statuses: map[string]int{"budget-exceeded": 1, "timeout": 1},
				Tiers:    []TierFigures{{Name: "fast", Tasks: 2, SuccessRate: f(0), Attempts: 3, CostUSD: 1.5, CostKnown: true}},
				Attempts: 3, CostUSD: 1.5, CostKnown: true, MeanDurationMs: f(2000),
				FirstStartedAt: t0, LastStartedAt: t0.AddDate(0, 0, 1),
			},
		},
		{
			name: "attempts from the tiers when the row has none; a plan's tier once per task",
			rows: []TaskRow{
				row("a", "done", 0, 0, 0.5, 1000, tier("fast", 1, 0.25, 1), tier("smart", 1, 0.25, 1), tier("fast", 2, 0, 1)),
			},
			want: Summary{
				Runs: 1, Succeeded: 1, SuccessRate: f(1), Statuses: map[string]int{"done": 1},
				Tiers: []TierFigures{
					{Name: "fast", Tasks: 1, Finished: 1, SuccessRate: f(1), Attempts: 3, CostUSD: 0.25, CostKnown: true},
					{Name: "smart", Tasks: 1, Finished: 1, SuccessRate: f(1), Attempts: 1, CostUSD: 0.25, CostKnown: true},
				},
				Attempts: 4, MeanAttemptsToSuccess: f(4), CostUSD: 0.5, CostKnown: true, CostPerSuccess: f(0.5), MeanSuccessCost: f(0.5),
				MeanDurationMs: f(1000), FirstStartedAt: t0, LastStartedAt: t0,
			},
		},
		{
			name: "no agent reported a cost: nothing per success",
			rows: []TaskRow{row("a", "done", 0, 1, 0, 1000, tier("fast", 1, 0, 1))},
			want: Summary{
				Runs: 1, Succeeded: 1, SuccessRate: f(1), Statuses: map[string]int{"done": 1},
				Tiers:    []TierFigures{{Name: "fast", Tasks: 1, Finished: 1, SuccessRate: f(1), Attempts: 1}},
				Attempts: 1, MeanAttemptsToSuccess: f(1), MeanDurationMs: f(1000), FirstStartedAt: t0, LastStartedAt: t0, CostUnknown: 1,
			},
		},
		{
			name: "a tier that passed in a failed task did not finish it",
			rows: []TaskRow{row("a", "max-iterations", 0, 3, 0, 0, tier("fast", 3, 0, 1))},
			want: Summary{
				Runs: 1, SuccessRate: f(0), Statuses: map[string]int{"max-iterations": 1},
				Tiers:    []TierFigures{{Name: "fast", Tasks: 1, SuccessRate: f(0), Attempts: 3}},
				Attempts: 3, MeanDurationMs: f(0), FirstStartedAt: t0, LastStartedAt: t0, CostUnknown: 1,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Stats(tc.rows)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatsJSON(t *testing.T) {
	data, err := json.Marshal(Stats(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"runs":0,"running":0,"reruns":0,"succeeded":0,"successRate":null,"statuses":{},"tiers":[],"attempts":0,` +
		`"meanAttemptsToSuccess":null,"costUsd":0,"costKnown":false,"costUnknown":0,"costPerSuccess":null,"meanSuccessCost":null,"meanDurationMs":null}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
}

func TestStatsText(t *testing.T) {
	s := Stats([]TaskRow{
		row("a", "done", 0, 4, 0.5, 60000, tier("fast", 3, 0.25, 0), tier("smart", 1, 0.25, 1)),
		row("b", "no-progress", 1, 6, 0.75, 100000, tier("fast", 3, 0.25, 0), tier("smart", 3, 0.5, 0)),
		row("c", "timeout", 2, 1, 0.25, 20000, tier("fast", 1, 0.25, 0)),
		row("r", "running", 3, 1, 0, 0),
	})
	want := `task runs                 3 (and 1 running, not counted)
started                   2026-11-22 to 2026-11-24
succeeded                 1 (33.3%)
statuses                  done 1, no-progress 1, timeout 1
attempts                  11 (mean before success: 4.00)
cost                      $1.5000
cost per successful task  $1.5000 (all runs' cost / successes)
mean cost of a success    $0.5000
mean duration             1m0s

TIER   TASKS  FINISHED  SUCCESS  ATTEMPTS  COST
fast   3      0         0.0%     7         $0.7500
smart  2      1         50.0%    4         $0.7500
`
	if diff := cmp.Diff(want, s.Text()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	if got := Stats(nil).Text(); got != "task runs  0\n" {
		t.Errorf("no run: %q", got)
	}
	unknown := Stats([]TaskRow{row("a", "done", 0, 1, 0, 1000, tier("fast", 1, 0, 1))}).Text()
	for _, want := range []string{"cost                      unknown\n", "cost per successful task  unknown ", "mean cost of a success    unknown\n", "fast  1      1         100.0%   1         unknown\n"} {
		if !strings.Contains(unknown, want) {
			t.Errorf("costs unknown: %q lacks %q", unknown, want)
		}
	}
	if strings.Contains(unknown, "$") {
		t.Errorf("costs unknown: %q shows an amount", unknown)
	}
	noSuccess := Stats([]TaskRow{row("c", "timeout", 2, 1, 0.25, 20000)}).Text()
	for _, want := range []string{"succeeded                 0 (0.0%)", "mean before success: -", "cost per successful task  - ", "mean cost of a success    -\n"} {
		if !strings.Contains(noSuccess, want) {
			t.Errorf("no success: %q lacks %q", noSuccess, want)
		}
	}
}

// TestStatsFoldsReruns: a batch's second run of a task (RerunOf) is one
// task with its first run: its status the second's, its attempts, cost,
// time and tiers both runs'; a tier counts once for the task.
func TestStatsFoldsReruns(t *testing.T) {
	first := row("x", "done", 0, 2, 0.375, 3000, tier("cheap", 1, 0.125, 0), tier("strong", 1, 0.25, 1))
	second := row("z", "done", 0, 1, 0.25, 1000, tier("cheap", 0, 0, 0), tier("strong", 1, 0.25, 1))
	second.RerunOf = "x"
	got := Stats([]TaskRow{second, row("p", "done", 0, 1, 0.125, 500, tier("cheap", 1, 0.125, 1)), first})
	want := Summary{
		Runs: 2, Reruns: 1, Succeeded: 2, SuccessRate: f(1), Statuses: map[string]int{"done": 2},
		Tiers: []TierFigures{
			{Name: "cheap", Tasks: 2, Finished: 1, SuccessRate: f(0.5), Attempts: 2, CostUSD: 0.25, CostKnown: true},
			{Name: "strong", Tasks: 1, Finished: 1, SuccessRate: f(1), Attempts: 2, CostUSD: 0.5, CostKnown: true},
		},
		Attempts: 4, MeanAttemptsToSuccess: f(2), CostUSD: 0.75, CostKnown: true, CostPerSuccess: f(0.375), MeanSuccessCost: f(0.375),
		MeanDurationMs: f(2250), FirstStartedAt: t0, LastStartedAt: t0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if text := got.Text(); !strings.Contains(text, "task runs                 2; 1 re-run after a conflict counted with the first run\n") {
		t.Errorf("text:\n%s", text)
	}
}

// TestStatsUnknownCost: a tier whose agents reported no cost, and runs of
// unknown cost beside known ones, say so: never $0.0000.
func TestStatsUnknownCost(t *testing.T) {
	free := row("b", "done", 1, 1, 0, 1000, tier("local", 1, 0, 1))
	text := Stats([]TaskRow{row("a", "done", 0, 1, 0.5, 1000, tier("fast", 1, 0.5, 1)), free}).Text()
	for _, want := range []string{"cost                      $0.5000 (and 1 run of unknown cost)\n", "\nlocal  1      1         100.0%   1         unknown\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "$0.0000") {
		t.Errorf("an unknown cost printed as $0.0000:\n%s", text)
	}
}
