package detect

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of word in a pattern.
const (
	patExact uint8 = iota
	patPrefix
	patSuffix
	patNumber
	patColon
)

type wordPat struct {
	kind uint8
	s    string
}

// pattern is a compiled phrase: parts of consecutive words, with anything
// (of the same sentence) between two parts.
type pattern struct {
	text     string
	parts    [][]wordPat
	deferral bool
	anchored bool // "^": only at the start of a sentence
}

// patternSet is a list of patterns indexed by their first word, so that a
// token tries only the patterns that can start there: the patterns whose
// first word is exact, or a prefix of at least prefixKey bytes, are in the
// bucket of its first prefixKey bytes; other holds the rest.
type patternSet struct {
	pats []pattern
	// bucket b holds items[start[b]:start[b+1]], pattern indexes in order.
	start [buckets + 1]int32
	items []int32
	other []int
}

const (
	prefixKey = 3
	buckets   = 256
)

// bucketOf hashes the first prefixKey bytes of w (all of it when shorter):
// a word and every word it matches, exactly or as a prefix, share a bucket.
func bucketOf[T string | []byte](w T) int {
	var h uint32
	for i := 0; i < len(w) && i < prefixKey; i++ {
		h = h*31 + uint32(w[i])
	}
	return int(h % buckets)
}

func newPatternSet(list []string, deferral bool) patternSet {
	var ps patternSet
	for _, s := range list {
		if pt, err := compilePattern(s); err == nil {
			pt.deferral = deferral
			ps.pats = append(ps.pats, pt)
		}
	}
	ps.index()
	return ps
}

// index fills the buckets from pats.
func (ps *patternSet) index() {
	var lists [buckets][]int32
	ps.other = ps.other[:0]
	for i, pt := range ps.pats {
		switch w := pt.parts[0][0]; {
		case w.kind == patExact:
			b := bucketOf(w.s)
			lists[b] = append(lists[b], int32(i))
		case w.kind == patPrefix && len(w.s) >= prefixKey:
			b := bucketOf(w.s)
			lists[b] = append(lists[b], int32(i))
		default:
			ps.other = append(ps.other, i)
		}
	}
	ps.items = ps.items[:0]
	for b := range lists {
		ps.start[b] = int32(len(ps.items))
		ps.items = append(ps.items, lists[b]...)
	}
	ps.start[buckets] = int32(len(ps.items))
}

// each calls fn with the index of each pattern that may start at token t,
// until fn returns true.
func (ps *patternSet) each(t token, fold []byte, fn func(k int) bool) bool {
	if t.kind == tokWord || t.kind == tokNumber {
		b := bucketOf(fold[t.start:t.end])
		for _, k := range ps.items[ps.start[b]:ps.start[b+1]] {
			if fn(int(k)) {
				return true
			}
		}
	}
	for _, k := range ps.other {
		if fn(k) {
			return true
		}
	}
	return false
}

// matcher holds the compiled lists of a Premature.
type matcher struct {
	phrases                 patternSet // Phrases then Deferrals
	negations, past, future patternSet
}

func (p Premature) compile() *matcher {
	m := &matcher{
		phrases:   newPatternSet(p.Phrases, false),
		negations: newPatternSet(p.Negations, false),
		past:      newPatternSet(p.Past, false),
		future:    newPatternSet(p.Future, false),
	}
	m.phrases.pats = append(m.phrases.pats, newPatternSet(p.Deferrals, true).pats...)
	m.phrases.index()
	return m
}

// compilePattern reads the syntax described at Premature.
func compilePattern(text string) (pattern, error) {
	p := pattern{text: text}
	body := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(body, "^"); ok {
		p.anchored, body = true, rest
	}
	for _, part := range strings.Split(strings.ReplaceAll(body, "...", "…"), "…") {
		var words []wordPat
		var cur []byte
		flush := func() error {
			if len(cur) == 0 {
				return nil
			}
			w := string(cur)
			cur = cur[:0]
			switch {
			case w == "#":
				words = append(words, wordPat{kind: patNumber})
			case strings.Contains(w, "#"):
				return fmt.Errorf("%q: # stands for a whole number, not part of a word", w)
			case strings.Trim(w, "*") == "":
				return fmt.Errorf("%q: * must be attached to letters", w)
			case strings.Contains(strings.Trim(w, "*"), "*") || strings.HasPrefix(w, "*") && strings.HasSuffix(w, "*"):
				return fmt.Errorf("%q: * goes at the start or the end of a word", w)
			case strings.HasSuffix(w, "*"):
				words = append(words, wordPat{kind: patPrefix, s: strings.TrimSuffix(w, "*")})
			case strings.HasPrefix(w, "*"):
				words = append(words, wordPat{kind: patSuffix, s: strings.TrimPrefix(w, "*")})
			default:
				words = append(words, wordPat{kind: patExact, s: w})
			}
			return nil
		}
		for _, r := range part {
			if f, ok := foldRune(r); ok {
				cur = append(cur, f...)
				continue
			}
			if r == '^' {
				return p, errors.New("^ goes at the start of the pattern only")
			}
			if r == '*' || r == '#' {
				cur = append(cur, byte(r))
				continue
			}
			if err := flush(); err != nil {
				return p, err
			}
			if r == ':' {
				words = append(words, wordPat{kind: patColon})
			}
		}
		if err := flush(); err != nil {
			return p, err
		}
		if len(words) > 0 {
			p.parts = append(p.parts, words)
		}
	}
	if len(p.parts) == 0 {
		return p, errors.New("empty pattern")
	}
	return p, nil
}

func (w wordPat) match(t token, fold []byte) bool {
	switch w.kind {
	case patColon:
		return t.kind == tokColon
	case patNumber:
		return t.kind == tokNumber
	}
	if t.kind != tokWord && t.kind != tokNumber {
		return false
	}
	text := fold[t.start:t.end]
	switch w.kind {
	case patPrefix:
		return len(text) >= len(w.s) && string(text[:len(w.s)]) == w.s
	case patSuffix:
		return len(text) > len(w.s) && string(text[len(text)-len(w.s):]) == w.s
	}
	return string(text) == w.s
}

// partAt reports whether the words of part match the tokens from i.
func partAt(part []wordPat, toks []token, fold []byte, i, to int) bool {
	if i+len(part) > to {
		return false
	}
	for k, w := range part {
		if !w.match(toks[i+k], fold) {
			return false
		}
	}
	return true
}

// at matches p at token i of a sentence of tokens [from, to), and returns
// the token after the match.
func (p *pattern) at(toks []token, fold []byte, from, i, to int) (int, bool) {
	if p.anchored && !atStart(toks, from, i) || !partAt(p.parts[0], toks, fold, i, to) {
		return 0, false
	}
	pos := i + len(p.parts[0])
	for _, part := range p.parts[1:] {
		found := false
		for j := pos; j+len(part) <= to && j <= pos+maxGap; j++ {
			if partAt(part, toks, fold, j, to) {
				pos, found = j+len(part), true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return pos, true
}

// maxGap bounds the words that "…" skips, so that a reply of one endless
// sentence costs time in proportion to its length.
const maxGap = 64

// atStart reports whether token i starts its sentence, numbers and colons
// before it aside ("1. Fixed it", "3: Fixed it").
func atStart(toks []token, from, i int) bool {
	for j := from; j < i; j++ {
		if k := toks[j].kind; k != tokNumber && k != tokColon {
			return false
		}
	}
	return true
}

// words is the number of words of p, gaps not counted.
func (p *pattern) words() int {
	n := 0
	for _, part := range p.parts {
		n += len(part)
	}
	return n
}

// span is a match: tokens [from, to).
type span struct{ from, to int }

// matches returns the matches of ps in tokens [from, to) (at most one per
// pattern and starting token).
func (ps *patternSet) matches(sc *scanner, from, to int) []span {
	var out []span
	for i := from; i < to; i++ {
		ps.each(sc.toks[i], sc.fold, func(k int) bool {
			if end, ok := ps.pats[k].at(sc.toks, sc.fold, from, i, to); ok {
				out = append(out, span{i, end})
			}
			return false
		})
	}
	return out
}

// any reports whether a pattern of ps matches in tokens [from, to).
func (ps *patternSet) any(sc *scanner, from, to int) bool {
	for i := from; i < to; i++ {
		if ps.each(sc.toks[i], sc.fold, func(k int) bool {
			_, ok := ps.pats[k].at(sc.toks, sc.fold, from, i, to)
			return ok
		}) {
			return true
		}
	}
	return false
}

// first returns the first phrase of sentence s that is neither negated nor
// narration, and whether it is all the sentence holds (a heading).
func (m *matcher) first(sc *scanner, s sentence) (string, bool, bool) {
	var (
		negs     []span
		negsDone bool
		past     = -1 // -1: not computed; 0 or 1
		found    = -1
		heading  bool
	)
	for i := s.from; i < s.to && found < 0; i++ {
		t := sc.toks[i]
		if t.kind != tokWord && t.kind != tokNumber {
			continue
		}
		m.phrases.each(t, sc.fold, func(k int) bool {
			p := &m.phrases.pats[k]
			end, ok := p.at(sc.toks, sc.fold, s.from, i, s.to)
			if !ok {
				return false
			}
			if !negsDone {
				negs, negsDone = m.negations.matches(sc, s.from, s.to), true
			}
			if negated(sc, negs, i, end) {
				return false
			}
			if p.deferral {
				if past < 0 {
					past = 0
					if m.past.any(sc, s.from, s.to) && !m.future.any(sc, s.from, s.to) {
						past = 1
					}
				}
				if past == 1 {
					return false
				}
			}
			found, heading = k, end-i == p.words() && headingOnly(sc, s, i, end)
			return true
		})
	}
	if found < 0 {
		return "", false, false
	}
	return m.phrases.pats[found].text, heading, true
}

// negated reports whether a negation overlaps the match [i, end) or shares a
// clause with it.
func negated(sc *scanner, negs []span, i, end int) bool {
	lo, hi := sc.toks[i].clause, sc.toks[end-1].clause
	for _, n := range negs {
		if n.from < end && i < n.to {
			return true
		}
		if sc.toks[n.from].clause <= hi && lo <= sc.toks[n.to-1].clause {
			return true
		}
	}
	return false
}

// headingOnly reports whether the sentence holds nothing but the match,
// colons and numbers: "## Next steps", "**Remaining tasks:**", "3. TODO".
func headingOnly(sc *scanner, s sentence, i, end int) bool {
	for j := s.from; j < s.to; j++ {
		if j >= i && j < end {
			continue
		}
		if k := sc.toks[j].kind; k != tokColon && k != tokNumber {
			return false
		}
	}
	return true
}

// negatesOpening reports whether a negation opens sentence s: one in its
// first clause ("None.", "Nothing left, all done.", "Aucune.").
func (m *matcher) negatesOpening(sc *scanner, s sentence) bool {
	first := sc.toks[s.from].clause
	end := s.from
	for end < s.to && sc.toks[end].clause == first {
		end++
	}
	return m.negations.any(sc, s.from, end)
}
