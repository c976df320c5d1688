package batch

import (
	"fmt"
	"math"
)

// Budget bounds what a batch's tasks cost in all.
//
// It follows the rule of a task's budget over its attempts
// (cost.Ledger.CanStart): a task is not started once the budget is spent,
// nor when what is left cannot pay for one more task at the mean cost of
// the tasks finished so far. Unlike attempts, tasks run several at once,
// so what is left is first lessened by that expected cost for each task
// still running; and a resumed run reports its whole cost, which replaces
// what it had reported before. That is why the ledger is not used as it
// is.
type Budget struct {
	// BudgetUSD is the budget in US dollars; 0 or less (or NaN): none.
	BudgetUSD float64
	// MinTaskUSD is the least a task is expected to cost: the expected
	// cost before any task has finished, and a floor under the mean. 0:
	// before any task has finished, tasks start while the budget is not
	// spent, as a task's first attempt always may.
	MinTaskUSD float64
	// Tasks are the tasks' own budgets in US dollars, by id (absent, 0 or
	// less: none): a task runs with its own, bounded by what the batch's
	// leaves it (Start.BudgetUSD).
	Tasks map[string]float64
}

// epsilon absorbs the rounding of sums of costs: a billionth of a dollar.
const epsilon = 1e-9

// budgetState is what a budget decision needs.
type budgetState struct {
	spent    float64 // the known costs of every task that ran
	finished int     // the runs that ended (done or failed) with a known cost
	sum      float64 // and what they cost
	running  int     // the runs under way
}

// canStart tells whether one more task may start under b, and the most it
// can spend (0 without a budget); reason says why not.
func (b Budget) canStart(st budgetState) (ok bool, cap float64, reason string) {
	if !(b.BudgetUSD > 0) || math.IsInf(b.BudgetUSD, 1) {
		return true, 0, ""
	}
	if st.spent >= b.BudgetUSD-epsilon {
		return false, 0, fmt.Sprintf("the batch budget of %s is spent (%s)", usd(b.BudgetUSD), usd(st.spent))
	}
	left := b.BudgetUSD - st.spent
	est, of := b.MinTaskUSD, "the least a task is expected to cost"
	if !(est > 0) {
		est = 0
	}
	if st.finished > 0 {
		if mean := st.sum / float64(st.finished); mean >= est {
			est, of = mean, fmt.Sprintf("the mean cost of the finished tasks (%d)", st.finished)
		}
	}
	reserved := float64(st.running) * est
	if left-reserved < est-epsilon {
		if st.running == 0 {
			return false, 0, fmt.Sprintf("%s left of the %s batch budget is less than %s (%s)",
				usd(left), usd(b.BudgetUSD), of, usd(est))
		}
		return false, 0, fmt.Sprintf("%s left of the %s batch budget, less %s expected of the %d running, is less than %s (%s)",
			usd(left), usd(b.BudgetUSD), usd(reserved), st.running, of, usd(est))
	}
	return true, left - reserved, ""
}

// usd writes an amount in dollars, with cents, and more digits when small
// (as package cost does).
func usd(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
