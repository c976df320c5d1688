package taskengine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
)

// reviewer adds a reviewer replying from replies to w.
func (w *world) reviewer(replies ...reply) *devAgent {
	a := &devAgent{ws: w.ws, replies: replies}
	w.agents["review"] = a
	w.opts.Reviewer = &Tier{Name: "review", Backend: "fake", Model: "reviewer-model", Attempts: 1, Agent: a}
	return a
}

func says(text string, usd float64) reply {
	return reply{resp: agent.Response{Text: text, Usage: agent.Usage{CostUSD: usd, CostKnown: true}}}
}

const (
	approve    = "Looks right.\n\n```json\n{\"verdict\": \"approve\", \"summary\": \"correct\"}\n```"
	askAnswer  = `{"verdict": "changes", "summary": "not yet", "comments": [{"file": "a.go", "line": 3, "text": "Return 43, not 42."}]}`
	askAnswer2 = `{"verdict": "changes", "comments": [{"file": "a.go", "line": 9, "text": "return  43, NOT 42."}]}`
)

func TestReviewApproves(t *testing.T) {
	w := newWorld("make it right", []tierSpec{{name: "t1", attempts: 3, replies: []reply{edit("a.go", "right")}}}, answer("right", nil))
	rv := w.reviewer(says(approve, 0.25))
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Details)
	}
	a := res.Attempts[0]
	if a.Review == nil || a.Review.Verdict != ReviewApprove || a.Review.Summary != "correct" || a.Review.Calls != 1 {
		t.Fatalf("review %+v, want one approving call", a.Review)
	}
	if a.Commit == "" || len(w.ws.commits) != 1 {
		t.Errorf("commit %q, commits %v: the approved attempt is committed once", a.Commit, w.ws.commits)
	}
	if res.Review == nil || res.Review.Attempts != 1 || res.Review.Passed != 1 || res.Review.CostUSD != 0.25 {
		t.Errorf("review summary %+v", res.Review)
	}
	if res.CostUSD < 0.25 {
		t.Errorf("cost %v does not count the reviewer's $0.25", res.CostUSD)
	}
	p := rv.prompts()[0]
	mustContain(t, "review prompt", p, "make it right", "+right", "They passed", `"verdict": "approve"`)
	if !slices.Contains(w.obs.phases, "review") {
		t.Errorf("phases %v: no review phase", w.obs.phases)
	}
	checkReplay(t, w.journal.all(), res)
}

func TestReviewChangesAreTheNextAttemptsFeedback(t *testing.T) {
	w := newWorld("make it right", []tierSpec{{name: "t1", attempts: 3, replies: []reply{edit("a.go", "right"), edit("a.go", "right\nbetter")}}},
		func(map[string]string) gate.Report { return passReport() })
	w.reviewer(says(askAnswer, 0.1), says(approve, 0.1))
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Details)
	}
	if got, want := actionsOf(res), []string{ActionRetry, ActionPass}; !slices.Equal(got, want) {
		t.Fatalf("actions %v, want %v", got, want)
	}
	if res.Attempts[0].Commit != "" || len(w.ws.commits) != 1 {
		t.Errorf("the refused attempt was committed: %q, commits %v", res.Attempts[0].Commit, w.ws.commits)
	}
	second := w.agents["t1"].prompts()[1]
	mustContain(t, "second prompt", second, "## Review", "the reviewer (tier review) did not approve attempt 1", "a.go:3: Return 43, not 42.",
		"the reviewer asked for 1 change")
	mustNotContain(t, "second prompt", second, "## Last check result")
	if res.Review.Attempts != 2 || res.Review.Passed != 1 || res.Review.Outcome != ReviewApprove {
		t.Errorf("review summary %+v", res.Review)
	}
	checkReplay(t, w.journal.all(), res)
}

func TestReviewSameCommentsTwiceIsALoop(t *testing.T) {
	w := newWorld("make it right", []tierSpec{
		{name: "t1", attempts: 5, replies: []reply{edit("a.go", "v1"), edit("a.go", "v2"), edit("a.go", "v3")}},
		{name: "t2", attempts: 2, replies: []reply{edit("a.go", "v4")}},
	}, func(map[string]string) gate.Report { return passReport() })
	w.reviewer(says(askAnswer, 0), says(askAnswer2, 0), says(askAnswer, 0), says(approve, 0))
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Details)
	}
	want := []detWant{
		{Rule: RuleSameReview, Attempts: []int{1, 2}, Tier: "t1", Action: ActionNudge},
		{Rule: RuleSameReview, Attempts: []int{2, 3}, Tier: "t1", Action: ActionEscalate},
	}
	if diff := cmp.Diff(want, detectionsOf(res)); diff != "" {
		t.Errorf("detections (-want +got):\n%s", diff)
	}
	if got := tiersOf(res); !slices.Equal(got, []string{"t1", "t1", "t1", "t2"}) {
		t.Errorf("tiers %v", got)
	}
	mustContain(t, "third prompt", w.agents["t1"].prompts()[2], "## Step back", "the reviewer asked for the same changes again")
	checkReplay(t, w.journal.all(), res)
}

func TestReviewUnreadable(t *testing.T) {
	t.Run("asked again once", func(t *testing.T) {
		w := newWorld("x", []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right")}}}, answer("right", nil))
		rv := w.reviewer(says("I think it is fine.", 0.01), says(`{"verdict":"approve"}`, 0.01))
		res := w.run(context.Background())
		if res.Status != engine.StatusDone || res.Attempts[0].Review.Calls != 2 {
			t.Fatalf("status %s, review %+v", res.Status, res.Attempts[0].Review)
		}
		mustContain(t, "second review prompt", rv.prompts()[1], "could not be read", "holds no")
		if res.Review.CostUSD != 0.02 {
			t.Errorf("review cost %v, want both calls", res.Review.CostUSD)
		}
	})
	t.Run("twice: the task stops, nothing lands", func(t *testing.T) {
		w := newWorld("x", []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right")}}}, answer("right", nil))
		w.reviewer(says("fine", 0), says(`{"verdict": "lgtm"}`, 0))
		res := w.run(context.Background())
		if res.Status != engine.StatusError || res.ExitCode == 0 {
			t.Fatalf("status %s exit %d, want error", res.Status, res.ExitCode)
		}
		mustContain(t, "details", res.Details, "reviewer's answer could not be read", `"lgtm"`)
		if len(w.ws.commits) != 0 || len(res.Commits) != 0 {
			t.Errorf("commits %v: an unapproved change was committed", w.ws.commits)
		}
		if w.agents["t1"].extra != 0 || len(w.agents["t1"].reqs) != 1 {
			t.Errorf("the developer was called %d times", len(w.agents["t1"].reqs))
		}
		checkReplay(t, w.journal.all(), res)
	})
}

func TestReviewerChangesAreThrownAway(t *testing.T) {
	w := newWorld("x", []tierSpec{{name: "t1", attempts: 2, replies: []reply{edit("a.go", "right")}}}, answer("right", nil))
	w.reviewer(reply{write: map[string]string{"a.go": "reviewer's", "new.go": "sneaky"}, resp: agent.Response{Text: approve}})
	res := w.run(context.Background())
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s (%s)", res.Status, res.Details)
	}
	if got := res.Attempts[0].Review.Discarded; !slices.Equal(got, []string{"a.go", "new.go"}) {
		t.Errorf("discarded %v", got)
	}
	if got := w.ws.committed; got["a.go"] != "right" || got["new.go"] != "" {
		t.Errorf("committed tree %v: holds the reviewer's writes", got)
	}
}

func TestParseReview(t *testing.T) {
	for _, tc := range []struct {
		reply, verdict, err string
		comments            int
	}{
		{reply: approve, verdict: ReviewApprove},
		{reply: "first {\"verdict\": \"changes\", \"comments\": [{\"file\":\"a\",\"text\":\"x\"}]} then " + `{"verdict":"approve"}`, verdict: ReviewApprove},
		{reply: askAnswer, verdict: ReviewChanges, comments: 1},
		{reply: "no json at all", err: "holds no"},
		{reply: `{"verdict": "changes"}`, err: "no comment"},
		{reply: `{"verdict": "approve", "score": 9}`, err: "unknown field"},
		{reply: `{"verdict": "LGTM"}`, err: `"LGTM"`},
		{reply: `{"verdict": "changes", "comments": [{"file": "a.go", "text": " "}]}`, err: "no text"},
		{reply: `{"verdict": "changes", "comments": [{"file": "../etc/passwd", "text": "x"}]}`, err: "not a path"},
		{reply: `{"verdict": "changes", "comments": [{"file": "a.go", "line": -1, "text": "x"}]}`, err: "line -1"},
		{reply: `{"verdict": "changes", "comments": "fix it"}`, err: "verdict's JSON"},
	} {
		v, _, cs, err := ParseReview(tc.reply)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one with %q", tc.reply, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.verdict || len(cs) != tc.comments {
			t.Errorf("%q: %q %d comments %v, want %q %d", tc.reply, v, len(cs), err, tc.verdict, tc.comments)
		}
	}
}
