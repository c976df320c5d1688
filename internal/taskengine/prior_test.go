package taskengine

import (
	"context"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
)

func costly(path, content string, usd float64) reply {
	r := edit(path, content)
	r.resp.Usage = agent.Usage{CostUSD: usd, CostKnown: true}
	return r
}

// firstRun is a task whose cheap tier fails twice ("the answer is 41") and
// whose strong tier passes at its first attempt: the run a batch could not
// land, which a second run follows.
func firstRun(t *testing.T) Result {
	t.Helper()
	w := newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2, replies: []reply{costly("a.go", "41", 0.10), costly("a.go", "41 again", 0.10)}},
		{name: "strong", attempts: 2, replies: []reply{costly("a.go", "42", 0.50)}},
	}, answer("42", map[string]string{"41": "the answer is 41, want 42", "41 again": "still 41, want 42"}))
	res := w.run(context.Background())
	if res.Status != engine.StatusDone || len(res.Attempts) != 3 {
		t.Fatalf("the first run: %s after %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	return res
}

// TestPriorRunStartsAtItsPassingTier: a run that follows an earlier run of
// the task (a batch's re-run after the first run's change could not land)
// starts at the tier that passed there, and its developer is told that
// run's attempts as an escalation tells the tiers before: each one's line
// with its failure, its diff in detail, and that its change is not in the
// tree. The cheap tier is never called again; the run's record names the
// earlier run and what it cost, and its cost is its own.
func TestPriorRunStartsAtItsPassingTier(t *testing.T) {
	first := firstRun(t)
	prior := PriorOf(first, "a conflict with p: main has moved and conflicts with it in a.go", nil)
	if got := prior.StartTier(2); got != 1 {
		t.Fatalf("StartTier = %d, want 1 (strong)", got)
	}
	for _, a := range prior.Attempts {
		if a.Prompt != "" {
			t.Errorf("the prior keeps attempt %d's prompt", a.Number)
		}
	}

	w := newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2, replies: []reply{costly("a.go", "41", 0.10)}},
		{name: "strong", attempts: 2, replies: []reply{costly("a.go", "42", 0.50)}},
	}, answer("42", nil))
	w.opts.RunID = "run-2"
	w.opts.Prior = prior
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("the second run: %s: %s", res.Status, res.Details)
	}
	if got := tiersOf(res); len(got) != 1 || got[0] != "strong" {
		t.Errorf("the second run's attempts were made by %v, want [strong]", got)
	}
	if n := len(w.agents["cheap"].reqs); n != 0 {
		t.Errorf("the cheap tier was called %d times again", n)
	}
	if n := numbersOf(res); len(n) != 1 || n[0] != 1 {
		t.Errorf("the second run's attempts are numbered %v, want [1]: its own", n)
	}
	prompt := w.agents["strong"].prompts()[0]
	mustContain(t, "the second run's prompt", prompt,
		"## An earlier run of this task",
		"(run run-1) made 3 attempts",
		"Its attempt 3 (tier strong) passed the checks, but its change could not be merged after a conflict with p: main has moved and conflicts with it in a.go",
		"do not repeat what failed",
		"attempt 1 (tier cheap): changed a.go; checks: fail", "TestAnswer (a_test.go:7): the answer is 41, want 42",
		"attempt 2 (tier cheap)", "still 41, want 42",
		"## That run's attempts in detail (most recent first)",
		"+42", // the passing attempt's diff
		"without that run's changes",
	)
	if res.CostUSD != 0.50 || !res.CostKnown {
		t.Errorf("the second run's own cost is %v (known %v), want 0.50", res.CostUSD, res.CostKnown)
	}
	r := res.RerunOf
	if r == nil || r.RunID != "run-1" || r.Attempts != 3 || r.CostUSD < 0.6999 || r.CostUSD > 0.7001 || !r.CostKnown ||
		!strings.Contains(r.Reason, "a conflict with p") {
		t.Errorf("RerunOf = %+v, want run-1, 3 attempts, $0.70", r)
	}
	// The journal keeps the prior: the result replays, and a resume is
	// told of it again.
	checkReplay(t, w.journal.all(), res)
	j, err := Replay(w.journal.all())
	if err != nil {
		t.Fatal(err)
	}
	if j.Resume.Prior == nil || j.Resume.Prior.RunID != "run-1" || len(j.Resume.Prior.Attempts) != 3 {
		t.Errorf("the replayed resume's prior: %+v", j.Resume.Prior)
	}
}

// TestPriorRunRetriesWithItsOwnHistory: when the re-run's first attempt
// fails too, its next prompt tells both its own attempt and the earlier
// run's, apart; a loop rule reads the run's own attempts only, so that
// making the earlier run's passing change again is no repeat.
func TestPriorRunRetriesWithItsOwnHistory(t *testing.T) {
	checks := failReport("TestOther: p's new test fails with the change")
	prior := PriorOf(firstRun(t), "its checks failed on its change laid on p's work: the checks fail on it laid on main", &checks)
	w := newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2},
		{name: "strong", attempts: 3, replies: []reply{costly("a.go", "42 but broken", 0.50), costly("a.go", "42", 0.50)}},
	}, answer("42", map[string]string{"42 but broken": "broken on the new base"}))
	w.opts.Prior = prior
	res := w.run(context.Background())
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 || len(res.Detections) != 0 {
		t.Fatalf("%s after %d attempts, detections %v: %s", res.Status, len(res.Attempts), res.Detections, res.Details)
	}
	p := w.agents["strong"].prompts()[1]
	mustContain(t, "the second prompt", p, "## An earlier run of this task", "the checks fail on it laid on main",
		"What the checks said of that change laid on the work merged since", "TestOther: p's new test fails with the change",
		"## What was tried", "attempt 1 (tier strong): changed a.go; checks: fail (fix_required): 1 test failure — TestAnswer (a_test.go:7): broken on the new base",
		"holds the changes of your previous attempt (attempt 1)")
}

// TestPriorRunBudget: a run that follows an earlier run has what that run
// left of the task's budget (its Policy's), and the earlier run's
// attempts tell what an attempt of its tier costs: with $0.20 left and the
// strong tier's attempt at $0.50, it makes none.
func TestPriorRunBudget(t *testing.T) {
	prior := PriorOf(firstRun(t), "a conflict with p: main has moved", nil) // $0.70: cheap 2×0.10, strong 0.50
	w := newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2},
		{name: "strong", attempts: 2, replies: []reply{costly("a.go", "42", 0.50)}},
	}, answer("42", nil))
	w.opts.Prior, w.opts.BudgetUSD = prior, 0.20
	res := w.run(context.Background())
	if res.Status != engine.StatusBudgetExceeded || len(res.Attempts) != 0 || len(w.agents["strong"].reqs) != 0 {
		t.Fatalf("%s after %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	mustContain(t, "the stop", res.Details, "budget of $0.90", "$0.2000 left", `tier "strong"'s attempts ($0.5000 over 1)`)
	// With enough left, it goes on.
	w = newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2},
		{name: "strong", attempts: 2, replies: []reply{costly("a.go", "42", 0.50)}},
	}, answer("42", nil))
	w.opts.Prior, w.opts.BudgetUSD = prior, 0.60
	if res := w.run(context.Background()); res.Status != engine.StatusDone {
		t.Errorf("with $0.60 left: %s: %s", res.Status, res.Details)
	}
}

// TestPullRequestRound: a round of a pull request's loop follows the runs
// that made its change (Prior with Needs): its developer is told what the
// pull request needs first, then those attempts as the pull request's
// history, and that the tree is the pull request's head (not "that change
// is not in your tree"); it starts at the tier that passed.
func TestPullRequestRound(t *testing.T) {
	prior := PriorOf(firstRun(t), "", nil)
	prior.Needs = "\n## What pull request #7 needs\n\nCheck \"ci/test\" failed: TestAnswer: got 41, want 42\n"
	w := newWorld("Make the answer 42", []tierSpec{
		{name: "cheap", attempts: 2, replies: []reply{costly("a.go", "41", 0.10)}},
		{name: "strong", attempts: 2, replies: []reply{costly("a.go", "42", 0.50)}},
	}, answer("42", nil))
	w.opts.RunID, w.opts.Prior = "round-1", prior
	res := w.run(context.Background())
	if res.Status != engine.StatusDone || len(w.agents["cheap"].reqs) != 0 {
		t.Fatalf("the round: %s (cheap tier called %d times): %s", res.Status, len(w.agents["cheap"].reqs), res.Details)
	}
	prompt := w.agents["strong"].prompts()[0]
	mustContain(t, "the round's prompt", prompt,
		"## What pull request #7 needs", `Check "ci/test" failed: TestAnswer: got 41, want 42`,
		"## How the pull request's change was made so far", "attempt 3 (tier strong)",
		"The working tree is the pull request's head")
	for _, not := range []string{"could not be merged", "without that run's changes", "## An earlier run of this task"} {
		if strings.Contains(prompt, not) {
			t.Errorf("the round's prompt says %q:\n%s", not, prompt)
		}
	}
	if i, j := strings.Index(prompt, "## What pull request #7 needs"), strings.Index(prompt, "## How the pull request's change"); i < 0 || j < i {
		t.Errorf("what the pull request needs is not told before its history")
	}
}

// TestPullRequestHistoryNamesRuns: the history of a pull request made by
// several runs (the task that opened it, then a round) names each attempt
// with its run, since each run numbers its attempts from 1; one run's
// attempts keep their plain numbers.
func TestPullRequestHistoryNamesRuns(t *testing.T) {
	diff := "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-41\n+42\n"
	att := func(n int, tier string) Attempt {
		return Attempt{Number: n, Tier: tier, AttemptDiff: diff, Response: "tried", Action: ActionRetry}
	}
	p := &Prior{Needs: "\n## What pull request #7 needs\n\nCI failed\n", Attempts: []Attempt{att(1, "cheap"), att(2, "strong"), att(1, "strong")}}
	got := priorSection(p)
	mustContain(t, "the history", got, "2 runs made it, one after the other",
		"- attempt 1 of run 1 (tier cheap)", "- attempt 2 of run 1 (tier strong)", "- attempt 1 of run 2 (tier strong)",
		"### Attempt 1 of run 2 (tier strong)", "### Attempt 2 of run 1 (tier strong)",
		"Its change: the same diff as attempt 1 of run 2 (above).")
	p.Attempts = p.Attempts[:2]
	got = priorSection(p)
	mustContain(t, "one run's history", got, "- attempt 1 (tier cheap)", "### Attempt 2 (tier strong)")
	if strings.Contains(got, "of run") || strings.Contains(got, "runs made it") {
		t.Errorf("one run's history names runs:\n%s", got)
	}
}
