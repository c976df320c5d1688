package cost

import (
	"fmt"

	"github.com/jlgcli/jlgcli/internal/agent"
)

// Estimate returns the cost of one call: the CLI's own figure when it
// reported one (estimated false), else its tokens at the table's price of
// backend and model (estimated true). known is false when neither is
// possible: the model has no price, or the CLI reported neither a cost nor
// any token, which says nothing about what the call cost; usd is then 0.
func Estimate(u agent.Usage, backend, model string, t Table) (usd float64, estimated bool, known bool) {
	if u.CostKnown {
		return max(u.CostUSD, 0), false, true
	}
	if u.InputTokens <= 0 && u.OutputTokens <= 0 {
		return 0, false, false
	}
	p, ok := t.Lookup(backend, model)
	if !ok {
		return 0, false, false
	}
	return p.Cost(u.InputTokens, u.OutputTokens), true, true
}

// Amount writes a cost for people: "$0.0123", "~$0.0123" when estimated in
// part from tokens, "unknown" when no agent reported one and no price was
// known (a cost of 0 presented as known would be a lie).
func Amount(usd float64, known, estimated bool) string {
	if !known {
		return "unknown"
	}
	s := fmt.Sprintf("$%.4f", usd)
	if estimated {
		s = "~" + s
	}
	return s
}

// Phrase is Amount where the word cost does not stand before it: "cost
// unknown" instead of "unknown".
func Phrase(usd float64, known, estimated bool) string {
	if !known {
		return "cost unknown"
	}
	return Amount(usd, known, estimated)
}
