package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

var fixtures = []struct {
	name string
	res  func() taskengine.Result
}{
	{"success", successResult},
	{"failed", failedResult},
	{"noattempt", noAttemptResult},
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			r := New(f.res())
			data, err := r.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, f.name+".json.golden", data)
			golden(t, f.name+".md.golden", []byte(r.Markdown()))
			golden(t, f.name+".html.golden", []byte(r.HTML()))
			// Deterministic: the same result, the same bytes.
			if again := New(f.res()); again.HTML() != r.HTML() || again.Markdown() != r.Markdown() {
				t.Error("two renderings of the same result differ")
			}
		})
	}
}

// The figures of the seed's report, checked one by one (the golden files
// check the rest).
func TestNewSuccess(t *testing.T) {
	r := New(successResult())
	if r.Status != "done" || r.ExitCode != 0 || r.TotalAttempts != 4 || r.RunID != "20261122T041500Z-3fa91c07" {
		t.Errorf("status %s, exit %d, %d attempts, run %s", r.Status, r.ExitCode, r.TotalAttempts, r.RunID)
	}
	var tiers []string
	for _, tr := range r.TiersUsed {
		tiers = append(tiers, fmt.Sprintf("%s/%d/%s", tr.Name, tr.Attempts, tr.Outcome))
	}
	if diff := cmp.Diff([]string{"fast/3/loop", "smart/1/passed"}, tiers); diff != "" {
		t.Errorf("tiers used (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"best"}, r.TiersUnused); diff != "" {
		t.Errorf("tiers unused (-want +got):\n%s", diff)
	}
	// The same test failure twice (its duration apart) is one error.
	want := []string{
		"ModuleNotFoundError: No module named 'ratelimit'",
		"test_rate_limit_exceeded: AssertionError: expected 429, got 200 (took 0.12s)",
	}
	if diff := cmp.Diff(want, r.UniqueErrors); diff != "" {
		t.Errorf("unique errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tests/test_api.py::test_burst"}, r.FlakyTests); diff != "" {
		t.Errorf("flaky tests (-want +got):\n%s", diff)
	}
	if len(r.Detections) != 1 || r.Detections[0].Rule != "same-error" || r.Attempts[2].Detection != "same-error" {
		t.Errorf("detections %+v, attempt 3 %+v", r.Detections, r.Attempts[2])
	}
	if r.Recommendation != "merged into main as feedface00" {
		t.Errorf("recommendation %q", r.Recommendation)
	}
	if len(r.GateResults) != 4 || r.GateResults[3].Summary != "warning (pass_to_commit): 1 flaky test" {
		t.Errorf("gate results %+v", r.GateResults)
	}
	if !strings.Contains(r.LastDiff, "+@rate_limit(per_minute=60)") || r.LastDiffNote != "" {
		t.Errorf("last diff %q, note %q", r.LastDiff, r.LastDiffNote)
	}
}

func TestRecommendation(t *testing.T) {
	done := func(edit func(*taskengine.Result)) taskengine.Result {
		res := successResult()
		edit(&res)
		return res
	}
	failed := func(edit func(*taskengine.Result)) taskengine.Result {
		res := failedResult()
		edit(&res)
		return res
	}
	for _, tc := range []struct {
		name string
		res  taskengine.Result
		want string
	}{
		{"merged", successResult(), "merged into main as feedface00"},
		{"refused", done(func(r *taskengine.Result) {
			r.Git.Merge = &taskengine.MergeInfo{Status: "refused", Reason: "main moved", Command: "git merge --squash b"}
		}), "merge the branch: git merge --squash b"},
		{"skipped", done(func(r *taskengine.Result) { r.Git.Merge = &taskengine.MergeInfo{Status: "skipped"} }),
			"review and merge branch jlgcli/add-rate-limiting-to-api-endpoints"},
		{"no merge info", done(func(r *taskengine.Result) { r.Git.Merge = nil }),
			"review and merge branch jlgcli/add-rate-limiting-to-api-endpoints"},
		{"pull request", done(func(r *taskengine.Result) { r.Git.Merge = nil; r.Git.PR = "https://example.com/pr/7" }),
			"review and merge pull request https://example.com/pr/7"},
		{"nothing", done(func(r *taskengine.Result) { r.Git.Merge = &taskengine.MergeInfo{Status: "nothing"} }),
			"nothing to merge: the task left no change"},
		{"nothing, by a batch", done(func(r *taskengine.Result) {
			r.Git.Merge = &taskengine.MergeInfo{Status: git.MergeMerged, Into: "main", Reason: "by batch b1"}
		}), "nothing merged into main: the task's branch holds no change for it"},
		{"direct, fast-forwarded", done(func(r *taskengine.Result) {
			r.Git.Mode, r.Git.Merge = "direct", &taskengine.MergeInfo{Status: git.MergeFastForwarded, Into: "main", Commit: "c0ffee1234abcdef"}
		}), "committed on main, fast-forwarded to c0ffee1234"},
		{"direct", done(func(r *taskengine.Result) { r.Git.Mode, r.Git.Merge = "direct", nil }),
			"committed on jlgcli/add-rate-limiting-to-api-endpoints as c0ffee1234"},
		{"done without git", done(func(r *taskengine.Result) { r.Git = nil }),
			"done: the change is in the working tree (the task ran without git); review it and commit it"},
		{"failed", failedResult(),
			"manual intervention required: review branch jlgcli/render-the-report-table (WIP commit 9a8b7c6d5e); " +
				"the attempts are under refs/jlgcli/20261123T090000Z-0badc0de/; the last gate said: fail (fix_required): " +
				"1 test failure (first: test_render_table: AssertionError: '<td>' != '<th>')"},
		{"failed without WIP", failed(func(r *taskengine.Result) { r.Git.WIP = "" }),
			"manual intervention required: review branch jlgcli/render-the-report-table; " +
				"the attempts are under refs/jlgcli/20261123T090000Z-0badc0de/; the last gate said: fail (fix_required): " +
				"1 test failure (first: test_render_table: AssertionError: '<td>' != '<th>')"},
		{"failed without git", failed(func(r *taskengine.Result) { r.Git = nil; r.Gate = nil }),
			"manual intervention required: review the changes left in the working tree; the last gate said: " +
				"fail (fix_required): 1 test failure (first: test_render_table: AssertionError: '<td>' != '<th>')"},
		{"failed without a gate", failed(func(r *taskengine.Result) {
			r.Git, r.Gate = nil, nil
			for i := range r.Attempts {
				r.Attempts[i].Gate = gate.Report{}
			}
		}), "manual intervention required: review the changes left in the working tree; " +
			"a loop was detected on the last tier (same-diff) and nothing was left to try"},
		{"interrupted", failed(func(r *taskengine.Result) { r.Status, r.ExitCode = engine.StatusInterrupted, 130 }),
			"interrupted: continue it with: jlgcli resume 20261123T090000Z-0badc0de; the work so far is on branch jlgcli/render-the-report-table"},
		{"running", failed(func(r *taskengine.Result) { r.Status, r.ExitCode, r.Git = engine.StatusRunning, -1, nil }),
			"the task has not stopped: it is running, or it was killed ('jlgcli resume 20261123T090000Z-0badc0de' continues it)"},
		{"no attempt", noAttemptResult(),
			"the task stopped before its first attempt (backend-missing): command not found: opencode (install it: npm install -g opencode-ai)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := New(tc.res).Recommendation; got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestAlive: a report of a task that has not stopped says which it is
// when its reader knows whether a process runs it, and only then.
func TestAlive(t *testing.T) {
	res := failedResult()
	res.Status, res.ExitCode, res.Git = engine.StatusRunning, -1, nil
	for _, tc := range []struct {
		live bool
		want string
	}{
		{true, "the task is running: 'jlgcli logs -f 20261123T090000Z-0badc0de' follows its agent"},
		{false, "the task was killed before it stopped: 'jlgcli resume 20261123T090000Z-0badc0de' continues it"},
	} {
		r := New(res)
		r.Alive(tc.live)
		if r.Recommendation != tc.want || strings.Contains(r.Markdown(), "or it was killed") {
			t.Errorf("live %v: %q", tc.live, r.Recommendation)
		}
	}
	done := New(failedResult())
	want := done.Recommendation
	if done.Alive(false); done.Recommendation != want {
		t.Errorf("a task that stopped: %q, want %q", done.Recommendation, want)
	}
}

func TestUniqueErrorsBounded(t *testing.T) {
	res := failedResult()
	res.Attempts = res.Attempts[:1]
	var syntax []string
	for i := range MaxUniqueErrors + 7 {
		syntax = append(syntax, fmt.Sprintf("f.py:%d:1: invalid syntax %s", i, strings.Repeat("x", 400)))
	}
	syntax = append(syntax, syntax[0], "  f.py:0:1:   invalid\n syntax "+strings.Repeat("x", 400)) // the same twice
	res.Attempts[0].Gate = gate.Report{Status: gate.StatusFail, SyntaxErrors: syntax, Recommendation: gate.RecommendFixRequired}
	r := New(res)
	if len(r.UniqueErrors) != MaxUniqueErrors || r.UniqueErrorsLeftOut != 7 {
		t.Errorf("%d errors, %d left out", len(r.UniqueErrors), r.UniqueErrorsLeftOut)
	}
	for _, e := range r.UniqueErrors {
		if len(e) > MaxErrorBytes || strings.Contains(e, "\n") || !utf8.ValidString(e) {
			t.Fatalf("error not bounded to one line of %d bytes: %q", MaxErrorBytes, e)
		}
	}
	if !strings.HasSuffix(r.UniqueErrors[0], "…") {
		t.Errorf("a cut error is not marked: %q", r.UniqueErrors[0])
	}
	if md := r.Markdown(); !strings.Contains(md, "7 more left out.") {
		t.Error("the Markdown does not say errors were left out")
	}
}

func TestLastDiffBounded(t *testing.T) {
	res := failedResult()
	last := &res.Attempts[len(res.Attempts)-1]
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "+line %d é```\n", i)
	}
	last.Change.Diff, last.Change.Size = b.String(), int64(b.Len())
	r := New(res)
	if len(r.LastDiff) > MaxDiff || !utf8.ValidString(r.LastDiff) {
		t.Errorf("last diff is %d bytes", len(r.LastDiff))
	}
	if !strings.HasPrefix(b.String(), strings.SplitAfter(r.LastDiff, "[jlgcli")[0][:100]) ||
		!regexp.MustCompile(`\n\[jlgcli: diff cut: \d+ bytes left out\]\n$`).MatchString(r.LastDiff) {
		t.Errorf("last diff does not end with the note: %q", r.LastDiff[len(r.LastDiff)-80:])
	}
	wantNote := fmt.Sprintf("the diff of attempt 4 was cut (the whole change is %d bytes); see it whole with: git diff %s refs/jlgcli/20261123T090000Z-0badc0de/4-result", b.Len(), base)
	if r.LastDiffNote != wantNote {
		t.Errorf("note %q\nwant %q", r.LastDiffNote, wantNote)
	}
	// Cut by the engine already: the note says so.
	res = failedResult()
	res.Attempts[3].Change.Truncated = true
	if r := New(res); !strings.HasPrefix(r.LastDiffNote, "the diff of attempt 4 was cut") {
		t.Errorf("note %q", r.LastDiffNote)
	}
}

// Text that looks like Markdown, HTML or a fence shows as written.
// Commands in the report are code, never escaped: copied, they run.
func TestMarkdownCommandsCopyAsWritten(t *testing.T) {
	res := successResult()
	cmd := "git merge --squash 'jlgcli/fix_the_bug-1' && git commit -m 'feat: fix *it* [#2]'"
	res.Git.Branch = "jlgcli/fix_the_bug-1"
	res.Git.Merge = &taskengine.MergeInfo{Status: git.MergeRefused, Into: "main", Reason: "dirty: main has uncommitted changes", Command: cmd}
	md := New(res).Markdown()
	for _, want := range []string{
		"**Recommendation:** merge the branch: `" + cmd + "`\n",
		"## Recommendation\n\nmerge the branch: `" + cmd + "`\n",
		"- Branch: `jlgcli/fix_the_bug-1` from",
		"Merge it with:\n\n```sh\n" + cmd + "\n```\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	if strings.Contains(md, `fix\_the`) || strings.Contains(md, `\&\&`) {
		t.Errorf("a command or branch is escaped:\n%s", md)
	}
	failed := failedResult()
	failed.Status, failed.ExitCode = engine.StatusInterrupted, 130
	failed.RunID = "run_1"
	if md := New(failed).Markdown(); !strings.Contains(md, "continue it with: `jlgcli resume run_1`") {
		t.Errorf("the resume command is not code:\n%s", md)
	}
}

func TestMarkdownEscapes(t *testing.T) {
	res := failedResult()
	res.Task = "Fix `x` | *y* <script>alert(1)</script>\n````\nstill the task"
	res.Detections[0].Details = "a | b <b>bold</b>"
	md := New(res).Markdown()
	for _, want := range []string{
		"| Task | Fix \\`x\\` \\| \\*y\\* \\<script\\>alert(1)\\</script\\>… |",
		"`````text\nFix `x` | *y* <script>alert(1)</script>\n````\nstill the task\n`````\n",
		"| a \\| b \\<b\\>bold\\</b\\> |",
		// the diff holds ``` : a longer fence
		"````diff\ndiff --git a/README.md b/README.md\n",
		"+```\n````\n",
		"Merge it with:\n\n```sh\ngit checkout main && git merge --squash jlgcli/render-the-report-table && git commit\n```\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// Outside code, no raw HTML tag is left.
	var outside strings.Builder
	inFence := ""
	for line := range strings.Lines(md) {
		trim := strings.TrimRight(line, "\n")
		switch {
		case inFence == "" && strings.HasPrefix(trim, "```"):
			inFence = strings.TrimRight(trim, "abcdefghijklmnopqrstuvwxyz")
		case inFence != "" && trim == inFence:
			inFence = ""
		case inFence == "":
			outside.WriteString(regexp.MustCompile("`[^`]*`").ReplaceAllString(line, ""))
		}
	}
	if m := regexp.MustCompile(`[^\\]<[a-z/]`).FindString(outside.String()); m != "" {
		t.Errorf("raw HTML outside code: %q", m)
	}
}

func TestMdCode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cell bool
		want string
	}{
		{"a b", false, "`a b`"},
		{"a`b", false, "``a`b``"},
		{"`a`", false, "`` `a` ``"},
		{"a|b", true, "`a\\|b`"},
		{"a|b", false, "`a|b`"},
		{"a\n  b", false, "`a b`"},
		{"", false, "-"},
	} {
		if got := mdCode(tc.in, tc.cell); got != tc.want {
			t.Errorf("mdCode(%q, %t) = %q, want %q", tc.in, tc.cell, got, tc.want)
		}
	}
}

// A task text holding a script comes out inert, wherever it is shown.
func TestHTMLEscapes(t *testing.T) {
	res := failedResult()
	evil := `</pre><script>alert("x")</script><img src=x onerror=alert(1)>`
	res.Task = evil
	res.RunID = "r<script>"
	res.Details = evil
	res.Attempts[1].Tier = evil
	res.Tiers[1].Name = evil
	res.Detections[0].Details = evil
	res.Attempts[3].Change.Diff = evil
	res.Git.Branch = evil
	res.Git.PR = `javascript:alert(1)`
	html := New(res).HTML()
	for _, bad := range []string{"<script", "<img", "</pre><"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the task is not shown escaped")
	}
}

// The page loads nothing: no script, no link, no external resource.
func TestHTMLSelfContained(t *testing.T) {
	for _, f := range fixtures {
		html := New(f.res()).HTML()
		for _, bad := range []string{"<script", "<link", "src=", "href=", "url(", "@import", "http://", "https://", "//fonts", "<iframe", "<object", "<embed"} {
			if strings.Contains(strings.ToLower(html), bad) {
				t.Errorf("%s: the page holds %q", f.name, bad)
			}
		}
		if strings.Count(html, "<svg") != min(1, len(f.res().Attempts)) {
			t.Errorf("%s: %d svg", f.name, strings.Count(html, "<svg"))
		}
	}
}

func TestTimeline(t *testing.T) {
	r := New(successResult())
	c := timeline(r)
	if len(c.Bars) != 4 {
		t.Fatalf("%d bars", len(c.Bars))
	}
	// Height proportional to the cost: the dearest is the full height.
	if c.Bars[3].H != chartPlot || c.Bars[0].H != 14 {
		t.Errorf("heights %d, %d", c.Bars[0].H, c.Bars[3].H)
	}
	for i, want := range []string{"fail", "fail", "fail", "warning"} {
		if c.Bars[i].Class != want || c.Bars[i].Y+c.Bars[i].H != c.Base {
			t.Errorf("bar %d: %+v", i+1, c.Bars[i])
		}
		if i > 0 && c.Bars[i].X <= c.Bars[i-1].X {
			t.Errorf("bar %d is not after bar %d", i+1, i)
		}
	}
	if len(c.Bands) != 2 || c.Bands[0].Name != "fast" || c.Bands[1].Name != "smart" {
		t.Errorf("bands %+v", c.Bands)
	}
	if len(c.Boundaries) != 1 || c.Boundaries[0].Class != "tier" || c.Boundaries[0].X != c.Bands[1].X-2 {
		t.Errorf("boundaries %+v", c.Boundaries)
	}
	if len(c.Marks) != 1 || !strings.Contains(c.Marks[0].Title, "attempt 3: same-error") {
		t.Errorf("marks %+v", c.Marks)
	}
	// Without any cost, the bars are of equal height.
	res := successResult()
	for i := range res.Attempts {
		res.Attempts[i].CostUSD, res.Attempts[i].CostKnown = 0, false
	}
	c = timeline(New(res))
	if !c.Uniform || c.Bars[0].H != c.Bars[3].H || c.Bars[0].H == 0 {
		t.Errorf("uniform %t, heights %d %d", c.Uniform, c.Bars[0].H, c.Bars[3].H)
	}
	// Plan steps are marked.
	res = failedResult()
	for i := range res.Attempts {
		res.Attempts[i].Step = 1 + i/2
	}
	c = timeline(New(res))
	var kinds []string
	for _, b := range c.Boundaries {
		kinds = append(kinds, b.Class+":"+b.Label)
	}
	if diff := cmp.Diff([]string{"tier:", "step:step 2"}, kinds); diff != "" {
		t.Errorf("boundaries (-want +got):\n%s", diff)
	}
}

func TestJSONNames(t *testing.T) {
	data, err := New(noAttemptResult()).JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "exit_code", "run_id", "task", "total_attempts", "tiers_used", "unique_errors",
		"last_diff", "detections", "gate_results", "flaky_tests", "duration_ms", "cost_usd", "cost_estimated",
		"budget_usd", "recommendation"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, data)
		}
	}
	// Empty lists are [], never null.
	for _, k := range []string{"tiers_used", "unique_errors", "detections", "gate_results", "flaky_tests", "attempts"} {
		if !bytes.Contains(data, []byte(`"`+k+`": []`)) {
			t.Errorf("%s is not []", k)
		}
	}
	if _, ok := m["git"]; ok {
		t.Error("git without git info")
	}
}

func TestWindowsInTheReport(t *testing.T) {
	res := taskengine.Result{Status: engine.StatusRateLimited, RunID: "r", Task: "T", Windows: engine.Windows{
		{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: time.Date(2026, 11, 22, 14, 5, 0, 0, time.UTC), At: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)},
	}}
	r := New(res)
	if md := r.Markdown(); !strings.Contains(md, "| Windows | claude 5h 92% (resets 2026-11-22 14:05 UTC) |\n") {
		t.Errorf("markdown:\n%s", md)
	}
	if h := r.HTML(); !strings.Contains(h, "<tr><th>Windows</th><td>claude 5h 92% (resets 2026-11-22 14:05 UTC)</td></tr>") {
		t.Errorf("html has no windows row")
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"windows":[{"backend":"claude","kind":"5h","used":0.92,"resets_at":"2026-11-22T14:05:00Z","reported_at":"2026-11-22T12:00:00Z"}]`) {
		t.Errorf("json: %s", b)
	}
}

// TestTestsJudged: the report says what the tests of the base said of the
// last attempt that ran them, or why they were set aside, and which
// checks' tests could not be counted; in the JSON, the Markdown and the
// HTML.
func TestTestsJudged(t *testing.T) {
	res := successResult()
	res.Baseline = &gate.Report{Uncounted: []string{"make test"}}
	last := len(res.Attempts) - 1
	res.Attempts[last].Gate.BaseTests = &gate.BaseTestsReport{Status: gate.BasePass, Rerun: true,
		Laid: []string{"calc_test.go"}, Removed: []string{"more_test.go"}, Counts: &gate.Counts{Run: 3, Passed: 3}}
	r := New(res)
	n := res.Attempts[last].Number
	want := []string{
		fmt.Sprintf("Tests of the base: the tests as they stood at the task's base passed on attempt %d (calc_test.go as the base had them; more_test.go of the change left out; 3 run: 3 passed, 0 failed).", n),
		`Tests not counted: check "make test" said neither how many tests ran nor which, so the rules fewer-tests-run, more-tests-skipped and the test-by-test comparison with the baseline were off for it, and the tests of the base judged it by exit status only.`,
	}
	if diff := cmp.Diff(want, r.TestsJudged); diff != "" {
		t.Fatalf("tests judged (-want +got):\n%s", diff)
	}
	data, err := r.JSON()
	if err != nil || !bytes.Contains(data, []byte(`"tests_judged"`)) {
		t.Errorf("JSON: %v %s", err, data)
	}
	if md := r.Markdown(); !strings.Contains(md, "Tests of the base: the tests as they stood") || !strings.Contains(md, "Tests not counted: check") {
		t.Errorf("Markdown:\n%s", md)
	}
	if h := r.HTML(); !strings.Contains(h, `<p class="tests">Tests not counted: check &#34;make test&#34;`) {
		t.Errorf("HTML:\n%s", h)
	}

	res.Attempts[last].Gate.BaseTests = &gate.BaseTestsReport{Status: gate.BaseSetAside, Reason: "the task declares that it changes existing tests (editTests): its own tests judged it"}
	res.Baseline = nil
	r = New(res)
	if want := []string{fmt.Sprintf("Tests of the base: set aside for attempt %d: the task declares that it changes existing tests (editTests): its own tests judged it.", n)}; !slices.Equal(r.TestsJudged, want) {
		t.Errorf("set aside: %q", r.TestsJudged)
	}
}

// TestGitJSON: the report's git section is the result's record of the work
// (taskengine.GitInfo) under the report's names, and reads back as it was; a
// discarded task's flag is not part of it.
func TestGitJSON(t *testing.T) {
	res := failedResult()
	res.Git.Removed, res.Git.DirtyLeftOut, res.Git.Discarded = true, true, true
	res.Git.Merge = &taskengine.MergeInfo{Status: git.MergeRefused, Into: "main", Reason: "dirty", Command: "git merge b"}
	data, err := New(res).JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Git map[string]any }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"branch", "base", "refs", "commits", "wip_commit", "worktree_removed", "dirty_left_out", "merge", "pushed"} {
		if _, ok := m.Git[k]; !ok {
			t.Errorf("no %q in %v", k, m.Git)
		}
	}
	for _, k := range []string{"wip", "removed", "discarded", "dirtyLeftOut"} {
		if _, ok := m.Git[k]; ok {
			t.Errorf("%q in %v", k, m.Git)
		}
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := *res.Git
	want.Discarded = false
	if diff := cmp.Diff(Git{GitInfo: want, Commits: res.Commits}, *back.Git); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// A result with no tier table (a run of before it) counts each tier's
// passes from its attempts as the engine does: an attempt whose checks
// passed but that made again a change already pushed (a loop) did not
// pass.
func TestTierPassesFromAttempts(t *testing.T) {
	ok := gate.Report{Status: gate.StatusPass, Recommendation: gate.RecommendPassToCommit}
	r := New(taskengine.Result{RunID: "20261128T090000Z-00000001", Status: "done", Attempts: []taskengine.Attempt{
		{Number: 1, Tier: "fast", Gate: ok, Repeats: true, Action: taskengine.ActionNudge},
		{Number: 2, Tier: "fast", Gate: ok, Action: taskengine.ActionPass},
	}})
	if len(r.TiersUsed) != 1 || r.TiersUsed[0].Attempts != 2 || r.TiersUsed[0].Passed != 1 {
		t.Errorf("tiers used %+v, want fast: 2 attempts, 1 passed", r.TiersUsed)
	}
}
