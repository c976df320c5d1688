package detect

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Tree reads the files of the tree an attempt left: the same-fix rule
// compares the Go files that two attempts change as syntax trees.
type Tree interface {
	// ReadFiles returns the contents of paths in the tree; a path that is
	// not in the tree (deleted) is absent from the map.
	ReadFiles(ctx context.Context, paths []string) (map[string][]byte, error)
}

// Bounds of the Go rule of same-fix: more files, or larger ones, are left
// to the normalised diffs.
const (
	maxGoFiles    = 32
	maxGoFileSize = 1 << 20
)

// DefaultSameFixLexicalCap is the lexical similarity (DiffSimilarity) of
// the parts of two changes that the deterministic rules found different,
// from which embeddings are not asked for a second opinion: changes that
// close are a small edit of each other, and a small edit the normalisations
// did not remove is a real one (a constant, an operator, a condition), which
// embeddings rate as "the same" as readily as a rewording. See BENCHMARKS.md.
const DefaultSameFixLexicalCap = 0.4

// minSecondOpinionTokens is the fewest tokens the parts of each change that
// stay different must have for embeddings to be asked: a few tokens that no
// normalisation made equal (operands swapped around a "-", a guard after
// what it guards, strings joined in another order) are a real difference,
// which embeddings rate as the same. See BENCHMARKS.md.
const minSecondOpinionTokens = 16

// changeText is what the same-fix rule compares of an attempt: its whole
// change (Change), else its own diff.
func (a Attempt) changeText() (string, bool) {
	if a.Change != "" {
		return a.Change, a.ChangeCut
	}
	return a.Diff, false
}

// sameFixVerdict is how the deterministic rules compared two changes.
type sameFixVerdict struct {
	same bool
	// differ are the files found different (or that could not be
	// compared).
	differ []string
	// goDecls are the Go declarations found equal only as syntax trees;
	// goFiles their files.
	goDecls, goFiles []string
	// renamed: new local names were set aside in the normalised diffs.
	renamed bool
}

// compareFixes compares the changes of a and b with the normalised diffs and,
// for Go files they do not find equal, with the Go syntax trees of both
// attempts' trees.
func compareFixes(ctx context.Context, a, b Attempt) (sameFixVerdict, *normDiff, *normDiff) {
	ta, cutA := a.changeText()
	tb, cutB := b.changeText()
	na, nb := normaliseDiff(ta, cutA), normaliseDiff(tb, cutB)
	var v sameFixVerdict
	seen := map[string]bool{}
	var paths []string
	for _, list := range [][]string{na.order, nb.order, a.Files, b.Files} {
		for _, p := range list {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	// known: the file's whole normalised change, "" when the diff leaves
	// it as it was; false when the diff was cut before its end.
	keyOf := func(nd *normDiff, p string) (string, bool, bool) {
		f := nd.files[p]
		if f == nil {
			return "", false, !nd.cut
		}
		return f.key(), f.renamed > 0, f.complete
	}
	var goPaths []string
	for _, p := range paths {
		ka, ra, okA := keyOf(na, p)
		kb, rb, okB := keyOf(nb, p)
		if okA && okB && ka == kb {
			v.renamed = v.renamed || ra || rb
			continue
		}
		if path.Ext(p) == ".go" && a.Tree != nil && b.Tree != nil {
			goPaths = append(goPaths, p)
			continue
		}
		v.differ = append(v.differ, p)
	}
	if len(v.differ) == 0 && len(goPaths) > maxGoFiles {
		v.differ = goPaths
		return v, na, nb
	}
	if len(v.differ) == 0 && len(goPaths) > 0 {
		fa, errA := a.Tree.ReadFiles(ctx, goPaths)
		fb, errB := b.Tree.ReadFiles(ctx, goPaths)
		for _, p := range goPaths {
			ca, cb := fa[p], fb[p]
			if errA != nil || errB != nil || len(ca) > maxGoFileSize || len(cb) > maxGoFileSize {
				v.differ = append(v.differ, p)
				continue
			}
			same, touched, ok := goCompare(p, ca, cb)
			if !ok || !same {
				v.differ = append(v.differ, p)
				continue
			}
			if len(touched) > 0 {
				v.goFiles = append(v.goFiles, p)
				v.goDecls = append(v.goDecls, touched...)
			}
		}
	}
	v.same = len(v.differ) == 0
	return v, na, nb
}

// sameFix measures the same-fix rule: how says what made the two changes
// the same fix.
func (d LoopDetector) sameFix(ctx context.Context, a, b Attempt) (how string, ok bool) {
	v, na, nb := compareFixes(ctx, a, b)
	if v.same {
		var what []string
		what = append(what, "layout and comments")
		if v.renamed {
			what = append(what, "new local names")
		}
		how = "their changes are equal once " + strings.Join(what, " and ") + " are set aside and operands ordered"
		if len(v.goDecls) > 0 {
			decls := v.goDecls
			if len(decls) > 4 {
				decls = append(slices.Clip(decls[:4]), "…")
			}
			how += fmt.Sprintf("; in %s, %s the same syntax tree once locals are renamed and operands and independent statements ordered (%s)",
				strings.Join(v.goFiles, ", "), isAre(len(v.goDecls)), strings.Join(decls, ", "))
		}
		return how, true
	}
	if d.Embedder == nil {
		return "", false
	}
	// A second opinion on the files found different: embeddings, when those
	// parts are not a small edit of each other.
	pa, pb := sectionDiff(na, v.differ), sectionDiff(nb, v.differ)
	lex, _ := diffSimilarity(pa, pb)
	limit := d.SameFixLexicalCap
	if limit == 0 {
		limit = DefaultSameFixLexicalCap
	}
	if lex >= limit || pa.tokens < minSecondOpinionTokens || pb.tokens < minSecondOpinionTokens {
		return "", false
	}
	cos, err := embedCosine(ctx, d.Embedder, embeddingInput(pa), embeddingInput(pb))
	if err != nil {
		return "", false
	}
	th := d.EmbeddingThreshold
	if th == 0 {
		th = DefaultEmbeddingThreshold
	}
	if cos < th {
		return "", false
	}
	return fmt.Sprintf("their changes of %s differ in form (lexical similarity %.3f) but their embedding cosine is %.3f ≥ %.3f",
		strings.Join(v.differ, ", "), lex, cos, th), true
}

func isAre(n int) string {
	if n == 1 {
		return "the declaration it changes is"
	}
	return "the declarations they change are"
}

// sectionDiff is the part of a normalised diff's text about paths, as a
// diff for DiffSimilarity and embeddings.
func sectionDiff(nd *normDiff, paths []string) *parsedDiff {
	var b strings.Builder
	for _, p := range paths {
		f := nd.files[p]
		if f == nil {
			continue
		}
		// "@@ @@" has no counts: the hunk runs to the next file.
		b.WriteString("diff --git a/" + p + " b/" + p + "\n@@ @@\n")
		b.WriteString(f.raw.String())
	}
	return parseDiff(b.String())
}
