package detect

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A normalised diff is what a unified diff changes in substance, file by
// file, for the same-fix rule: two diffs of the same base whose normalised
// forms are equal make the same fix in another form.
//
// Each file's hunks are read as base lines (context and removed lines) and
// edits. A line is normalised into tokens: blanks are not tokens (but the
// indentation of a line of Python, YAML or Nim is, since it is syntax there),
// nor are comments when the file's extension says which comments its
// language has, nor a trailing comma or a semicolon at the end of a line;
// string quotes are unified. Within each run of removed and added lines, the
// lines that are equal once normalised (a re-indented line, a comment
// edited) are matched (longest common subsequence) and are base lines too;
// what is left is the file's edits, each with the nearest base line above it
// (its anchor, so that the same lines added at another place differ).
//
// Identifiers that the change introduces are renamed consistently within the
// file, by first use: a name is introduced when the added lines bind it (a
// declaration, an assignment at the start of a statement, a parameter, a
// loop variable) and use it at least twice, and no base line of the file's
// hunks holds it. A different function called, or another existing variable
// assigned, stays a difference.
//
// Commutative operands are ordered canonically where a term stands on each
// side (a literal, a name, a dotted name, either with one call's arguments)
// and the tokens around bind less tightly: "x + 1" and "1 + x", "a == b"
// and "b == a", "n * 2" and "2 * n", "d.month() + 1" and "1 + d.month()";
// a "+" only next to a number literal, since two strings joined in another
// order are another string.
type normDiff struct {
	files map[string]*normFile
	// order is the files in order of appearance.
	order []string
	// cut: the diff was cut; its last file is incomplete and files after it
	// are missing.
	cut bool
}

// normFile is one file of a normalised diff.
type normFile struct {
	path string
	// edits are the file's edits in order, each one string.
	edits []string
	// raw is the file's section of the diff without its index line, for
	// binary files, compared as it is.
	raw      strings.Builder
	binary   bool
	complete bool
	// renamed is how many introduced identifiers were renamed.
	renamed int
}

// key is the file's normalised change, one string.
func (f *normFile) key() string {
	if f.binary {
		return "\x00binary\x00" + f.raw.String()
	}
	return strings.Join(f.edits, "\x00\x00")
}

// lang is what normalisation knows of a language, by file extension.
type lang struct {
	line   []string    // line comment openers
	block  [][2]string // block comment delimiters
	indent bool        // indentation is syntax
	quotes string      // string quotes
}

var (
	langC      = lang{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`"}
	langHash   = lang{line: []string{"#"}, quotes: "\"'"}
	langPython = lang{line: []string{"#"}, indent: true, quotes: "\"'"}
	langYAML   = lang{line: []string{"#"}, indent: true, quotes: "\"'"}
	langDash   = lang{line: []string{"--"}, quotes: "\"'"}
	langCSS    = lang{block: [][2]string{{"/*", "*/"}}, quotes: "\"'"}
	langPHP    = lang{line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'"}
	langNone   = lang{quotes: "\"'`"}
)

// langOf is the language of a path by its extension; langNone when unknown
// (only blanks are then set aside).
func langOf(p string) lang {
	switch strings.ToLower(path.Ext(p)) {
	case ".go", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".java", ".c", ".h", ".cc", ".cpp",
		".cxx", ".hpp", ".hh", ".cs", ".rs", ".swift", ".kt", ".kts", ".scala", ".dart", ".groovy", ".gradle",
		".proto", ".zig", ".v", ".sv":
		return langC
	case ".py", ".pyi", ".nim":
		return langPython
	case ".yaml", ".yml":
		return langYAML
	case ".rb", ".sh", ".bash", ".zsh", ".pl", ".pm", ".r", ".ex", ".exs", ".toml", ".cmake", ".tf", ".jl", ".cr":
		return langHash
	case ".sql", ".lua", ".hs", ".elm", ".ada", ".adb":
		return langDash
	case ".css", ".scss", ".less":
		return langCSS
	case ".php":
		return langPHP
	}
	switch path.Base(p) {
	case "Makefile", "makefile", "GNUmakefile", "Dockerfile", "CMakeLists.txt", "BUILD", "WORKSPACE":
		return langHash
	}
	return langNone
}

// normLine is one line of a hunk, normalised: its tokens (none for a blank
// or comment-only line) and its kind.
type normLine struct {
	kind byte // ' ' base line kept, '-' removed, '+' added
	toks []string
}

// normaliseDiff reads a unified diff into its normalised form; cut says the
// text was cut (its last file is then incomplete).
func normaliseDiff(text string, cut bool) *normDiff {
	nd := &normDiff{files: map[string]*normFile{}, cut: cut}
	type hunk struct{ lines []normLine }
	var (
		cur    *normFile
		lg     lang
		hunks  []hunk
		h      *hunk
		inHunk bool
		// Block comments and brackets are followed per side: the removed
		// side reads base lines, the added side the new ones.
		oldSt, newSt lineState
		oldN, newN   int
	)
	finish := func() {
		if cur == nil {
			return
		}
		finishFile(cur, func(yield func([]normLine) bool) {
			for _, h := range hunks {
				if !yield(h.lines) {
					return
				}
			}
		})
		hunks, h = nil, nil
		cur = nil
	}
	start := func(p string) {
		finish()
		if f, ok := nd.files[p]; ok {
			cur = f // the same path twice: read on
		} else {
			cur = &normFile{path: p, complete: true}
			nd.files[p] = cur
			nd.order = append(nd.order, p)
		}
		lg = langOf(p)
		oldSt, newSt = lineState{}, lineState{}
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if inHunk {
			switch {
			case strings.HasPrefix(line, "@@"):
			case line == "" || line[0] == ' ':
				if line != "" {
					line = line[1:]
				}
				t := oldSt.tokens(line, lg)
				newSt.tokens(line, lg)
				h.lines = append(h.lines, normLine{kind: ' ', toks: t})
				if cur != nil {
					cur.raw.WriteString(" " + line + "\n")
				}
				oldN, newN = oldN-1, newN-1
			case line[0] == '-':
				h.lines = append(h.lines, normLine{kind: '-', toks: oldSt.tokens(line[1:], lg)})
				if cur != nil {
					cur.raw.WriteString(line + "\n")
				}
				oldN--
			case line[0] == '+':
				h.lines = append(h.lines, normLine{kind: '+', toks: newSt.tokens(line[1:], lg)})
				if cur != nil {
					cur.raw.WriteString(line + "\n")
				}
				newN--
			case line[0] == '\\':
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
			if cur == nil {
				start("")
			}
			inHunk = true
			oldN, newN = hunkCounts(line)
			hunks = append(hunks, hunk{})
			h = &hunks[len(hunks)-1]
			// A hunk starts anywhere: a block comment open above it is
			// not seen (both diffs read the same base lines alike).
			oldSt.depth, newSt.depth = 0, 0
		case strings.HasPrefix(line, "diff "):
			start(gitPath(line))
		case strings.HasPrefix(line, "+++ "):
			if p := headerPath(line[4:]); p != "" && (cur == nil || p != cur.path) {
				start(p)
			}
		case strings.HasPrefix(line, "--- "):
			if cur == nil {
				if p := headerPath(line[4:]); p != "" {
					start(p)
				}
			}
		case strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch" ||
			cur != nil && cur.binary && !strings.HasPrefix(line, "index "):
			if cur != nil {
				cur.binary = true
				cur.raw.WriteString(line + "\n")
			}
		case strings.HasPrefix(line, "new file mode") || strings.HasPrefix(line, "deleted file mode") ||
			strings.HasPrefix(line, "old mode") || strings.HasPrefix(line, "new mode"):
			if cur != nil {
				cur.raw.WriteString(line + "\n")
				if strings.HasPrefix(line, "old mode") || strings.HasPrefix(line, "new mode") {
					cur.edits = append(cur.edits, "\x00"+line) // a mode change is a change
				}
			}
		}
	}
	finish()
	if cut && len(nd.order) > 0 {
		nd.files[nd.order[len(nd.order)-1]].complete = false
	}
	return nd
}

// finishFile computes a file's edits from its hunks' normalised lines.
func finishFile(f *normFile, hunks func(func([]normLine) bool)) {
	if f.binary {
		return
	}
	// Introduced identifiers: bound in added lines, used twice there, on no
	// base line.
	base := map[string]bool{}
	uses := map[string]int{}
	var bound []string
	seenBound, declared := map[string]bool{}, map[string]bool{}
	for lines := range hunks {
		for _, l := range lines {
			if l.kind != '+' {
				for _, t := range l.toks {
					if isIdent(t) {
						base[t] = true
					}
				}
				continue
			}
			for i, t := range l.toks {
				if !isIdent(t) || keyword[t] {
					continue
				}
				uses[t]++
				if seenBound[t] {
					continue
				}
				if b, decl := binds(l.toks, i); b {
					seenBound[t] = true
					bound = append(bound, t)
					declared[t] = decl
				}
			}
		}
	}
	rename := map[string]string{}
	for _, id := range bound {
		if !base[id] && (uses[id] >= 2 || declared[id]) {
			rename[id] = "\x02v" + strconv.Itoa(len(rename)+1)
		}
	}
	f.renamed = len(rename)
	for lines := range hunks {
		anchor := "^"
		var del, add [][]string
		flush := func() {
			if len(del) == 0 && len(add) == 0 {
				return
			}
			f.edits = append(f.edits, editsOf(anchor, del, add)...)
			del, add = nil, nil
		}
		for _, l := range lines {
			toks := l.toks
			if len(rename) > 0 && l.kind == '+' {
				toks = slices.Clone(toks)
				for i, t := range toks {
					if r, ok := rename[t]; ok {
						toks[i] = r
					}
				}
			}
			if len(toks) > 0 {
				toks = commute(toks)
			}
			switch l.kind {
			case ' ':
				flush()
				if len(toks) > 0 {
					anchor = strings.Join(toks, "\x01")
				}
			case '-':
				if len(toks) > 0 {
					del = append(del, toks)
				}
			case '+':
				if len(toks) > 0 {
					add = append(add, toks)
				}
			}
		}
		flush()
	}
}

// maxLCS bounds the cells of the table matching removed and added lines.
const maxLCS = 1 << 20

// editsOf matches the removed and added lines of one run that are equal
// once normalised (they are base lines, anchors of what follows) and returns
// what is left as edits, each after its anchor.
func editsOf(anchor string, del, add [][]string) []string {
	d := make([]string, len(del))
	for i, t := range del {
		d[i] = strings.Join(t, "\x01")
	}
	a := make([]string, len(add))
	for i, t := range add {
		a[i] = strings.Join(t, "\x01")
	}
	var out []string
	var rd, ra []string
	emit := func() {
		if len(rd) == 0 && len(ra) == 0 {
			return
		}
		// Removed and added lines are one token stream each: a statement
		// re-wrapped over other lines is the same statement.
		out = append(out, anchor+"\x00-"+strings.Join(rd, "\x01")+"\x00+"+strings.Join(ra, "\x01"))
		rd, ra = nil, nil
	}
	if len(d)*len(a) > maxLCS || len(d) == 0 || len(a) == 0 {
		rd, ra = d, a
		emit()
		return out
	}
	// lcs[i][j]: the longest common subsequence of d[i:] and a[j:].
	n, m := len(d), len(a)
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if d[i] == a[j] {
				*at(i, j) = *at(i+1, j+1) + 1
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && d[i] == a[j]:
			emit()
			anchor = d[i]
			i, j = i+1, j+1
		case j < m && (i == n || *at(i, j+1) >= *at(i+1, j)):
			ra = append(ra, a[j])
			j++
		default:
			rd = append(rd, d[i])
			i++
		}
	}
	emit()
	return out
}

// keyword are words that are never renamed nor taken as operands.
var keyword = setOf([]string{
	"return", "if", "else", "elif", "for", "while", "do", "switch", "case", "default", "break", "continue",
	"func", "function", "def", "class", "var", "let", "const", "type", "struct", "interface", "package", "import",
	"from", "as", "in", "of", "is", "not", "and", "or", "lambda", "yield", "await", "async", "new", "delete",
	"typeof", "instanceof", "void", "go", "defer", "select", "chan", "map", "range", "goto", "fallthrough",
	"try", "catch", "finally", "throw", "throws", "raise", "except", "with", "pass", "global", "nonlocal",
	"assert", "del", "then", "end", "fn", "pub", "mut", "impl", "use", "mod", "match", "where", "self", "this",
	"super", "static", "public", "private", "protected", "export", "extends", "implements", "unsafe",
	"true", "false", "nil", "null", "undefined", "None", "True", "False",
})

// bindWords are the words after which an identifier is bound.
var bindWords = setOf([]string{"var", "let", "const", "def", "func", "function", "for", "as", "lambda", "fn", "mut"})

// binds reports whether toks[i], an identifier, is bound there: after a
// binding word, before := or an assignment at the start of a statement, in
// a list of such names, or as a parameter. declares says the binding makes
// a new name (all of those but a plain assignment, which may assign a
// variable the diff does not show).
func binds(toks []string, i int) (bound, declares bool) {
	prev := func(k int) string {
		if k < 0 {
			return ""
		}
		return toks[k]
	}
	next := func(k int) string {
		if k >= len(toks) {
			return ""
		}
		return toks[k]
	}
	startish := func(k int) bool {
		return k == 0 || toks[k-1] == ";" || toks[k-1] == "{" || strings.HasPrefix(toks[k-1], "\x03")
	}
	p := prev(i - 1)
	if bindWords[p] || next(i+1) == ":=" || next(i+1) == "=>" {
		return true, true
	}
	// A list of names: a, b := …; for i, v in …; let a, b = …
	if p == "," || startish(i) {
		k := i
		for k >= 2 && toks[k-1] == "," && isIdent(toks[k-2]) {
			k -= 2
		}
		if k > 0 && bindWords[toks[k-1]] {
			return true, true
		}
		if startish(k) {
			// at the start of a statement: up to an assignment?
			for e := i + 1; e < len(toks); e += 2 {
				if toks[e] == "=" || toks[e] == ":=" {
					return true, toks[e] == ":="
				}
				if toks[e] != "," || e+1 >= len(toks) || !isIdent(toks[e+1]) {
					break
				}
			}
		}
	}
	// A parameter: in a parenthesised list on a line that defines a
	// function (def, func, function, fn before the list, or an arrow after
	// it).
	if p == "(" || p == "," {
		depth, k := 0, i-1
		for ; k >= 0; k-- {
			switch toks[k] {
			case ")", "]", "}":
				depth++
			case "(", "[", "{":
				depth--
			}
			if depth < 0 {
				break
			}
		}
		if k >= 0 && toks[k] == "(" {
			// the function's name (or none), and before it the word; in Go
			// a method's receiver may stand between them
			for j := k - 1; j >= 0; j-- {
				t := toks[j]
				if t == "def" || t == "func" || t == "function" || t == "fn" {
					return true, true
				}
				if t == ")" {
					d, m := 0, j
					for ; m >= 0; m-- {
						if toks[m] == ")" {
							d++
						} else if toks[m] == "(" {
							d--
						}
						if d == 0 {
							break
						}
					}
					if m >= 1 && toks[m-1] == "func" {
						return true, true
					}
					break
				}
				if !isIdent(t) && t != "*" && t != "." {
					break
				}
			}
			d := 0
			for j := k; j < len(toks); j++ {
				switch toks[j] {
				case "(", "[", "{":
					d++
				case ")", "]", "}":
					d--
				}
				if d == 0 {
					arrow := next(j+1) == "=>"
					return arrow, arrow
				}
			}
		}
	}
	return false, false
}

// lineState is what normalising a side of a hunk carries from line to line:
// an open block comment, and the bracket depth (an indentation inside
// brackets is a continuation, not syntax).
type lineState struct {
	inBlock string // the closing delimiter of an open block comment
	depth   int
}

// tokens normalises one line of code of language lg.
func (st *lineState) tokens(s string, lg lang) []string {
	var toks []string
	if lg.indent && st.depth == 0 && st.inBlock == "" {
		w := 0
		for _, r := range s {
			if r == ' ' {
				w++
			} else if r == '\t' {
				w += 8 - w%8
			} else {
				break
			}
		}
		if strings.TrimSpace(s) != "" {
			toks = append(toks, "\x03"+strconv.Itoa(w))
		}
	}
	start := len(toks)
	for i := 0; i < len(s); {
		if st.inBlock != "" {
			j := strings.Index(s[i:], st.inBlock)
			if j < 0 {
				break
			}
			i += j + len(st.inBlock)
			st.inBlock = ""
			continue
		}
		if c := commentAt(s, i, lg); c != "" {
			if c == "\n" { // a line comment
				break
			}
			if c[0] == 0 { // a block comment closed on the line
				i, _ = strconv.Atoi(c[1:])
				continue
			}
			st.inBlock = c
			i += 2
			continue
		}
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
		case r < utf8.RuneSelf && strings.IndexByte(lg.quotes, byte(r)) >= 0:
			j := i + 1
			for j < len(s) && s[j] != byte(r) {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) { // not closed on this line
				toks = append(toks, s[i:i+1])
				i++
				continue
			}
			toks = append(toks, `"`+s[i+1:j]+`"`)
			i = j + 1
		default:
			tok := s[i : i+size]
			for _, op := range operators {
				if strings.HasPrefix(s[i:], op) {
					tok = op
					break
				}
			}
			switch tok {
			case "(", "[", "{":
				st.depth++
			case ")", "]", "}":
				if st.depth > 0 {
					st.depth--
				}
			}
			toks = append(toks, tok)
			i += len(tok)
		}
	}
	// A semicolon ending the line is optional in most languages that have
	// them; a trailing comma before a closing bracket (or at the end of
	// the line, before one on the next) is layout.
	for len(toks) > start && toks[len(toks)-1] == ";" {
		toks = toks[:len(toks)-1]
	}
	out := toks[:start]
	for k := start; k < len(toks); k++ {
		t := toks[k]
		if t == "," && (k+1 == len(toks) || toks[k+1] == ")" || toks[k+1] == "]" || toks[k+1] == "}") {
			continue
		}
		if t == ";" && k+1 < len(toks) && toks[k+1] == "}" {
			continue
		}
		out = append(out, t)
	}
	if len(out) == start {
		return nil // blank or comment only
	}
	return out
}

// commentAt returns what opens at s[i] in lg: "\n" for a line comment, the
// closing delimiter for a block comment, "" for none.
func commentAt(s string, i int, lg lang) string {
	for _, l := range lg.line {
		if strings.HasPrefix(s[i:], l) {
			return "\n"
		}
	}
	for _, b := range lg.block {
		if strings.HasPrefix(s[i:], b[0]) {
			if j := strings.Index(s[i+len(b[0]):], b[1]); j >= 0 {
				return "\x00" + strconv.Itoa(i+len(b[0])+j+len(b[1])) // closed on the line
			}
			return b[1]
		}
	}
	return ""
}

// operandSep are the tokens around a commutative operation whose operands
// are single terms that bind less tightly than any of + * == != in the
// usual languages: brackets, separators, assignments, logic, keywords. An
// opening bracket after an operand, or a closing one before it, would make
// it part of a call or an index: those are not.
var operandSep = setOf([]string{
	"", "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", ":=", "+=", "-=", "*=", "/=", "?", "&&", "||", "!",
	"return", "if", "elif", "while", "and", "or", "not", "yield", "case", "=>", "in", "else", "then",
})

// aroundArith are the tokens around an operand of + or * that bind less
// tightly than them but more than == and !=.
var aroundArith = setOf([]string{"==", "!=", "===", "!==", "<", ">", "<=", ">=", "is"})

// commute orders the operands of "a op b" canonically, where a and b are
// terms (a literal, a name, a dotted name, either followed by one call's
// arguments) and op is + * == != === !==; see normDiff.
func commute(toks []string) []string {
	out := toks
	cloned := false
	for i := 1; i+1 < len(out); i++ {
		op := out[i]
		if op != "+" && op != "*" && op != "==" && op != "!=" && op != "===" && op != "!==" {
			continue
		}
		s := termBefore(out, i)
		e := termAfter(out, i)
		if s < 0 || e < 0 {
			continue
		}
		a, b := out[s:i], out[i+1:e]
		ka, kb := strings.Join(a, "\x01"), strings.Join(b, "\x01")
		if ka <= kb {
			continue
		}
		if op == "+" && !numberTok(a) && !numberTok(b) {
			continue // perhaps strings: "+" is arithmetic next to a number
		}
		before, after := "", ""
		if s >= 1 {
			before = out[s-1]
		}
		if e < len(out) {
			after = out[e]
		}
		ok := func(t string, closing bool) bool {
			if closing && (t == ")" || t == "]") || !closing && (t == "(" || t == "[") {
				return false
			}
			if operandSep[t] || strings.HasPrefix(t, "\x03") {
				return true
			}
			switch op {
			case "+":
				return aroundArith[t]
			case "*":
				return aroundArith[t] || t == "+" || t == "-"
			}
			return false
		}
		if before == "-" && op == "+" || !ok(before, true) || !ok(after, false) {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(out), true
		}
		swapped := make([]string, 0, e-s)
		swapped = append(swapped, b...)
		swapped = append(swapped, op)
		swapped = append(swapped, a...)
		copy(out[s:e], swapped)
		i = s + len(b) // go on after the operator
	}
	return out
}

// termBefore is where the term that ends at toks[i-1] starts, or -1.
func termBefore(toks []string, i int) int {
	k := i - 1
	if toks[k] == ")" { // a call's arguments
		depth := 0
		for ; k >= 0; k-- {
			switch toks[k] {
			case ")", "]":
				depth++
			case "(", "[":
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if k <= 0 || toks[k] != "(" {
			return -1
		}
		k--
		if !isName(toks[k]) || keyword[toks[k]] {
			return -1
		}
	} else if !operand(toks[k]) {
		return -1
	}
	if !isName(toks[k]) {
		return k
	}
	for k >= 2 && (toks[k-1] == "." || toks[k-1] == "?.") && isName(toks[k-2]) {
		k -= 2
	}
	return k
}

// termAfter is where the term that starts at toks[i+1] ends (exclusive), or
// -1.
func termAfter(toks []string, i int) int {
	k := i + 1
	if !operand(toks[k]) {
		return -1
	}
	if !isName(toks[k]) {
		return k + 1
	}
	for k+2 < len(toks) && (toks[k+1] == "." || toks[k+1] == "?.") && isName(toks[k+2]) {
		k += 2
	}
	k++
	if k < len(toks) && toks[k] == "(" {
		depth := 0
		for ; k < len(toks); k++ {
			switch toks[k] {
			case "(", "[":
				depth++
			case ")", "]":
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if k == len(toks) {
			return -1
		}
		k++
	}
	return k
}

// numberTok reports a term that is one number literal.
func numberTok(t []string) bool { return len(t) == 1 && t[0] != "" && t[0][0] >= '0' && t[0][0] <= '9' }

// isName reports an identifier, or one renamed.
func isName(t string) bool { return strings.HasPrefix(t, "\x02") || isIdent(t) }

// operand reports a token that can stand alone as an operand.
func operand(t string) bool {
	if t == "" || keyword[t] && t != "true" && t != "false" && t != "nil" && t != "None" && t != "null" {
		return false
	}
	if strings.HasPrefix(t, "\x02") || strings.HasPrefix(t, `"`) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(t)
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
