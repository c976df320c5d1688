package tty

import "strings"

// ColorOn is the one decision of whether jlgcli colours what it writes on
// a stream: only on a terminal that takes escape codes (TERM is not
// "dumb"), never with --no-color (noColor), never when the NO_COLOR
// environment variable is set to anything but the empty string
// (https://no-color.org). getenv reads the environment.
func ColorOn(isTerminal bool, noColor bool, getenv func(string) string) bool {
	return isTerminal && !noColor && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// Palette colours status words; its zero value colours nothing.
type Palette struct{ On bool }

// The colours (SGR parameters) of the status words.
const (
	green   = "32"
	red     = "31"
	yellow  = "33"
	magenta = "35"
	cyan    = "36"
	dim     = "2"
)

// statusColors are the colours of the status words of runs, tasks,
// gates and merges: what went well green, what failed red, what waits
// for the user yellow, what was stopped or left dim, what runs cyan.
var statusColors = map[string]string{
	"done": green, "pass": green, "merged": green, "fast-forwarded": green,

	"error": red, "fail": red, "failed": red, "conflict": red, "merge-failed": red,
	"backend-missing": red, "backend-unauthenticated": red, "backend-unknown": red, "backend-unsupported": red,
	"invalid-json": red, "max-iterations": red, "no-progress": red, "budget-exceeded": red, "timeout": red,

	"needs-you": yellow, "blocked": yellow, "killed": yellow, "waiting": yellow, "incomplete": yellow, "unmerged": yellow, "warning": yellow,
	"rate-limited": yellow, "refused": magenta, "skipped": magenta,

	"interrupted": dim, "stopped": dim, "pending": dim, "nothing": dim,

	"running": cyan,
}

// StatusColor is the colour (SGR parameters) of status word, "" for none:
// its first word decides ("running (not live: killed…)" is running's).
func StatusColor(word string) string {
	word, _, _ = strings.Cut(strings.TrimSpace(word), " ")
	return statusColors[strings.TrimSuffix(word, ":")]
}

// Status is word in its status colour (StatusColor).
func (p Palette) Status(word string) string { return p.Paint(word, StatusColor(word)) }

// Paint is s in colour sgr (SGR parameters: "31", "2"), "" or off: s.
func (p Palette) Paint(s, sgr string) string {
	if !p.On || sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// Error, Warning and Hint are the colours of jlgcli's messages of those
// kinds ("jlgcli: error: …").
const (
	Error   = red
	Warning = yellow
	Hint    = dim
)
