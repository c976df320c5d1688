package local

import (
	"context"
	"math"
	"testing"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/dag"
)

// A batch's scheduler gives each task the budget it runs with, whether it
// starts anew or is resumed: its sheet's, bounded by what the batch's
// leaves it; a task without one, what the batch's leaves it.
func TestBatchSpecBudget(t *testing.T) {
	spec := BatchSpec{BudgetUSD: 1, Tasks: []BatchTask{
		{ID: "a", Spec: TaskSpec{BudgetUSD: 0.25}},
		{ID: "b", Spec: TaskSpec{BudgetUSD: 3}},
		{ID: "c"},
	}}
	g, err := dag.New([]dag.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	initial := map[string]batch.TaskResult{"b": {ID: "b", Status: batch.StatusInterrupted, RunID: "rb", CostUSD: 0.1, CostKnown: true}}
	m, err := (&batch.Scheduler{Graph: g, Runner: noRunner{}, Jobs: 1, Budget: spec.Budget(), Initial: initial}).Machine()
	if err != nil {
		t.Fatal(err)
	}
	// b's first run cost 0.1, each run below 0.1: a, b, c start with 0.9,
	// 0.8 and 0.8 left of the batch's.
	want := map[string]float64{"a": 0.25, "b": 0.8, "c": 0.8}
	for _, id := range []string{"a", "b", "c"} {
		starts := m.Ready(false)
		if len(starts) != 1 || starts[0].ID != id || math.Abs(starts[0].BudgetUSD-want[id]) > 1e-9 {
			t.Fatalf("started %+v, want %s with $%v", starts, id, want[id])
		}
		if id == "b" && starts[0].ResumeRunID != "rb" {
			t.Errorf("b is not resumed: %+v", starts[0])
		}
		m.Ended(id, batch.Outcome{Status: batch.StatusDone, RunID: "r" + id, CostUSD: 0.1, CostKnown: true})
	}
}

// noRunner is the runner of a scheduler driven as a machine: never called.
type noRunner struct{}

func (noRunner) Run(context.Context, batch.Start) batch.Outcome { panic("not called") }
