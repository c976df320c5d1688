package plain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// Say is where the lines about a result go besides the result itself
// (stderr on the command line, through live.Reporter).
type Say interface {
	// Progress is left out when quiet.
	Progress(msg string)
	Notice(msg string)
	Hint(msg string)
}

// JSON writes v as the command line prints every JSON object: indented by
// two spaces, one newline after, every character a terminal would run
// escaped (termsafe.JSON: the values are unchanged).
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Result writes a run's result: the JSON object, or the agent's reply, on
// w; on say, why a run that is not done stopped and what to do about it
// (report.Hint), a done run's note, and that the reply was cut. The reply
// is made safe for a terminal (termsafe.Text): the exact text is the JSON
// object's. The error is w's.
func Result(w io.Writer, say Say, asJSON bool, res engine.Result) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else if res.Text != "" && (len(res.Transcript) > 0 || res.Status == engine.StatusInterrupted) {
		// Made safe first: a CRLF line end keeps its CR, as it was.
		if _, err := fmt.Fprintln(w, strings.TrimRight(termsafe.Text(res.Text), "\n")); err != nil {
			return err
		}
	}
	if res.Status == engine.StatusDone && res.Details != "" && !asJSON {
		say.Notice("note: " + res.Details)
	}
	if res.Status != engine.StatusDone {
		say.Notice(fmt.Sprintf("%s: %s", res.Status, res.Details))
		if h := report.Hint(res); h != "" {
			say.Hint(h)
		}
	}
	if res.Truncated && !asJSON {
		say.Notice(fmt.Sprintf("the reply was longer than %d MiB; only its tail was kept", agent.MaxReplyBytes>>20))
	}
	return nil
}

// safe is w made safe for a terminal (termsafe.Writer): whatever the text
// written to it holds of an agent's, a check's or a repository's, its
// escape sequences show and none runs. end writes what it holds, and
// gives its error to *err unless *err is set already.
func safe(w io.Writer) (t *termsafe.Writer, end func(err *error)) {
	t = termsafe.NewWriter(w)
	return t, func(err *error) {
		if ferr := t.Flush(); *err == nil {
			*err = ferr
		}
	}
}

// LoopResult writes a loop's result (Result), then on say its run id and
// how it went in one line (LoopEnd; left out with JSON).
func LoopResult(w io.Writer, say Say, asJSON bool, res engine.Result) error {
	err := Result(w, say, asJSON, res)
	if !asJSON && res.RunID != "" {
		say.Progress(LoopEnd(res))
	}
	return err
}

// TaskResult writes a task's result: the JSON object, or its summary
// (TaskSummary), on w; on say, why a task that is not done stopped and
// what to do about it (report.TaskHint). The error is w's.
func TaskResult(w io.Writer, say Say, asJSON bool, res taskengine.Result) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else {
		TaskSummary(w, res)
	}
	if res.Status != engine.StatusDone {
		say.Notice(fmt.Sprintf("%s: %s", res.Status, res.Details))
		if h := report.TaskHint(res); h != "" {
			say.Hint(h)
		}
	}
	return nil
}

// BatchResult writes a batch's result: the JSON object, or its table
// (BatchTable, laid out for t), on w; on say, how far a batch that is not
// done went (BatchStopped). The error is w's.
func BatchResult(w io.Writer, say Say, asJSON bool, res batch.Summary, t tty.Terminal) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else if err := BatchTable(w, res, t); err != nil {
		return err
	}
	if res.Status != string(batch.BatchDone) {
		say.Notice(BatchStopped(res))
	}
	return nil
}
