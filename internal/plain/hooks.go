package plain

import (
	"fmt"
	"io"

	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/termsafe"
)

// HookAnswers writes what the hooks answered to a sample event (hooks
// test): the JSON array, or a line per hook on w; when no hook took it, a
// notice on say that counts the configured hooks. A line is safe for a
// terminal (termsafe.Line: a reply is a program's output).
func HookAnswers(w io.Writer, say Say, asJSON bool, event string, configured int, answers []hooks.Answer) error {
	if asJSON {
		if answers == nil {
			answers = []hooks.Answer{}
		}
		return JSON(w, answers)
	}
	if len(answers) == 0 {
		say.Notice(fmt.Sprintf("no hook takes %s (%d in the configuration)", event, configured))
	}
	for _, a := range answers {
		verdict := "ok"
		if a.Err != nil {
			verdict = "failed: " + a.Error
		} else if a.Reply != "" {
			verdict += ": " + a.Reply
		}
		fmt.Fprintf(w, "hook %d (%s): %s (%d ms, %s)\n", a.Hook+1, termsafe.Line(a.Name), termsafe.Line(verdict), a.Ms, plural.N(a.Tries, "attempt"))
	}
	return nil
}
