package hooks

import (
	"context"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// LongRun is how long a run lasts before its end is worth a notification.
const LongRun = time.Minute

// Desktop is the built-in notification of the end of a long run (LongRun
// or more) that this process ran: a bell on the terminal, and a desktop
// notification where the desktop has a command for it (notify-send on
// Linux, osascript on macOS, found on PATH).
type Desktop struct {
	// Bell is the terminal the bell rings on.
	Bell io.Writer
	// LookPath finds the notification command; nil: exec.LookPath.
	LookPath func(string) (string, error)
	// GOOS is the system; "": runtime.GOOS.
	GOOS string
}

// takes tells whether e is the end of a long run of its own (not a task
// that a batch runs: the batch's end is the one told).
func (d *Desktop) takes(e Event) bool {
	return d != nil && e.Event == RunEnded && e.BatchID == "" && e.DurationMs != nil && e.DurationMs.Duration() >= LongRun
}

// notify rings the bell and shows e's text, within ctx.
func (d *Desktop) notify(ctx context.Context, e Event) error {
	if d.Bell != nil {
		_, _ = io.WriteString(d.Bell, "\a")
	}
	argv := d.command(e)
	if argv == nil {
		return nil
	}
	lookPath := d.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return nil // no notification on this desktop: the bell is all
	}
	return exec.CommandContext(ctx, path, argv[1:]...).Run()
}

// markup escapes what a notification server that takes markup in a body
// (body-markup: <b>, <a href>, <img>) would read as such.
var markup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// command is the argv that shows e on this system's desktop; nil: none.
// The text, which quotes a prompt or a task sheet, is made safe
// (termsafe.Line: no control character, no bidi override) and, for
// notify-send, its markup escaped: it shows as written.
func (d *Desktop) command(e Event) []string {
	goos := d.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	title := termsafe.Line("jlgcli: " + e.Command + " " + e.Status)
	text := termsafe.Line(e.Text)
	switch goos {
	case "darwin":
		quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
		return []string{"osascript", "-e", `display notification "` + quote.Replace(text) + `" with title "` + quote.Replace(title) + `"`}
	case "linux", "freebsd", "openbsd", "netbsd":
		return []string{"notify-send", "--app-name=jlgcli", title, markup.Replace(text)}
	}
	return nil
}
