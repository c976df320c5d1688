package runs

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/runs/runstest"
	"github.com/jlgcli/jlgcli/internal/store"
)

// The list gives a pull-request run its pull request, and each round its
// number; show tells a round whose run started it.
func TestListAndShowAPRRun(t *testing.T) {
	root := t.TempDir()
	runstest.PR(t, root, "hi", false)
	list, err := List(root, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Listed{}
	for _, r := range list {
		by[r.ID] = r
	}
	pr := by[runstest.PRID]
	if pr.Command != "pr" || pr.Status != "needs-you" || pr.PR == nil {
		t.Fatalf("the pr run listed: %+v", pr)
	}
	want := PRRef{Number: runstest.PRNumber, URL: runstest.PRURL, Title: "Rate limits hi", Target: "merged", Rounds: 2,
		Reason: "round 2 (task " + runstest.Round2ID + ") ended max-iterations: hi"}
	if *pr.PR != want {
		t.Errorf("its pull request: %+v, want %+v", *pr.PR, want)
	}
	if math.Abs(pr.SpentUSD-(runstest.Round1Cost+runstest.Round2Cost)) > 1e-9 {
		t.Errorf("it spent %v, want its rounds' %v", pr.SpentUSD, runstest.Round1Cost+runstest.Round2Cost)
	}
	for id, n := range map[string]int{runstest.Round1ID: 1, runstest.Round2ID: 2, runstest.TaskID: 0} {
		if r := by[id]; r.Round != n || r.PR != nil || r.Sheet != "" {
			t.Errorf("run %s listed as round %d (pr %v, sheet %q), want round %d", id, r.Round, r.PR, r.Sheet, n)
		}
	}
	st, err := Show(context.Background(), root, runstest.Round2ID, local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ParentCommand != "pr" || st.Round != 2 || st.Meta.Parent != runstest.PRID {
		t.Errorf("round 2 shown: parent %s %q, round %d", st.Meta.Parent, st.ParentCommand, st.Round)
	}
	st, err = Show(context.Background(), root, runstest.PRID, local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := st.PR
	if st.ParentCommand != "task" || p == nil || p.Title != "Rate limits hi" || p.Base != "main" || p.From != runstest.TaskID || len(p.Rounds) != 2 ||
		p.Rounds[1].Head != runstest.Head2 || len(p.Rounds[1].Blockers) != 1 || p.Current != nil || p.Resumable() {
		t.Errorf("the pr run shown: parent %q, %+v", st.ParentCommand, p)
	}
}

// A running pull-request run in round 2 is listed with its round under
// way; a live one is not resumable.
func TestListARunningPRRun(t *testing.T) {
	root := t.TempDir()
	w := runstest.PR(t, root, "hi", true)
	list, err := List(root, store.Filter{Command: "pr"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Current == nil || list[0].Current.Round != 2 || list[0].Current.RoundRun != runstest.Round2ID || !list[0].Live ||
		list[0].PR.Reason != "" {
		t.Fatalf("a pr run in round 2: %+v (current %+v)", list, list[0].Current)
	}
	w.End()
	list, _ = List(root, store.Filter{Command: "pr"})
	if list[0].Current != nil || list[0].Live {
		t.Errorf("ended: %+v", list[0])
	}
}

// report ID of a pull-request run: its pull request and every round, in
// Markdown, HTML and JSON; the forge's words escaped in each.
func TestReportOfAPRRun(t *testing.T) {
	root := t.TempDir()
	evil := "<script>alert(1)</script> | `x` [a](javascript:alert(2)) \x1b[31mred"
	runstest.PR(t, root, evil, false)
	md, err := Report(context.Background(), root, runstest.PRID, "md", local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Pull-request report: needs-you", `[\#42](` + runstest.PRURL + ")", "into `main`", "| Until | merged |",
		"| 1 | `" + runstest.Round1ID + "` |", "| 2 | `" + runstest.Round2ID + "` |", "max-iterations", "`2222222222`", "jlgcli pr 42 --until merged",
		"[its comment](" + runstest.PRURL + "#issuecomment-9)", "$0.4000 (its rounds' task runs)", `\[a\](javascript:alert(2))`} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "\x1b") || strings.Contains(string(md), "<script>") || strings.Contains(string(md), "[a](javascript") {
		t.Errorf("the Markdown report keeps the forge's markup:\n%s", md)
	}
	html, err := Report(context.Background(), root, runstest.PRID, "html", local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="` + runstest.PRURL + `">#42</a>`, "&lt;script&gt;", runstest.Round2ID, "needs-you (exit 8)"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	if strings.Contains(string(html), "<script>") || strings.Contains(string(html), "\x1b") {
		t.Errorf("the HTML report keeps the forge's markup")
	}
	js, err := Report(context.Background(), root, runstest.PRID, "json", local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res local.PRResult
	if err := json.Unmarshal(js, &res); err != nil || res.Number != 42 || len(res.Rounds) != 2 || res.Status != "needs-you" || !strings.Contains(res.Title, "<script>") {
		t.Errorf("the JSON report: %v %+v", err, res)
	}
	if strings.Contains(string(js), "\x1b") {
		t.Errorf("the JSON report has a raw escape")
	}
}

// stats counts a pull-request run's rounds as the task runs they are,
// once: the pr run's own total, the same money, is not added.
func TestStatsCountRoundsOnce(t *testing.T) {
	root := t.TempDir()
	runstest.PR(t, root, "hi", false)
	s, err := TaskStats(root, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	total := runstest.TaskCost + runstest.Round1Cost + runstest.Round2Cost
	if s.Runs != 3 || math.Abs(s.CostUSD-total) > 1e-9 {
		t.Errorf("stats: %d runs costing %v, want 3 task runs costing %v", s.Runs, s.CostUSD, total)
	}
	p := s.PullRequests
	if p == nil || p.Runs != 1 || p.Statuses["needs-you"] != 1 || p.Rounds != 2 || math.Abs(p.CostUSD-(runstest.Round1Cost+runstest.Round2Cost)) > 1e-9 {
		t.Fatalf("the pull requests' figures: %+v", p)
	}
	if text := s.Text(); !strings.Contains(strings.Join(strings.Fields(text), " "), "pull requests 1 (needs-you 1); 2 rounds, $0.4000, counted in the task runs above") {
		t.Errorf("stats' text:\n%s", text)
	}
}
