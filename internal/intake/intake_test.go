package intake

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/sheet"
)

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(`label:agent  label:"good first issue" assignee:none milestone:"v1 beta" label:agent`)
	if err != nil {
		t.Fatal(err)
	}
	want := forge.IssueQuery{Labels: []string{"agent", "good first issue"}, Assignee: "none", Milestone: "v1 beta"}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if got := QueryString(q); got != `label:agent label:"good first issue" assignee:none milestone:"v1 beta"` {
		t.Errorf("QueryString = %s", got)
	}
	for in, msg := range map[string]string{
		"":                        "empty query",
		"   ":                     "empty query",
		"agent":                   `"agent" is not a qualifier`,
		"label:":                  `"label:" is not a qualifier`,
		"state:open":              `unknown qualifier "state:"`,
		`label:"open`:             "quote is not closed",
		"assignee:a assignee:b":   "two assignees",
		"milestone:x milestone:y": "two milestones",
	} {
		_, err := ParseQuery(in)
		if err == nil || !strings.Contains(err.Error(), msg) || !exit.IsUsage(err) {
			t.Errorf("ParseQuery(%q) = %v, want a usage error with %q", in, err, msg)
		}
	}
}

func TestDepends(t *testing.T) {
	body := "Fix the parser.\n\nDepends on #3 and #4, blocked by: #7\n```\ndepends on #9\n```\nSee #5. depends on #3\n"
	if got := Depends(body); !cmp.Equal(got, []int{3, 4, 7}) {
		t.Errorf("Depends = %v, want [3 4 7]", got)
	}
}

func TestSheetOf(t *testing.T) {
	i := forge.Issue{Number: 12, Title: "Add a flag", Author: "alice", State: forge.IssueOpen,
		Labels: []string{"agent", "budget:2.5", "backend:codex"},
		Body:   "---\nchecks: [\"go test ./...\"]\nattempts: 2\n---\nAdd --verbose.\n\nBlocked by #3\n"}
	s, warns, err := SheetOf(i, true)
	if err != nil || len(warns) != 0 {
		t.Fatalf("SheetOf: %v %v", err, warns)
	}
	if s.ID != "issue-12" || s.Title != "Add a flag" || !cmp.Equal(s.Depends, []string{"issue-3"}) ||
		!cmp.Equal(s.Checks, []string{"go test ./..."}) || s.Attempts != 2 || s.BudgetUSD != 2.5 || s.Backend != "codex" {
		t.Errorf("sheet = %+v", s)
	}
	if !strings.HasPrefix(s.Body, "# Add a flag\n\nAdd --verbose.") || strings.Contains(s.Body, "checks:") {
		t.Errorf("body = %q", s.Body)
	}
	if !s.Has(sheet.FieldBudget) || !s.Has(sheet.FieldBackend) || !s.Has(sheet.FieldChecks) {
		t.Errorf("set = %b", s.Set)
	}

	// From someone who cannot push: the text is the task, no setting is
	// taken (its checks would be commands run by the gate).
	s, warns, err = SheetOf(i, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Checks) != 0 || s.BudgetUSD != 0 || s.Backend != "" || s.Attempts != 0 || len(warns) != 1 ||
		!strings.Contains(warns[0], "alice cannot push") {
		t.Errorf("untrusted sheet = %+v, warnings %q", s, warns)
	}
	if !cmp.Equal(s.Depends, []string{"issue-3"}) {
		t.Errorf("untrusted depends = %v", s.Depends)
	}

	// A body that is not a sheet fails alone, naming the issue and the key.
	_, _, err = SheetOf(forge.Issue{Number: 5, Title: "x", Body: "---\nattempts: many\n---\ntext"}, true)
	if err == nil || !strings.Contains(err.Error(), "issue #5") || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("bad front matter: %v", err)
	}
	_, _, err = SheetOf(forge.Issue{Number: 6, Title: "x", Labels: []string{"budget:lots"}, Body: "text"}, true)
	if err == nil || !strings.Contains(err.Error(), `"budget:lots" is not a number`) {
		t.Errorf("bad label: %v", err)
	}
	s, _, err = SheetOf(forge.Issue{Number: 7, Title: "x", Body: "---\ndepends: [\"#2\", 4]\n---\ntext, depends on #9"}, true)
	if err != nil || !cmp.Equal(s.Depends, []string{"issue-2", "issue-4"}) {
		t.Errorf("front-matter depends: %v %v", s.Depends, err)
	}
}

func TestStatusComment(t *testing.T) {
	s := Status{Run: "20261128-a1", Task: "issue-3", State: "running", Tier: "cheap", Attempt: 2, Gate: "fail",
		CostUSD: 0.42, CostKnown: true, Branch: "jlgcli/x", Reason: "go test failed: @bob look\nhere"}
	body := s.Body()
	if run, active := RunOf(body); run != "20261128-a1" || !active {
		t.Errorf("RunOf = %s %v", run, active)
	}
	for _, want := range []string{"working on it", "attempt: 2, tier cheap", "cost: $0.42", "`jlgcli/x`", "@\u200bbob look here"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	s.State = "done"
	if _, active := RunOf(s.Body()); active {
		t.Error("a done task's comment still claims the issue")
	}
	if run, _ := RunOf("hello\n" + Marker("x", true)); run != "" {
		t.Error("a marker not on the first line counts")
	}
}

func TestStopReasonAndClaimant(t *testing.T) {
	q := forge.IssueQuery{Labels: []string{"agent"}}
	c := Claim{Self: "jlg", Assigned: true}
	open := forge.Issue{Number: 4, State: forge.IssueOpen, Labels: []string{"agent", LabelClaimed}, Assignees: []string{"jlg"}}
	if r := StopReason(q, c, open); r != "" {
		t.Errorf("open issue: %s", r)
	}
	for name, tc := range map[string]struct {
		edit func(*forge.Issue)
		want string
	}{
		"closed":     {func(i *forge.Issue) { i.State = forge.IssueClosed }, "was closed"},
		"unlabelled": {func(i *forge.Issue) { i.Labels = []string{LabelClaimed} }, "label agent was taken off"},
		"unclaimed":  {func(i *forge.Issue) { i.Labels = []string{"agent"} }, "label jlgcli:claimed was taken off"},
		"unassigned": {func(i *forge.Issue) { i.Assignees = nil }, "jlg was unassigned"},
	} {
		i := open
		tc.edit(&i)
		if r := StopReason(q, c, i); !strings.Contains(r, tc.want) {
			t.Errorf("%s: %q, want %q", name, r, tc.want)
		}
	}
	if got := Claimant(forge.Issue{Labels: []string{"agent"}}, "me", []string{"other"}); got != "" {
		t.Errorf("no label, claimant %q", got)
	}
	if got := Claimant(open, "me", nil); !strings.Contains(got, "someone") {
		t.Errorf("label by a person: %q", got)
	}
	if got := Claimant(open, "me", []string{"other", "me"}); got != "jlgcli run other" {
		t.Errorf("older claim: %q", got)
	}
	if got := Claimant(open, "me", []string{"me", "other"}); got != "" {
		t.Errorf("own claim: %q", got)
	}
}

func TestClaims(t *testing.T) {
	c := func(id int64, author string, p forge.Permission, body string) forge.Comment {
		return forge.Comment{ID: id, Author: author, Permission: p, Body: body}
	}
	cs := []forge.Comment{
		c(1, "passerby", forge.PermRead, Marker("run-0", true)),  // a passer-by's copy: no claim
		c(2, "jlg", forge.PermNone, Marker("run-1", false)),      // ended
		c(3, "jlg", forge.PermNone, "plain words"),               // no marker
		c(4, "other", forge.PermWrite, Marker("run-2", true)),    // another writer's jlgcli
		c(5, "jlg", forge.PermNone, Marker("run-3", true)),       // self, whatever its permission reads
		c(6, "jlg", forge.PermNone, Marker("run-3", true)+"\nx"), // the same run again
		c(7, "passerby", forge.PermNone, " "+Marker("run-4", true)),
	}
	if got, want := Runs(Claims(cs, "jlg")), []string{"run-2", "run-3"}; !cmp.Equal(got, want) {
		t.Errorf("Claims = %q, want %q", got, want)
	}
}

// What a status comment quotes (a failure's reason, the warnings) may be
// anyone's text: a check's output of code written from a passer-by's
// issue, a value of a front matter. It stays text in jlgcli's comment:
// no HTML (an image, a comment hiding the rest), no link, no reference to
// another issue, no mention, on one line.
func TestStatusCommentQuotesInert(t *testing.T) {
	hostile := "<img src=https://evil.example/t.png> [click](https://evil.example) see #7 and o/r#9 @bob <!-- rest`x`\n## Task"
	s := Status{Run: "r1", Task: "issue-3", State: "failed", Reason: hostile, Warnings: []string{hostile}}
	body := s.Body()
	lines := strings.Split(body, "\n")
	n := 0
	for _, l := range lines {
		if !strings.Contains(l, "evil.example") {
			continue
		}
		n++
		// The quote is one code span: between its two backticks, and
		// nothing after the closing one.
		_, rest, ok := strings.Cut(l, "`")
		quote, after, closed := strings.Cut(rest, "`")
		if !ok || !closed || strings.TrimSpace(after) != "" || !strings.Contains(quote, "<img") || !strings.Contains(quote, "<!--") {
			t.Errorf("a quote is not one inert code span: %q", l)
		}
	}
	if n != 2 {
		t.Errorf("want the reason and the warning quoted once each:\n%s", body)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			t.Errorf("a quote made a heading: %q", l)
		}
	}
}
