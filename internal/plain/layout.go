package plain

import (
	"io"
	"strings"

	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// fields are the "key  value" lines that show begins with.
type fields [][2]string

// add adds key's value; the value is made safe (termsafe.Line).
func (f *fields) add(key, value string) { *f = append(*f, [2]string{key, termsafe.Line(value)}) }

// write writes the fields, the values under one another as text/tabwriter
// aligns them; on a terminal (t.Width > 0) a value too long for its line
// is wrapped between words, its next lines under its first, and the
// status's word is coloured.
func (f fields) write(w io.Writer, t tty.Terminal) error {
	keyw := 0
	for _, kv := range f {
		keyw = max(keyw, tty.Cells(kv[0]))
	}
	indent := strings.Repeat(" ", keyw+2)
	var b strings.Builder
	for _, kv := range f {
		b.WriteString(kv[0] + strings.Repeat(" ", keyw+2-tty.Cells(kv[0])))
		value := kv[1]
		lines := []string{value}
		if t.Width > 0 {
			lines = tty.Wrap(value, max(t.Width-keyw-2, 20))
		}
		for i, line := range lines {
			if i > 0 {
				b.WriteString(indent)
			}
			if i == 0 && kv[0] == "status" {
				word, _, _ := strings.Cut(line, " ")
				line = t.Palette.Status(word) + line[len(word):]
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapLines writes text, lines of plain text (made safe: termsafe.Text), on a
// terminal each wrapped between words to its width, its next lines
// indented by two spaces.
func wrapLines(w io.Writer, t tty.Terminal, text string) error {
	text = termsafe.Text(text)
	if t.Width <= 0 {
		_, err := io.WriteString(w, text)
		return err
	}
	var b strings.Builder
	for line := range strings.Lines(text) {
		body, nl := strings.CutSuffix(line, "\n")
		for i, l := range tty.Wrap(body, t.Width-2) {
			if i > 0 {
				b.WriteString("\n  ")
			}
			b.WriteString(l)
		}
		if nl {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// safeCells are the cells of a table's row made safe (termsafe.Line).
func safeCells(cells ...string) []string {
	for i, c := range cells {
		cells[i] = termsafe.Line(c)
	}
	return cells
}

// shortStarted is a start time ("2006-01-02 15:04") without its year.
func shortStarted(s string) string {
	if len(s) == len("2006-01-02 15:04") && s[4] == '-' {
		return s[5:]
	}
	return s
}

// shortCommand is a run's command without its parent's id ("task<3fa91c07":
// task).
func shortCommand(s string) string {
	c, _, _ := strings.Cut(s, "<")
	return c
}
