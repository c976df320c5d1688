package plain

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// logs of a run that no process runs prints its last call's output once,
// even with follow, after a line that names the call: made safe for a
// terminal, or with raw its bytes as the agent wrote them.
func TestLogsOfAnEndedRun(t *testing.T) {
	root := t.TempDir()
	run, err := store.Create(root, "20261125T100000Z-abcd1234", store.Meta{Command: "loop", Backend: "fake", Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	second := "\x1b]52;c;ZWNobyBwd25lZAo=\asecond call\r\n\u202eok\xff"
	for n, text := range []string{"first call\n", second} {
		w, err := run.Output(n + 1)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, text)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run.Close()
	for _, raw := range []bool{false, true} {
		var out strings.Builder
		say := &lines{}
		if err := Logs(context.Background(), &out, say, root, "last", true, raw); err != nil {
			t.Fatal(err)
		}
		want := `\x1b]52;c;ZWNobyBwd25lZAo=\asecond call` + "\r\n" + `\u202eok\xff`
		if raw {
			want = second
		}
		if out.String() != want {
			t.Errorf("Logs (raw %v) wrote %q, want %q", raw, out.String(), want)
		}
		if len(say.notices) != 1 || !strings.HasPrefix(say.notices[0], "output of call 2 (") {
			t.Errorf("Logs said %q, want the call named", say.notices)
		}
	}
}

// show without follow writes the state once: a loop's JSON object,
// indented, or on one line when followed.
func TestShowOnce(t *testing.T) {
	st := runs.State{ID: "r1", Meta: store.Meta{Command: "loop"}, Loop: &engine.Result{RunID: "r1", Status: engine.StatusDone}}
	var out strings.Builder
	state := func(context.Context) (runs.State, error) { return st, nil }
	if err := Show(context.Background(), &out, t.TempDir(), true, false, false, tty.Terminal{}, state); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "{\n  ") || !strings.Contains(out.String(), `"runId": "r1"`) {
		t.Errorf("Show wrote %q, want the loop's indented JSON", out.String())
	}
	out.Reset()
	if err := State(&out, st, true, true, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Errorf("State compact wrote %q, want one line", out.String())
	}
}
