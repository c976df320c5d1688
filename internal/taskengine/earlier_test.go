package taskengine

import (
	"context"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
)

// roundWorld is a round of a pull request's loop in the fake world: the
// tree starts as head, and round 1 of the loop (run r1) pushed the change
// of a.go from "original content" to "fix"; the checks pass unless a.go
// is back to "original content". needs: the run is a pull request's round
// (else a batch's run after a conflict, told the same).
func roundWorld(head string, needs bool, tiers []tierSpec) *world {
	w := newWorld("the task", tiers, func(files map[string]string) gate.Report {
		if files["a.go"] == "original content" {
			return failReport("the pull request's fix is missing")
		}
		return passReport()
	})
	for _, m := range []map[string]string{w.ws.base, w.ws.files, w.ws.committed} {
		m["a.go"] = head
	}
	before, after := maps.Clone(startFiles), maps.Clone(startFiles)
	after["a.go"] = "fix"
	p := &Prior{RunID: "r1", Attempts: []Attempt{{Number: 1, Tier: "t1", Action: ActionPass, Gate: passReport()}},
		Pushed: []PushedChange{{RunID: "r1", Round: 1, Attempt: 1, Change: ChangeOf(fakeChange(before, after))}}}
	if needs {
		p.Needs = "## What the pull request needs\n\ncheck \"ci\" failed\n"
	}
	w.opts.Prior = p
	return w
}

// A round that undoes the fix an earlier round pushed, then makes it
// again, is going round in circles even though its checks pass: the
// first time it is nudged (with what the pull request needs), the second
// time it loops and, on its last tier, stops no-progress; nothing is
// committed, and the detections name round 1's attempt.
func TestRoundThatRepeatsAPushedChangeLoops(t *testing.T) {
	w := roundWorld("fix", true, []tierSpec{{name: "t1", attempts: 4, replies: []reply{
		edit("a.go", "original content"), edit("a.go", "fix"), edit("a.go", "original content"), edit("a.go", "fix")}}})
	res := w.run(context.Background())
	if res.Status != engine.StatusNoProgress {
		t.Fatalf("status %s (%s), want no-progress", res.Status, res.Details)
	}
	if diff := cmp.Diff([]string{ActionRetry, ActionNudge, ActionRetry, ActionStop}, actionsOf(res)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	want := []detWant{{"same-diff", []int{2}, "t1", ActionNudge}, {"same-diff", []int{4}, "t1", ActionStop}}
	if diff := cmp.Diff(want, detectionsOf(res)); diff != "" {
		t.Errorf("detections (-want +got):\n%s", diff)
	}
	for _, n := range []int{2, 4} {
		a := res.Attempts[n-1]
		if !a.Gate.OK() || !a.Repeats || a.Passed() || a.Commit != "" {
			t.Errorf("attempt %d: checks ok %v, repeats %v, passed %v, commit %q: want checks ok, a repeat, not passed, not committed",
				n, a.Gate.OK(), a.Repeats, a.Passed(), a.Commit)
		}
		mustContain(t, "the detection", a.Detection.Details, "made the same change as attempt 1 of round 1 (run r1)")
		if got := a.Detection.Earlier; len(got) != 1 || got[0] != "attempt 1 of round 1 (run r1)" {
			t.Errorf("attempt %d: earlier %q", n, got)
		}
	}
	if len(w.ws.commits) != 0 {
		t.Errorf("commits %q, want none", w.ws.commits)
	}
	mustContain(t, "the stop", res.Details, "looped (same-diff)", "it made again a change pushed before")
	p := w.agents["t1"].prompts()
	mustContain(t, "attempt 3's prompt", p[2], "## Last attempt", "attempt 2 made again a change already pushed",
		"Step back: your change repeats one already pushed to this pull request (same-diff: attempt 2 made the same change as attempt 1 of round 1 (run r1))")
}

// A change pushed before that came back after someone undid it escalates
// the round to the next tier, which makes another: that one is pushed.
func TestRoundThatBringsBackAPushedChangeEscalates(t *testing.T) {
	w := roundWorld("original content", true, []tierSpec{
		{name: "t1", attempts: 1, replies: []reply{edit("a.go", "fix")}},
		{name: "t2", attempts: 1, replies: []reply{edit("a.go", "another fix")}}})
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Details)
	}
	want := []detWant{{"same-diff", []int{1}, "t1", ActionEscalate}}
	if diff := cmp.Diff(want, detectionsOf(res)); diff != "" {
		t.Errorf("detections (-want +got):\n%s", diff)
	}
	if len(w.ws.commits) != 1 || res.Attempts[1].Commit == "" {
		t.Errorf("commits %q, want attempt 2's only", w.ws.commits)
	}
}

// Only a pull request's round is held to what was pushed before: a
// batch's run after a conflict (a prior without Needs) may make the same
// change again, and a round that makes another change passes.
func TestOnlyARoundRepeatingAPushedChangeLoops(t *testing.T) {
	for _, c := range []struct {
		name  string
		needs bool
		fix   string
	}{
		{"a batch's run again after a conflict", false, "fix"},
		{"a round with another change", true, "another fix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := roundWorld("original content", c.needs, []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", c.fix)}}})
			res := w.run(context.Background())
			if res.Status != engine.StatusDone || len(res.Detections) != 0 || res.Attempts[0].Repeats {
				t.Fatalf("status %s (%s), detections %+v: want done at once", res.Status, res.Details, res.Detections)
			}
		})
	}
}

// An attempt made on a worker is given what the rules across rounds
// compare it with, and nothing else of the runs before.
func TestPriorForAttempt(t *testing.T) {
	w := roundWorld("fix", true, nil)
	p := w.opts.Prior
	got := p.ForAttempt()
	if got == nil || got.Needs != p.Needs || len(got.Pushed) != 1 || len(got.Attempts) != 0 {
		t.Fatalf("ForAttempt %+v", got)
	}
	if len(EarlierChanges(got)) != 1 {
		t.Errorf("EarlierChanges of it: %+v", EarlierChanges(got))
	}
	p.Needs = ""
	if got := p.ForAttempt(); got != nil {
		t.Errorf("ForAttempt of a batch's prior: %+v, want nil", got)
	}
}
