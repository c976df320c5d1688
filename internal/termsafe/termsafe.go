// Package termsafe makes text that jlgcli did not write safe to print on a
// terminal: an agent's reply and output, a check's output, a repository's
// files (a task sheet's title, a jlgcli.toml value), a program's answer.
// Such text is hostile: an escape sequence in it could set the user's
// clipboard (OSC 52) or window title, move the cursor and rewrite the lines
// above, hide text, or make some terminals answer into their input; a
// bidirectional override could show text in another order than it is read
// (Trojan Source). Written through Text, every such character is shown,
// visibly and as plain text, and none is run.
//
// The rules (Text):
//
//   - The C0 control characters (U+0000–U+001F) but newline and tab, DEL
//     (U+007F) and the C1 control characters (U+0080–U+009F) are written as
//     Go writes them in a quoted string: \a \b \f \r \v, else \x00…\x1f and
//     \x7f; \u0080…\u009f. Every escape sequence starts with ESC (\x1b) or a
//     C1 introducer (CSI \u009b, OSC \u009d, DCS \u0090, SOS \u0098, PM
//     \u009e, APC \u009f): so written, it has lost what made it a sequence
//     and the rest of it shows as plain text ("\x1b]52;c;ZWNobyBwd25lZAo=\a").
//   - A carriage return is kept right before a newline (a CRLF line end,
//     which rewrites nothing); anywhere else, where it would send the cursor
//     back over the line, it is \r.
//   - Each byte that is not part of valid UTF-8 is \xNN (\xff).
//   - The bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) are \u202a…\u202e, \u2066…\u2069.
//   - Everything else is kept as it is, newline and tab included. A
//     backslash is not escaped: the text is for reading, and the exact
//     bytes are elsewhere (a run's files, --json, logs --raw), so "\x1b"
//     that an agent wrote as four characters reads the same as an ESC.
//
// Line applies the same rules to what must stay on one line (a table's
// cell, a status line): newline, tab and every carriage return are escaped
// too. Writer applies Text to a stream. JSON completes what encoding/json
// escapes so that JSON printed on a terminal is safe too, its values
// unchanged.
//
// jlgcli's own escape sequences (its live status lines, show --follow's
// redraws, a bell) are written beside this text, never through it.
package termsafe

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text is s safe to print on a terminal (the package's rules): newlines,
// tabs and CRLF line ends are kept.
func Text(s string) string { return clean(s, false) }

// Line is s safe to print on a terminal on one line: as Text, and newline,
// tab and carriage return escaped too (\n, \t, \r).
func Line(s string) string { return clean(s, true) }

// Safe says whether Text(s) is s.
func Safe(s string) bool { return safeUpTo(s, false) == len(s) }

// bidi says whether r is a bidirectional embedding, override or isolate.
func bidi(r rune) bool { return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) }

// safeUpTo is the length of the longest prefix of s that needs no escape
// (line: newline and tab escaped too).
func safeUpTo(s string, line bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t':
				if line {
					return i
				}
			case c == '\r':
				if line || i+1 >= len(s) || s[i+1] != '\n' {
					return i
				}
			case c < 0x20 || c == 0x7f:
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r >= 0x80 && r <= 0x9f) || bidi(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// clean is s with what the rules name escaped.
func clean(s string, line bool) string {
	i := safeUpTo(s, line)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case (c == '\n' || c == '\t') && !line:
				b.WriteByte(c)
			case c == '\r' && !line && i+1 < len(s) && s[i+1] == '\n':
				b.WriteByte(c)
			case c < 0x20 || c == 0x7f:
				b.WriteString(quoted(rune(c)))
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		case (r >= 0x80 && r <= 0x9f) || bidi(r):
			b.WriteString(quoted(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hex = "0123456789abcdef"

// quoted is r as Go writes it in a quoted string: "\x1b", "\r", "\u009b".
func quoted(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}

// Writer writes what is written to it through Text, in pieces as they
// come (an agent's output as it writes it): a character or a CRLF cut
// between two writes is held until the next one, or Flush.
type Writer struct {
	w    io.Writer
	held []byte // an unfinished UTF-8 sequence, or a carriage return
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer: it returns len(p) when w took all that p
// became.
func (t *Writer) Write(p []byte) (int, error) {
	data := p
	if len(t.held) > 0 {
		data = append(t.held, p...)
		t.held = nil
	}
	cut := len(data) - unfinished(data)
	if cut < len(data) {
		t.held = append([]byte(nil), data[cut:]...)
	}
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(t.w, Text(string(data[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held, as the end of the text (a lone carriage
// return is \r, an unfinished character its bytes \xNN).
func (t *Writer) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	s := Text(string(t.held))
	t.held = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// unfinished is the length of what ends p and may mean something else once
// more is written: a carriage return (a CRLF's first half), or the start of
// a UTF-8 sequence cut short.
func unfinished(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	if p[len(p)-1] == '\r' {
		return 1
	}
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return len(p) - i
			}
			return 0
		}
	}
	return 0
}

// JSON is b, JSON that encoding/json wrote, with DEL, the C1 control
// characters and the bidirectional controls escaped as \u007f, \u0080…\u009f,
// \u202a…: the characters encoding/json leaves as they are that Text would
// escape. (encoding/json escapes the C0 controls, U+2028 and U+2029 itself
// and writes invalid UTF-8 as \ufffd.) Such a character is only ever
// inside a string, where the escape means the same: the values are
// unchanged.
func JSON(b []byte) []byte {
	i := jsonSafeUpTo(b)
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidi(r) {
			out = append(out, `\u`...)
			out = append(out, strconv.FormatInt(int64(0x10000+r), 16)[1:]...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func jsonSafeUpTo(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if (r >= 0x80 && r <= 0x9f) || bidi(r) {
			return i
		}
		i += n
	}
	return len(b)
}

// JSONWriter is w for JSON (an encoder's output): each write goes through
// JSON. encoding/json's Encoder writes each value whole, in one write.
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
