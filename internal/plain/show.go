package plain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// killed is what the status of a running run that is not live adds.
func killed(id string) string {
	return " (not live: killed; 'jlgcli resume " + id + "' continues it)"
}

// ShowLoop writes a loop (or a single run) as show prints it: its result,
// and each iteration's reply with the file that holds its raw output; the
// replies, failures and refusals safe for a terminal (termsafe), as they
// are in that file and in show --json.
func ShowLoop(w io.Writer, st runs.State) (err error) {
	w, end := safe(w)
	defer end(&err)
	res := *st.Loop
	status := string(res.Status)
	if res.Status == engine.StatusRunning && !st.Live {
		status += killed(st.ID)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", st.ID)
	fmt.Fprintf(tw, "command\t%s\n", st.Meta.Command)
	fmt.Fprintf(tw, "backend\t%s\n", termsafe.Line(st.Meta.Backend))
	if sb := st.Meta.Sandbox; sb != nil {
		fmt.Fprintf(tw, "sandbox\t%s\n", sb)
	}
	fmt.Fprintf(tw, "status\t%s\n", status)
	if res.Details != "" {
		fmt.Fprintf(tw, "details\t%s\n", termsafe.Line(res.Details))
	}
	fmt.Fprintf(tw, "iterations\t%d\n", res.Iterations)
	fmt.Fprintf(tw, "duration\t%s\n", res.DurationMs.Duration().Round(time.Second))
	fmt.Fprintf(tw, "cost\t%s\n", cost.Amount(res.CostUSD, res.CostKnown, false))
	fmt.Fprintf(tw, "tokens\t%d in, %d out\n", res.InputTokens, res.OutputTokens)
	if len(res.Windows) > 0 {
		fmt.Fprintf(tw, "windows\t%s\n", termsafe.Line(res.Windows.Text(time.Now(), time.Local)))
	}
	fmt.Fprintf(tw, "started\t%s\n", st.Meta.StartedAt.Local().Format(time.RFC3339))
	fmt.Fprintf(tw, "directory\t%s\n", termsafe.Line(st.Dir))
	if err := tw.Flush(); err != nil {
		return err
	}
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
func ShowTask(w io.Writer, st runs.State) (err error) {
	w, end := safe(w)
	defer end(&err)
	res := *st.Task
	status := string(res.Status)
	switch {
	case res.Status == engine.StatusRunning && st.Meta.Temporal != nil:
		status += " (on the workers of " + st.Meta.Temporal.Address + "; 'jlgcli resume " + st.ID + "' follows it)"
	case res.Status == engine.StatusRunning && !st.Live:
		status += killed(st.ID)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", st.ID)
	fmt.Fprintf(tw, "command\ttask\n")
	if t := st.Meta.Temporal; t != nil {
		fmt.Fprintf(tw, "temporal\t%s (namespace %s, queue %s)\n", t.Address, t.Namespace, t.Queue)
	}
	fmt.Fprintf(tw, "task\t%s\n", termsafe.Line(taskengine.Subject(st.Meta.Prompt)))
	if sb := st.Meta.Sandbox; sb != nil {
		fmt.Fprintf(tw, "sandbox\t%s\n", sb)
	}
	fmt.Fprintf(tw, "status\t%s\n", status)
	if res.Details != "" {
		fmt.Fprintf(tw, "details\t%s\n", termsafe.Line(res.Details))
	}
	if r := res.RerunOf; r != nil {
		fmt.Fprintf(tw, "re-run of\t%s after %s\n", r.RunID, termsafe.Line(r.Reason))
	}
	if r := res.RerunAs; r != nil {
		fmt.Fprintf(tw, "re-run as\t%s\n", termsafe.Line(strings.TrimPrefix(r.Said, "re-run as ")))
	}
	fmt.Fprintf(tw, "attempts\t%d\n", len(res.Attempts))
	spent := cost.Amount(res.CostUSD, res.CostKnown, res.CostEstimated)
	if res.BudgetUSD > 0 {
		spent += fmt.Sprintf(" of $%.2f", res.BudgetUSD)
	}
	if r := res.RerunOf; r != nil {
		// The task's cost is both runs'.
		spent += "; " + cost.Amount(res.CostUSD+r.CostUSD, res.CostKnown || r.CostKnown, res.CostEstimated || r.CostEstimated) + " with its first run"
	}
	fmt.Fprintf(tw, "cost\t%s\n", spent)
	fmt.Fprintf(tw, "duration\t%s\n", res.DurationMs.Duration().Round(time.Second))
	if len(res.Windows) > 0 {
		fmt.Fprintf(tw, "windows\t%s\n", termsafe.Line(res.Windows.Text(time.Now(), time.Local)))
	}
	if g := res.Git; g != nil {
		fmt.Fprintf(tw, "branch\t%s\n", termsafe.Line(g.Branch))
		if g.Merge != nil {
			fmt.Fprintf(tw, "merge\t%s %s\n", g.Merge.Status, ShortSHA(g.Merge.Commit))
		}
	} else if st.Worktree.Branch != "" {
		fmt.Fprintf(tw, "branch\t%s\n", termsafe.Line(st.Worktree.Branch))
		fmt.Fprintf(tw, "worktree\t%s\n", termsafe.Line(st.Worktree.Path))
	}
	fmt.Fprintf(tw, "directory\t%s\n", termsafe.Line(st.Dir))
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Attempts) == 0 {
		return nil
	}
	refs := git.RefPrefix + st.ID + "/"
	fmt.Fprintf(w, "\nattempts (restore one with: git checkout %s<N>-result -- .)\n", refs)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tSTEP\tTIER\tGATE\tACTION\tCOST\tBEFORE\tAFTER")
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s%d\t%s%d-result\n", a.Number, step, termsafe.Line(a.Tier), termsafe.Line(gateText),
			termsafe.Line(action), cost.Amount(a.CostUSD, a.CostKnown, a.CostEstimated),
			refs, a.Number, refs, a.Number)
	}
	return tw.Flush()
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
func ShowBatch(w io.Writer, st runs.State) {
	res := ShownBatch(st)
	sw := termsafe.NewWriter(w)
	defer sw.Flush()
	w = sw
	fmt.Fprintf(w, "run      %s\ncommand  batch\nstatus   %s\ncost     %s\n\n", st.ID, res.Status, cost.Amount(res.CostUSD, res.CostKnown, false))
	BatchTable(w, res)
}
