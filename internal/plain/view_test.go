package plain

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/tty"
)

// The runs table marks a batch's task with the end of the batch's id and
// cuts a long title to its column.
func TestRuns(t *testing.T) {
	var b strings.Builder
	list := []runs.Listed{{RunRow: store.RunRow{ID: "20261125-abcdef01", Command: "task", Status: "done", Parent: "20261125-12345678",
		Title: "a title that is much longer than its column", StartedAt: time.Now(), Live: true}}}
	if err := Runs(&b, list, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"task<12345678", "a title that is much lo…", " yes "} {
		if !strings.Contains(out, want) {
			t.Errorf("Runs wrote\n%s\nwant it to hold %q", out, want)
		}
	}
}

// A WINDOWS column appears when a run listed has windows: each window's use,
// after its backend when the run's are of more than one.
func TestRunsWindows(t *testing.T) {
	var b strings.Builder
	list := []runs.Listed{
		{RunRow: store.RunRow{ID: "r2", Command: "task", Status: "done", Title: "two", Windows: []store.Window{
			{Backend: "claude", Kind: "5h", Used: 0.92}, {Backend: "codex", Kind: "5h", Used: 0.3}}}},
		{RunRow: store.RunRow{ID: "r1", Command: "loop", Status: "done", Title: "one", Windows: []store.Window{
			{Backend: "claude", Kind: "5h", Used: 0.5}, {Backend: "claude", Kind: "weekly", Used: 0.25}}}},
		{RunRow: store.RunRow{ID: "r0", Command: "loop", Status: "done", Title: "none"}},
	}
	if err := Runs(&b, list, tty.Terminal{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{`LIVE\s+WINDOWS\s+TITLE$`, `no\s+claude 5h 92%, codex 5h 30%\s+two$`, `no\s+5h 50%, weekly 25%\s+one$`, `no\s+-\s+none$`} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d: %q, want it to match %q", i, lines[i], want)
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
	if err := BatchResult(&out, say, false, res, tty.Terminal{}); err != nil {
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

type lines struct{ notices, hints []string }

func (l *lines) Progress(string)   {}
func (l *lines) Notice(msg string) { l.notices = append(l.notices, msg) }
func (l *lines) Hint(msg string)   { l.hints = append(l.hints, msg) }

// A run id completes among the runs with its command, status and title;
// "last" when there is a run.
func TestCompletions(t *testing.T) {
	list := []runs.Listed{{RunRow: store.RunRow{ID: "20261125-abcdef01", Command: "task", Status: "done", Title: "fix it"}},
		{RunRow: store.RunRow{ID: "20261124-12345678", Command: "loop", Status: "failed", Title: "other"}}}
	got := Completions(list, "20261125")
	if len(got) != 1 || got[0] != "20261125-abcdef01\ttask done: fix it" {
		t.Errorf("Completions(2026125) = %q", got)
	}
	if got := Completions(list, "la"); len(got) != 1 || !strings.HasPrefix(got[0], "last\t") {
		t.Errorf("Completions(la) = %q", got)
	}
	if got := Completions(nil, ""); len(got) != 0 {
		t.Errorf("Completions with no run = %q", got)
	}
}

// A task stopped in a batch says to resume the batch; another run, itself.
func TestStopped(t *testing.T) {
	var out strings.Builder
	say := &lines{}
	Stopped(&out, say, runs.Listed{RunRow: store.RunRow{ID: "t1", Command: "task", Status: "interrupted", Parent: "b1"}})
	Stopped(&out, say, runs.Listed{RunRow: store.RunRow{ID: "l1", Command: "loop", Status: "interrupted"}})
	if want := "stopped task run t1: interrupted\nstopped loop run l1: interrupted\n"; out.String() != want {
		t.Errorf("Stopped wrote %q, want %q", out.String(), want)
	}
	if len(say.hints) != 2 || !strings.Contains(say.hints[0], "resume b1") || !strings.Contains(say.hints[1], "resume l1") {
		t.Errorf("Stopped hinted %q", say.hints)
	}
}

// hooks test writes a line per answer, and says so when no hook took the
// event; its JSON is an array, empty rather than null.
func TestHookAnswers(t *testing.T) {
	var out strings.Builder
	say := &lines{}
	answers := []hooks.Answer{{Hook: 0, Name: "notify", Reply: "200 OK", Tries: 1, Ms: 12},
		{Hook: 1, Name: "script", Err: errors.New("exit 1"), Error: "exit 1", Tries: 2, Ms: 30}}
	if err := HookAnswers(&out, say, false, "run.ended", 2, answers); err != nil {
		t.Fatal(err)
	}
	want := "hook 1 (notify): ok: 200 OK (12 ms, 1 attempt)\nhook 2 (script): failed: exit 1 (30 ms, 2 attempts)\n"
	if out.String() != want {
		t.Errorf("HookAnswers wrote %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := HookAnswers(&out, say, true, "run.ended", 3, nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "[]\n" {
		t.Errorf("HookAnswers JSON of none = %q", out.String())
	}
	out.Reset()
	HookAnswers(&out, say, false, "run.ended", 3, nil)
	if len(say.notices) != 1 || say.notices[0] != "no hook takes run.ended (3 in the configuration)" {
		t.Errorf("HookAnswers said %q", say.notices)
	}
}

// resume of a run that had ended done says so, then prints its result;
// the exit code is the result's.
func TestResumed(t *testing.T) {
	var out strings.Builder
	say := &lines{}
	code, err := Resumed(&out, say, true, runs.Resumed{Kind: "task", ID: "t1", Done: true, Task: taskengine.Result{Status: engine.StatusDone}}, tty.Terminal{})
	if err != nil || code != 0 {
		t.Fatalf("Resumed = %d, %v", code, err)
	}
	if len(say.notices) != 1 || say.notices[0] != "task t1 is already done; nothing to resume" {
		t.Errorf("Resumed said %q", say.notices)
	}
	code, _ = Resumed(&out, say, true, runs.Resumed{Kind: "batch", ID: "b1", Batch: batch.Summary{Status: "failed", ExitCode: 3}}, tty.Terminal{})
	if code != 3 {
		t.Errorf("Resumed batch exit code = %d, want 3", code)
	}
}

// config --json keeps "<redacted>" as it is.
func TestConfigJSON(t *testing.T) {
	var out strings.Builder
	if err := Config(&out, []config.Setting{{Key: "env.TOKEN", Value: "<redacted>", Source: "flag"}}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"<redacted>"`) {
		t.Errorf("Config JSON = %q", out.String())
	}
}

// The exit codes' help lists every code of the contract.
func TestExitCodes(t *testing.T) {
	got := ExitCodes()
	for _, row := range exit.Table {
		if !strings.Contains(got, row.Name) {
			t.Errorf("ExitCodes lacks %s:\n%s", row.Name, got)
		}
	}
}

// usage names the backends that reported no window, whether or not another
// reported one.
func TestUsageNamesTheSilentBackends(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	if err := Usage(&b, runs.Usage{Silent: []string{"codex", "evil"}}, now); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.HasPrefix(got, "no subscription window reported yet by codex, evil: only an agent logged in") {
		t.Errorf("no window at all: %q", got)
	}
	b.Reset()
	w := runs.WindowUse{Window: store.Window{Backend: "claude", Kind: "5h", Used: 0.92, ResetsAt: now.Add(time.Hour), At: now.Add(-time.Minute)}, AgeMs: 60000}
	if err := Usage(&b, runs.Usage{Windows: []runs.WindowUse{w}, Silent: []string{"codex"}}, now); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, "claude") || !strings.Contains(got, "92%") || !strings.Contains(got, "1m0s ago") || !strings.Contains(got, "no window reported by codex") {
		t.Errorf("a window and a silent backend: %q", got)
	}
}

// A task that a batch merged with no commit (its branch held no change for
// the base) says that nothing was merged, never "merged into main as".
func TestTaskSummaryNothingMerged(t *testing.T) {
	var b strings.Builder
	TaskSummary(&b, taskengine.Result{Status: engine.StatusDone, Git: &taskengine.GitInfo{Branch: "jlgcli/a-1",
		Merge: &taskengine.MergeInfo{Status: git.MergeMerged, Into: "main", Reason: "by batch b1"}}})
	if got := b.String(); !strings.Contains(got, "nothing merged into main: branch jlgcli/a-1 holds no change for it\n") || strings.Contains(got, " as ") {
		t.Errorf("summary:\n%s", got)
	}
}
