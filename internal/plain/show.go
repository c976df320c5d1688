package plain

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// killed is what the status of a running run that is not live adds.
func killed(id string) string {
	return " (not live: killed; 'jlgcli resume " + id + "' continues it)"
}

// ShowLoop writes a loop (or a single run) as show prints it: its result,
// and each iteration's reply with the file that holds its raw output; the
// replies, failures and refusals safe for a terminal (termsafe), as they
// are in that file and in show --json.
func ShowLoop(w io.Writer, st runs.State, t tty.Terminal) (err error) {
	res := *st.Loop
	status := string(res.Status)
	if res.Status == engine.StatusRunning && !st.Live {
		status += killed(st.ID)
	}
	var f fields
	f.add("run", st.ID)
	f.add("command", st.Meta.Command)
	f.add("backend", st.Meta.Backend)
	if sb := st.Meta.Sandbox; sb != nil {
		f.add("sandbox", sb.String())
	}
	f.add("status", status)
	if res.Details != "" {
		f.add("details", res.Details)
	}
	f.add("iterations", fmt.Sprint(res.Iterations))
	f.add("duration", res.DurationMs.Duration().Round(time.Second).String())
	f.add("cost", cost.Amount(res.CostUSD, res.CostKnown, false))
	f.add("tokens", fmt.Sprintf("%d in, %d out", res.InputTokens, res.OutputTokens))
	if len(res.Windows) > 0 {
		f.add("windows", res.Windows.Text(time.Now(), time.Local))
	}
	f.add("started", st.Meta.StartedAt.Local().Format(time.RFC3339))
	f.add("directory", st.Dir)
	if err := f.write(w, t); err != nil {
		return err
	}
	w, end := safe(w)
	defer end(&err)
	for _, e := range res.Transcript {
		fmt.Fprintf(w, "\n--- iteration %d (%s, %s)\n", e.Iteration, e.StartedAt, e.DurationMs.Duration())
		if e.Failure != nil {
			fmt.Fprintf(w, "failure: %s: %s\n", e.Failure.Kind, e.Failure.Message)
		}
		if e.Refusal != nil {
			fmt.Fprintf(w, "refused by %s: %s\n", e.Refusal.Guard, e.Refusal.Details)
		}
		fmt.Fprintf(w, "output: %s\n%s\n", st.OutputPath(e.Iteration), e.Response)
	}
	return nil
}

// ShowTask writes a task run as show prints it: its result, and each
// attempt with the refs that keep the tree it started from and the one it
// left, safe for a terminal (termsafe).
func ShowTask(w io.Writer, st runs.State, t tty.Terminal) error {
	res := *st.Task
	status := string(res.Status)
	switch {
	case res.Status == engine.StatusRunning && st.Meta.Temporal != nil:
		status += " (on the workers of " + st.Meta.Temporal.Address + "; 'jlgcli resume " + st.ID + "' follows it)"
	case res.Status == engine.StatusRunning && !st.Live:
		status += killed(st.ID)
	}
	var f fields
	f.add("run", st.ID)
	f.add("command", "task")
	if tm := st.Meta.Temporal; tm != nil {
		f.add("temporal", fmt.Sprintf("%s (namespace %s, queue %s)", tm.Address, tm.Namespace, tm.Queue))
	}
	f.add("task", taskengine.Subject(st.Meta.Prompt))
	if sb := st.Meta.Sandbox; sb != nil {
		f.add("sandbox", sb.String())
	}
	f.add("status", status)
	if res.Details != "" {
		f.add("details", res.Details)
	}
	if r := res.RerunOf; r != nil {
		f.add("re-run of", r.RunID+" after "+r.Reason)
	}
	if r := res.RerunAs; r != nil {
		f.add("re-run as", strings.TrimPrefix(r.Said, "re-run as "))
	}
	f.add("attempts", fmt.Sprint(len(res.Attempts)))
	spent := cost.Amount(res.CostUSD, res.CostKnown, res.CostEstimated)
	if res.BudgetUSD > 0 {
		spent += fmt.Sprintf(" of $%.2f", res.BudgetUSD)
	}
	if r := res.RerunOf; r != nil {
		// The task's cost is both runs'.
		spent += "; " + cost.Amount(res.CostUSD+r.CostUSD, res.CostKnown || r.CostKnown, res.CostEstimated || r.CostEstimated) + " with its first run"
	}
	f.add("cost", spent)
	f.add("duration", res.DurationMs.Duration().Round(time.Second).String())
	if len(res.Windows) > 0 {
		f.add("windows", res.Windows.Text(time.Now(), time.Local))
	}
	if g := res.Git; g != nil {
		f.add("branch", g.Branch)
		if g.Merge != nil {
			f.add("merge", fmt.Sprintf("%s %s", g.Merge.Status, ShortSHA(g.Merge.Commit)))
		}
	} else if st.Worktree.Branch != "" {
		f.add("branch", st.Worktree.Branch)
		f.add("worktree", st.Worktree.Path)
	}
	f.add("directory", st.Dir)
	if err := f.write(w, t); err != nil {
		return err
	}
	if len(res.Attempts) == 0 {
		return nil
	}
	refs := git.RefPrefix + st.ID + "/"
	if err := wrapLines(w, t, fmt.Sprintf("\nattempts (restore one with: git checkout %s<N>-result -- .)\n", refs)); err != nil {
		return err
	}
	// On a narrow terminal the refs read as their ends (1, 1-result): the
	// line above gives the rest.
	short := func(ref string) string { return strings.TrimPrefix(ref, refs) }
	tb := tty.Table{Columns: []tty.Column{
		{Head: "N"}, {Head: "STEP", Drop: 2}, {Head: "TIER"}, {Head: "GATE", Status: true},
		{Head: "ACTION", Flex: true, Min: 12}, {Head: "COST", Drop: 3},
		{Head: "BEFORE", Short: short, Drop: 1}, {Head: "AFTER", Short: short},
	}}
	for _, a := range res.Attempts {
		step := "-"
		if a.Step > 0 {
			step = fmt.Sprint(a.Step)
		}
		action := a.Action
		if a.Detection != nil {
			action += " (" + a.Detection.Names() + ")"
		}
		gateText := a.Gate.Status
		if a.Review != nil {
			gateText += ", review " + a.Review.Verdict
		}
		tb.Rows = append(tb.Rows, safeCells(fmt.Sprint(a.Number), step, a.Tier, gateText, action,
			cost.Amount(a.CostUSD, a.CostKnown, a.CostEstimated), fmt.Sprintf("%s%d", refs, a.Number), fmt.Sprintf("%s%d-result", refs, a.Number)))
	}
	return tb.Write(w, t)
}

// ShownBatch is a batch run's summary as show prints it, in text and in
// JSON alike: a running batch that is not live says in its status that it
// was killed.
func ShownBatch(st runs.State) batch.Summary {
	res := *st.Batch
	if res.Status == store.Running && !st.Live {
		res.Status += killed(st.ID)
	}
	return res
}

// ShowBatch writes a batch run as show prints it: its status and cost,
// then its tasks with their runs and statuses (BatchTable).
func ShowBatch(w io.Writer, st runs.State, t tty.Terminal) error {
	res := ShownBatch(st)
	var f fields
	f.add("run", st.ID)
	f.add("command", "batch")
	f.add("status", res.Status)
	f.add("cost", cost.Amount(res.CostUSD, res.CostKnown, false))
	if err := f.write(w, t); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return BatchTable(w, res, t)
}
