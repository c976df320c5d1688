package detect

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// bigDiff is a diff of about 1 MiB: 400 hunks of 30 changed lines.
func bigDiff(seed int) string {
	var b strings.Builder
	b.WriteString("diff --git a/big.go b/big.go\n--- a/big.go\n+++ b/big.go\n")
	for h := range 400 {
		fmt.Fprintf(&b, "@@ -%d,30 +%d,30 @@ func f%d() {\n", h*40, h*40, h)
		for i := range 15 {
			fmt.Fprintf(&b, "-\tvalue%d := compute(input%d, %d) // old comment number %d\n", i, h, i*h, i)
		}
		for i := range 15 {
			fmt.Fprintf(&b, "+\tvalue%d := computeBetter(input%d, %d, opts%d) // new comment %d\n", i, h, i*h+seed, seed, i)
		}
	}
	return b.String()
}

func BenchmarkSimilarDiff1MiB(b *testing.B) {
	h := []Attempt{
		{Number: 1, Tier: "t", DiffHash: "a", Diff: bigDiff(1), GateError: "e1"},
		{Number: 2, Tier: "t", DiffHash: "b", Diff: bigDiff(2), GateError: "e2"},
	}
	b.SetBytes(int64(len(h[0].Diff) + len(h[1].Diff)))
	for b.Loop() {
		LoopDetector{}.Check(context.Background(), h)
	}
}
