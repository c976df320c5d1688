package taskengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// Bounds of what a developer's prompt tells of earlier attempts.
const (
	// MaxHistory is how many earlier attempts the prompt lists.
	MaxHistory = 8
	// MaxGateDigest bounds the last gate result in the prompt.
	MaxGateDigest = 4 << 10
	// MaxPlanSteps bounds a plan.
	MaxPlanSteps = 20
	// MaxReplyLines is how many of an earlier attempt's reply lines the
	// prompt shows.
	MaxReplyLines = 10
	// MaxAttemptDiff, MaxAttemptFailure and MaxAttemptReply bound what the
	// prompt shows of one earlier attempt: its diff, its failure and its
	// reply; MaxAttemptsDetail bounds all of them together.
	MaxAttemptDiff    = 4 << 10
	MaxAttemptFailure = 1536
	MaxAttemptReply   = 1 << 10
	MaxAttemptsDetail = 24 << 10
)

// developerPrompt builds the developer prompt of attempt a after history h:
// the task, the plan step, where the tree starts from, the last gate result,
// what earlier attempts tried and how they failed, and the nudge when a loop
// was found.
func developerPrompt(task string, h History, a Next) string {
	var b strings.Builder
	b.WriteString("You are the developer of a task in the git repository in your working directory. " +
		"Make the change in the files. Do not commit, push or switch branches: when you stop, jlgcli runs the " +
		"project's checks (build, tests) itself and commits the work only if they pass. Do not delete, skip or " +
		"weaken tests to make them pass: that is detected and refused.\n\n## Task\n\n")
	b.WriteString(strings.TrimSpace(task))
	b.WriteString("\n")
	if len(h.Plan) > 0 {
		b.WriteString("\n## Plan\n\n")
		for i, s := range h.Plan {
			mark := "todo"
			switch {
			case i < h.State.Step:
				mark = "done"
			case i == h.State.Step:
				mark = "now"
			}
			fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, mark, s)
		}
		fmt.Fprintf(&b, "\nWork on step %d only; the steps marked done are in the tree already.\n", h.State.Step+1)
	}

	// What this step's earlier attempts did.
	var earlier []Attempt
	for _, x := range h.Attempts {
		if x.Step == a.Step {
			earlier = append(earlier, x)
		}
	}
	b.WriteString(priorSection(h.Prior))
	b.WriteString(notesSection(a.Notes))
	b.WriteString("\n## Starting point\n\n")
	if len(h.Attempts) == 0 && h.Prior != nil && h.Prior.Needs != "" {
		b.WriteString("The working tree is the pull request's head: its change so far, with whatever else was pushed to its branch.\n")
	} else if len(h.Attempts) == 0 && h.Prior != nil && len(h.Prior.Attempts) > 0 {
		b.WriteString("The working tree is the repository as this run started, with the work merged since the earlier run " +
			"started and without that run's changes.\n")
	} else {
		b.WriteString(startingPoint(earlier, h.State.StepBase, a))
	}
	if len(earlier) > 0 {
		last := earlier[len(earlier)-1]
		if last.Repeats && last.Detection != nil {
			fmt.Fprintf(&b, "\n## Last attempt\n\nThe checks passed, but attempt %d made again a change already pushed to "+
				"this pull request (%s), which did not give the pull request what it needs: it was not kept as the "+
				"round's change.\n", last.Number, DetectionText(*last.Detection))
		} else if rv := last.Review; rv != nil && rv.Verdict == ReviewChanges {
			fmt.Fprintf(&b, "\n## Review\n\nThe checks passed, but the reviewer (tier %s) did not approve attempt %d: "+
				"make the changes it asks for, and keep the checks passing.\n\n", rv.Tier, last.Number)
			b.WriteString(ReviewText(rv))
		} else {
			b.WriteString("\n## Last check result\n\n")
			b.WriteString(GateDigest(last.Gate, MaxGateDigest))
		}
		b.WriteString("\n## What was tried\n\n")
		from := max(0, len(earlier)-MaxHistory)
		if from > 0 {
			fmt.Fprintf(&b, "(%d earlier attempts not shown)\n", from)
		}
		for _, x := range earlier[from:] {
			b.WriteString("- ")
			b.WriteString(attemptLine(x))
			b.WriteString("\n")
		}
		b.WriteString(attemptsDetail(earlier))
	}
	if h.State.Nudge != "" {
		b.WriteString("\n## Step back\n\n")
		b.WriteString(h.State.Nudge)
		b.WriteString("\n")
	}
	return b.String()
}

// startingPoint says what the tree holds when attempt a starts, after the
// step's earlier attempts: it reads the commit the tree is restored to
// (a.Start; "": the tree as the last attempt left it), so that it is true
// whatever decided it (a retry, an escalation, a resume).
func startingPoint(earlier []Attempt, stepBase string, a Next) string {
	if len(earlier) == 0 {
		return "The working tree is the repository as this step started.\n"
	}
	last := earlier[len(earlier)-1]
	start := a.Start
	if start == "" {
		start = last.Result
	}
	sameTier := last.TierIndex == a.TierIndex && last.Tier != ""
	if sameTier && a.InTier > 1 && start == last.Result {
		return fmt.Sprintf("The working tree holds the changes of your previous attempt (attempt %d): build on them and fix what the checks found.\n", last.Number)
	}
	who := fmt.Sprintf("You take over from tier %s, which did not get the checks to pass.", last.Tier)
	if sameTier {
		who = fmt.Sprintf("Tier %s did not get the checks to pass in its earlier attempts; the task was resumed to give it more.", last.Tier)
	}
	switch start {
	case stepBase:
		return who + " Its changes were set aside: the working tree is back where this step started. " +
			"Learn from the history below; do not repeat what failed.\n"
	case last.Result:
		return fmt.Sprintf("%s The working tree holds its last attempt's changes (attempt %d): fix them, or undo them if the approach is wrong.\n",
			who, last.Number)
	}
	for _, x := range earlier {
		if x.Result == start {
			return fmt.Sprintf("%s The working tree holds the changes that attempt %d left.\n", who, x.Number)
		}
	}
	return who + " The working tree is not where this step started: read it before you change it.\n"
}

// attemptLine says in one line what an attempt did and how it ended.
func attemptLine(a Attempt) string { return attemptLineAs(a, fmt.Sprintf("attempt %d", a.Number)) }

// attemptLineAs is attemptLine of the attempt named name (attemptName).
func attemptLineAs(a Attempt, name string) string {
	who := "tier " + a.Tier
	if a.Model != "" {
		who += ", " + a.Model
	}
	change := "no change"
	if !a.Change.Empty {
		change = "changed " + strings.Join(headOf(a.Change.Paths(), 6), ", ")
	}
	s := fmt.Sprintf("%s (%s): %s; checks: %s", name, who, change, a.Gate.Summary())
	if e := firstError(a.Gate); e != "" {
		s += " — " + e
	}
	if a.Failure != nil {
		s += fmt.Sprintf("; the agent failed (%s)", a.Failure.Kind)
	}
	if rv := a.Review; rv != nil && rv.Verdict == ReviewChanges {
		s += fmt.Sprintf("; the reviewer asked for %s", plural.N(len(rv.Comments), "change"))
	}
	if a.Detection != nil {
		s += fmt.Sprintf("; loop: %s", DetectionText(*a.Detection))
	}
	return s
}

// attemptsDetail shows the step's earlier attempts to the developer as a
// senior engineer would want them, the most recent first: each one's diff
// (from the tree it started from), the first lines of its reply and how the
// checks failed, each bounded, and all of them within MaxAttemptsDetail;
// the attempts that do not fit are named.
func attemptsDetail(earlier []Attempt) string {
	return attemptsDetailOf(earlier, nil, "\n## The earlier attempts in detail (most recent first)\n", MaxAttemptsDetail, true)
}

// attemptsDetailOf is attemptsDetail of attempts under heading, within
// limit, each named by attemptName with runs; lastShown: the last
// attempt's failure is in the prompt already (its last check result).
func attemptsDetailOf(earlier []Attempt, runs []int, heading string, limit int, lastShown bool) string {
	var b strings.Builder
	b.WriteString(heading)
	shown := 0
	diffs := map[string]string{} // the diffs shown, to the attempt that made each
	for i := len(earlier) - 1; i >= 0; i-- {
		x := earlier[i]
		name := attemptName(x, runs, i)
		block := attemptDetail(x, name, lastShown && i == len(earlier)-1, diffs[x.AttemptDiff])
		if _, seen := diffs[x.AttemptDiff]; !seen && x.AttemptDiff != "" {
			diffs[x.AttemptDiff] = name
		}
		if shown > 0 && b.Len()+len(block) > limit {
			break
		}
		b.WriteString(block)
		shown++
	}
	if left := len(earlier) - shown; left > 0 {
		var nums []string
		for i, x := range earlier[:left] {
			if runs == nil {
				nums = append(nums, strconv.Itoa(x.Number))
			} else {
				nums = append(nums, strings.TrimPrefix(attemptName(x, runs, i), "attempt "))
			}
		}
		fmt.Fprintf(&b, "\n(… %d older attempts not shown in detail, to keep this prompt short: %s; the list above says what they did)\n",
			left, strings.Join(headOf(nums, 10), ", "))
	}
	return b.String()
}

// attemptName names attempts[i] in a prompt: "attempt 2", or, when runs
// says which run made each (runNumbers), "attempt 2 of run 3".
func attemptName(x Attempt, runs []int, i int) string {
	if i < len(runs) {
		return fmt.Sprintf("attempt %d of run %d", x.Number, runs[i])
	}
	return fmt.Sprintf("attempt %d", x.Number)
}

// runNumbers are, for attempts that several runs made one after the other
// (a pull request's: the task that opened it, then its rounds), the run
// each belongs to, from 1 for the earliest; nil when one run made them
// all. A run numbers its attempts from 1: a number that does not grow
// starts the next run.
func runNumbers(attempts []Attempt) []int {
	out := make([]int, len(attempts))
	run := 1
	for i, a := range attempts {
		if i > 0 && a.Number <= attempts[i-1].Number {
			run++
		}
		out[i] = run
	}
	if run == 1 {
		return nil
	}
	return out
}

// attemptDetail is one earlier attempt, named name, in detail; last: it is
// the most recent, whose failure the prompt shows already; sameAs, when
// not "", names the later attempt shown above with the same diff.
func attemptDetail(x Attempt, name string, last bool, sameAs string) string {
	var b strings.Builder
	who := "tier " + x.Tier
	if x.Model != "" {
		who += ", " + x.Model
	}
	fmt.Fprintf(&b, "\n### %s (%s)\n\n", strings.ToUpper(name[:1])+name[1:], who)
	if x.Failure != nil {
		fmt.Fprintf(&b, "The agent failed (%s): %s\n\n", x.Failure.Kind, oneLine(x.Failure.Message, 300))
	}
	if reply := strings.TrimSpace(x.Response); reply == "" {
		b.WriteString("Its reply: (none)\n\n")
	} else {
		fmt.Fprintf(&b, "The first lines of its reply:\n\n%s\n", fenced(headLines(reply, MaxReplyLines, MaxAttemptReply), ""))
	}
	switch {
	case sameAs != "":
		fmt.Fprintf(&b, "Its change: the same diff as %s (above).\n\n", sameAs)
	case x.AttemptDiff != "":
		fmt.Fprintf(&b, "Its change (diff from the tree it started from):\n\n%s\n", fenced(headLines(x.AttemptDiff, -1, MaxAttemptDiff), "diff"))
	case x.Unchanged:
		b.WriteString("Its change: none (the tree was left where this step started).\n\n")
	default:
		b.WriteString("Its change: none of its own: it left the tree as it found it, with the changes made before it.\n\n")
	}
	switch {
	case x.Gate.OK() && x.Review != nil && x.Review.Verdict == ReviewChanges && !last:
		fmt.Fprintf(&b, "The checks: %s; the reviewer asked for changes:\n\n%s\n", x.Gate.Summary(), ReviewText(x.Review))
	case x.Gate.OK() && x.Repeats:
		fmt.Fprintf(&b, "The checks: %s, but it made again a change already pushed to the pull request.\n", x.Gate.Summary())
	case x.Gate.OK():
		fmt.Fprintf(&b, "The checks: %s\n", x.Gate.Summary())
	case last:
		b.WriteString("The checks: failed as the last check result above says.\n")
	default:
		fmt.Fprintf(&b, "How the checks failed:\n\n%s\n", fenced(headLines(GateDigest(x.Gate, MaxGateDigest), -1, MaxAttemptFailure), ""))
	}
	if x.Detection != nil {
		fmt.Fprintf(&b, "Loop found after it (%s): %s\n", x.Detection.Names(), DetectionText(*x.Detection))
	}
	return b.String()
}

// headLines is the first n lines of s (all of them when n < 0), at most
// limit bytes, with a line that says how many were cut.
func headLines(s string, n, limit int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	var b strings.Builder
	kept := 0
	for _, l := range lines {
		if n >= 0 && kept >= n {
			break
		}
		if b.Len()+len(l)+1 > limit {
			if kept == 0 { // one long line: its start
				b.WriteString(cutRunes(l, limit) + "…\n")
			}
			break
		}
		b.WriteString(l)
		b.WriteString("\n")
		kept++
	}
	if left := len(lines) - kept; left > 0 {
		fmt.Fprintf(&b, "… (%d more lines cut)\n", left)
	}
	return b.String()
}

// cutRunes is s cut to at most n bytes, on a rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// oneLine is s on one line, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = cutRunes(s, n) + "…"
	}
	return s
}

// fenced puts text (ending with a newline) in a Markdown code block whose
// fence no run of backticks in text closes.
func fenced(text, lang string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + text + fence + "\n"
}

// DetectionText is what a detection says for a person (a developer in a
// prompt, the user on the terminal or in a report): its details without
// the fingerprints that the same-error rule compares (a hash tells nothing,
// and cut to a line's width it is half a hash; the failure itself is shown
// beside it).
func DetectionText(d detect.Detection) string {
	const same = " failed the gate the same way"
	s := d.Details
	if i := strings.Index(s, same); i >= 0 {
		head, rest := s[:i]+same, s[i+len(same):]
		if j := strings.Index(rest, "; "); j >= 0 {
			rest = rest[j:]
		} else {
			rest = ""
		}
		s = head + rest
	}
	return s
}

func headOf(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

// firstError is the gate's first problem, in one short line.
func firstError(r gate.Report) string {
	var e string
	switch {
	case len(r.SyntaxErrors) > 0:
		e = r.SyntaxErrors[0]
	case len(r.ImportErrors) > 0:
		e = r.ImportErrors[0]
	case len(r.TestFailures) > 0:
		f := r.TestFailures[0]
		e = f.Test + where(f) + ": " + f.Error
	case len(r.RuntimeErrors) > 0:
		e = r.RuntimeErrors[0]
	case len(r.Gaming) > 0:
		e = r.Gaming[0].Message
	}
	e = strings.Join(strings.Fields(e), " ")
	if r := []rune(e); len(r) > 200 {
		e = string(r[:199]) + "…"
	}
	return e
}

// GateDigest tells a developer what the gate found: its summary, each
// problem, and for a failed check that no parser understood, the end of its
// output; at most limit bytes.
func GateDigest(r gate.Report, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Summary())
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	list("Syntax errors", r.SyntaxErrors)
	list("Import errors", r.ImportErrors)
	var tests []string
	for _, f := range r.TestFailures {
		if f.IsGaming() && len(r.Gaming) > 0 {
			continue // listed under "Refused" below, once
		}
		tests = append(tests, failureText(f))
	}
	list("Test failures", tests)
	list("Runtime errors", r.RuntimeErrors)
	var gaming []string
	for _, g := range r.Gaming {
		gaming = append(gaming, g.Message)
	}
	list("Refused (tests weakened)", gaming)
	list("Flaky tests (failed, then passed on a rerun; not held against you)", r.Flaky)
	if len(r.SyntaxErrors)+len(r.ImportErrors)+len(r.TestFailures)+len(r.RuntimeErrors)+len(r.Gaming) == 0 {
		for _, c := range r.Checks {
			if !c.Passed && c.OutputTail != "" {
				fmt.Fprintf(&b, "Check %s (%s) failed with exit status %d; the end of its output:\n%s\n", c.Name, c.Command, c.ExitCode, c.OutputTail)
			}
		}
	}
	for _, c := range r.Checks {
		if !c.Passed {
			fmt.Fprintf(&b, "Failed check: %s: %s\n", c.Name, c.Command)
		}
	}
	s, _ := bound(b.String(), limit)
	return s
}

// failureText is a failed test as the developer reads it: its name and
// where it failed, then its message (the assertion, the expected and
// actual values) on the same line, or, when it has several lines, on the
// next ones, indented under it, without blank lines.
func failureText(f gate.TestFailure) string {
	head := f.Test + where(f)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(f.Error), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
	}
	switch len(lines) {
	case 0:
		return head
	case 1:
		return head + ": " + lines[0]
	}
	return head + ":\n  " + strings.Join(lines, "\n  ")
}

// where is " (file:line)" of a failure, " (file)" without a line, "".
func where(f gate.TestFailure) string {
	switch {
	case f.File != "" && f.Line > 0:
		return fmt.Sprintf(" (%s:%d)", f.File, f.Line)
	case f.File != "":
		return " (" + f.File + ")"
	}
	return ""
}

// nudge asks a developer caught in a loop to step back: what repeated and
// what the gate said.
func nudge(d detect.Detection, r gate.Report) string {
	return fmt.Sprintf("Step back: your attempts are going round in circles (%s: %s). The checks still say: %s%s. "+
		"Do not make the same change again. Read the failure again, find its root cause (re-read the code the test "+
		"exercises, question your assumption), and try a different approach: if this attempt loops again, the task "+
		"goes to the next tier.", d.Names(), DetectionText(d), r.Summary(), suffix(firstError(r)))
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " — " + s
}

// planPrompt asks the planner for the steps of a task.
func planPrompt(task string) string {
	return fmt.Sprintf(`You are the planner of a coding task in the git repository in your working directory. Read the code you need, but change no file.

## Task

%s

Break the task into an ordered list of small steps, each a change that a developer can make and the project's tests can check on its own (at most %d steps; one step is fine for a small task). Answer with JSON only, in this form:

{"steps": ["first step", "second step"]}
`, strings.TrimSpace(task), MaxPlanSteps)
}

// ParsePlan reads the steps from a planner's reply: the last JSON object
// with a "steps" array of strings (or a bare array of strings), in a code
// fence or not. Empty steps are dropped; more than MaxPlanSteps is an error.
func ParsePlan(reply string) ([]string, error) {
	var found []string
	ok := false
	for i := 0; i < len(reply); i++ {
		if reply[i] != '{' && reply[i] != '[' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(reply[i:]))
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		if steps, good := planSteps(v); good {
			found, ok = steps, true
			i += int(dec.InputOffset()) - 1
		}
	}
	if !ok {
		return nil, fmt.Errorf(`the planner's reply holds no {"steps": [...]} JSON`)
	}
	var steps []string
	for _, s := range found {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("the planner gave no step")
	}
	if len(steps) > MaxPlanSteps {
		return nil, fmt.Errorf("the planner gave %d steps, more than %d", len(steps), MaxPlanSteps)
	}
	return steps, nil
}

func planSteps(v any) ([]string, bool) {
	if m, ok := v.(map[string]any); ok {
		v = m["steps"]
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	var out []string
	for _, x := range arr {
		switch s := x.(type) {
		case string:
			out = append(out, s)
		case map[string]any: // {"title": ..., "description": ...}
			var parts []string
			for _, k := range []string{"title", "step", "description"} {
				if v, ok := s[k].(string); ok && v != "" {
					parts = append(parts, v)
				}
			}
			if len(parts) == 0 {
				return nil, false
			}
			out = append(out, strings.Join(parts, ": "))
		default:
			return nil, false
		}
	}
	return out, true
}

// makePlan asks the planner for steps and records them; false when the task
// stops.
func (t *task) makePlan(ctx context.Context) bool {
	p, steps, ok := t.askPlanner(ctx)
	if !ok {
		return false
	}
	h, stop := t.o.Policy.Planned(t.history(), p, steps)
	t.mu.Lock()
	t.st, t.planner, t.plan = h.State, h.Planner, h.Plan
	t.mu.Unlock()
	t.record(EventPlan, 0, PlanData{Steps: h.Plan, Planner: *h.Planner, State: t.st})
	t.checkpoint(engine.StatusRunning, true)
	if stop != nil {
		t.stop = stop
		return false
	}
	return true
}

// askPlanner calls the planner (o.Planner, else the first tier) and reads
// its steps; false when the task stops (t.stop says why).
func (t *task) askPlanner(ctx context.Context) (Attempt, []string, bool) {
	pl := t.o.Tiers[0]
	if t.o.Planner != nil {
		pl = *t.o.Planner
	}
	p := Attempt{Tier: pl.Name, Backend: pl.Backend, Model: pl.Model, StartedAt: t.now().UTC(), Prompt: planPrompt(t.o.Task)}
	if t.o.Observer != nil {
		t.o.Observer.Phase(Progress{Steps: 1, Tier: pl.Name, BudgetUSD: t.o.BudgetUSD}, "plan")
	}
	began := t.now()
	resp, f, ok := t.call(ctx, pl, p.Prompt, 0)
	if !ok {
		return Attempt{}, nil, false
	}
	p.Response, p.ExitCode, p.Failure, p.SessionID = resp.Text, resp.ExitCode, f, resp.SessionID
	p.InputTokens, p.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	p.CostUSD, p.CostEstimated, p.CostKnown = t.costOf(pl, resp.Usage)
	p.DurationMs = millis.Of(t.now().Sub(began))
	p.Action = "plan"
	steps, err := ParsePlan(resp.Text)
	if f != nil && err == nil {
		err = fmt.Errorf("the planner failed (%s): %s", f.Kind, f.Message)
	}
	if err != nil {
		// Without a plan the task is one step: better than no work.
		steps = nil
		p.Response += "\n[jlgcli: " + err.Error() + "; the task runs as one step]"
	}
	return p, steps, true
}

// RunPlanner asks the planner of o (o.Planner, else the first tier) for the
// steps of the task, as Run does with Plan set, and decides nothing:
// the caller (a Temporal workflow) applies Policy.Planned. nil steps: the
// planner gave none (its reply says why). stop, when set, says why the
// planner could not be asked.
func RunPlanner(ctx context.Context, o Options, h History) (planner Attempt, steps []string, waitedMs millis.Duration, stop *engine.StopData) {
	t := newTask(o)
	t.st, t.attempts, t.plan = h.State, h.Attempts, h.Plan
	t.base = h.State.ElapsedMs
	p, steps, ok := t.askPlanner(ctx)
	if !ok {
		return Attempt{}, nil, t.st.WaitedMs, t.stop
	}
	return p, steps, t.st.WaitedMs, nil
}
