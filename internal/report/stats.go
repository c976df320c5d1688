package report

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// TaskRow is a task run as the run index holds it.
type TaskRow struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Iterations is the number of attempts.
	Iterations int               `json:"iterations"`
	CostUSD    float64           `json:"costUsd"`
	CostKnown  bool              `json:"costKnown"`
	DurationMs int64             `json:"durationMs"`
	StartedAt  time.Time         `json:"startedAt"`
	Tiers      []engine.TierStat `json:"tiers"`
}

// Summary is what the seed asks to track across task runs: the success
// rate, overall and per tier, the attempts before success, the cost per
// successful task, the duration. Ratios whose denominator is zero are nil
// (null in JSON).
type Summary struct {
	// Runs counts the task runs that ended (whatever their status);
	// Running those still running (or killed and not resumed), which are
	// left out of every other figure.
	Runs    int `json:"runs"`
	Running int `json:"running"`
	// Succeeded counts the runs that ended done; SuccessRate is
	// Succeeded / Runs.
	Succeeded   int      `json:"succeeded"`
	SuccessRate *float64 `json:"successRate"`
	// Statuses counts the runs by status.
	Statuses map[string]int `json:"statuses"`
	// Tiers are the figures of each tier, in the order first seen (runs
	// taken oldest first, tiers in their escalation order).
	Tiers []TierFigures `json:"tiers"`
	// Attempts is the total of the runs' attempts; MeanAttemptsToSuccess
	// the mean number of attempts of the runs that succeeded.
	Attempts              int      `json:"attempts"`
	MeanAttemptsToSuccess *float64 `json:"meanAttemptsToSuccess"`
	// CostUSD is the total cost of the runs. CostPerSuccess is that total
	// divided by the number of successes: what one successful task costs
	// when the failures are paid for too. MeanSuccessCost is the mean cost
	// of the successful runs alone. CostKnown tells whether any run's
	// agent reported a cost: when none did, the costs are unknown (0 and
	// null), not free.
	CostUSD         float64  `json:"costUsd"`
	CostKnown       bool     `json:"costKnown"`
	CostPerSuccess  *float64 `json:"costPerSuccess"`
	MeanSuccessCost *float64 `json:"meanSuccessCost"`
	// MeanDurationMs is the mean duration of a run, in milliseconds.
	MeanDurationMs *float64 `json:"meanDurationMs"`
	// FirstStartedAt and LastStartedAt bound the runs counted.
	FirstStartedAt time.Time `json:"firstStartedAt,omitzero"`
	LastStartedAt  time.Time `json:"lastStartedAt,omitzero"`
}

// TierFigures are one tier's figures.
type TierFigures struct {
	Name string `json:"name"`
	// Tasks counts the runs in which the tier made attempts; Finished
	// those it finished: done runs in which one of its attempts passed
	// the gate (with a plan, every tier that passed a step counts).
	// SuccessRate is Finished / Tasks.
	Tasks       int      `json:"tasks"`
	Finished    int      `json:"finished"`
	SuccessRate *float64 `json:"successRate"`
	Attempts    int      `json:"attempts"`
	CostUSD     float64  `json:"costUsd"`
}

// Stats computes the summary of task runs, in any order.
func Stats(rows []TaskRow) Summary {
	s := Summary{Statuses: map[string]int{}, Tiers: []TierFigures{}}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b TaskRow) int { return a.StartedAt.Compare(b.StartedAt) })
	tierAt := map[string]int{}
	var successAttempts int
	var successCost float64
	var duration int64
	for _, r := range sorted {
		if r.Status == "running" || r.Status == "" {
			s.Running++
			continue
		}
		s.Runs++
		s.Statuses[r.Status]++
		done := r.Status == string(engine.StatusDone)
		attempts := r.Iterations
		if attempts == 0 {
			for _, t := range r.Tiers {
				attempts += t.Attempts
			}
		}
		s.Attempts += attempts
		s.CostUSD += r.CostUSD
		s.CostKnown = s.CostKnown || r.CostKnown
		duration += r.DurationMs
		if done {
			s.Succeeded++
			successAttempts += attempts
			successCost += r.CostUSD
		}
		if s.FirstStartedAt.IsZero() || r.StartedAt.Before(s.FirstStartedAt) {
			s.FirstStartedAt = r.StartedAt
		}
		if r.StartedAt.After(s.LastStartedAt) {
			s.LastStartedAt = r.StartedAt
		}
		// A tier counts once per run, even when a plan's steps used it
		// several times.
		seen := map[string]bool{}
		for _, t := range r.Tiers {
			i, ok := tierAt[t.Name]
			if !ok {
				i = len(s.Tiers)
				tierAt[t.Name] = i
				s.Tiers = append(s.Tiers, TierFigures{Name: t.Name})
			}
			f := &s.Tiers[i]
			f.Attempts += t.Attempts
			f.CostUSD += t.CostUSD
			if t.Attempts > 0 && !seen[t.Name] {
				seen[t.Name] = true
				f.Tasks++
				if done && t.Passed > 0 {
					f.Finished++
				}
			}
		}
	}
	s.SuccessRate = ratio(float64(s.Succeeded), s.Runs)
	s.MeanAttemptsToSuccess = ratio(float64(successAttempts), s.Succeeded)
	if s.CostKnown {
		s.CostPerSuccess = ratio(s.CostUSD, s.Succeeded)
		s.MeanSuccessCost = ratio(successCost, s.Succeeded)
	}
	s.MeanDurationMs = ratio(float64(duration), s.Runs)
	for i := range s.Tiers {
		s.Tiers[i].SuccessRate = ratio(float64(s.Tiers[i].Finished), s.Tiers[i].Tasks)
	}
	return s
}

// ratio is a / b, nil when b is 0.
func ratio(a float64, b int) *float64 {
	if b == 0 {
		return nil
	}
	v := a / float64(b)
	return &v
}

// Text is the summary as aligned text: the figures, then a table of the
// tiers.
func (s Summary) Text() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	runs := fmt.Sprint(s.Runs)
	if s.Running > 0 {
		runs += fmt.Sprintf(" (and %d running, not counted)", s.Running)
	}
	fmt.Fprintf(tw, "task runs\t%s\n", runs)
	if s.Runs == 0 {
		tw.Flush()
		return b.String()
	}
	if !s.FirstStartedAt.IsZero() {
		fmt.Fprintf(tw, "started\t%s to %s\n", s.FirstStartedAt.UTC().Format("2006-01-02"), s.LastStartedAt.UTC().Format("2006-01-02"))
	}
	fmt.Fprintf(tw, "succeeded\t%d (%s)\n", s.Succeeded, percent(s.SuccessRate))
	statuses := make([]string, 0, len(s.Statuses))
	for k := range s.Statuses {
		statuses = append(statuses, k)
	}
	slices.SortFunc(statuses, func(a, b string) int {
		if c := s.Statuses[b] - s.Statuses[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for i, k := range statuses {
		statuses[i] = fmt.Sprintf("%s %d", k, s.Statuses[k])
	}
	fmt.Fprintf(tw, "statuses\t%s\n", strings.Join(statuses, ", "))
	fmt.Fprintf(tw, "attempts\t%d (mean before success: %s)\n", s.Attempts, decimal(s.MeanAttemptsToSuccess))
	fmt.Fprintf(tw, "cost\t%s\n", s.dollars(&s.CostUSD))
	fmt.Fprintf(tw, "cost per successful task\t%s (all runs' cost / successes)\n", s.dollars(s.CostPerSuccess))
	fmt.Fprintf(tw, "mean cost of a success\t%s\n", s.dollars(s.MeanSuccessCost))
	md := "-"
	if s.MeanDurationMs != nil {
		md = duration(int64(*s.MeanDurationMs + 0.5))
	}
	fmt.Fprintf(tw, "mean duration\t%s\n", md)
	tw.Flush()
	if len(s.Tiers) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIER\tTASKS\tFINISHED\tSUCCESS\tATTEMPTS\tCOST")
	for _, t := range s.Tiers {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\n", termsafe.Line(t.Name), t.Tasks, t.Finished, percent(t.SuccessRate), t.Attempts, s.dollars(&t.CostUSD))
	}
	tw.Flush()
	return b.String()
}

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *v*100)
}

func decimal(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// dollars is an amount of the summary: "unknown" when no run's agent
// reported a cost, "-" when there is none to tell (no success).
func (s Summary) dollars(v *float64) string {
	if !s.CostKnown {
		return money(0, false, false)
	}
	if v == nil {
		return "-"
	}
	return money(*v, true, false)
}
