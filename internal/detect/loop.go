package detect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/gate"
)

// The loop rules, in the order LoopDetector.Check applies them.
const (
	// RuleSameDiff: two attempts in a row made the same change.
	RuleSameDiff = "same-diff"
	// RuleSameFix: two attempts in a row made the same fix in another
	// form (layout, comments, names of new locals, the order of operands or
	// of independent statements).
	RuleSameFix = "same-fix"
	// RuleNoChange: two attempts in a row changed nothing.
	RuleNoChange = "no-change"
	// RuleSameError: SameErrorCount attempts in a row failed the gate the
	// same way.
	RuleSameError = "same-error"
	// RuleOscillation: an attempt brought back the change of the one before
	// the previous (A→B→A).
	RuleOscillation = "oscillation"
	// RuleSimilarDiff: two attempts in a row made nearly the same change.
	RuleSimilarDiff = "similar-diff"
)

// Defaults of LoopDetector.
const (
	DefaultSimilarity         = 0.9
	DefaultEmbeddingThreshold = 0.95
	DefaultSameErrorCount     = 3
)

// Attempt is what the loop rules know of one developer attempt.
type Attempt struct {
	// Number identifies the attempt in detections (from 1, task-wide).
	Number int `json:"number"`
	// Label names the attempt in detections when it is not one of the
	// run's own (CheckEarlier's earlier attempts): "attempt 2 of round 1
	// (run …)". Empty: "attempt Number".
	Label string `json:"label,omitempty"`
	// Tier is the tier that made the attempt.
	Tier string `json:"tier"`
	// DiffHash identifies the attempt's change; attempts with the same
	// change have the same hash. When empty, Diff is compared instead.
	DiffHash string `json:"diffHash,omitempty"`
	// Diff is the attempt's change as a unified diff (git diff), bounded by
	// the engine; the similar-diff rule reads it.
	//
	// The rules expect the change the attempt itself made: the work tree's
	// diff from where the attempt started to where it ended. When every
	// attempt starts over from the task's starting point, that is also the
	// diff against it. A diff against the task's start while attempts build
	// on each other would make a one-line fix to a large change "nearly the
	// same change" as the previous attempt's.
	Diff string `json:"diff,omitempty"`
	// Change is the attempt's whole change as a unified diff against a
	// reference that the attempts compared share (the engine gives the
	// change against the task's base), bounded; ChangeCut says it was cut
	// there. The same-fix rule compares it: two attempts that leave the
	// same code up to its form made the same fix, whether the second
	// started over or rewrote the first's work. When empty, Diff is
	// compared instead (attempts that each start from the same tree).
	Change    string `json:"change,omitempty"`
	ChangeCut bool   `json:"changeCut,omitempty"`
	// Files are the paths Change touches, all of them even when it was cut
	// (optional: the diff's own files are read too).
	Files []string `json:"files,omitempty"`
	// Tree, when set, reads the files of the tree the attempt left, for
	// the same-fix rule's comparison of Go syntax trees.
	Tree Tree `json:"-"`
	// Empty: the attempt changed nothing.
	Empty bool `json:"empty,omitempty"`
	// GateError is the gate's failure: its fingerprint (gate.Fingerprint,
	// or any other text without blanks, compared as it is) or its output
	// (compared as NormalizeError gives it). Empty when the gate passed.
	GateError string `json:"gateError,omitempty"`
}

// Passed reports whether the attempt's gate passed.
func (a Attempt) Passed() bool { return a.GateError == "" }

// Detection is a loop found by LoopDetector.Check.
type Detection struct {
	// Rule is one of the Rule constants: the first rule that fired.
	Rule string `json:"rule"`
	// Rules, when more than one rule fired on the attempt, are all of them
	// in the order Check applies them (Rule first); Names reads both.
	Rules []string `json:"rules,omitempty"`
	// Attempts are the numbers of the attempts involved, oldest first; the
	// last is the attempt checked.
	Attempts []int `json:"attempts"`
	// Earlier, for a loop across runs (CheckEarlier), are the attempts of
	// earlier runs involved, by their Labels, oldest first; Attempts holds
	// only the run's own.
	Earlier []string `json:"earlier,omitempty"`
	// Details says what was seen, for humans, rule by rule; for
	// similar-diff, the measure used (lexical similarity or embedding
	// cosine) and its value; for same-fix, what was set aside (and the Go
	// declarations compared as syntax trees), or the embedding cosine.
	Details string `json:"details"`
}

// Names are the rules that fired, for people: "same-error, oscillation".
func (d Detection) Names() string {
	if len(d.Rules) == 0 {
		return d.Rule
	}
	return strings.Join(d.Rules, ", ")
}

// LoopDetector notices a developer going round in circles. Its zero value
// uses the defaults. It is safe for concurrent use when its Embedder is.
type LoopDetector struct {
	// Similarity is the lexical similarity (DiffSimilarity) from which two
	// consecutive changes are nearly the same: 0 means
	// DefaultSimilarity; above 1 disables the lexical measure.
	Similarity float64
	// Embedder, when set, measures the similar-diff rule with embeddings of
	// the changed lines instead; when it fails, the lexical measure is used
	// and the detection says so. The same-fix rule asks it for a second
	// opinion on changes that its deterministic rules find different.
	Embedder Embedder
	// SameFixLexicalCap: the same-fix rule asks the Embedder only about
	// changes whose differing parts are lexically less similar than this
	// (0 means DefaultSameFixLexicalCap).
	SameFixLexicalCap float64
	// EmbeddingThreshold is the cosine similarity of embeddings from which
	// two changes are nearly the same: 0 means DefaultEmbeddingThreshold.
	EmbeddingThreshold float64
	// SameErrorCount is how many attempts in a row must fail the same way
	// for the same-error rule: 0 means DefaultSameErrorCount; at least 2.
	SameErrorCount int
	// AcrossTiers makes the rules look at attempts of every tier. By
	// default they only look at the attempts that the last attempt's tier
	// made in a row, so that a tier taking over is not found looping on its
	// first attempt because of what the previous tier did.
	AcrossTiers bool
}

// Check evaluates the last attempt of history (oldest first) against the
// attempts before it, with the rules in this order: same-diff, same-fix,
// no-change, same-error, oscillation, similar-diff; the detection names
// every rule that fired, in that order.
// An attempt whose gate passed is never part of a loop: when the last one
// passed, nothing is found, and a passed attempt breaks every sequence.
// Empty attempts count for no-change only. Only the same-fix rule (reading
// the attempts' Trees, asking the Embedder) and the similar-diff rule with
// an Embedder use ctx.
func (d LoopDetector) Check(ctx context.Context, history []Attempt) (Detection, bool) {
	if len(history) == 0 || history[len(history)-1].Passed() {
		return Detection{}, false
	}
	w := history
	if !d.AcrossTiers {
		tier := history[len(history)-1].Tier
		i := len(history) - 1
		for i > 0 && history[i-1].Tier == tier {
			i--
		}
		w = history[i:]
	}
	// Trailing failed attempts: a passed one breaks every sequence.
	i := len(w) - 1
	for i > 0 && !w[i-1].Passed() {
		i--
	}
	w = w[i:]
	n := len(w)
	last := w[n-1]
	var prev, before Attempt
	if n >= 2 {
		prev = w[n-2]
	}
	if n >= 3 {
		before = w[n-3]
	}

	var fired []Detection
	if n >= 2 && !last.Empty && !prev.Empty && sameChange(prev, last) {
		fired = append(fired, Detection{Rule: RuleSameDiff, Attempts: nums(prev, last),
			Details: fmt.Sprintf("attempts %d and %d made the same change", prev.Number, last.Number)})
	}
	if n >= 2 && !last.Empty && !prev.Empty && !sameChange(prev, last) {
		if ta, _ := prev.changeText(); ta != "" {
			if tb, _ := last.changeText(); tb != "" {
				if how, ok := d.sameFix(ctx, prev, last); ok {
					fired = append(fired, Detection{Rule: RuleSameFix, Attempts: nums(prev, last),
						Details: fmt.Sprintf("attempts %d and %d made the same fix in another form: %s", prev.Number, last.Number, how)})
				}
			}
		}
	}
	if n >= 2 && last.Empty && prev.Empty {
		fired = append(fired, Detection{Rule: RuleNoChange, Attempts: nums(prev, last),
			Details: fmt.Sprintf("attempts %d and %d changed nothing", prev.Number, last.Number)})
	}
	if k := d.sameErrorCount(); n >= k {
		run := w[n-k:]
		e := NormalizeError(last.GateError)
		same := true
		for _, a := range run[:k-1] {
			if NormalizeError(a.GateError) != e {
				same = false
				break
			}
		}
		if same {
			fired = append(fired, Detection{Rule: RuleSameError, Attempts: nums(run...),
				Details: fmt.Sprintf("attempts %s failed the gate the same way: %s", list(nums(run...)), errorExcerpt(e))})
		}
	}
	if n >= 3 && !last.Empty && !prev.Empty && !before.Empty &&
		sameChange(before, last) && !sameChange(prev, last) {
		fired = append(fired, Detection{Rule: RuleOscillation, Attempts: nums(before, prev, last),
			Details: fmt.Sprintf("attempt %d brought back the change of attempt %d, after attempt %d's", last.Number, before.Number, prev.Number)})
	}
	// Nearly the same change says nothing more when it is the same one.
	if n >= 2 && !last.Empty && !prev.Empty && prev.Diff != "" && last.Diff != "" && !sameChange(prev, last) {
		if how, ok := d.similar(ctx, prev, last); ok {
			fired = append(fired, Detection{Rule: RuleSimilarDiff, Attempts: nums(prev, last),
				Details: fmt.Sprintf("attempts %d and %d made nearly the same change: %s", prev.Number, last.Number, how)})
		}
	}
	return merge(fired)
}

// CheckEarlier evaluates last, an attempt of a run that follows earlier
// runs of the same work, against earlier: the attempts of those runs whose
// change was put in place (a pull request's rounds: the change each one
// pushed), oldest first, each named by its Label. Its rules are Check's
// between two attempts, each firing on its own:
//   - same-diff: last made the change of the latest of earlier again: the
//     same whole change (DiffHash, when last changed anything) or the same
//     change of its own (Diff, by text);
//   - oscillation: it made again the change of an earlier one, not the
//     latest: it brought it back after another was put in place;
//   - similar-diff: its own change (Diff) is nearly the same as the change
//     of one of earlier (the latest such one is named).
//
// An earlier attempt's DiffHash and Diff are its whole change, the one put
// in place. Neither tiers nor gates matter: what was put in place was
// judged already, and making it again is going round in circles whether
// the checks pass now or not. An attempt whose whole change is empty
// (Empty: it undid what its step's attempts did) is compared by its own
// change only: undoing a change pushed before and making it again is
// making it again.
func (d LoopDetector) CheckEarlier(ctx context.Context, last Attempt, earlier []Attempt) (Detection, bool) {
	whole := last.DiffHash != "" && !last.Empty
	if len(earlier) == 0 || (last.Diff == "" && !whole) {
		return Detection{}, false
	}
	latest := earlier[len(earlier)-1]
	for i := len(earlier) - 1; i >= 0; i-- {
		e := earlier[i]
		same := (whole && last.DiffHash == e.DiffHash) || (last.Diff != "" && last.Diff == e.Diff)
		if !same {
			continue
		}
		if i == len(earlier)-1 {
			return Detection{Rule: RuleSameDiff, Attempts: []int{last.Number}, Earlier: []string{e.name()},
				Details: fmt.Sprintf("%s made the same change as %s", last.name(), e.name())}, true
		}
		return Detection{Rule: RuleOscillation, Attempts: []int{last.Number}, Earlier: []string{e.name(), latest.name()},
			Details: fmt.Sprintf("%s brought back the change of %s, after that of %s", last.name(), e.name(), latest.name())}, true
	}
	if last.Diff == "" {
		return Detection{}, false
	}
	for i := len(earlier) - 1; i >= 0; i-- {
		e := earlier[i]
		if e.Diff == "" {
			continue
		}
		if how, ok := d.similar(ctx, e, last); ok {
			return Detection{Rule: RuleSimilarDiff, Attempts: []int{last.Number}, Earlier: []string{e.name()},
				Details: fmt.Sprintf("%s and %s made nearly the same change: %s", last.name(), e.name(), how)}, true
		}
	}
	return Detection{}, false
}

// name is how detections name the attempt: its Label, else "attempt N".
func (a Attempt) name() string {
	if a.Label != "" {
		return a.Label
	}
	return fmt.Sprintf("attempt %d", a.Number)
}

// merge makes one detection of the rules that fired on one attempt, in the
// rules' order: Rule is the first, Rules all of them, Attempts every attempt
// involved and Details each rule's details.
func merge(fired []Detection) (Detection, bool) {
	if len(fired) == 0 {
		return Detection{}, false
	}
	d := fired[0]
	if len(fired) > 1 {
		d.Rules = []string{d.Rule}
	}
	for _, f := range fired[1:] {
		d.Rules = append(d.Rules, f.Rule)
		d.Details += "; " + f.Details
		for _, a := range f.Attempts {
			if !slices.Contains(d.Attempts, a) {
				d.Attempts = append(d.Attempts, a)
			}
		}
	}
	slices.Sort(d.Attempts)
	return d, true
}

func (d LoopDetector) sameErrorCount() int {
	switch {
	case d.SameErrorCount == 0:
		return DefaultSameErrorCount
	case d.SameErrorCount < 2:
		return 2
	}
	return d.SameErrorCount
}

// similar measures the similar-diff rule; how says with what and how much.
func (d LoopDetector) similar(ctx context.Context, a, b Attempt) (how string, ok bool) {
	pa, pb := parseDiff(a.Diff), parseDiff(b.Diff)
	fallback := ""
	if d.Embedder != nil {
		ta, tb := embeddingInput(pa), embeddingInput(pb)
		cos, err := embedCosine(ctx, d.Embedder, ta, tb)
		if err == nil {
			th := d.EmbeddingThreshold
			if th == 0 {
				th = DefaultEmbeddingThreshold
			}
			return fmt.Sprintf("embedding cosine %.3f ≥ %.3f", cos, th), cos >= th
		}
		fallback = fmt.Sprintf("embeddings failed (%s), ", oneLine(err.Error(), 160))
	}
	th := d.Similarity
	if th == 0 {
		th = DefaultSimilarity
	}
	if th > 1 {
		return "", false
	}
	s, renames := diffSimilarity(pa, pb)
	if s < th {
		return "", false
	}
	how = fmt.Sprintf("%slexical similarity %.3f ≥ %.3f", fallback, s, th)
	if len(renames) > 0 {
		var r []string
		for i, x := range renames {
			if i == 3 {
				r = append(r, "…")
				break
			}
			r = append(r, x.from+"→"+x.to)
		}
		how += " (renamed " + strings.Join(r, ", ") + ")"
	}
	return how, true
}

// maxEmbeddingInput bounds the text embedded for one change, in bytes:
// about 4,000 to 8,000 tokens, within embedding models' input limits.
const maxEmbeddingInput = 16 << 10

// embeddingInput is the changed lines of a diff, with their files, bounded.
func embeddingInput(p *parsedDiff) string {
	s := p.changed.String()
	if len(s) > maxEmbeddingInput {
		s = s[:maxEmbeddingInput]
		if i := strings.LastIndexByte(s, '\n'); i > 0 {
			s = s[:i+1]
		}
	}
	return s
}

func embedCosine(ctx context.Context, e Embedder, a, b string) (float64, error) {
	if strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
		return 0, fmt.Errorf("nothing to embed")
	}
	v, err := e.Embed(ctx, []string{a, b})
	if err != nil {
		return 0, err
	}
	if len(v) != 2 {
		return 0, fmt.Errorf("embedder returned %d vectors for 2 texts", len(v))
	}
	return Cosine(v[0], v[1])
}

// sameChange compares two attempts' changes: by hash when both have one,
// else by text.
func sameChange(a, b Attempt) bool {
	if a.DiffHash != "" && b.DiffHash != "" {
		return a.DiffHash == b.DiffHash
	}
	if a.DiffHash != "" || b.DiffHash != "" {
		return changeKey(a) == changeKey(b)
	}
	return a.Diff != "" && a.Diff == b.Diff
}

// changeKey is the hash of an attempt's change, computed from Diff when
// DiffHash is empty (the engine is free to hash otherwise).
func changeKey(a Attempt) string {
	if a.DiffHash != "" {
		return a.DiffHash
	}
	if a.Diff == "" {
		return ""
	}
	s := sha256.Sum256([]byte(a.Diff))
	return hex.EncodeToString(s[:])
}

// NormalizeError returns the form in which two gate failures are compared.
// A text without blanks is a fingerprint (gate.Fingerprint's, or the
// engine's own combination of them) and is kept as it is. Any other text is
// a gate's output: gate.Normalize removes what changes from run to run
// without meaning anything (timestamps, durations, addresses, temporary
// paths, PIDs, ports, seeds, colours, lines that only report success), and
// its lines are sorted, because parallel tests print theirs in any order
// (gate.Fingerprint takes them as a multiset too).
func NormalizeError(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		return s
	}
	lines := strings.Split(strings.TrimSuffix(gate.Normalize(s), "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// errorExcerpt is the start of a normalized error, for details.
func errorExcerpt(e string) string {
	if e == "" {
		return "(no output)"
	}
	return oneLine(e, 200)
}

// oneLine joins the lines of s with " | " and bounds it to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
	if len(s) > n {
		s = excerptCut(s, n) + "…"
	}
	return s
}

// excerptCut cuts s to at most n bytes on a rune boundary.
func excerptCut(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func nums(as ...Attempt) []int {
	out := make([]int, len(as))
	for i, a := range as {
		out[i] = a.Number
	}
	return out
}

// list writes 1, 2 and 3.
func list(n []int) string {
	s := make([]string, len(n))
	for i, v := range n {
		s[i] = fmt.Sprint(v)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
