package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/report"
)

// Say is where the lines about a result go besides the result itself
// (stderr on the command line, through ui.Reporter).
type Say interface {
	// Progress is left out when quiet.
	Progress(msg string)
	Notice(msg string)
	Hint(msg string)
}

// JSON writes v as the command line prints every JSON object: indented by
// two spaces, one newline after.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Result writes a run's result: the JSON object, or the agent's reply, on
// w; on say, why a run that is not done stopped and what to do about it
// (report.Hint), a done run's note, and that the reply was cut. The error
// is w's.
func Result(w io.Writer, say Say, asJSON bool, res engine.Result) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else if res.Text != "" && (len(res.Transcript) > 0 || res.Status == engine.StatusInterrupted) {
		fmt.Fprintln(w, strings.TrimRight(res.Text, "\n"))
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
func TaskResult(w io.Writer, say Say, asJSON bool, res engine.TaskResult) error {
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
// (BatchTable), on w; on say, how far a batch that is not done went
// (BatchStopped). The error is w's.
func BatchResult(w io.Writer, say Say, asJSON bool, res batch.Summary) error {
	if asJSON {
		if err := JSON(w, res); err != nil {
			return err
		}
	} else {
		BatchTable(w, res)
	}
	if res.Status != string(batch.BatchDone) {
		say.Notice(BatchStopped(res))
	}
	return nil
}
