package live

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// TaskLine is an taskengine.Observer that draws a task's progress on a
// screen: step, tier, attempt, phase, last gate status and cost. On a
// terminal one goroutine owns a live status line; elsewhere a line is
// printed when an attempt starts and when it ends.
type TaskLine struct {
	l live

	start   time.Time
	p       taskengine.Progress
	phase   string
	started bool
	agent   agentLines // the agent's retry and error lines this attempt
}

// NewTaskLine returns a TaskLine drawn on s.
func NewTaskLine(s Screen) *TaskLine {
	l := &TaskLine{start: time.Now()}
	l.l.start(s, l.lines)
	return l
}

// AttemptStarted implements taskengine.Observer.
func (l *TaskLine) AttemptStarted(p taskengine.Progress) {
	l.l.mu.Lock()
	defer l.l.mu.Unlock()
	l.p, l.phase, l.started = p, "develop", true
	l.agent.reset()
	if l.l.s.Live {
		l.l.frame("")
		return
	}
	fmt.Fprintf(l.l.s.W, "jlgcli: %s · develop\n", l.text())
}

// Phase implements taskengine.Observer.
func (l *TaskLine) Phase(p taskengine.Progress, phase string) {
	l.l.mu.Lock()
	defer l.l.mu.Unlock()
	l.p, l.phase, l.started = p, phase, true
	if l.l.s.Live {
		l.l.frame("")
		return
	}
	if phase == "plan" {
		fmt.Fprintf(l.l.s.W, "jlgcli: planning with tier %s\n", p.Tier)
	}
}

// AttemptDone implements taskengine.Observer.
func (l *TaskLine) AttemptDone(p taskengine.Progress, a taskengine.Attempt) {
	l.l.mu.Lock()
	defer l.l.mu.Unlock()
	l.p, l.phase = p, a.Action
	l.agent.reset()
	l.l.event("jlgcli: " + attemptText(p, a, l.start))
}

// AgentLine implements engine.AgentObserver: the agent's retry or error
// line is shown on the status line, or printed off a terminal.
func (l *TaskLine) AgentLine(line string) {
	l.l.agentLine(&l.agent, line)
}

// Waiting implements engine.WaitObserver: a line says until when the task
// waits for a window to reset, and why.
func (l *TaskLine) Waiting(until time.Time, reason string) {
	l.l.mu.Lock()
	defer l.l.mu.Unlock()
	l.l.event("jlgcli: " + waitingText(until, reason))
}

// Close stops the redraws and clears the status line; it may be called
// more than once.
func (l *TaskLine) Close() { l.l.close() }

// Above implements Live: text stays above the status line.
func (l *TaskLine) Above(text string) { l.l.above(text) }

func (l *TaskLine) lines() []string {
	if !l.started {
		return nil
	}
	line := "⟳ " + l.text() + " · " + l.phase
	if l.agent.last != "" {
		// The news first: a narrow terminal cuts the end.
		line = "⟳ agent: " + l.agent.last + " · " + l.text() + " · " + l.phase
	}
	return []string{line}
}

func (l *TaskLine) text() string { return taskText(l.p, l.start) }

// taskText is where a task stands: step, tier, attempt, last gate, cost
// and budget, time since start.
func taskText(p taskengine.Progress, start time.Time) string {
	s := taskWhere(p)
	if p.LastGate != "" {
		s += " · last gate " + p.LastGate
	}
	return s + " · " + taskSpent(p) + " · " + fmtDuration(time.Since(start))
}

// taskWhere is the step, the tier and the attempt of a task.
func taskWhere(p taskengine.Progress) string {
	s := ""
	if p.Steps > 1 {
		s = fmt.Sprintf("step %d/%d · ", p.Step, p.Steps)
	}
	attempt := fmt.Sprintf("attempt %d/%d", p.InTier, p.Attempts)
	if p.Number > 0 && p.Number != p.InTier {
		// A tier that took over, or a turn a resume gave: the attempt's
		// number in the task (its commit's, its refs', the report's), then
		// where the tier stands.
		attempt = fmt.Sprintf("attempt %d (%d/%d in tier)", p.Number, p.InTier, p.Attempts)
	}
	return s + fmt.Sprintf("tier %s (%d/%d) · %s", p.Tier, p.TierIndex+1, p.Tiers, attempt)
}

// taskSpent is what a task cost so far, its budget, and the windows its
// agents last reported.
func taskSpent(p taskengine.Progress) string {
	c := cost.Phrase(p.CostUSD, p.CostKnown, p.Estimated)
	switch {
	case p.BudgetUSD > 0 && p.CostKnown:
		c += fmt.Sprintf("/$%.2f", p.BudgetUSD)
	case p.BudgetUSD > 0:
		c += fmt.Sprintf(" (budget $%.2f)", p.BudgetUSD)
	}
	if w := p.Windows.Text(time.Now(), time.Local); w != "" {
		c += " · " + w
	}
	return c
}

// attemptText is an attempt's line, the news first so that a narrow
// terminal cuts only the end: the gate's status; what the task does next
// and, for an escalation or a stop, which rule or limit; when the gate
// failed, what failed; the review's verdict; what the task cost so far;
// where it stands (taskWhere) and for how long (since start); last, the
// check that failed (its command, for a --check).
func attemptText(p taskengine.Progress, a taskengine.Attempt, start time.Time) string {
	s := "gate " + a.Gate.Status + " · " + actionText(p, a)
	check := ""
	if !a.Gate.OK() {
		var f string
		if f, check = gateFailure(a.Gate); f != "" {
			s += " · " + f
		}
	}
	if r := a.Review; r != nil {
		s += " · review " + r.Verdict
		switch {
		case r.Verdict == taskengine.ReviewChanges && len(r.Comments) > 0:
			c := r.Comments[0]
			where := c.File
			if c.Line > 0 {
				where += fmt.Sprintf(":%d", c.Line)
			}
			s += ": " + firstLine(strings.TrimPrefix(where+": "+c.Text, ": "))
			if n := len(r.Comments); n > 1 {
				s += fmt.Sprintf(" (+%d more)", n-1)
			}
		case r.Error != "":
			s += ": " + firstLine(r.Error)
		}
	}
	s += " · " + taskSpent(p) + " · " + taskWhere(p) + " · " + fmtDuration(time.Since(start))
	if check != "" {
		s += " · check: " + check
	}
	return s
}

// actionText is what a task does after attempt a, and why when it
// escalates or stops: the loop rules that fired, the tier's attempts
// spent, the budget.
func actionText(p taskengine.Progress, a taskengine.Attempt) string {
	spent := fmt.Sprintf("tier %s spent its %d attempts", a.Tier, p.Attempts)
	if p.Attempts == 0 {
		spent = fmt.Sprintf("tier %s spent its attempts", a.Tier)
	}
	loop := ""
	if a.Detection != nil {
		loop = a.Detection.Names()
		if d := firstLine(taskengine.DetectionText(*a.Detection)); d != "" {
			loop += " (" + d + ")"
		}
	}
	switch a.Action {
	case taskengine.ActionNudge:
		return "nudge: " + loop
	case taskengine.ActionEscalate:
		if loop != "" {
			return "escalate: " + loop
		}
		return "escalate: " + spent
	case taskengine.ActionStop:
		switch {
		case p.BudgetUSD > 0 && p.CostUSD >= p.BudgetUSD-1e-9:
			return fmt.Sprintf("stop: %s $%.2f of $%.2f", engine.StatusBudgetExceeded, p.CostUSD, p.BudgetUSD)
		case loop != "":
			return fmt.Sprintf("stop: %s: %s", engine.StatusNoProgress, loop)
		default:
			return fmt.Sprintf("stop: %s: the last %s", engine.StatusMaxIterations, spent)
		}
	}
	return a.Action
}

// gateFailure is the first line of what failed in a gate's report, and
// the name of the check that failed (for a --check, its command): a
// syntax, import or runtime error, a failed test and its message, or a
// check that failed and the last line of its output. The check is left
// out of what failed: a line gives it last.
func gateFailure(r gate.Report) (failure, check string) {
	for _, c := range r.Checks {
		if !c.Passed {
			check = c.Name
			break
		}
	}
	for _, list := range [][]string{r.SyntaxErrors, r.ImportErrors} {
		if len(list) > 0 {
			return firstLine(list[0]), check
		}
	}
	if len(r.TestFailures) > 0 {
		f := r.TestFailures[0]
		if f.Check != "" {
			check = f.Check
		}
		e := headline(f.Error)
		switch {
		case f.Test == f.Check && e != "":
			// A check's failure that no parser understood: how it exited
			// and the end of its output.
			return exitedWith.ReplaceAllString(e, "exit $1"), check
		case e != "":
			return f.Test + ": " + e, check
		}
		return f.Test + " failed", check
	}
	if len(r.RuntimeErrors) > 0 {
		e := firstLine(r.RuntimeErrors[0])
		for _, c := range r.Checks {
			// `check "go test ./..." timed out after 5m0s and was stopped`
			if rest, ok := strings.CutPrefix(e, fmt.Sprintf("check %q ", c.Name)); ok {
				return rest, c.Name
			}
		}
		return e, check
	}
	for _, c := range r.Checks {
		if c.Passed {
			continue
		}
		s := fmt.Sprintf("exit %d", c.ExitCode)
		switch {
		case c.TimedOut:
			s = "timed out"
		case c.Error != "":
			s = firstLine(c.Error)
		case c.Limit != "":
			s = c.Limit
		}
		if l := lastLine(c.OutputTail); l != "" {
			s += ": " + l
		}
		return s, c.Name
	}
	return "", check
}

// exitedWith is how the gate says a check exited (gate.TestFailure's
// Error), which a line says shorter: "exit 1".
var exitedWith = regexp.MustCompile(`^exited with status (\d+)`)

// headline is the first line of s that is not blank, and the next one too
// when the first ends with a colon ("exited with status 1: FAIL: …").
func headline(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			lines = append(lines, t)
			if len(lines) == 2 || !strings.HasSuffix(t, ":") {
				break
			}
		}
	}
	return strings.Join(lines, " ")
}

// lastLine is the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return t
		}
	}
	return ""
}
