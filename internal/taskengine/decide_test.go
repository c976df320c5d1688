package taskengine

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine/decisiontest"
)

// scriptedLoops finds the loop the case scripts for each attempt.
type scriptedLoops struct{ script []decisiontest.Attempt }

func (s scriptedLoops) Check(_ context.Context, h []detect.Attempt) (detect.Detection, bool) {
	last := h[len(h)-1]
	if rule := s.script[last.Number-1].Loop; rule != "" {
		return detect.Detection{Rule: rule, Attempts: []int{last.Number}, Details: "scripted"}, true
	}
	return detect.Detection{}, false
}

func (scriptedLoops) CheckEarlier(context.Context, detect.Attempt, []detect.Attempt) (detect.Detection, bool) {
	return detect.Detection{}, false
}

// TestDecisionTableLocal runs the shared decision table through Run.
func TestDecisionTableLocal(t *testing.T) {
	cases, err := decisiontest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ws := newWS(startFiles)
			calls := 0
			tester := &fakeTester{ws: ws, judge: func(map[string]string) gate.Report {
				if c.Attempts[calls-1].Pass {
					return passReport()
				}
				return failReport(fmt.Sprintf("failure %d", calls))
			}}
			clock := newClock()
			o := Options{RunID: "run-1", Policy: Policy{Task: "the task", BudgetUSD: c.BudgetUSD, EscalateFrom: EscalateFrom(c.EscalateFrom)},
				Workspace: ws, Tester: tester, Loops: scriptedLoops{c.Attempts},
				Now: clock.Now, Sleep: clock.Sleep}
			for _, tr := range c.Tiers {
				a := &scriptAgent{run: func() agent.Response {
					calls++
					if calls > len(c.Attempts) {
						t.Fatalf("attempt %d was made; the case scripts %d", calls, len(c.Attempts))
					}
					ws.write(map[string]string{"a.go": fmt.Sprintf("attempt %d", calls)})
					return agent.Response{Text: "ok", Usage: agent.Usage{CostUSD: c.Attempts[calls-1].CostUSD, CostKnown: true}}
				}}
				o.Tiers = append(o.Tiers, Tier{Name: tr.Name, Backend: "fake", Attempts: tr.Attempts, Agent: a})
			}
			res := Run(context.Background(), o)
			if diff := cmp.Diff(c.Actions, actionsOf(res)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.TiersUsed, tiersOf(res)); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
			if string(res.Status) != c.Status {
				t.Errorf("status = %s (%s), want %s", res.Status, res.Details, c.Status)
			}
		})
	}
}

type scriptAgent struct{ run func() agent.Response }

func (a *scriptAgent) Name() string { return "fake" }
func (a *scriptAgent) Check(context.Context) agent.Availability {
	return agent.Availability{Status: agent.Available}
}
func (a *scriptAgent) Run(context.Context, agent.Request) (agent.Response, error) {
	return a.run(), nil
}

// TestDecideLeavesHistoryAlone: a decision never writes into the history it
// reads (a workflow replays the same history and must decide the same).
func TestDecideLeavesHistoryAlone(t *testing.T) {
	p := Policy{Task: "t", Tiers: []Tier{{Name: "a", Attempts: 2}}}
	h := History{State: State{Attempts: 1, InTier: 1, Start: "s1", StepBase: "b", Commits: []string{"c1"},
		Outcomes: map[string]string{"a": "spent"}}, Attempts: []Attempt{{Number: 1, Tier: "a"}}}
	h.State.Ledger.Add("a", 0.1, false)
	before := fmt.Sprintf("%+v", h)
	p.Decide(h, Attempt{Number: 2, Tier: "a", Result: "r2", Gate: passReport(), Commit: "c2"}, nil)
	p.Decide(h, Attempt{Number: 2, Tier: "a", Result: "r2", Gate: failReport("x")}, &detect.Detection{Rule: detect.RuleSameError})
	if after := fmt.Sprintf("%+v", h); after != before {
		t.Errorf("the history changed:\n%s\n%s", before, after)
	}
}
