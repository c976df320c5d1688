package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// TaskRow is a task run as the run index holds it.
type TaskRow struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Iterations is the number of attempts.
	Iterations int                   `json:"iterations"`
	CostUSD    float64               `json:"costUsd"`
	CostKnown  bool                  `json:"costKnown"`
	DurationMs millis.Duration       `json:"durationMs"`
	StartedAt  time.Time             `json:"startedAt"`
	Tiers      []taskengine.TierStat `json:"tiers"`
	// RerunOf is the earlier run of the task that this run follows (a
	// batch's second run after the first run's change could not land):
	// the two are one task.
	RerunOf string `json:"rerunOf,omitempty"`
	// PR is the pull-request run this run is a round of ("" for none).
	PR string `json:"pr,omitempty"`
}

// PRRow is a pull-request run as the run index holds it.
type PRRow struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// PRFigures are the figures of the pull-request runs (jlgcli pr, task
// --until). Their rounds are task runs, counted with the others in every
// figure of Summary, costs included: these figures count them, they do
// not add them again.
type PRFigures struct {
	// Runs counts the pull-request runs that ended, Running those still
	// running; Statuses the ended ones by status (done: the target was
	// reached).
	Runs     int            `json:"runs"`
	Running  int            `json:"running"`
	Statuses map[string]int `json:"statuses"`
	// Rounds counts their rounds among the task runs counted, and CostUSD
	// what those cost: a part of Summary.CostUSD.
	Rounds    int     `json:"rounds"`
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
}

// PRStats are the figures of the pull-request runs prs whose rounds are
// among the task runs rows (each round once: its own run's cost; the
// pull-request run's own total, the same money, is not added); nil when
// there is none.
func PRStats(prs []PRRow, rows []TaskRow) *PRFigures {
	if len(prs) == 0 {
		return nil
	}
	f := &PRFigures{Statuses: map[string]int{}}
	ids := map[string]bool{}
	for _, p := range prs {
		ids[p.ID] = true
		if p.Status == "running" || p.Status == "" {
			f.Running++
			continue
		}
		f.Runs++
		f.Statuses[p.Status]++
	}
	for _, r := range rows {
		if r.PR == "" || !ids[r.PR] || r.Status == "running" || r.Status == "" {
			continue
		}
		f.Rounds++
		f.CostUSD += r.CostUSD
		f.CostKnown = f.CostKnown || r.CostKnown
	}
	return f
}

// Summary is what the seed asks to track across task runs: the success
// rate, overall and per tier, the attempts before success, the cost per
// successful task, the duration. Ratios whose denominator is zero are nil
// (null in JSON).
type Summary struct {
	// Runs counts the task runs that ended (whatever their status);
	// Running those still running (or killed and not resumed), which are
	// left out of every other figure. A batch's second run of a task
	// (after its first run's change could not land) is counted with its
	// first run as one task, its status the second run's, its attempts,
	// cost and time both runs': Reruns counts them.
	Runs    int `json:"runs"`
	Running int `json:"running"`
	Reruns  int `json:"reruns"`
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
	// null), not free. CostUnknown counts the runs whose cost is unknown,
	// left out of the sums.
	CostUSD         float64  `json:"costUsd"`
	CostKnown       bool     `json:"costKnown"`
	CostUnknown     int      `json:"costUnknown"`
	CostPerSuccess  *float64 `json:"costPerSuccess"`
	MeanSuccessCost *float64 `json:"meanSuccessCost"`
	// MeanDurationMs is the mean duration of a run, in milliseconds.
	MeanDurationMs *float64 `json:"meanDurationMs"`
	// FirstStartedAt and LastStartedAt bound the runs counted.
	FirstStartedAt time.Time `json:"firstStartedAt,omitzero"`
	LastStartedAt  time.Time `json:"lastStartedAt,omitzero"`
	// PullRequests are the pull-request runs' figures (PRStats); nil when
	// there is none.
	PullRequests *PRFigures `json:"pullRequests,omitempty"`
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
	// CostKnown: an attempt of the tier reported a cost or had one
	// estimated; CostUSD is 0 and unknown otherwise.
	CostKnown bool `json:"costKnown"`
}

// Stats computes the summary of task runs, in any order.
func Stats(rows []TaskRow) Summary {
	s := Summary{Statuses: map[string]int{}, Tiers: []TierFigures{}}
	rows, s.Reruns = foldReruns(rows)
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b TaskRow) int { return a.StartedAt.Compare(b.StartedAt) })
	tierAt := map[string]int{}
	var successAttempts int
	var successCost float64
	var duration millis.Duration
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
		if !r.CostKnown {
			s.CostUnknown++
		}
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
			f.CostKnown = f.CostKnown || t.CostKnown || t.CostUSD != 0
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

// foldReruns counts each batch's second run of a task (RerunOf) with the
// first run it follows, when that one is among rows, as one task: the
// first run's start, the second run's status, both runs' attempts, costs,
// time and tiers. It returns the rows left and how many were folded.
func foldReruns(rows []TaskRow) ([]TaskRow, int) {
	at := map[string]int{}
	for i, r := range rows {
		at[r.ID] = i
	}
	out := slices.Clone(rows)
	gone := map[int]bool{}
	folded := 0
	for i, r := range rows {
		j, ok := at[r.RerunOf]
		if r.RerunOf == "" || !ok || j == i {
			continue
		}
		for gone[j] { // a second run of a second run: into the first
			j = at[out[j].RerunOf]
		}
		f := &out[j]
		f.Status = r.Status
		f.Iterations += r.Iterations
		f.CostUSD += r.CostUSD
		f.CostKnown = f.CostKnown || r.CostKnown
		f.DurationMs += r.DurationMs
		f.Tiers = slices.Clone(f.Tiers)
		for _, t := range r.Tiers {
			k := slices.IndexFunc(f.Tiers, func(x taskengine.TierStat) bool { return x.Name == t.Name })
			if k < 0 {
				f.Tiers = append(f.Tiers, t)
				continue
			}
			x := &f.Tiers[k]
			x.Attempts += t.Attempts
			x.CostUSD += t.CostUSD
			x.CostKnown = x.CostKnown || t.CostKnown
			x.Passed += t.Passed
		}
		gone[i] = true
		folded++
	}
	kept := out[:0:0]
	for i, r := range out {
		if !gone[i] {
			kept = append(kept, r)
		}
	}
	return kept, folded
}

// countsText is counts by status, the largest first: "done 3, failed 1".
func countsText(counts map[string]int) string {
	statuses := make([]string, 0, len(counts))
	for k := range counts {
		statuses = append(statuses, k)
	}
	slices.SortFunc(statuses, func(a, b string) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for i, k := range statuses {
		statuses[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(statuses, ", ")
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
	if s.Reruns > 0 {
		runs += fmt.Sprintf("; %s after a conflict counted with the first run", plural.N(s.Reruns, "re-run"))
	}
	fmt.Fprintf(tw, "task runs\t%s\n", runs)
	if s.Runs == 0 {
		s.prLine(tw)
		tw.Flush()
		return b.String()
	}
	if !s.FirstStartedAt.IsZero() {
		fmt.Fprintf(tw, "started\t%s to %s\n", s.FirstStartedAt.UTC().Format("2006-01-02"), s.LastStartedAt.UTC().Format("2006-01-02"))
	}
	fmt.Fprintf(tw, "succeeded\t%d (%s)\n", s.Succeeded, percent(s.SuccessRate))
	fmt.Fprintf(tw, "statuses\t%s\n", countsText(s.Statuses))
	fmt.Fprintf(tw, "attempts\t%d (mean before success: %s)\n", s.Attempts, decimal(s.MeanAttemptsToSuccess))
	spent := s.dollars(&s.CostUSD)
	if s.CostKnown && s.CostUnknown > 0 {
		spent += fmt.Sprintf(" (and %s of unknown cost)", plural.N(s.CostUnknown, "run"))
	}
	fmt.Fprintf(tw, "cost\t%s\n", spent)
	fmt.Fprintf(tw, "cost per successful task\t%s (all runs' cost / successes)\n", s.dollars(s.CostPerSuccess))
	fmt.Fprintf(tw, "mean cost of a success\t%s\n", s.dollars(s.MeanSuccessCost))
	md := "-"
	if s.MeanDurationMs != nil {
		md = duration(millis.Duration(*s.MeanDurationMs + 0.5))
	}
	fmt.Fprintf(tw, "mean duration\t%s\n", md)
	s.prLine(tw)
	tw.Flush()
	if len(s.Tiers) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIER\tTASKS\tFINISHED\tSUCCESS\tATTEMPTS\tCOST")
	for _, t := range s.Tiers {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\n", termsafe.Line(t.Name), t.Tasks, t.Finished, percent(t.SuccessRate), t.Attempts,
			money(t.CostUSD, t.CostKnown, false))
	}
	tw.Flush()
	return b.String()
}

// prLine writes the pull-request runs' line, when there is one: how many
// ended and how, their rounds and what those cost (counted above already).
func (s Summary) prLine(w io.Writer) {
	p := s.PullRequests
	if p == nil {
		return
	}
	line := fmt.Sprint(p.Runs)
	if len(p.Statuses) > 0 {
		line += " (" + countsText(p.Statuses) + ")"
	}
	if p.Running > 0 {
		line += fmt.Sprintf(" and %d running", p.Running)
	}
	line += fmt.Sprintf("; %s, %s, counted in the task runs above", plural.N(p.Rounds, "round"), money(p.CostUSD, p.CostKnown, false))
	fmt.Fprintf(w, "pull requests\t%s\n", line)
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
