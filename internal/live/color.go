package live

import (
	"regexp"
	"strings"

	"github.com/jlgcli/jlgcli/internal/tty"
)

// colorLines is text, lines jlgcli wrote and made safe (termsafe), with
// the status word of each coloured (colorLine); text as it is when p is off.
func colorLines(p tty.Palette, text string) string {
	if !p.On || text == "" {
		return text
	}
	var b strings.Builder
	for line := range strings.Lines(text) {
		body, nl := strings.CutSuffix(line, "\n")
		b.WriteString(colorLine(p, body))
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// leadWord is what a line says first after its prefixes, as this package
// and the reporter write them: "gate fail", "ended failed", "not merged",
// "error:", a status word ("blocked:", "merged"…).
var leadWord = regexp.MustCompile(`^(gate \S+|ended [a-z-]+|not merged|nothing merged|[a-z-]+:?)`)

// batchCount is a count of a batch's summary: "2 failed".
var batchCount = regexp.MustCompile(`\b[1-9]\d* (done|failed|blocked|running)\b`)

// colorLine is line with its status word coloured: the word it leads with
// after "jlgcli: ", "⟳ " and a batch task's "[id] " (the gate's status, a
// run's end, a merge, an error, warning or hint), and the counts of a
// batch's summary line. Only what follows those prefixes is looked at:
// the text an agent wrote comes later on a line.
func colorLine(p tty.Palette, line string) string {
	prefix, rest := "", line
	for _, pre := range []string{"jlgcli: ", "⟳ "} {
		if r, ok := strings.CutPrefix(rest, pre); ok {
			prefix, rest = pre, r
			break
		}
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.Index(rest, "] "); i > 0 {
			prefix, rest = prefix+rest[:i+2], rest[i+2:]
		}
	}
	if summary, ok := strings.CutPrefix(rest, "batch: "); ok {
		return prefix + "batch: " + batchCount.ReplaceAllStringFunc(summary, func(s string) string {
			_, word, _ := strings.Cut(s, " ")
			return p.Paint(s, tty.StatusColor(word))
		})
	}
	lead := leadWord.FindString(rest)
	color := ""
	switch word := strings.TrimSuffix(lead, ":"); {
	case lead == "":
	case word == "error" && lead == "error:":
		color = tty.Error
	case word == "warning" && lead == "warning:":
		color = tty.Warning
	case word == "hint" && lead == "hint:":
		color = tty.Hint
	case strings.HasPrefix(word, "gate "), strings.HasPrefix(word, "ended "):
		_, status, _ := strings.Cut(word, " ")
		color = tty.StatusColor(status)
	case word == "not merged":
		color = tty.StatusColor("failed")
	case word == "nothing merged":
		color = tty.StatusColor("nothing")
	default:
		color = tty.StatusColor(word)
	}
	if color == "" {
		return line
	}
	return prefix + p.Paint(lead, color) + rest[len(lead):]
}
