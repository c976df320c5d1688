package view

import (
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

// The runs table marks a batch's task with the end of the batch's id and
// cuts a long title to its column.
func TestRuns(t *testing.T) {
	var b strings.Builder
	list := []runs.Run{{RunRow: store.RunRow{ID: "20261125-abcdef01", Command: "task", Status: "done", Parent: "20261125-12345678",
		Title: "a title that is much longer than its column", StartedAt: time.Now(), Live: true}}}
	if err := Runs(&b, list); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"task<12345678", "a title that is much lo…", " yes "} {
		if !strings.Contains(out, want) {
			t.Errorf("Runs wrote\n%s\nwant it to hold %q", out, want)
		}
	}
}

// A batch that is not done says how far it went; its table says why each
// task that is not done stopped.
func TestBatchResult(t *testing.T) {
	res := batch.Summary{Status: "failed", Details: "a task failed", ExitCode: 3, Tasks: []batch.TaskSummary{
		{ID: "a", Status: string(batch.StatusDone)},
		{ID: "b", Status: "failed", Details: "its checks failed"},
	}}
	var out strings.Builder
	say := &lines{}
	if err := BatchResult(&out, say, false, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\nb: its checks failed\n") {
		t.Errorf("BatchResult wrote\n%s\nwant why b stopped", out.String())
	}
	if want := "failed: 1 of 2 tasks done; a task failed"; len(say.notices) != 1 || say.notices[0] != want {
		t.Errorf("BatchResult said %q, want %q", say.notices, want)
	}
}

// A loop's closing line counts its iterations in the right number.
func TestLoopEnd(t *testing.T) {
	got := LoopEnd(engine.Result{RunID: "r", Status: engine.StatusDone, Iterations: 1, DurationMs: 1500})
	if !strings.HasPrefix(got, "run r ended done after 1 iteration · ") || !strings.HasSuffix(got, " · 1.5s") {
		t.Errorf("LoopEnd = %q", got)
	}
}

type lines struct{ notices []string }

func (l *lines) Progress(string)   {}
func (l *lines) Notice(msg string) { l.notices = append(l.notices, msg) }
func (l *lines) Hint(string)       {}
