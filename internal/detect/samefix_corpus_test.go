package detect

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The corpus of testdata/samefix: pairs of attempts at one fix, each a file
// with a label ("same": the second repeats the first in another form;
// "different": another fix), a note, and the files of the base and of each
// attempt's tree:
//
//	label: same
//	note: what the pair is
//	-- base/path --
//	...
//	-- a/path --
//	...
//	-- b/path --
//	...
type corpusPair struct {
	name, lang, note string
	same             bool
	base, a, b       map[string]string
}

func loadCorpus(tb testing.TB) []corpusPair {
	tb.Helper()
	names, err := filepath.Glob("testdata/samefix/*.txt")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no corpus: %v", err)
	}
	var out []corpusPair
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		p := corpusPair{name: strings.TrimSuffix(filepath.Base(n), ".txt"),
			base: map[string]string{}, a: map[string]string{}, b: map[string]string{}}
		var cur map[string]string
		var file string
		for line := range strings.Lines(string(data)) {
			if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --\n") {
				side, f, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --\n"), "/")
				cur, file = map[string]map[string]string{"base": p.base, "a": p.a, "b": p.b}[side], f
				if cur == nil {
					tb.Fatalf("%s: section %q", n, line)
				}
				cur[file] = ""
				switch path.Ext(f) {
				case ".go":
					p.lang = "Go"
				case ".py":
					p.lang = "Python"
				case ".js":
					p.lang = "JavaScript"
				}
				continue
			}
			if cur == nil {
				k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
				switch k {
				case "label":
					p.same = v == "same"
				case "note":
					p.note = v
				}
				continue
			}
			cur[file] += line
		}
		out = append(out, p)
	}
	return out
}

// attempts are the two attempts of a pair, with their trees when withTrees.
func (p corpusPair) attempts(withTrees bool) (Attempt, Attempt) {
	return attemptOf(1, p.base, p.a, withTrees), attemptOf(2, p.base, p.b, withTrees)
}

// score counts a rule's verdicts against the labels.
type score struct{ tp, fp, fn, tn int }

func (s *score) add(label, verdict bool) {
	switch {
	case label && verdict:
		s.tp++
	case label:
		s.fn++
	case verdict:
		s.fp++
	default:
		s.tn++
	}
}

func (s score) String() string {
	p, r := "–", "–"
	if s.tp+s.fp > 0 {
		p = fmt.Sprintf("%.2f", float64(s.tp)/float64(s.tp+s.fp))
	}
	if s.tp+s.fn > 0 {
		r = fmt.Sprintf("%.2f", float64(s.tp)/float64(s.tp+s.fn))
	}
	return fmt.Sprintf("%s / %s", p, r)
}

// corpusRule is one way of telling a repeat from another fix.
type corpusRule struct {
	name string
	same func(p corpusPair) bool
}

var corpusLangs = []string{"Go", "Python", "JavaScript"}

func corpusRules() []corpusRule {
	rules := []corpusRule{{"same-diff (exact text)", func(p corpusPair) bool {
		a, b := p.attempts(false)
		return sameChange(a, b)
	}}}
	for _, th := range []float64{0.7, 0.8, 0.9, 0.95} {
		rules = append(rules, corpusRule{fmt.Sprintf("similar-diff, lexical ≥ %.2f", th), func(p corpusPair) bool {
			a, b := p.attempts(false)
			return DiffSimilarity(a.Diff, b.Diff) >= th
		}})
	}
	rules = append(rules,
		corpusRule{"same-fix, normalised diffs only", func(p corpusPair) bool {
			a, b := p.attempts(false)
			v, _, _ := compareFixes(context.Background(), a, b)
			return v.same
		}},
		corpusRule{"same-fix, normalised diffs + Go syntax trees (default)", func(p corpusPair) bool {
			a, b := p.attempts(true)
			v, _, _ := compareFixes(context.Background(), a, b)
			return v.same
		}})
	return rules
}

// TestSameFixCorpus measures the rules on the corpus (go test -run
// TestSameFixCorpus -v prints the table of BENCHMARKS.md) and holds the
// same-fix rule to what was measured: no different fix taken for a repeat.
func TestSameFixCorpus(t *testing.T) {
	pairs := loadCorpus(t)
	if len(pairs) < 40 {
		t.Fatalf("%d pairs, want at least 40", len(pairs))
	}
	count := map[string][2]int{}
	for _, p := range pairs {
		c := count[p.lang]
		if p.same {
			c[0]++
		} else {
			c[1]++
		}
		count[p.lang] = c
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d pairs:", len(pairs))
	for _, l := range corpusLangs {
		fmt.Fprintf(&b, " %s %d repeats + %d different;", l, count[l][0], count[l][1])
	}
	b.WriteString("\n\n| rule | Go P / R | Python P / R | JavaScript P / R | all P / R | false repeats | repeats missed |\n|---|---|---|---|---|---|---|\n")
	var last score
	var lastMissed []string
	for _, r := range corpusRules() {
		per := map[string]*score{}
		all := &score{}
		var fps, fns []string
		for _, p := range pairs {
			v := r.same(p)
			if per[p.lang] == nil {
				per[p.lang] = &score{}
			}
			per[p.lang].add(p.same, v)
			all.add(p.same, v)
			if v && !p.same {
				fps = append(fps, p.name)
			}
			if !v && p.same {
				fns = append(fns, p.name)
			}
		}
		fmt.Fprintf(&b, "| %s |", r.name)
		for _, l := range corpusLangs {
			fmt.Fprintf(&b, " %s |", per[l])
		}
		fmt.Fprintf(&b, " %s | %d | %d |\n", all, all.fp, all.fn)
		if len(fps) > 0 {
			fmt.Fprintf(&b, "|   false repeats: %s |\n", strings.Join(fps, ", "))
		}
		last, lastMissed = *all, fns
	}
	fmt.Fprintf(&b, "\nmissed by the default rule: %s\n", strings.Join(lastMissed, ", "))

	// The second opinion: the lexical similarity of what the deterministic
	// rules left different, repeats against different fixes.
	var sameLex, diffLex []string
	for _, p := range pairs {
		a, bb := p.attempts(true)
		v, na, nb := compareFixes(context.Background(), a, bb)
		if v.same {
			continue
		}
		pa, pb := sectionDiff(na, v.differ), sectionDiff(nb, v.differ)
		lex, _ := diffSimilarity(pa, pb)
		s := fmt.Sprintf("%.2f %s (%d/%d tokens)", lex, p.name, pa.tokens, pb.tokens)
		if p.same {
			sameLex = append(sameLex, s)
		} else {
			diffLex = append(diffLex, s)
		}
	}
	slices.Sort(sameLex)
	slices.Sort(diffLex)
	fmt.Fprintf(&b, "\nlexical similarity of what stays different, repeats missed: %s\n", strings.Join(sameLex, "; "))
	fmt.Fprintf(&b, "lexical similarity of what stays different, different fixes: %s\n", strings.Join(diffLex, "; "))
	t.Log(b.String())

	if last.fp > 0 {
		t.Errorf("same-fix took %d different fixes for repeats", last.fp)
	}
	if last.tp < 18 {
		t.Errorf("same-fix found %d repeats, fewer than the 18 measured", last.tp)
	}
}

// BenchmarkSameFix measures one check of two attempts with the same-fix
// rule: a Go pair that needs the syntax trees, a Python pair that the
// normalised diffs settle.
func BenchmarkSameFix(b *testing.B) {
	pairs := loadCorpus(b)
	for _, name := range []string{"go-window-clamp-renamed", "py-users-renamed", "js-api-prettier"} {
		i := slices.IndexFunc(pairs, func(p corpusPair) bool { return p.name == name })
		if i < 0 {
			b.Fatalf("no pair %s", name)
		}
		x, y := pairs[i].attempts(true)
		h := []Attempt{x, y}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				LoopDetector{Similarity: 1.01}.Check(context.Background(), h)
			}
		})
	}
}

// BenchmarkSameFix1MiB is the same-fix rule alone on two diffs of about
// 1 MiB (400 hunks of 30 changed lines each) that differ.
func BenchmarkSameFix1MiB(b *testing.B) {
	x := Attempt{Number: 1, Tier: "t", Diff: bigDiff(1), GateError: "e1"}
	y := Attempt{Number: 2, Tier: "t", Diff: bigDiff(2), GateError: "e2"}
	b.SetBytes(int64(len(x.Diff) + len(y.Diff)))
	for b.Loop() {
		if v, _, _ := compareFixes(context.Background(), x, y); v.same {
			b.Fatal("the same fix")
		}
	}
}
