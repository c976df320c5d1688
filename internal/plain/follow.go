package plain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/termsafe"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// State writes st as show prints it: text (laid out for t: tty.Terminal),
// or the JSON object (compact: on one line), safe for a terminal either
// way (termsafe).
func State(w io.Writer, st runs.State, asJSON, compact bool, t tty.Terminal) error {
	var obj any
	switch st.Meta.Command {
	case "task":
		obj = *st.Task
	case "batch":
		obj = ShownBatch(st)
	case "pr":
		obj = *st.PR
	default:
		obj = *st.Loop
	}
	switch {
	case asJSON && compact:
		return json.NewEncoder(termsafe.JSONWriter(w)).Encode(obj)
	case asJSON:
		return JSON(w, obj)
	case st.Meta.Command == "task":
		return ShowTask(w, st, t)
	case st.Meta.Command == "batch":
		return ShowBatch(w, st, t)
	case st.Meta.Command == "pr":
		PRSummary(w, *st.PR)
		if st.Status == "running" && !st.Live {
			fmt.Fprintln(w, killed(st.ID))
		}
		return nil
	}
	return ShowLoop(w, st, t)
}

// Show writes on w the state of a run that state gives (runs.Show) as
// show prints it (State). With follow it writes it again each time the
// run's journal under root is written (at most every 300ms) and it
// changed, until the run ends (a run on Temporal, whose record has no
// journal, each time the output of its attempt under way arrives, as its
// follower keeps it): when live (w takes cursor codes) each text
// view replaces the last; else they follow one another, a blank line
// between two texts, a JSON object on each line. The text is laid out for
// t (tty.Terminal: its width and colours on a terminal).
func Show(ctx context.Context, w io.Writer, root string, asJSON, follow, live bool, t tty.Terminal, state func(context.Context) (runs.State, error)) error {
	onTemporal := false
	show := func(ctx context.Context, w io.Writer, compact bool) (string, error) {
		st, err := state(ctx)
		if err != nil {
			return "", err
		}
		onTemporal = st.Meta.Temporal != nil
		return st.ID, State(w, st, asJSON, compact, t)
	}
	if !follow {
		_, err := show(ctx, w, false)
		return err
	}
	inPlace := live && !asJSON
	var last []byte
	draw := func() (string, error) {
		var b bytes.Buffer
		id, err := show(ctx, &b, true)
		if err != nil || bytes.Equal(b.Bytes(), last) {
			return id, err
		}
		first := last == nil
		last = b.Bytes()
		if inPlace {
			_, err = io.WriteString(w, "\x1b[H\x1b[2J")
		} else if !asJSON && !first {
			_, err = io.WriteString(w, "\n")
		}
		if err == nil {
			_, err = w.Write(last)
		}
		return id, err
	}
	id, err := draw()
	if err != nil {
		return err
	}
	var drawn time.Time
	err = runs.Follow(ctx, root, id, runs.FollowOptions{NoOutput: !onTemporal}, func(runs.Event) error {
		if time.Since(drawn) < 300*time.Millisecond {
			return nil
		}
		drawn = time.Now()
		_, err := draw()
		return err
	})
	if err != nil {
		return err
	}
	_, err = draw() // as it ended
	return err
}

// Logs writes on w the output of the newest agent call of run id under
// root (the one under way, else the last made), after a notice on say
// naming it: its bytes as the agent wrote them when raw, else made safe for
// a terminal (termsafe.Text). With follow, while the run is live, it goes
// on writing it as the agent writes it, and the next calls' after it, each
// after a notice, until the run ends.
func Logs(ctx context.Context, w io.Writer, say Say, root, id string, follow, raw bool) (err error) {
	if !raw {
		var end func(*error)
		w, end = safe(w)
		defer end(&err)
	}
	// flush ends one call's output before the next call's notice.
	flush := func() error {
		if t, ok := w.(*termsafe.Writer); ok {
			return t.Flush()
		}
		return nil
	}
	n, path, found, err := runs.LastOutput(root, id)
	if err != nil {
		return err
	}
	if follow && !runs.Live(root, id) {
		follow = false // nothing more will be written: as without -f
	}
	if !follow {
		if !found {
			say.Notice("no agent call of this run has written anything yet")
			return nil
		}
		say.Notice(fmt.Sprintf("output of call %d (%s)", n, path))
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	}
	shown := -1
	return runs.Follow(ctx, root, id, runs.FollowOptions{}, func(e runs.Event) error {
		if e.Kind != runs.KindOutput {
			return nil
		}
		if e.N != shown {
			if err := flush(); err != nil {
				return err
			}
			say.Notice(fmt.Sprintf("output of call %d", e.N))
			shown = e.N
		}
		_, err := w.Write(e.Output)
		return err
	})
}
