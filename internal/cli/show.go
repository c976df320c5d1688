package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/ui"
	"github.com/jlgcli/jlgcli/internal/view"
)

// showOptions are the inputs of `show`.
type showOptions struct {
	storeFlags
	follow bool
}

func newShowCmd(stdio *Stdio) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: its result, transcript, and where its files are",
		Long: `Show one run (its id, a unique prefix or suffix of it, or 'last'). --json prints the same
result object as 'loop --json', transcript included, rebuilt from the run's journal.
--follow shows it again each time its journal is written, until it ends: on a terminal
in place, else one view after the other (with --json, one object per line).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRuns(stdio),
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&o.follow, "follow", false, "show the run again as its events are written, until it ends")
	server := flagLayer() // how to connect to the server of a run on Temporal
	bindKeys(cmd.Flags(), "show", server)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root, err := o.root(stdio)
		if err != nil {
			return err
		}
		show := func(ctx context.Context, w io.Writer, compact bool) (string, error) {
			st, err := runs.Show(ctx, root, args[0], stdio.parts(false, false, false), connect(stdio, server))
			if err != nil {
				return "", err
			}
			return st.ID, showState(w, st, o.json, compact)
		}
		if !o.follow {
			_, err := show(cmd.Context(), stdio.Out, false)
			return err
		}
		return followShow(cmd.Context(), stdio, root, o.json, show)
	}
	return cmd
}

// showState writes st as show prints it: text, or the JSON object
// (compact: on one line).
func showState(w io.Writer, st runs.State, asJSON, compact bool) error {
	var obj any
	switch st.Meta.Command {
	case "task":
		obj = *st.Task
	case "batch":
		obj = view.ShownBatch(st)
	default:
		obj = *st.Loop
	}
	switch {
	case asJSON && compact:
		return json.NewEncoder(w).Encode(obj)
	case asJSON:
		return view.JSON(w, obj)
	case st.Meta.Command == "task":
		return view.ShowTask(w, st)
	case st.Meta.Command == "batch":
		view.ShowBatch(w, st)
		return nil
	}
	return view.ShowLoop(w, st)
}

// followShow shows a run, then again each time its journal is written
// (at most every 300ms), until it ends: when stdout is a terminal each view
// replaces the last; else they follow one another.
func followShow(ctx context.Context, stdio *Stdio, root string, asJSON bool, show func(context.Context, io.Writer, bool) (string, error)) error {
	inPlace := ui.IsLive(stdio.OutIsTerminal, stdio.getenv("TERM")) && !asJSON
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
			_, err = io.WriteString(stdio.Out, "\x1b[H\x1b[2J")
		} else if !asJSON && !first {
			_, err = io.WriteString(stdio.Out, "\n")
		}
		if err == nil {
			_, err = stdio.Out.Write(last)
		}
		return id, err
	}
	id, err := draw()
	if err != nil {
		return err
	}
	var drawn time.Time
	err = runs.Follow(ctx, root, id, runs.FollowOptions{NoOutput: true}, func(runs.Event) error {
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
