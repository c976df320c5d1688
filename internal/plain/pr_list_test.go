package plain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/runs/runstest"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// runs lists a pull-request run with its pull request and target, its
// rounds by number under it (task<its id), the forge's title made safe.
func TestRunsListsAPRRun(t *testing.T) {
	root := t.TempDir()
	runstest.PR(t, root, "\x1b[2Jx", false)
	list, err := runs.List(root, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Runs(&b, list, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"pr<7a5c0001", "needs-you", "#42 until merged: Rate", "task<9e000042", "round 2: Add rate limit…"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs lacks %q:\n%s", want, out)
		}
	}
	var s bytes.Buffer
	st, err := runs.Show(t.Context(), root, runstest.PRID, local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	PRSummary(&s, *st.PR)
	if strings.Contains(s.String(), "\x1b") || !strings.Contains(s.String(), `title: Rate limits \x1b[2Jx`) || !strings.Contains(s.String(), "branch jlgcli/rate-limits into main") {
		t.Errorf("show of the pr run:\n%s", s.String())
	}
}
