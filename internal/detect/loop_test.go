package detect

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Gate outputs of one failure, differing only in noise.
const (
	failRun1 = `--- FAIL: TestWindow (0.00s)
    page_test.go:31: Window(xs, 2, 3) = [c d e f], want [c d e]
    page_test.go:40: open /tmp/TestWindow2716391538/001/fixture.json: ok at 2026-11-02T10:00:00Z
FAIL
FAIL	example.com/page	0.012s
`
	failRun2 = `=== RUN   TestWindow
--- FAIL: TestWindow (0.03s)
    page_test.go:40: open /tmp/TestWindow99120457/001/fixture.json: ok at 2026-11-02T10:07:31Z
    page_test.go:31: Window(xs, 2, 3) = [c d e f], want [c d e]
FAIL
FAIL	example.com/page	1.207s
`
	failRun3 = `--- FAIL: TestWindow (0.01s)
    page_test.go:31: Window(xs, 2, 3) = [c d e f], want [c d e]
    page_test.go:40: open /tmp/TestWindow5550001/001/fixture.json: ok at 2026-11-02T10:12:02Z
FAIL
FAIL	example.com/page	0.020s
`
	failOther = `--- FAIL: TestWindow (0.00s)
    page_test.go:31: Window(xs, 2, 3) = [c d], want [c d e]
FAIL
FAIL	example.com/page	0.011s
`
)

type at struct {
	tier  string
	hash  string
	diff  string
	empty bool
	err   string // "" passed
}

// hist numbers the attempts from 1; tier "" is "t1".
func hist(as ...at) []Attempt {
	out := make([]Attempt, len(as))
	for i, a := range as {
		tier := a.tier
		if tier == "" {
			tier = "t1"
		}
		out[i] = Attempt{Number: i + 1, Tier: tier, DiffHash: a.hash, Diff: a.diff, Empty: a.empty, GateError: a.err}
	}
	return out
}

func TestLoopRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		d        LoopDetector
		history  []Attempt
		rule     string   // "" none
		rules    []string // when several rules fire
		attempts []int
		details  string // a part of Details
	}{
		// same-diff
		{name: "same diff twice",
			history: hist(at{hash: "A", diff: offByOneA, err: "fp1"}, at{hash: "A", diff: offByOneA, err: "fp2"}),
			rule:    RuleSameDiff, attempts: []int{1, 2}, details: "attempts 1 and 2 made the same change"},
		{name: "same diff text, no hashes",
			history: hist(at{diff: offByOneA, err: "fp1"}, at{diff: offByOneA, err: "fp2"}),
			rule:    RuleSameDiff, attempts: []int{1, 2}},
		{name: "same diff, one hash only",
			history: hist(at{hash: changeKey(Attempt{Diff: offByOneA}), diff: offByOneA, err: "fp1"}, at{diff: offByOneA, err: "fp2"}),
			rule:    RuleSameDiff, attempts: []int{1, 2}},
		{name: "same diff and same error both named",
			history: hist(at{hash: "X", err: "fp"}, at{hash: "A", err: "fp"}, at{hash: "A", err: "fp"}),
			rule:    RuleSameDiff, rules: []string{RuleSameDiff, RuleSameError}, attempts: []int{1, 2, 3},
			details: "attempts 2 and 3 made the same change; attempts 1, 2 and 3 failed the gate the same way"},
		{name: "same error and oscillation on attempt 3, in the rules' order",
			history: hist(at{hash: "A", err: "fp"}, at{hash: "B", err: "fp"}, at{hash: "A", err: "fp"}),
			rule:    RuleSameError, rules: []string{RuleSameError, RuleOscillation}, attempts: []int{1, 2, 3},
			details: "failed the gate the same way: fp; attempt 3 brought back the change of attempt 1"},
		{name: "two different diffs",
			history: hist(at{hash: "A", diff: offByOneA, err: "fp1"}, at{hash: "B", diff: offByOneB, err: "fp2"})},
		{name: "same diff, but the last passed",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "A"})},
		{name: "same diff, but the first passed",
			history: hist(at{hash: "A"}, at{hash: "A", err: "fp1"})},
		{name: "same diff, other tiers",
			history: hist(at{tier: "t1", hash: "A", err: "fp1"}, at{tier: "t2", hash: "A", err: "fp2"})},
		{name: "same diff, other tiers, across tiers",
			d:       LoopDetector{AcrossTiers: true},
			history: hist(at{tier: "t1", hash: "A", err: "fp1"}, at{tier: "t2", hash: "A", err: "fp2"}),
			rule:    RuleSameDiff, attempts: []int{1, 2}},
		{name: "same diff not in a row",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "B", err: "fp2"}, at{hash: "C", err: "fp3"}, at{hash: "A", err: "fp4"})},

		// no-change
		{name: "no change twice",
			history: hist(at{hash: "A", err: "fp0"}, at{empty: true, err: "fp1"}, at{empty: true, err: "fp2"}),
			rule:    RuleNoChange, attempts: []int{2, 3}, details: "changed nothing"},
		{name: "no change once",
			history: hist(at{hash: "A", err: "fp1"}, at{empty: true, err: "fp2"})},
		{name: "no change, change, no change",
			history: hist(at{empty: true, err: "fp1"}, at{hash: "A", err: "fp2"}, at{empty: true, err: "fp3"})},
		{name: "no change twice, the last passed",
			history: hist(at{empty: true, err: "fp1"}, at{empty: true})},
		{name: "empty diffs are not the same diff",
			history: hist(at{hash: "E", empty: true, err: "fp1"}, at{hash: "E", empty: false, err: "fp2"})},

		// same-error
		{name: "same error three times, noise aside",
			history: hist(at{hash: "A", err: failRun1}, at{hash: "B", err: failRun2}, at{hash: "C", err: failRun3}),
			rule:    RuleSameError, attempts: []int{1, 2, 3},
			details: "attempts 1, 2 and 3 failed the gate the same way: --- FAIL: TestWindow (<dur>)"},
		{name: "same fingerprint three times",
			history: hist(at{hash: "A", err: "v1:0f3a"}, at{hash: "B", err: "v1:0f3a"}, at{hash: "C", err: "v1:0f3a"}),
			rule:    RuleSameError, attempts: []int{1, 2, 3}},
		{name: "same error twice only",
			history: hist(at{hash: "A", err: failOther}, at{hash: "B", err: failRun1}, at{hash: "C", err: failRun2})},
		{name: "same error, a pass between",
			history: hist(at{hash: "A", err: failRun1}, at{hash: "B"}, at{hash: "C", err: failRun2}, at{hash: "D", err: failRun3})},
		{name: "same error, the last passed",
			history: hist(at{hash: "A", err: failRun1}, at{hash: "B", err: failRun2}, at{hash: "C", err: failRun3}, at{hash: "D"})},
		{name: "same error, a new tier",
			history: hist(at{hash: "A", err: failRun1}, at{hash: "B", err: failRun2}, at{tier: "t2", hash: "C", err: failRun3})},
		{name: "fingerprints are not normalized",
			history: hist(at{hash: "A", err: "v1:00000000000000001111111111111111"}, at{hash: "B", err: "v1:00000000000000002222222222222222"}, at{hash: "C", err: "v1:00000000000000003333333333333333"})},
		{name: "same error twice, count 2",
			d:       LoopDetector{SameErrorCount: 2},
			history: hist(at{hash: "A", err: failOther}, at{hash: "B", err: failRun1}, at{hash: "C", err: failRun2}),
			rule:    RuleSameError, attempts: []int{2, 3}},
		{name: "count 1 means 2",
			d:       LoopDetector{SameErrorCount: 1},
			history: hist(at{hash: "A", err: failOther}, at{hash: "B", err: failRun1})},

		// oscillation
		{name: "A B A",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "B", err: "fp2"}, at{hash: "A", err: "fp3"}),
			rule:    RuleOscillation, attempts: []int{1, 2, 3}, details: "attempt 3 brought back the change of attempt 1"},
		{name: "A B A B",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "B", err: "fp2"}, at{hash: "A", err: "fp3"}, at{hash: "B", err: "fp4"}),
			rule:    RuleOscillation, attempts: []int{2, 3, 4}},
		{name: "A B C",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "B", err: "fp2"}, at{hash: "C", err: "fp3"})},
		{name: "A (passed) B A",
			history: hist(at{hash: "A"}, at{hash: "B", err: "fp2"}, at{hash: "A", err: "fp3"})},
		{name: "A, nothing, A",
			history: hist(at{hash: "A", err: "fp1"}, at{empty: true, err: "fp2"}, at{hash: "A", err: "fp3"})},

		// similar-diff
		{name: "renamed variables",
			history: hist(at{hash: "A", diff: retryA, err: "fp1"}, at{hash: "B", diff: retryRenamed, err: "fp2"}),
			rule:    RuleSimilarDiff, attempts: []int{1, 2},
			details: "lexical similarity 0.938 ≥ 0.900 (renamed delay→backoff, f→fn, i→try, …)"},
		{name: "reformatted",
			history: hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyABlack, err: "fp2"}),
			rule:    RuleSameFix, rules: []string{RuleSameFix, RuleSimilarDiff}, attempts: []int{1, 2}, details: "lexical similarity 1.000"},
		{name: "a small real change",
			history: hist(at{hash: "A", diff: offByOneA, err: "fp1"}, at{hash: "B", diff: offByOneB, err: "fp2"})},
		{name: "another idea",
			history: hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyOther, err: "fp2"})},
		{name: "reformatted, the last passed",
			history: hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyABlack})},
		{name: "lower threshold",
			d:       LoopDetector{Similarity: 0.8},
			history: hist(at{hash: "A", diff: offByOneA, err: "fp1"}, at{hash: "B", diff: offByOneB, err: "fp2"}),
			rule:    RuleSimilarDiff, attempts: []int{1, 2}, details: "lexical similarity 0.829 ≥ 0.800"},
		{name: "threshold above 1 disables similar-diff, not same-fix",
			d:       LoopDetector{Similarity: 1.01},
			history: hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyABlack, err: "fp2"}),
			rule:    RuleSameFix, attempts: []int{1, 2}, details: "the same fix in another form"},
		{name: "no diff text",
			history: hist(at{hash: "A", err: "fp1"}, at{hash: "B", err: "fp2"})},

		// generic
		{name: "empty history"},
		{name: "one attempt", history: hist(at{hash: "A", err: "fp1"})},
	} {
		t.Run(c.name, func(t *testing.T) {
			det, ok := c.d.Check(context.Background(), c.history)
			if c.rule == "" {
				if ok {
					t.Fatalf("found %+v, want nothing", det)
				}
				return
			}
			if !ok {
				t.Fatalf("found nothing, want %s", c.rule)
			}
			if det.Rule != c.rule || !slices.Equal(det.Attempts, c.attempts) {
				t.Errorf("found %s %v, want %s %v (%s)", det.Rule, det.Attempts, c.rule, c.attempts, det.Details)
			}
			if !slices.Equal(det.Rules, c.rules) {
				t.Errorf("rules %v, want %v", det.Rules, c.rules)
			}
			if !strings.Contains(det.Details, c.details) {
				t.Errorf("details %q, want them to hold %q", det.Details, c.details)
			}
		})
	}
}

func TestNormalizeError(t *testing.T) {
	if a, b := NormalizeError(failRun1), NormalizeError(failRun2); a != b {
		t.Errorf("noise not removed:\n%s\n---\n%s", a, b)
	}
	if a, b := NormalizeError(failRun1), NormalizeError(failOther); a == b {
		t.Errorf("different failures compare equal: %s", a)
	}
	for _, fp := range []string{"v1:0123456789abcdef0123456789abcdef", "lint=v1:aa;test=v1:bb", "  v1:ff\n"} {
		if got := NormalizeError(fp); got != strings.TrimSpace(fp) {
			t.Errorf("NormalizeError(%q) = %q, want it kept", fp, got)
		}
	}
	a := NormalizeError("panic at 0xc000123456 after 12ms in /tmp/go-build123/x")
	b := NormalizeError("panic at 0xc000fedcba after 9ms in /tmp/go-build987/x")
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
}

// fakeEmbedder gives each text the vector its function returns.
type fakeEmbedder struct {
	vec   func(string) []float64
	err   error
	calls int
}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float64, len(texts))
	for i, s := range texts {
		out[i] = f.vec(s)
	}
	return out, nil
}

func TestLoopEmbeddings(t *testing.T) {
	// pyA and pyOther are lexically apart (0.64).
	twoIdeas := hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyOther, err: "fp2"})
	near := &fakeEmbedder{vec: func(s string) []float64 {
		if strings.Contains(s, "active=") {
			return []float64{1, 0.2}
		}
		return []float64{1, 0.1}
	}}
	det, ok := LoopDetector{Embedder: near}.Check(context.Background(), twoIdeas)
	if !ok || det.Rule != RuleSimilarDiff || !strings.Contains(det.Details, "embedding cosine 0.99") {
		t.Errorf("close embeddings: %+v, %v", det, ok)
	}
	if _, ok := (LoopDetector{Embedder: near, EmbeddingThreshold: 0.999}).Check(context.Background(), twoIdeas); ok {
		t.Error("found a loop below the embedding threshold")
	}

	// Embeddings decide: lexically identical but far apart in embeddings.
	far := &fakeEmbedder{vec: func(s string) []float64 {
		if strings.Contains(s, `"name"`) {
			return []float64{0, 1}
		}
		return []float64{1, 0}
	}}
	reformatted := hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyABlack, err: "fp2"})
	// (same-fix sees that the change is the same, whatever the embeddings.)
	if det, ok := (LoopDetector{Embedder: far}).Check(context.Background(), reformatted); !ok || det.Names() != RuleSameFix {
		t.Errorf("embeddings far apart, found %+v, want same-fix alone", det)
	}

	// An embedder that fails: the lexical measure, said so.
	broken := &fakeEmbedder{err: errors.New("embeddings: 503 Service Unavailable: overloaded")}
	det, ok = LoopDetector{Embedder: broken}.Check(context.Background(), reformatted)
	if !ok || det.Names() != "same-fix, similar-diff" || !strings.Contains(det.Details, "embeddings failed (embeddings: 503 Service Unavailable: overloaded), lexical similarity 1.000") {
		t.Errorf("broken embedder: %+v, %v", det, ok)
	}
	if _, ok := (LoopDetector{Embedder: broken}).Check(context.Background(), twoIdeas); ok {
		t.Error("broken embedder: found a loop the lexical measure does not see")
	}

	// The embedder is not called when an exact rule fires or nothing changed.
	calls := &fakeEmbedder{vec: func(string) []float64 { return []float64{1} }}
	LoopDetector{Embedder: calls}.Check(context.Background(), hist(at{hash: "A", diff: pyA, err: "e"}, at{hash: "A", diff: pyA, err: "e"}))
	LoopDetector{Embedder: calls}.Check(context.Background(), hist(at{hash: "A", diff: pyA, err: "e"}, at{empty: true, err: "e"}))
	if calls.calls != 0 {
		t.Errorf("embedder called %d times", calls.calls)
	}
}

func TestDetectionJSON(t *testing.T) {
	det, _ := LoopDetector{}.Check(context.Background(), hist(at{hash: "A", err: "e1"}, at{hash: "B", err: "e2"}, at{hash: "A", err: "e3"}))
	b, err := json.Marshal(det)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"rule":"oscillation","attempts":[1,2,3],"details":"attempt 3 brought back the change of attempt 1, after attempt 2's"}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	a := Attempt{Number: 1, Tier: "cheap", DiffHash: "h", GateError: "v1:ff"}
	b, _ = json.Marshal(a)
	var back Attempt
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, a) {
		t.Errorf("round trip %s: %+v, %v", b, back, err)
	}
}

// The rules across runs: an attempt against the changes earlier runs put
// in place (a pull request's rounds), named by their labels.
func TestCheckEarlier(t *testing.T) {
	r1 := Attempt{Number: 1, Label: "attempt 1 of round 1 (run r1)", DiffHash: "A", Diff: offByOneA}
	r2 := Attempt{Number: 2, Label: "attempt 2 of round 2 (run r2)", DiffHash: "R", Diff: retryA}
	for _, c := range []struct {
		name    string
		last    Attempt
		earlier []Attempt
		rule    string // "" none
		named   []string
		details string
	}{
		{name: "its own change is the latest pushed, by text (reverted, then made again)",
			last:    Attempt{Number: 2, DiffHash: git0, Diff: retryA},
			earlier: []Attempt{r1, r2}, rule: RuleSameDiff, named: []string{r2.Label},
			details: "attempt 2 made the same change as attempt 2 of round 2 (run r2)"},
		{name: "its whole change is the latest pushed, by hash",
			last:    Attempt{Number: 3, DiffHash: "R", Diff: "other text"},
			earlier: []Attempt{r1, r2}, rule: RuleSameDiff, named: []string{r2.Label}},
		{name: "an older round's change brought back after another",
			last:    Attempt{Number: 1, DiffHash: "A", Diff: offByOneA},
			earlier: []Attempt{r1, r2}, rule: RuleOscillation, named: []string{r1.Label, r2.Label},
			details: "attempt 1 brought back the change of attempt 1 of round 1 (run r1), after that of attempt 2 of round 2 (run r2)"},
		{name: "nearly the same change as an earlier round's",
			last:    Attempt{Number: 1, DiffHash: "M", Diff: offByOneAMoved},
			earlier: []Attempt{r1, r2}, rule: RuleSimilarDiff, named: []string{r1.Label},
			details: "attempt 1 and attempt 1 of round 1 (run r1) made nearly the same change: lexical similarity"},
		{name: "a different change",
			last:    Attempt{Number: 1, DiffHash: "B", Diff: offByOneB},
			earlier: []Attempt{r1, r2}},
		{name: "a change made undone is not its inverse",
			last:    Attempt{Number: 1, DiffHash: "U", Diff: reverse(offByOneA)},
			earlier: []Attempt{r1}},
		{name: "an attempt that changed nothing",
			last:    Attempt{Number: 1, DiffHash: "A", Empty: true},
			earlier: []Attempt{r1}},
		{name: "an attempt back where its step started, its own change a pushed one",
			last:    Attempt{Number: 2, DiffHash: git0, Diff: offByOneA, Empty: true},
			earlier: []Attempt{r1}, rule: RuleSameDiff},
		{name: "no earlier run", last: Attempt{Number: 1, DiffHash: "A", Diff: offByOneA}},
		{name: "without a label, the attempt's number",
			last:    Attempt{Number: 4, DiffHash: "A", Diff: offByOneA},
			earlier: []Attempt{{Number: 3, DiffHash: "A", Diff: offByOneA}}, rule: RuleSameDiff,
			details: "attempt 4 made the same change as attempt 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, found := LoopDetector{}.CheckEarlier(context.Background(), c.last, c.earlier)
			if c.rule == "" {
				if found {
					t.Fatalf("found %+v, want nothing", d)
				}
				return
			}
			if !found || d.Rule != c.rule || !slices.Equal(d.Attempts, []int{c.last.Number}) {
				t.Fatalf("found %v %+v, want %s on attempt %d", found, d, c.rule, c.last.Number)
			}
			if c.named != nil && !slices.Equal(d.Earlier, c.named) {
				t.Errorf("earlier %q, want %q", d.Earlier, c.named)
			}
			if !strings.Contains(d.Details, c.details) {
				t.Errorf("details %q, want %q in them", d.Details, c.details)
			}
		})
	}
}

// git0 is the hash of a whole change no earlier run made.
const git0 = "0000"

// reverse swaps the added and removed lines of a diff.
func reverse(diff string) string {
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			lines[i] = "-" + l[1:]
		case strings.HasPrefix(l, "-"):
			lines[i] = "+" + l[1:]
		}
	}
	return strings.Join(lines, "\n")
}
