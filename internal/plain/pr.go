package plain

import (
	"fmt"
	"io"
	"strings"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// PRResult writes what became of a pull-request run: the JSON object, or
// its summary (PRSummary); on say, why a run that did not reach its
// target stopped. The error is w's.
func PRResult(w io.Writer, say Say, asJSON bool, res local.PRResult) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else {
		PRSummary(w, res)
	}
	if res.Status != engine.StatusDone && res.Status != "running" {
		say.Notice(fmt.Sprintf("%s: %s", res.Status, termsafe.Line(res.Reason)))
	}
	return nil
}

// TaskPRResult writes what became of a task worked until its pull
// request's target (task --pr --until): with asJSON one object, the
// task's result under "task" and the pull request's under "pullRequest";
// else the task's summary, then the pull request's. The error is w's.
func TaskPRResult(w io.Writer, say Say, asJSON bool, task taskengine.Result, pr local.PRResult) error {
	if asJSON {
		err := JSON(w, struct {
			Task        taskengine.Result `json:"task"`
			PullRequest local.PRResult    `json:"pullRequest"`
		}{task, pr})
		if err == nil && pr.Status != engine.StatusDone {
			say.Notice(fmt.Sprintf("%s: %s", pr.Status, termsafe.Line(pr.Reason)))
		}
		return err
	}
	if err := TaskResult(w, say, false, task); err != nil {
		return err
	}
	return PRResult(w, say, false, pr)
}

// PRSummary writes a pull-request run in a few lines: the pull request
// and its target, how it ended, each round, the checks last seen.
func PRSummary(w io.Writer, res local.PRResult) {
	fmt.Fprintf(w, "pull request #%d %s\n", res.Number, termsafe.Line(res.URL))
	if res.Title != "" {
		fmt.Fprintf(w, "  title: %s\n", termsafe.Line(res.Title))
	}
	if res.Branch != "" {
		fmt.Fprintf(w, "  branch %s into %s\n", termsafe.Line(res.Branch), termsafe.Line(res.Base))
	}
	fmt.Fprintf(w, "  run %s, until %s: %s", res.RunID, res.Target, res.Status)
	if res.Reason != "" {
		fmt.Fprintf(w, " (%s)", termsafe.Line(res.Reason))
	}
	fmt.Fprintln(w)
	if res.Head != "" {
		fmt.Fprintf(w, "  head %s, %s, %s, rounds %s\n", ShortSHA(res.Head), plural.N(res.Looks, "look"), plural.N(len(res.Rounds), "round"),
			cost.Phrase(res.CostUSD, res.CostKnown, false))
	}
	for _, r := range res.Rounds {
		line := fmt.Sprintf("  round %d (task %s): %s", r.Round, r.RunID, r.Status)
		switch {
		case r.Pushed != "":
			line += ", pushed " + ShortSHA(r.Pushed)
		case r.Rejected:
			line += ", push refused (the branch had moved)"
		}
		if r.Replied > 0 {
			line += ", " + plural.N(r.Replied, "thread") + " answered"
		}
		if r.Details != "" && r.Pushed == "" && !r.Rejected {
			line += ": " + r.Details
		}
		fmt.Fprintln(w, termsafe.Line(line))
	}
	if c := res.Current; c != nil {
		fmt.Fprintln(w, termsafe.Line(fmt.Sprintf("  round %d (task %s) begun on %s: %s", c.Round, c.RunID, ShortSHA(c.Head), strings.Join(c.Blockers, "; "))))
	}
	if len(res.Checks) > 0 {
		var cs []string
		for _, c := range res.Checks {
			cs = append(cs, c.Name+" "+string(c.State))
		}
		fmt.Fprintf(w, "  checks at the head: %s\n", termsafe.Line(strings.Join(cs, ", ")))
	}
	if a := res.Last; a != nil && len(a.Waiting) > 0 && res.Status == "running" {
		fmt.Fprintf(w, "  waiting for %s\n", termsafe.Line(strings.Join(a.Waiting, ", ")))
	}
	if res.Merged != "" {
		fmt.Fprintf(w, "  merged as %s\n", ShortSHA(res.Merged))
	}
	if res.Comment != "" {
		fmt.Fprintf(w, "  told the pull request: %s\n", termsafe.Line(res.Comment))
	}
}
