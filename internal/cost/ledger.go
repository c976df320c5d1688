package cost

import (
	"fmt"
	"math"
)

// Ledger records what a task's attempts cost, by tier, to hold them to a
// budget. Its zero value is empty and ready; it marshals to JSON as it is,
// for checkpoints. It is not safe for concurrent use.
//
// A budget of zero or less, or NaN, means no budget: everything may start
// and nothing exceeds it.
type Ledger struct {
	Entries []Entry `json:"entries"`
}

// Entry is the cost of one attempt.
type Entry struct {
	Tier string  `json:"tier"`
	USD  float64 `json:"usd"`
	// Estimated: the cost, or part of it, was estimated from tokens.
	Estimated bool `json:"estimated,omitempty"`
}

// Add records an attempt of tier that cost usd (a negative or NaN cost
// counts as 0).
func (l *Ledger) Add(tier string, usd float64, estimated bool) {
	if !(usd > 0) || math.IsInf(usd, 0) {
		usd = 0
	}
	l.Entries = append(l.Entries, Entry{Tier: tier, USD: usd, Estimated: estimated})
}

// Spent is the total cost recorded.
func (l *Ledger) Spent() float64 {
	s := 0.0
	for _, e := range l.Entries {
		s += e.USD
	}
	return s
}

// Estimated reports whether any recorded cost was estimated.
func (l *Ledger) Estimated() bool {
	for _, e := range l.Entries {
		if e.Estimated {
			return true
		}
	}
	return false
}

// Attempts is the number of attempts recorded for tier.
func (l *Ledger) Attempts(tier string) int {
	n := 0
	for _, e := range l.Entries {
		if e.Tier == tier {
			n++
		}
	}
	return n
}

// MeanAttempt is the mean cost of tier's attempts so far; false when tier
// has none.
func (l *Ledger) MeanAttempt(tier string) (float64, bool) {
	s, n := 0.0, 0
	for _, e := range l.Entries {
		if e.Tier == tier {
			s += e.USD
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return s / float64(n), true
}

// Left is what remains of budget (negative once overspent); +Inf without a
// budget.
func (l *Ledger) Left(budget float64) float64 {
	if noBudget(budget) {
		return math.Inf(1)
	}
	return budget - l.Spent()
}

// Exceeded reports whether the budget is spent: the task must stop.
func (l *Ledger) Exceeded(budget float64) bool {
	return !noBudget(budget) && l.Spent() >= budget-epsilon
}

// epsilon absorbs the rounding of sums of costs in comparisons: a
// billionth of a dollar.
const epsilon = 1e-9

// CanStart tells whether an attempt of tier may start within budget: not
// when the budget is spent, nor when what is left is below the mean cost of
// that tier's attempts so far, or, before the tier's first attempt, the mean
// over every attempt so far. The first attempt of the task may always start.
// reason says why not.
func (l *Ledger) CanStart(tier string, budget float64) (ok bool, reason string) {
	if noBudget(budget) {
		return true, ""
	}
	spent := l.Spent()
	if spent >= budget-epsilon {
		return false, fmt.Sprintf("the budget of %s is spent (%s)", usd(budget), usd(spent))
	}
	left := budget - spent
	mean, ok := l.MeanAttempt(tier)
	of := fmt.Sprintf("tier %q's attempts", tier)
	n := l.Attempts(tier)
	if !ok {
		if len(l.Entries) == 0 {
			return true, ""
		}
		mean, of, n = spent/float64(len(l.Entries)), "all attempts", len(l.Entries)
	}
	if left < mean-epsilon {
		return false, fmt.Sprintf("%s left of the %s budget is less than the mean cost of %s (%s over %d)",
			usd(left), usd(budget), of, usd(mean), n)
	}
	return true, ""
}

func noBudget(budget float64) bool { return !(budget > 0) }

// usd writes an amount in dollars, with cents, and more digits when small.
func usd(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
