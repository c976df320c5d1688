package detect

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DiffSimilarity returns how alike two diffs are, from 0 (nothing in common)
// to 1 (the same change up to layout and renamed identifiers). It is the
// lexical measure of the similar-diff loop rule.
//
// Only what the diffs change counts: the added and removed lines of each
// file, without hunk headers, line numbers, context lines or index lines,
// so that the same edit made at another place of a file, or against a file
// that moved a few lines, compares equal. Each file's removed lines and its
// added lines are two token streams (identifiers, numbers, string literals,
// operators); blanks are not tokens, nor are commas and semicolons, which
// formatters add and remove (trailing commas, optional semicolons), and
// string quotes are unified, so re-indenting, re-wrapping or re-formatting
// an edit does not change its streams.
//
// The measure is the Dice coefficient of the two diffs' multisets of token
// 3-shingles (three consecutive tokens of a stream, tagged with the file and
// the side), 2·|A∩B| / (|A|+|B|). Shingles rather than single tokens or whole
// lines because:
//   - whole lines make one renamed variable or one re-wrapped statement a
//     different line, and a reformatting-only variation would score low;
//   - single tokens ignore order: two different fixes built from the same
//     words (i < n-1 against i-1 < n) would score high;
//   - three tokens see a one-token change in each of the three shingles that
//     hold it, so a small but real change weighs more than its share of
//     tokens: changing "if i < len(xs) {" into "if i <= len(xs) {" rather
//     than into "if i < len(xs)-1 {" scores 0.62, and the same in a whole
//     for-loop header 0.83, below the 0.9 of the rule.
//
// Any measure of overlap rates a one-token difference within a large change
// near 1: the rule is meant for the change each attempt made itself (see
// Attempt.Diff), where a retry that only tweaks the previous attempt's work
// is a small diff of its own.
//
// Renames are recognised before measuring: an identifier found in only one
// diff, used at least twice, is paired with one found only in the other
// used as often (within a factor of two) when at least half of their uses
// sit between the same tokens; the pairs are applied to the first diff. A
// variable or function that an attempt names differently but writes the
// same way therefore compares equal, while a one-off difference of name
// ("return a" against "return b") stays a difference: it is as likely a
// different fix as a rename.
//
// A text that is not a unified diff is taken whole as one stream.
func DiffSimilarity(a, b string) float64 {
	s, _ := diffSimilarity(parseDiff(a), parseDiff(b))
	return s
}

// shingleSize is the number of tokens in a shingle.
const shingleSize = 3

// maxDiffTokens bounds the tokens read from one diff, which bounds the time
// and memory of a comparison (the engine bounds the diff text too).
const maxDiffTokens = 50000

// maxRenameCandidates bounds the identifiers considered for renames on each
// side: two diffs with more identifiers of their own are not alike anyway.
const maxRenameCandidates = 200

// parsedDiff is what a diff changes: per file, in order of appearance, the
// tokens of its removed and added lines, and those lines' text.
type parsedDiff struct {
	streams []stream
	// changed is the text of the changed lines, per file: the input of an
	// embedding model.
	changed strings.Builder
	tokens  int
}

// stream is the tokens of one side (removed or added lines) of one file.
type stream struct {
	tag  string // side and file: "-path" or "+path"
	toks []string
}

// parseDiff reads a unified diff (git diff, diff -u); a text without any
// hunk is one stream.
func parseDiff(text string) *parsedDiff {
	d := &parsedDiff{}
	var (
		path, oldPath string
		del, add      *stream
		inHunk        bool
		oldN, newN    int // lines left in the hunk; -1: unknown
		sawHunk       bool
		lastChangedAt string
	)
	flush := func() {
		for _, s := range []*stream{del, add} {
			if s != nil && len(s.toks) > 0 {
				d.streams = append(d.streams, *s)
			}
		}
		del, add = nil, nil
	}
	side := func(sign byte) *stream {
		if del == nil {
			del = &stream{tag: "-" + path}
			add = &stream{tag: "+" + path}
		}
		if sign == '-' {
			return del
		}
		return add
	}
	changedLine := func(sign byte, content string) {
		if lastChangedAt != path || d.changed.Len() == 0 {
			if d.changed.Len() > 0 {
				d.changed.WriteByte('\n')
			}
			if path != "" {
				d.changed.WriteString("file " + path + "\n")
			}
			lastChangedAt = path
		}
		d.changed.WriteByte(sign)
		d.changed.WriteString(strings.TrimRightFunc(content, unicode.IsSpace))
		d.changed.WriteByte('\n')
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if inHunk {
			switch {
			case strings.HasPrefix(line, "@@"):
				// a new hunk: handled below
			case strings.HasPrefix(line, "diff "):
				inHunk = false
			case line == "" || line[0] == ' ':
				oldN, newN = oldN-1, newN-1
			case line[0] == '-' || line[0] == '+':
				if line[0] == '-' {
					oldN--
				} else {
					newN--
				}
				s := side(line[0])
				if d.tokens < maxDiffTokens {
					n := len(s.toks)
					s.toks = appendTokens(s.toks, line[1:])
					d.tokens += len(s.toks) - n
				}
				changedLine(line[0], line[1:])
			case line[0] == '\\': // \ No newline at end of file
			default:
				inHunk = false
			}
			if inHunk && !strings.HasPrefix(line, "@@") {
				if oldN == 0 && newN == 0 {
					inHunk = false
				}
				continue
			}
		}
		switch {
		case strings.HasPrefix(line, "@@"):
			inHunk, sawHunk = true, true
			oldN, newN = hunkCounts(line)
		case strings.HasPrefix(line, "diff "):
			flush()
			path = gitPath(line)
		case strings.HasPrefix(line, "--- "):
			oldPath = headerPath(line[4:])
		case strings.HasPrefix(line, "+++ "):
			p := headerPath(line[4:])
			if p == "" { // a deleted file: +++ /dev/null
				p = oldPath
			}
			if p != "" && p != path {
				flush()
				path = p
			}
		case strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch":
			s := side('+')
			s.toks = append(s.toks, "\x00binary")
			changedLine('+', " "+line)
		}
	}
	flush()
	if !sawHunk && len(d.streams) == 0 {
		// Not a diff: the whole text is one stream.
		s := stream{tag: "+"}
		s.toks = appendTokens(nil, text)
		if len(s.toks) > maxDiffTokens {
			s.toks = s.toks[:maxDiffTokens]
		}
		if len(s.toks) > 0 {
			d.streams = append(d.streams, s)
		}
		d.changed.WriteString(text)
	}
	return d
}

// hunkCounts reads "@@ -a,b +c,d @@": the old and new line counts (1 when
// omitted); -1 when unreadable, then the hunk ends at the next header.
func hunkCounts(line string) (int, int) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return -1, -1
	}
	count := func(r string) int {
		_, n, ok := strings.Cut(r[1:], ",")
		if !ok {
			return 1
		}
		v, err := strconv.Atoi(n)
		if err != nil {
			return -1
		}
		return v
	}
	return count(f[1]), count(f[2])
}

// gitPath is the new path of "diff --git a/x b/y" (y), or "" when unreadable.
func gitPath(line string) string {
	if i := strings.LastIndex(line, " b/"); i >= 0 {
		return line[i+3:]
	}
	return ""
}

// headerPath is the path of a ---/+++ header, without its a/ or b/ prefix
// and timestamp; "" for /dev/null.
func headerPath(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		s = s[2:]
	}
	return s
}

// operators are the multi-character operators kept as one token, longest
// first.
var operators = []string{
	"<<=", ">>=", "**=", "...", "===", "!==", "&^=", "//=", "<=>",
	"==", "!=", "<=", ">=", ":=", "&&", "||", "->", "=>", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "<<", ">>", "::", "**", "//", "/*", "*/", "<-", "?.", "??", "&^",
}

// appendTokens appends the tokens of one line of code to toks.
func appendTokens(toks []string, s string) []string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r == '_' || r == '$' || unicode.IsLetter(r):
			j := i + size
			for j < len(s) {
				r, n := utf8.DecodeRuneInString(s[j:])
				if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += n
			}
			toks = append(toks, s[i:j])
			i = j
		case r >= '0' && r <= '9':
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case r == '"' || r == '\'' || r == '`':
			j := i + 1
			for j < len(s) && s[j] != byte(r) {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) { // not closed on this line: an apostrophe, a lifetime
				toks = append(toks, s[i:i+1])
				i++
				continue
			}
			toks = append(toks, `"`+s[i+1:j]+`"`) // one quoting style
			i = j + 1
		case r == ',' || r == ';':
			i += size
		default:
			tok := s[i : i+size]
			for _, op := range operators {
				if strings.HasPrefix(s[i:], op) {
					tok = op
					break
				}
			}
			toks = append(toks, tok)
			i += len(tok)
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isIdent reports an identifier token.
func isIdent(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// rename is an identifier of one diff written differently in the other.
type rename struct{ from, to string }

// diffSimilarity is DiffSimilarity on parsed diffs, with the renames it
// applied to a.
func diffSimilarity(a, b *parsedDiff) (float64, []rename) {
	if len(a.streams) == 0 && len(b.streams) == 0 {
		return 1, nil
	}
	renames := findRenames(a, b)
	var m map[string]string
	if len(renames) > 0 {
		m = make(map[string]string, len(renames))
		for _, r := range renames {
			m[r.from] = r.to
		}
	}
	sa, na := shingles(a, m)
	sb, nb := shingles(b, nil)
	if na+nb == 0 {
		return 1, renames
	}
	common := 0
	for k, ca := range sa {
		common += min(ca, sb[k])
	}
	return 2 * float64(common) / float64(na+nb), renames
}

// shingles counts the shingles of d's streams, identifiers renamed by m.
func shingles(d *parsedDiff, m map[string]string) (map[string]int, int) {
	out := make(map[string]int)
	n := 0
	var b strings.Builder
	for _, s := range d.streams {
		toks := s.toks
		if m != nil {
			toks = slices.Clone(toks)
			for i, t := range toks {
				if r, ok := m[t]; ok {
					toks[i] = r
				}
			}
		}
		k := min(shingleSize, len(toks))
		for i := 0; i+k <= len(toks); i++ {
			b.Reset()
			b.WriteString(s.tag)
			for _, t := range toks[i : i+k] {
				b.WriteByte(0)
				b.WriteString(t)
			}
			out[b.String()]++
			n++
		}
	}
	return out, n
}

// findRenames pairs the identifiers that only a uses with those that only b
// uses, when they are used alike (see DiffSimilarity).
func findRenames(a, b *parsedDiff) []rename {
	ca, cb := identCounts(a), identCounts(b)
	var onlyA, onlyB []string
	for id, n := range ca {
		if n >= 2 && cb[id] == 0 {
			onlyA = append(onlyA, id)
		}
	}
	for id, n := range cb {
		if n >= 2 && ca[id] == 0 {
			onlyB = append(onlyB, id)
		}
	}
	if len(onlyA) == 0 || len(onlyB) == 0 || len(onlyA) > maxRenameCandidates || len(onlyB) > maxRenameCandidates {
		return nil
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	candA, candB := setOf(onlyA), setOf(onlyB)
	ctxA, ctxB := contexts(a, candA), contexts(b, candB)
	type pair struct {
		rename
		shared int
	}
	var pairs []pair
	for _, x := range onlyA {
		for _, y := range onlyB {
			nx, ny := ca[x], cb[y]
			if nx > 2*ny || ny > 2*nx {
				continue
			}
			shared := 0
			for c, k := range ctxA[x] {
				shared += min(k, ctxB[y][c])
			}
			if 2*shared >= max(nx, ny) {
				pairs = append(pairs, pair{rename{x, y}, shared})
			}
		}
	}
	slices.SortStableFunc(pairs, func(p, q pair) int { return cmp.Compare(q.shared, p.shared) })
	usedA, usedB := map[string]bool{}, map[string]bool{}
	var out []rename
	for _, p := range pairs {
		if usedA[p.from] || usedB[p.to] {
			continue
		}
		usedA[p.from], usedB[p.to] = true, true
		out = append(out, p.rename)
	}
	slices.SortFunc(out, func(p, q rename) int { return cmp.Compare(p.from, q.from) })
	return out
}

func identCounts(d *parsedDiff) map[string]int {
	c := make(map[string]int)
	for _, s := range d.streams {
		for _, t := range s.toks {
			if isIdent(t) {
				c[t]++
			}
		}
	}
	return c
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// contexts gives, for each candidate identifier, the multiset of its uses'
// surroundings: the stream's tag and the tokens before and after it, a
// candidate neighbour written as a placeholder (two renamed identifiers side
// by side still match).
func contexts(d *parsedDiff, cand map[string]bool) map[string]map[string]int {
	out := make(map[string]map[string]int, len(cand))
	at := func(toks []string, i int) string {
		if i < 0 || i >= len(toks) {
			return "\x00edge"
		}
		if cand[toks[i]] {
			return "\x00id"
		}
		return toks[i]
	}
	for _, s := range d.streams {
		for i, t := range s.toks {
			if !cand[t] {
				continue
			}
			if out[t] == nil {
				out[t] = make(map[string]int)
			}
			out[t][s.tag+"\x01"+at(s.toks, i-1)+"\x01"+at(s.toks, i+1)]++
		}
	}
	return out
}
