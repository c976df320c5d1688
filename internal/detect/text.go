package detect

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The kinds of token.
const (
	tokWord   uint8 = iota // letters and digits, folded
	tokNumber              // digits only
	tokColon               // ':' (so that a phrase can ask for "TODO:")
	tokCode                // an inline code span, which no pattern matches
)

// token is a word of a line, folded: lower case, without accents.
type token struct {
	start, end int32 // bytes in scanner.fold
	clause     int32 // clauses are split by , ; ( ) | dashes and "but"
	kind       uint8
}

// sentence is a run of tokens, with where its text is in the line.
type sentence struct {
	from, to   int // tokens [from, to)
	start, end int // bytes of the line
}

// scanner turns one line of prose into sentences of folded tokens; its
// buffers are reused from line to line.
type scanner struct {
	fold  []byte
	toks  []token
	sents []sentence
	mask  []byte
}

// conjunction reports the words that open a new clause: a negation before
// them does not reach the words after them ("no remaining tasks, but the
// docs still need work").
func conjunction(w []byte) bool {
	if len(w) < 3 || len(w) > 9 {
		return false
	}
	switch string(w) {
	case "but", "however", "although", "though", "whereas", "yet",
		"mais", "cependant", "pourtant", "toutefois", "tandis", "sauf":
		return true
	}
	return false
}

// line tokenizes line, whose inline code spans must already be masked with
// \x01 bytes (see maskCode).
func (s *scanner) line(line string) {
	s.fold, s.toks, s.sents = s.fold[:0], s.toks[:0], s.sents[:0]
	var clause int32
	wordStart := -1 // in fold; -1: not in a word
	digits := true
	sentTok, sentByte := 0, 0

	endWord := func() {
		if wordStart < 0 {
			return
		}
		kind := tokWord
		if digits {
			kind = tokNumber
		}
		w := s.fold[wordStart:]
		if conjunction(w) {
			clause++
		}
		s.toks = append(s.toks, token{start: int32(wordStart), end: int32(len(s.fold)), clause: clause, kind: kind})
		wordStart, digits = -1, true
	}
	startWord := func() {
		if wordStart < 0 {
			wordStart = len(s.fold)
		}
	}
	endSentence := func(at int) {
		endWord()
		if len(s.toks) > sentTok {
			s.sents = append(s.sents, sentence{from: sentTok, to: len(s.toks), start: sentByte, end: at})
		}
		sentTok, sentByte = len(s.toks), at
		clause++
	}

	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'a' && c <= 'z':
				startWord()
				s.fold = append(s.fold, c)
				digits = false
			case c >= 'A' && c <= 'Z':
				startWord()
				s.fold = append(s.fold, c+'a'-'A')
				digits = false
			case c >= '0' && c <= '9':
				startWord()
				s.fold = append(s.fold, c)
			case c == 1: // a masked code span: one token for the run
				endWord()
				for i < len(line) && line[i] == 1 {
					i++
				}
				s.toks = append(s.toks, token{start: int32(len(s.fold)), end: int32(len(s.fold)), clause: clause, kind: tokCode})
				continue
			default:
				endWord()
				switch c {
				case ':':
					s.toks = append(s.toks, token{start: int32(len(s.fold)), end: int32(len(s.fold)), clause: clause, kind: tokColon})
				case ',', ';', '(', ')', '[', ']', '|':
					clause++
				case '-':
					if i > 0 && line[i-1] == ' ' && i+1 < len(line) && line[i+1] == ' ' {
						clause++ // a spaced hyphen is a dash
					}
				case '.', '!', '?':
					if sentenceEnd(line, i) {
						endSentence(i + 1)
					}
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		i += size
		if f, ok := foldRune(r); ok {
			startWord()
			s.fold = append(s.fold, f...)
			if !(len(f) == 1 && f[0] >= '0' && f[0] <= '9') {
				digits = false
			}
			continue
		}
		if unicode.Is(unicode.Mn, r) && wordStart >= 0 {
			continue // a combining accent: part of the word, dropped
		}
		endWord()
		switch r {
		case '—', '–', '¦':
			clause++
		case '¿', '¡', '。', '！', '？':
			endSentence(i)
		}
	}
	endSentence(len(line))
}

// sentenceEnd reports whether the '.', '!' or '?' at i ends a sentence: it is
// followed by a blank, the end of the line, or closing punctuation, and is
// not part of an ellipsis ("I'll do it... later" is one sentence) nor the
// number of a list item.
func sentenceEnd(line string, i int) bool {
	if line[i] == '.' && (i > 0 && line[i-1] == '.' || i+1 < len(line) && line[i+1] == '.') {
		return false
	}
	if line[i] == '.' && strings.TrimLeft(line[:i], " \t0123456789") == "" && i > 0 {
		return false // the number of a list item: "1. Add tests"
	}
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case ' ', '\t':
			return true
		case '"', '\'', ')', ']', '*', '_', '`':
			continue
		}
		return false
	}
	return true
}

// foldRune returns the folded form of a letter or digit: lower case, without
// accent, ligatures spelled out ("œ" is "oe", "ß" is "ss").
func foldRune(r rune) (string, bool) {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return "", false
	}
	r = unicode.ToLower(r)
	if f, ok := accents[r]; ok {
		return f, true
	}
	return string(r), true
}

// accents folds the accented letters of French and its neighbours.
var accents = func() map[rune]string {
	m := map[rune]string{'œ': "oe", 'æ': "ae", 'ß': "ss", 'ø': "o", 'ł': "l", 'đ': "d"}
	for base, letters := range map[string]string{
		"a": "àáâãäåāăą", "c": "çćčĉċ", "e": "èéêëēĕėęě", "i": "ìíîïīĭįı", "n": "ñńňņ",
		"o": "òóôõöōŏő", "u": "ùúûüũūŭůűų", "y": "ýÿŷ", "s": "śšşŝ", "z": "źżž",
		"g": "ğĝġģ", "r": "řŕ", "t": "ťţ", "d": "ď", "l": "ĺľļ", "h": "ĥ", "j": "ĵ", "w": "ŵ", "k": "ķ",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// maskCode returns line with each inline code span (a run of backticks, up
// to the next run of as many) replaced by \x01 bytes of the same length, so
// that offsets still point into the original line; an unmatched backtick run
// is left as text. buf is reused.
func maskCode(line string, buf []byte) (string, []byte) {
	if strings.IndexByte(line, '`') < 0 {
		return line, buf
	}
	buf = append(buf[:0], line...)
	for i := 0; i < len(buf); {
		if buf[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(buf) && buf[i+n] == '`' {
			n++
		}
		end := closingRun(buf, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		for j := i; j < end; j++ {
			buf[j] = 1
		}
		i = end
	}
	return string(buf), buf
}

// closingRun finds, from i, a run of exactly n backticks, and returns the
// offset after it, or -1.
func closingRun(b []byte, i, n int) int {
	for i < len(b) {
		if b[i] != '`' {
			i++
			continue
		}
		m := 0
		for i+m < len(b) && b[i+m] == '`' {
			m++
		}
		if m == n {
			return i + m
		}
		i += m
	}
	return -1
}

// fenceOf returns the fence that a line opens or closes (three or more
// backticks or tildes at its start, after any indentation), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// closes reports whether line closes a code block opened by fence.
func closes(line, fence string) bool {
	f := fenceOf(line)
	return f != "" && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(strings.TrimLeft(line, " \t")[len(f):]) == ""
}
