package detect

import (
	"context"
	"strings"
	"testing"
)

const goBase = `package calc

import "strings"

// Next returns the successor of x.
func Next(x int) int {
	return x
}

// Clean trims a name.
func Clean(name string) string {
	return name
}

// Sum adds the values.
func Sum(xs []int) int {
	return 0
}

type Box struct{ items []string }

// Find finds s in the box.
func (b *Box) Find(s string) int {
	return -1
}

func use() { _ = strings.TrimSpace }
`

const pyBase = `import json


def foo(x):
    return x


def total(xs):
    return 0


def load(path):
    with open(path) as fh:
        rows = json.load(fh)
    return rows
`

const jsBase = `'use strict';

function next(x) {
  return x;
}

function sum(xs) {
  return 0;
}

module.exports = { next, sum };
`

// replace returns base with old replaced by new once (it must be there).
func replace(t *testing.T, base, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("%q is not in the base", old)
	}
	return strings.Replace(base, old, new, 1)
}

type fixCase struct {
	name     string
	path     string
	base     string
	a, b     [2]string // old, new replaced in base by each attempt
	same     bool
	goOnly   bool // same only with the Go syntax trees
	contains string
}

func TestSameFix(t *testing.T) {
	cases := []fixCase{
		// The seed's example, in three languages.
		{name: "seed x + 1 / 1 + x, Python", path: "m.py", base: pyBase,
			a: [2]string{"    return x\n\n\ndef total", "    return x + 1\n\n\ndef total"},
			b: [2]string{"    return x\n\n\ndef total", "    return 1 + x\n\n\ndef total"}, same: true},
		{name: "seed x + 1 / 1 + x, JavaScript", path: "m.js", base: jsBase,
			a: [2]string{"  return x;", "  return x + 1;"}, b: [2]string{"  return x;", "  return 1 + x"}, same: true},
		{name: "seed x + 1 / 1 + x, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn x\n", "\treturn x + 1\n"}, b: [2]string{"\treturn x\n", "\treturn 1 + x\n"}, same: true},
		{name: "seed with a changed constant", path: "m.py", base: pyBase,
			a: [2]string{"    return x\n\n\ndef total", "    return x + 1\n\n\ndef total"},
			b: [2]string{"    return x\n\n\ndef total", "    return x + 2\n\n\ndef total"}},

		// Renamed locals.
		{name: "renamed locals, Python", path: "m.py", base: pyBase,
			a:    [2]string{"    return 0", "    acc = 0\n    for v in xs:\n        acc += v\n    return acc"},
			b:    [2]string{"    return 0", "    result = 0\n    for item in xs:\n        result += item\n    return result"},
			same: true, contains: "new local names"},
		{name: "renamed locals, JavaScript", path: "m.js", base: jsBase,
			a:    [2]string{"  return 0;", "  let acc = 0;\n  for (const v of xs) {\n    acc += v;\n  }\n  return acc;"},
			b:    [2]string{"  return 0;", "  let total = 0;\n  for (const x of xs) {\n    total += x;\n  }\n  return total;"},
			same: true},
		{name: "renamed locals, Go", path: "calc.go", base: goBase,
			a:    [2]string{"\treturn 0\n", "\tacc := 0\n\tfor _, v := range xs {\n\t\tacc += v\n\t}\n\treturn acc\n"},
			b:    [2]string{"\treturn 0\n", "\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal = total + x\n\t}\n\treturn total\n"},
			same: true, goOnly: true, contains: "func Sum"},
		{name: "renamed parameter, Go", path: "calc.go", base: goBase,
			a:    [2]string{"func Next(x int) int {\n\treturn x\n", "func Next(x int) int {\n\treturn x + 1\n"},
			b:    [2]string{"func Next(x int) int {\n\treturn x\n", "func Next(n int) int {\n\treturn n + 1\n"},
			same: true, goOnly: true},
		{name: "another function called is no rename", path: "m.py", base: pyBase,
			a: [2]string{"    return 0", "    best = min(xs)\n    return best"},
			b: [2]string{"    return 0", "    best = max(xs)\n    return best"}},
		{name: "another function called is no rename, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn name\n", "\tname = strings.TrimSpace(name)\n\treturn name\n"},
			b: [2]string{"\treturn name\n", "\tname = strings.TrimRight(name, \" \")\n\treturn name\n"}},

		// Reordered statements.
		{name: "independent statements reordered, Go", path: "calc.go", base: goBase,
			a:    [2]string{"\treturn 0\n", "\tn := len(xs)\n\tfirst := 0\n\tif n > 0 {\n\t\tfirst = xs[0]\n\t}\n\treturn first + n\n"},
			b:    [2]string{"\treturn 0\n", "\tfirst := 0\n\tn := len(xs)\n\tif n > 0 {\n\t\tfirst = xs[0]\n\t}\n\treturn n + first\n"},
			same: true, goOnly: true},
		{name: "dependent statements reordered, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn 0\n", "\ts := 0\n\ts = s * 2\n\ts = s + 1\n\treturn s\n"},
			b: [2]string{"\treturn 0\n", "\ts := 0\n\ts = s + 1\n\ts = s * 2\n\treturn s\n"}},
		{name: "calls are not reordered, Go", path: "calc.go", base: goBase,
			a: [2]string{"func use() { _ = strings.TrimSpace }", "func use() {\n\tprintln(\"a\")\n\tprintln(\"b\")\n}"},
			b: [2]string{"func use() { _ = strings.TrimSpace }", "func use() {\n\tprintln(\"b\")\n\tprintln(\"a\")\n}"}},

		// Layout and comments.
		{name: "comments and layout, Go", path: "calc.go", base: goBase,
			a:    [2]string{"\treturn -1\n", "\tfor i, it := range b.items {\n\t\tif it == s {\n\t\t\treturn i\n\t\t}\n\t}\n\treturn -1\n"},
			b:    [2]string{"\treturn -1\n", "\t// look for it\n\tfor i, it := range b.items {\n\t\tif (s == it) { // found\n\t\t\treturn i\n\t\t}\n\t}\n\n\treturn -1 /* not there */\n"},
			same: true, goOnly: true}, // the parentheses: only the syntax trees drop them
		{name: "comments and layout, Python", path: "m.py", base: pyBase,
			a:    [2]string{"    return rows", "    return [r for r in rows if r.get('active', True)]"},
			b:    [2]string{"    return rows", "    # keep the active ones\n    return [\n        r\n        for r in rows\n        if r.get(\"active\", True)\n    ]"},
			same: true},
		{name: "indentation is syntax in Python", path: "m.py", base: pyBase,
			a: [2]string{"    with open(path) as fh:\n        rows = json.load(fh)\n    return rows", "    with open(path) as fh:\n        rows = json.load(fh)\n        rows.sort()\n    return rows"},
			b: [2]string{"    with open(path) as fh:\n        rows = json.load(fh)\n    return rows", "    with open(path) as fh:\n        rows = json.load(fh)\n    rows.sort()\n    return rows"}},

		// Real differences.
		{name: "an added condition, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn -1\n", "\tfor i, it := range b.items {\n\t\tif it == s {\n\t\t\treturn i\n\t\t}\n\t}\n\treturn -1\n"},
			b: [2]string{"\treturn -1\n", "\tfor i, it := range b.items {\n\t\tif it == s && i > 0 {\n\t\t\treturn i\n\t\t}\n\t}\n\treturn -1\n"}},
		{name: "an added condition, JavaScript", path: "m.js", base: jsBase,
			a: [2]string{"  return x;", "  return x + 1;"}, b: [2]string{"  return x;", "  if (x < 0) return 0;\n  return x + 1;"}},
		{name: "a changed comparison, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn 0\n", "\tt := 0\n\tfor i := 0; i < len(xs); i++ {\n\t\tt += xs[i]\n\t}\n\treturn t\n"},
			b: [2]string{"\treturn 0\n", "\tt := 0\n\tfor i := 0; i <= len(xs)-1; i++ {\n\t\tt += xs[i]\n\t}\n\treturn t\n"}},
		{name: "a guard reordered is another fix, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn -1\n", "\tif b != nil && len(b.items) > 0 {\n\t\treturn 0\n\t}\n\treturn -1\n"},
			b: [2]string{"\treturn -1\n", "\tif len(b.items) > 0 && b != nil {\n\t\treturn 0\n\t}\n\treturn -1\n"}},
		{name: "a concatenation reordered, Go", path: "calc.go", base: goBase,
			a: [2]string{"\treturn name\n", "\treturn name + \"!\"\n"}, b: [2]string{"\treturn name\n", "\treturn \"!\" + name\n"}},
		{name: "mirrored comparison and ++, Go", path: "calc.go", base: goBase,
			a:    [2]string{"\treturn 0\n", "\tn := 0\n\tfor _, x := range xs {\n\t\tif x > 0 {\n\t\t\tn++\n\t\t}\n\t}\n\treturn n\n"},
			b:    [2]string{"\treturn 0\n", "\tvar count = 0\n\tfor _, v := range xs {\n\t\tif 0 < v {\n\t\t\tcount += 1\n\t\t}\n\t}\n\treturn count\n"},
			same: true, goOnly: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := map[string]string{c.path: c.base}
			a := attemptOf(1, base, map[string]string{c.path: replace(t, c.base, c.a[0], c.a[1])}, true)
			b := attemptOf(2, base, map[string]string{c.path: replace(t, c.base, c.b[0], c.b[1])}, true)
			det, ok := LoopDetector{Similarity: 1.01}.Check(context.Background(), []Attempt{a, b})
			got := ok && det.Rule == RuleSameFix
			if got != c.same {
				t.Fatalf("same fix %v, want %v (%+v)\n%s\n%s", got, c.same, det, a.Change, b.Change)
			}
			if c.same && !strings.Contains(det.Details, c.contains) {
				t.Errorf("details %q, want %q", det.Details, c.contains)
			}
			// Without the trees, only the normalised diffs compare.
			a.Tree, b.Tree = nil, nil
			_, ok = LoopDetector{Similarity: 1.01}.Check(context.Background(), []Attempt{a, b})
			if want := c.same && !c.goOnly; ok != want {
				t.Errorf("without the trees: same fix %v, want %v", ok, want)
			}
		})
	}
}

func TestCommute(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"return x + 1", "return 1 + x"},
		{"return 1 + x", "return 1 + x"},
		{"y = a.b * c", "y = a.b * c"},
		{"y = c * a.b", "y = a.b * c"},
		{"s = String(d.m() + 1)", "s = String(1 + d.m())"},
		{"return x + f(y)", "return x + f(y)"},         // f(y) + x: no number, perhaps strings
		{"return a - x + 1", "return a - x + 1"},       // not an operand of a "+" alone
		{"return x + 1 * 2", "return x + 1 * 2"},       // "*" binds tighter
		{"if b == a {", "if a == b {"},                 // around ==
		{"return n * 2 / 3", "return n * 2 / 3"},       // "/" binds as tightly
		{"return name + \"!\"", "return name + \"!\""}, // a concatenation
	} {
		var st lineState
		got := strings.Join(commute(st.tokens(c.in, langC)), " ")
		var st2 lineState
		want := strings.Join(st2.tokens(c.want, langC), " ")
		if got != want {
			t.Errorf("commute(%q) = %q, want %q", c.in, got, want)
		}
	}
}

// The second opinion: embeddings are asked about changes that stay
// different only when what differs is a rewrite (lexically apart, and not
// a few tokens).
func TestSameFixEmbeddings(t *testing.T) {
	pairs := loadCorpus(t)
	pair := func(name string) []Attempt {
		for _, p := range pairs {
			if p.name == name {
				a, b := p.attempts(true)
				return []Attempt{a, b}
			}
		}
		t.Fatalf("no pair %s", name)
		return nil
	}
	near := &fakeEmbedder{vec: func(string) []float64 { return []float64{1, 0.1} }}
	// A loop and reduce: the same sum, rewritten.
	det, ok := LoopDetector{Similarity: 1.01, Embedder: near}.Check(context.Background(), pair("js-total-reduce"))
	if !ok || det.Rule != RuleSameFix || !strings.Contains(det.Details, "embedding cosine 1.000 ≥ 0.950") {
		t.Errorf("rewritten sum: %+v, %v", det, ok)
	}
	if _, ok := (LoopDetector{Similarity: 1.01}).Check(context.Background(), pair("js-total-reduce")); ok {
		t.Error("rewritten sum found without embeddings")
	}
	far := &fakeEmbedder{vec: func(s string) []float64 {
		if strings.Contains(s, "reduce") {
			return []float64{0, 1}
		}
		return []float64{1, 0}
	}}
	if _, ok := (LoopDetector{Similarity: 1.01, Embedder: far}).Check(context.Background(), pair("js-total-reduce")); ok {
		t.Error("found with embeddings far apart")
	}
	// Small real edits are not asked about: strings joined in another
	// order, a changed constant, a guard after what it guards.
	// (similar-diff asks the embedder once about each pair, same-fix never.)
	calls := &fakeEmbedder{vec: func(string) []float64 { return []float64{1} }}
	names := []string{"go-concat-vars", "py-seed-x-plus-2", "go-guard-order", "go-mean-loop-bound"}
	for _, name := range names {
		if det, ok := (LoopDetector{Similarity: 1.01, Embedder: calls}).Check(context.Background(), pair(name)); ok && strings.Contains(det.Names(), RuleSameFix) {
			t.Errorf("%s: found %+v", name, det)
		}
	}
	if calls.calls != len(names) {
		t.Errorf("embedder asked %d times, want %d (similar-diff's)", calls.calls, len(names))
	}
}
