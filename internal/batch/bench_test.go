package batch

import (
	"context"
	"fmt"
	"testing"

	"github.com/jlgcli/jlgcli/internal/dag"
)

type instantRunner struct{}

func (instantRunner) Run(_ context.Context, s Start) Outcome {
	return Outcome{Status: StatusDone, RunID: s.ID, CostUSD: 0.01, CostKnown: true}
}

type instantMerger struct{}

func (instantMerger) Merge(context.Context, string, Outcome) MergeOutcome {
	return MergeOutcome{Status: MergeMerged}
}

// BenchmarkScheduler measures the scheduler's own cost per task: 50 tasks
// in 10 levels of 5 (each depends on one of the level before) that run and
// merge at once, with a budget to check.
func BenchmarkScheduler(b *testing.B) {
	const n = 50
	var nodes []dag.Node
	for i := range n {
		node := dag.Node{ID: fmt.Sprintf("t%02d", i)}
		if i >= 5 {
			node.Deps = []string{fmt.Sprintf("t%02d", i-5)}
		}
		nodes = append(nodes, node)
	}
	g, err := dag.New(nodes)
	if err != nil {
		b.Fatal(err)
	}
	for _, jobs := range []int{1, 4} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			s := &Scheduler{Graph: g, Runner: instantRunner{}, Merger: instantMerger{}, Jobs: jobs, Budget: Budget{BudgetUSD: 100}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.Run(context.Background())
				if err != nil || res.Count(StatusDone) != n {
					b.Fatalf("%v, %d done", err, res.Count(StatusDone))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}
