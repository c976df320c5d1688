package serve

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

// The runs page's first screen answers what needs the user, what is
// running and what it cost: a line for each run or batch task that needs a
// person, then one for each running run, above the table of every run.

// killedWhy is what is said of a running run that no process runs.
const killedWhy = "no process runs it: it was killed; Resume goes on from where it was cut"

// glanceLimit bounds the lines of each list (the rest are counted), and
// glanceBatches the batches whose tasks are looked at (the newest that run
// or ended incomplete).
const (
	glanceLimit   = 12
	glanceBatches = 5
)

// glanceItem is one line of the first screen: a run, or a task of a batch
// that has no run of its own to list (blocked, skipped) or whose run ended
// done but could not land (conflict).
type glanceItem struct {
	// Title is what the line is about, Sheet the task's id in its batch.
	Title, Sheet string
	// RunID is the run ("" for a batch task never run); Link where the
	// line leads.
	RunID, Link string
	Kind        string
	// Status is the run's or the task's; Word what the line says of it
	// (a run that waits for a window, or that was killed, says so).
	Status, Word string
	// Why says why it needs the user, or what it does.
	Why string
	// Tier is where a running run stands ("strong · attempt 2").
	Tier string
	Live bool
	// CostUSD and Known are what it spent so far.
	CostUSD float64
	Known   bool
	At      time.Time
	// Window: it waits for a subscription window to reset.
	Window bool
	// Now is what its agent is doing (a running run's line).
	Now *preview
}

// glance is the first screen's two lists.
type glance struct {
	NeedYou, Running []glanceItem
	// MoreNeed and MoreRunning count the lines beyond glanceLimit.
	MoreNeed, MoreRunning int
}

// fullWindow is a subscription window of row that is spent and resets
// later than now: its run waits for it.
func fullWindow(row runs.Listed, now time.Time) (store.Window, bool) {
	for _, w := range row.Windows {
		if w.Used >= 1 && w.ResetsAt.After(now) {
			return w, true
		}
	}
	return store.Window{}, false
}

// glanceOf sorts rows (newest first) into the first screen's lists,
// asking src for the details of what needs the user and for the tasks of
// the newest batches that run or ended incomplete.
func glanceOf(ctx context.Context, src Source, rows []runs.Listed, now time.Time) glance {
	var g glance
	listed := map[string]bool{}
	batches := 0
	var need []glanceItem
	kind := map[string]string{}
	for _, row := range rows {
		kind[row.ID] = row.Command
	}
	for _, row := range rows {
		if kind[row.Parent] == "pr" {
			// A round of a pull-request run: the run's line says how
			// its rounds went.
			continue
		}
		it := glanceItem{Title: row.Title, Sheet: row.Sheet, RunID: row.ID, Link: "/runs/" + row.ID, Kind: row.Command, Status: row.Status,
			Live: row.Live, CostUSD: row.SpentUSD, Known: row.SpentKnown, At: row.UpdatedAt}
		if it.At.IsZero() {
			it.At = row.StartedAt
		}
		if row.PR != nil {
			it.Title = row.PR.Title
			it.Why = row.PR.Reason
		}
		if it.Title == "" {
			it.Title = row.Title
		}
		if row.Status == store.Running {
			it.Tier = standing(row)
			if w, ok := fullWindow(row, now); ok {
				it.Window, it.Word = true, "waiting"
				it.Why = fmt.Sprintf("waits for %s's %s window, until %s", w.Backend, w.Kind, w.ResetsAt.Local().Format("15:04"))
				need = append(need, it)
			} else if !row.Live {
				it.Word = "killed, resumable"
				it.Why = killedWhy
				need = append(need, it)
			} else {
				it.Word = it.Status
				g.Running = append(g.Running, it)
			}
		} else if runs.NeedsYou(row.Status, row.Command) {
			need = append(need, it)
			listed[row.ID] = true
		}
	}
	// Then the tasks of the newest batches, but for those whose run is
	// listed already.
	for _, row := range rows {
		if row.Command == "batch" && (row.Status == store.Running || row.Status == "incomplete") && batches < glanceBatches {
			batches++
			need = append(need, batchNeeds(ctx, src, row, listed)...)
		}
	}
	for i := range need {
		if need[i].Word == "" {
			need[i].Word = need[i].Status
		}
	}
	slices.SortStableFunc(need, func(a, b glanceItem) int { return b.At.Compare(a.At) })
	if len(need) > glanceLimit {
		g.MoreNeed, need = len(need)-glanceLimit, need[:glanceLimit]
	}
	for i := range need {
		if need[i].Why == "" && need[i].RunID != "" {
			if run, err := src.Show(ctx, need[i].RunID); err == nil {
				need[i].Why = factsOf(run).Details
			}
		}
	}
	g.NeedYou = need
	if len(g.Running) > glanceLimit {
		g.MoreRunning, g.Running = len(g.Running)-glanceLimit, g.Running[:glanceLimit]
	}
	for i := range g.Running {
		if it := &g.Running[i]; agentRuns(it.Kind) {
			it.Now = previewOf(ctx, src, it.RunID, it.Kind, glanceLines, glanceTools)
		}
	}
	return g
}

// batchNeeds are the tasks of the batch of row that need a person and
// whose run is not listed among them already.
func batchNeeds(ctx context.Context, src Source, row runs.Listed, listed map[string]bool) []glanceItem {
	run, err := src.Show(ctx, row.ID)
	if err != nil || run.Batch == nil {
		return nil
	}
	var out []glanceItem
	for _, t := range run.Batch.Tasks {
		if !runs.TaskNeedsYou(t.Status) || (t.RunID != nil && listed[*t.RunID]) {
			continue
		}
		// A task that never started was blocked or skipped by the time
		// the batch last moved.
		it := glanceItem{Title: t.Title, Sheet: t.ID, Kind: "task", Status: t.Status, Why: t.Details, Link: "/runs/" + row.ID + "#task-" + t.ID,
			CostUSD: t.CostUSD, Known: t.CostKnown, At: row.UpdatedAt}
		if it.At.IsZero() {
			it.At = row.StartedAt
		}
		if t.RunID != nil {
			it.RunID, it.Link = *t.RunID, "/runs/"+*t.RunID
			listed[*t.RunID] = true
		}
		if t.StartedAt != nil {
			it.At = t.StartedAt.Add(t.DurationMs.Duration())
		}
		out = append(out, it)
	}
	return out
}

// standing says where a running run stands: its tier and attempt, its
// iteration, its running tasks, a pull-request run's round.
func standing(row runs.Listed) string {
	c := row.Current
	switch {
	case c == nil:
		return ""
	case row.PR != nil && c.Round > 0:
		return fmt.Sprintf("round %d under way", c.Round)
	case row.PR != nil && len(c.Waiting) > 0:
		return "waiting"
	case row.PR != nil:
		return "looking"
	case c.Tier != "":
		return fmt.Sprintf("%s · attempt %d", c.Tier, c.Attempt)
	case c.Iteration > 0:
		return fmt.Sprintf("iteration %d", c.Iteration)
	}
	return plural.N(len(c.Tasks), "task") + " running"
}
