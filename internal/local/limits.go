package local

import (
	"fmt"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/millis"
)

// Limits are what a resume changes of a run's limits, for every kind of run
// and wherever it runs; nil: unchanged. A loop takes MaxIterations, Timeout
// and MaxWait; a task Timeout, MaxWait and BudgetUSD; a batch none (its
// tasks' limits are its sheets').
type Limits struct {
	MaxIterations *int
	Timeout       *time.Duration
	MaxWait       *time.Duration
	BudgetUSD     *float64
}

// Check refuses a limit that a run of command ("loop", "run", "task",
// "batch") cannot take, naming the flag and what to do instead; id is the
// run's.
func (l Limits) Check(command, id string) error {
	switch command {
	case "task":
		if l.MaxIterations != nil {
			return &exit.UsageError{Err: fmt.Errorf("--max-iterations is a loop's limit; task %s has tiers with attempts", id),
				Hint: "resuming a task stopped by its attempts already gives its current tier a new turn"}
		}
	case "batch", "pr":
		for _, f := range l.set() {
			return &exit.UsageError{Err: fmt.Errorf("--%s is a task's or a loop's; resume the %s without it, or resume one of its task runs", f, command)}
		}
	default:
		if l.BudgetUSD != nil {
			return &exit.UsageError{Err: fmt.Errorf("--budget is a task's; run %s is a %s run", id, command)}
		}
	}
	return nil
}

// Any reports whether a limit is given.
func (l Limits) Any() bool { return len(l.set()) > 0 }

// set names the flags of the limits given, in the order of resume's help.
func (l Limits) set() []string {
	var out []string
	if l.MaxIterations != nil {
		out = append(out, "max-iterations")
	}
	if l.Timeout != nil {
		out = append(out, "timeout")
	}
	if l.MaxWait != nil {
		out = append(out, "max-wait")
	}
	if l.BudgetUSD != nil {
		out = append(out, "budget")
	}
	return out
}

// ApplyTask sets in a task's spec the limits given (a local task's, or the
// spec of a task on Temporal that is submitted again).
func (l Limits) ApplyTask(s *TaskSpec) {
	if l.Timeout != nil {
		s.TimeoutMs = millis.Of(*l.Timeout)
	}
	if l.MaxWait != nil {
		s.MaxWaitMs = millis.Of(*l.MaxWait)
	}
	if l.BudgetUSD != nil {
		s.BudgetUSD = *l.BudgetUSD
	}
}

// applyLoop sets in a loop's spec the limits given.
func (l Limits) applyLoop(s *LoopSpec) {
	if l.MaxIterations != nil {
		s.MaxIterations = *l.MaxIterations
	}
	if l.Timeout != nil {
		s.TimeoutMs = millis.Of(*l.Timeout)
	}
	if l.MaxWait != nil {
		s.MaxWaitMs = millis.Of(*l.MaxWait)
	}
}
