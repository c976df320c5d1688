package local

import (
	"slices"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The tasks a refused landing met: those landed after the commit the
// first run started from, narrowed to those that touched a file the
// conflict names; all of them when none did, or when the checks failed.
func TestMetSince(t *testing.T) {
	b := &batchRun{landed: []landed{
		{id: "a", commit: "c1", files: []string{"a.txt"}},
		{id: "p", commit: "c2", files: []string{"answer.txt", "p.txt"}},
		{id: "r", commit: "c3", files: []string{"r.txt"}},
	}}
	first := taskengine.Result{Git: &taskengine.GitInfo{Base: "c1"}}
	conflict := Landing{Status: LandConflict, Details: "main has moved since the task started and conflicts with it in answer.txt, x.txt"}
	if got := b.metSince(first, conflict); !slices.Equal(got, []string{"p"}) {
		t.Errorf("conflict in answer.txt: %v, want [p]", got)
	}
	failed := Landing{Status: LandGateFailed, Details: "the checks fail on the change laid on main as it is now"}
	if got := b.metSince(first, failed); !slices.Equal(got, []string{"p", "r"}) {
		t.Errorf("checks failed: %v, want [p r] (landed since c1)", got)
	}
	first.Git.Base = "c0" // started before any of them landed
	if got := b.metSince(first, Landing{Status: LandConflict, Details: "conflicts with it in other.txt"}); !slices.Equal(got, []string{"a", "p", "r"}) {
		t.Errorf("no file in common: %v, want every task landed since", got)
	}
}

// The outcome of a merge after a second run holds that run (its cost,
// status, whether it landed) and says which run landed, or why neither.
func TestAgainOutcome(t *testing.T) {
	l := Landing{Status: LandConflict, Details: "main has moved since the task started and conflicts with it in answer.txt"}
	rr := &batch.Rerun{RunID: "r2", Why: batch.RerunConflict, With: []string{"p"}, Details: l.Details}
	again := taskengine.Result{RunID: "r2", Status: engine.StatusDone, CostUSD: 0.25, CostKnown: true, DurationMs: 1500,
		Attempts: []taskengine.Attempt{{Number: 1}}, Git: &taskengine.GitInfo{Branch: "jlgcli/q-r2"}}
	m := AgainOutcome(l, "jlgcli/q-r1", "main", again, Landing{Status: LandMerged, Commit: "abc"}, rr)
	if m.Status != batch.MergeMerged || m.Commit != "abc" || m.Rerun == nil || !m.Rerun.Landed || m.Rerun.CostUSD != 0.25 ||
		m.Rerun.Status != batch.StatusDone || m.Rerun.Attempts != 1 || m.Rerun.Branch != "jlgcli/q-r2" || m.Rerun.DurationMs != 1500 {
		t.Fatalf("landed: %+v %+v", m, m.Rerun)
	}
	if want := "re-run as r2 after a conflict with p, which landed (main has moved"; !strings.HasPrefix(m.Details, want) {
		t.Errorf("details %q, want %q…", m.Details, want)
	}
	if rr.Landed || rr.CostUSD != 0 {
		t.Errorf("the caller's record was changed: %+v", rr)
	}
	again.Status = engine.StatusMaxIterations
	m = AgainOutcome(l, "jlgcli/q-r1", "main", again, Landing{}, rr)
	if m.Status != batch.MergeConflict || m.Rerun.Landed || m.Rerun.Status != batch.Status("max-iterations") ||
		!strings.Contains(m.Details, "; re-run as r2 after a conflict with p, which ended max-iterations; the work is kept on branches jlgcli/q-r1 and jlgcli/q-r2") {
		t.Errorf("failed: %+v: %s", m.Rerun, m.Details)
	}
	// A second run the caller did not record (a batch on Temporal).
	m = AgainOutcome(Landing{Status: LandGateFailed, Details: "the checks fail"}, "b1", "main", taskengine.Result{RunID: "x-again",
		Status: engine.StatusDone}, Landing{Status: LandNothing}, nil)
	if m.Rerun == nil || m.Rerun.RunID != "x-again" || m.Rerun.Why != batch.RerunChecksFailed || !m.Rerun.Landed {
		t.Errorf("unrecorded: %+v", m.Rerun)
	}
}

// The second run's prior: the first run's attempts and why they did not
// land, in the batch's words.
func TestSecondRunPrior(t *testing.T) {
	first := taskengine.Result{RunID: "r1", CostUSD: 0.375, CostKnown: true, Attempts: []taskengine.Attempt{{Number: 1, Prompt: "long"}}}
	l := Landing{Status: LandConflict, Details: "main has moved"}
	p := SecondRunPrior(first, &batch.Rerun{Why: batch.RerunConflict, With: []string{"p"}}, l)
	if p.RunID != "r1" || p.Reason != "a conflict with p: main has moved" || p.CostUSD != 0.375 || len(p.Attempts) != 1 || p.Attempts[0].Prompt != "" {
		t.Errorf("%+v", p)
	}
	if p := SecondRunPrior(first, nil, l); p.Reason != "a conflict with the work merged since it started: main has moved" {
		t.Errorf("unrecorded: %q", p.Reason)
	}
}
