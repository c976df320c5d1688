package taskengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
)

// The reviewer's verdicts.
const (
	// ReviewApprove: the change may land.
	ReviewApprove = "approve"
	// ReviewChanges: the reviewer asks for changes; its comments are the
	// next attempt's feedback.
	ReviewChanges = "changes"
	// ReviewUnreadable: the reviewer's answer could not be read, even when
	// asked again; the task stops (a change nobody approved never lands).
	ReviewUnreadable = "unreadable"
)

// RuleSameReview is the loop rule of reviews: the reviewer asked for the
// same changes after two attempts of a step in a row.
const RuleSameReview = "same-review"

// Bounds of a review.
const (
	// MaxReviewDiff bounds the change shown to the reviewer.
	MaxReviewDiff = 48 << 10
	// MaxReviewComments bounds the comments read from one answer.
	MaxReviewComments = 30
	// MaxKeptReview bounds the reviewer's reply kept in the record.
	MaxKeptReview = 16 << 10
)

// Review is a reviewer's reading of an attempt whose checks passed: its
// verdict and comments, and its call (tier, prompt, reply, cost) as an
// attempt's.
type Review struct {
	Tier    string `json:"tier"`
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`

	Verdict  string          `json:"verdict"`
	Summary  string          `json:"summary,omitempty"`
	Comments []ReviewComment `json:"comments,omitempty"`
	// Error says why the answer could not be read (Verdict unreadable), or
	// why the first answer was asked again.
	Error string `json:"error,omitempty"`
	// Calls counts the reviewer's calls: 2 when its first answer could not
	// be read and it was asked again.
	Calls int `json:"calls"`
	// Discarded are the files the reviewer changed in the tree, which were
	// put back as the developer left them.
	Discarded []string `json:"discarded,omitempty"`

	Prompt        string          `json:"prompt"`
	Response      string          `json:"response"`
	Failure       *agent.Failure  `json:"failure,omitempty"`
	DurationMs    millis.Duration `json:"durationMs"`
	InputTokens   int64           `json:"inputTokens"`
	OutputTokens  int64           `json:"outputTokens"`
	CostUSD       float64         `json:"costUsd"`
	CostEstimated bool            `json:"costEstimated,omitempty"`
	CostKnown     bool            `json:"costKnown"`
}

// ReviewComment is one change the reviewer asks for: where (a file of the
// repository, a line of it, 0 for the whole file) and what.
type ReviewComment struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text"`
}

// Approved reports whether r lets the change land.
func (r *Review) Approved() bool { return r != nil && r.Verdict == ReviewApprove }

// Passed reports whether attempt a passed: the checks passed, it did not
// make again a change pushed before (Repeats) and, when a reviewer read it,
// the reviewer approved.
func (a Attempt) Passed() bool {
	return a.Gate.OK() && !a.Repeats && (a.Review == nil || a.Review.Approved())
}

// reviewPrompt asks the reviewer to read the task's change.
func reviewPrompt(task string, a Attempt, diff string) string {
	var b strings.Builder
	b.WriteString("You are the reviewer of a change that a developer made for a task in the git repository in your " +
		"working directory. Read the code you need, but change no file: your answer is all that counts, and any " +
		"change you make is thrown away.\n\n## Task\n\n")
	b.WriteString(strings.TrimSpace(task))
	b.WriteString("\n\n## The change (against the task's starting point)\n\n")
	d, cut := bound(diff, MaxReviewDiff)
	if strings.TrimSpace(d) == "" {
		b.WriteString("(no change: the tree is as the task started)\n")
	} else {
		b.WriteString("```diff\n")
		b.WriteString(strings.TrimRight(d, "\n"))
		b.WriteString("\n```\n")
		if cut {
			fmt.Fprintf(&b, "(the diff is cut at %d bytes; the files changed are: %s)\n", MaxReviewDiff, strings.Join(a.Change.Paths(), ", "))
		}
	}
	b.WriteString("\n## The project's checks\n\nThey passed: ")
	b.WriteString(a.Gate.Summary())
	b.WriteString(".\n")
	for _, c := range a.Gate.Checks {
		fmt.Fprintf(&b, "- %s: %s\n", c.Name, c.Command)
	}
	b.WriteString(`
## Your answer

Approve the change when it does the task correctly and completely: no bug, nothing of the task left out, no test
deleted, skipped or weakened. Otherwise ask for changes: each comment names the file and the line of the change it
is about, and says what is wrong and what to do. End your reply with JSON, in one of these two forms:

{"verdict": "approve", "summary": "one line"}
{"verdict": "changes", "summary": "one line", "comments": [{"file": "path/in/repo.go", "line": 12, "text": "what to change"}]}
`)
	return b.String()
}

// reviewAgain asks a reviewer whose answer could not be read for the JSON
// alone.
func reviewAgain(err error) string {
	return fmt.Sprintf("Your answer could not be read: %v. Answer again with the JSON alone, in one of the two forms "+
		`given: {"verdict": "approve", "summary": "..."} or {"verdict": "changes", "summary": "...", `+
		`"comments": [{"file": "...", "line": 1, "text": "..."}]}.`, err)
}

// reviewAnswer is the JSON a reviewer answers with.
type reviewAnswer struct {
	Verdict  string          `json:"verdict"`
	Summary  string          `json:"summary"`
	Comments []ReviewComment `json:"comments"`
}

// ParseReview reads a reviewer's answer: the last JSON object of its reply
// that has a "verdict" key, in a code fence or not, read strictly: no other
// key than verdict, summary and comments; the verdict approve or changes;
// changes with at least one comment, each with a text and a relative file
// path; a line not below 0.
func ParseReview(reply string) (verdict, summary string, comments []ReviewComment, err error) {
	var last []byte
	for i := 0; i < len(reply); i++ {
		if reply[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(reply[i:]))
		var m map[string]json.RawMessage
		if dec.Decode(&m) != nil {
			continue
		}
		if _, ok := m["verdict"]; ok {
			last = []byte(reply[i : i+int(dec.InputOffset())])
			i += int(dec.InputOffset()) - 1
		}
	}
	if last == nil {
		return "", "", nil, errors.New(`the reply holds no {"verdict": ...} JSON`)
	}
	var ans reviewAnswer
	dec := json.NewDecoder(strings.NewReader(string(last)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ans); err != nil {
		return "", "", nil, fmt.Errorf("the verdict's JSON: %v", err)
	}
	switch ans.Verdict {
	case ReviewApprove, ReviewChanges:
	default:
		return "", "", nil, fmt.Errorf("the verdict is %q, not %q or %q", ans.Verdict, ReviewApprove, ReviewChanges)
	}
	if ans.Verdict == ReviewChanges && len(ans.Comments) == 0 {
		return "", "", nil, errors.New(`the verdict "changes" has no comment`)
	}
	if len(ans.Comments) > MaxReviewComments {
		return "", "", nil, fmt.Errorf("%d comments, more than %d", len(ans.Comments), MaxReviewComments)
	}
	for i, c := range ans.Comments {
		c.File, c.Text = strings.TrimSpace(c.File), strings.TrimSpace(c.Text)
		switch {
		case c.Text == "":
			return "", "", nil, fmt.Errorf("comment %d has no text", i+1)
		case c.Line < 0:
			return "", "", nil, fmt.Errorf("comment %d: line %d", i+1, c.Line)
		case strings.HasPrefix(c.File, "/") || slices.Contains(strings.Split(c.File, "/"), ".."):
			return "", "", nil, fmt.Errorf("comment %d: %q is not a path in the repository", i+1, c.File)
		}
		ans.Comments[i] = c
	}
	return ans.Verdict, strings.TrimSpace(ans.Summary), ans.Comments, nil
}

// review has the reviewer read attempt a, whose checks passed: a's Review
// is set. The tree is put back as a left it when the reviewer changed it.
// false when the task stops (t.stop says why).
func (t *task) review(ctx context.Context, a *Attempt, change git.Change) bool {
	rt := *t.o.Reviewer
	r := &Review{Tier: rt.Name, Backend: rt.Backend, Model: rt.Model, Prompt: reviewPrompt(t.o.Task, *a, change.Text)}
	if t.o.Observer != nil {
		t.o.Observer.Phase(t.progress(*a), "review")
	}
	began := t.now()
	prompt := r.Prompt
	var replies []string
	for r.Calls < 2 {
		r.Calls++
		resp, f, ok := t.callLogged(ctx, rt, prompt, a.Number, false)
		if !ok {
			return false
		}
		r.InputTokens += resp.Usage.InputTokens
		r.OutputTokens += resp.Usage.OutputTokens
		usd, est, known := t.costOf(rt, resp.Usage)
		r.CostUSD += usd
		r.CostEstimated = r.CostEstimated || est
		r.CostKnown = r.CostKnown || known
		replies = append(replies, resp.Text)
		r.Failure = f
		if f != nil {
			r.Verdict, r.Error = ReviewUnreadable, fmt.Sprintf("the reviewer failed (%s): %s", f.Kind, f.Message)
			break
		}
		v, s, cs, err := ParseReview(resp.Text)
		if err == nil {
			r.Verdict, r.Summary, r.Comments, r.Error = v, s, cs, ""
			break
		}
		r.Verdict, r.Error = ReviewUnreadable, err.Error()
		prompt = reviewAgain(err)
	}
	r.Response, _ = bound(strings.Join(replies, "\n\n[jlgcli: asked again]\n\n"), MaxKeptReview)
	r.DurationMs = millis.Of(t.now().Sub(began))
	// The reviewer reads; what it wrote is not the developer's work: the
	// tree it left is saved (<n>-review) and, when it differs from the
	// attempt's, put back as the developer left it (also when it cannot
	// be measured).
	m, err := t.o.Workspace.Measure(ctx, strconv.Itoa(a.Number)+"-review", a.Result)
	changed := err != nil || !m.From[0].Empty
	if err == nil && changed {
		r.Discarded = ChangeOf(m.From[0]).Paths()
	}
	if changed {
		if err := t.o.Workspace.Restore(ctx, a.Result); err != nil {
			t.end(engine.StatusError, fmt.Sprintf("attempt %d: put back the tree the reviewer changed: %v", a.Number, err), nil)
			return false
		}
	}
	a.Review = r
	return true
}

// sameReview is the same-review rule: the reviewer asked for the same
// changes (the same comments on the same files, lines aside, since the
// code moves) after a and after the attempt of a's step just before it.
func sameReview(h History, a Attempt) *detect.Detection {
	if a.Review == nil || a.Review.Verdict != ReviewChanges {
		return nil
	}
	var prev *Attempt
	for i := len(h.Attempts) - 1; i >= 0; i-- {
		if h.Attempts[i].Step == a.Step {
			prev = &h.Attempts[i]
			break
		}
	}
	if prev == nil || prev.Review == nil || prev.Review.Verdict != ReviewChanges {
		return nil
	}
	if !slices.Equal(commentKeys(prev.Review.Comments), commentKeys(a.Review.Comments)) {
		return nil
	}
	return &detect.Detection{Rule: RuleSameReview, Attempts: []int{prev.Number, a.Number},
		Details: fmt.Sprintf("the reviewer asked for the same changes after attempts %d and %d (%s)", prev.Number, a.Number, plural.N(len(a.Review.Comments), "comment"))}
}

// commentKeys are comments as sameReview compares them: file and text,
// spaces and case aside, sorted.
func commentKeys(cs []ReviewComment) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.File+"\x00"+strings.ToLower(strings.Join(strings.Fields(c.Text), " ")))
	}
	slices.Sort(out)
	return out
}

// ReviewText is a review as the next developer reads it: its summary and
// each comment on a line of its own, file:line first.
func ReviewText(r *Review) string {
	var b strings.Builder
	if r.Summary != "" {
		b.WriteString(r.Summary)
		b.WriteString("\n")
	}
	for _, c := range r.Comments {
		b.WriteString("- ")
		if c.File != "" {
			b.WriteString(c.File)
			if c.Line > 0 {
				fmt.Fprintf(&b, ":%d", c.Line)
			}
			b.WriteString(": ")
		}
		b.WriteString(c.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// reviewSummary adds review r to the reviewer's summary s (nil: none yet).
func reviewSummary(s *TierSummary, r Review) *TierSummary {
	if s == nil {
		s = &TierSummary{Name: r.Tier, Backend: r.Backend, Model: r.Model}
	}
	s.Attempts++
	s.CostUSD += r.CostUSD
	s.CostKnown = s.CostKnown || r.CostKnown
	s.CostEstimated = s.CostEstimated || r.CostEstimated
	if r.Approved() {
		s.Passed++
	}
	s.Outcome = r.Verdict
	return s
}

// Judged says how attempt a was judged: the checks' summary, and what the
// reviewer asked when it did not approve.
func (a Attempt) Judged() string {
	if a.Repeats {
		return a.Gate.Summary() + "; it made again a change pushed before"
	}
	if a.Review == nil || a.Review.Approved() {
		return a.Gate.Summary()
	}
	if a.Review.Verdict == ReviewChanges {
		return fmt.Sprintf("%s; the reviewer asked for %s", a.Gate.Summary(), plural.N(len(a.Review.Comments), "change"))
	}
	return fmt.Sprintf("%s; the reviewer's answer could not be read", a.Gate.Summary())
}

// nudgeOf is the nudge of a developer caught in loop d at attempt a: the
// checks' (nudge), for the same-review rule the reviewer's comments, for
// a change pushed before made again (Repeats) what the pull request needs.
func nudgeOf(d detect.Detection, a Attempt) string {
	if a.Repeats {
		return repeatNudge(d)
	}
	if d.Rule != RuleSameReview || a.Review == nil {
		return nudge(d, a.Gate)
	}
	return fmt.Sprintf("Step back: the reviewer asked for the same changes again (%s), so your last attempt did not do "+
		"what it asked. Read each comment again, at its file and line, and change the code so that it holds; if this "+
		"attempt is refused the same way again, the task goes to the next tier. The reviewer's comments:\n%s",
		DetectionText(d), ReviewText(a.Review))
}

// repeatNudge is the nudge of a round of a pull request's loop whose
// attempt made again a change that a run before it pushed (loop d): the
// local checks pass, but the pull request's own checks or reviewers found
// that change wanting already.
func repeatNudge(d detect.Detection) string {
	return fmt.Sprintf("Step back: your change repeats one already pushed to this pull request (%s: %s), and the pull "+
		"request still needs what is said above: that change did not give it. Do not make it again. Read what the pull "+
		"request needs again (the failing check's step and log, the review's words), find its root cause, and try a "+
		"different approach: if this attempt loops again, the task goes to the next tier.", d.Names(), DetectionText(d))
}
