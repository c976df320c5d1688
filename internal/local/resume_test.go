package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// openLocked opens run id of state, locked, with its journal's events.
func openLocked(t *testing.T, state, id string) (*store.Run, []engine.Event) {
	t.Helper()
	run, err := store.Open(state, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	events, err := lockedEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	return run, events
}

// A done task read back (resume, runs show) is the result it ended with:
// resuming it does nothing and says it was done, and its journal alone
// tells the same attempts and status.
func TestDoneTaskReadBackAsItEnded(t *testing.T) {
	repo := gitRepo(t)
	res, _, state := runScripted(t, repo, "Make the answer 42", "echo 42 > answer.txt", "grep -qx 42 answer.txt", git.MergeSquash)
	if res.Status != engine.StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Details)
	}
	head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	run, events := openLocked(t, state, res.RunID)

	back, done, err := ResumeTask(context.Background(), state, run, events, Limits{}, Parts{})
	if err != nil || !done {
		t.Fatalf("resume of a done task: done %v, %v", done, err)
	}
	if back.Status != res.Status || back.ExitCode != res.ExitCode || back.RunID != res.RunID || len(back.Attempts) != len(res.Attempts) ||
		back.Git == nil || back.Git.Merge == nil || back.Git.Merge.Commit != res.Git.Merge.Commit || back.Summary != res.Summary {
		t.Errorf("read back:\n%+v\nended:\n%+v", back, res)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != head {
		t.Errorf("resuming a done task moved main to %s", now)
	}

	journal, err := taskResultOf(run, events)
	if err != nil {
		t.Fatal(err)
	}
	if journal.Status != engine.StatusDone || len(journal.Attempts) != len(res.Attempts) || journal.Attempts[0].Commit != res.Attempts[0].Commit {
		t.Errorf("from the journal: %s, %d attempts (commit %q); ended %d (commit %q)", journal.Status, len(journal.Attempts),
			journal.Attempts[0].Commit, len(res.Attempts), res.Attempts[0].Commit)
	}
}

// A done task killed after it merged, before it wrote its report, is
// ended by resume: the report is written, the result says merged at the
// commit that landed before the kill, and main keeps that one squash commit
// (nothing lands twice).
func TestDoneTaskKilledBeforeItsReport(t *testing.T) {
	repo := gitRepo(t)
	res, _, state := runScripted(t, repo, "Make the answer 42", "echo 42 > answer.txt", "grep -qx 42 answer.txt", git.MergeSquash)
	if res.Status != engine.StatusDone || res.Git.Merge.Status != git.MergeMerged {
		t.Fatalf("%s: %s", res.Status, res.Details)
	}
	head := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main"))
	run, events := openLocked(t, state, res.RunID)
	if err := os.Remove(run.ReportPath()); err != nil {
		t.Fatal(err)
	}

	var s said
	back, done, err := ResumeTask(context.Background(), state, run, events, Limits{}, Parts{Say: &s})
	if err != nil || done {
		t.Fatalf("resume: done %v, %v", done, err)
	}
	if back.Status != engine.StatusDone || back.Git == nil || back.Git.Merge == nil {
		t.Fatalf("ended as %s, git %+v", back.Status, back.Git)
	}
	if now := strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")); now != head {
		t.Errorf("main moved from %s to %s: the change landed twice?\n%s", head, now, gitOut(t, repo, "log", "--oneline", "main"))
	}
	if m := back.Git.Merge; m.Status != git.MergeMerged || m.Commit != head {
		t.Errorf("the merge made before the kill: %+v, want merged at %s", m, head)
	}
	var saved taskengine.Result
	if found, err := run.ReadReport(&saved); !found || err != nil || saved.Status != engine.StatusDone {
		t.Errorf("report.json after resume: found %v, %v, %s", found, err, saved.Status)
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "is done but was stopped before its end") {
		t.Errorf("said:\n%s", strings.Join(s.lines, "\n"))
	}
}

// A loop stopped by its iteration limit resumes with a higher one where it
// stopped (its transcript kept, the agent called only for the new
// iterations) and ends done; resumed again, it is read back as it ended.
func TestLoopResumedPastItsLimitThenReadBack(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "calls")
	cmd := agent.CommandSpec{Command: []string{"sh", "-c",
		`cat >/dev/null; echo x >> ` + count + `; n=$(wc -l < ` + count + `); echo "call $n"; [ "$n" -ge 3 ] && echo DONE; true`}}
	spec := LoopSpec{Backend: "fake", Command: &cmd, Cwd: dir, MaxIterations: 2, TimeoutMs: 60000, CompletionMode: "marker", Marker: "DONE",
		NoProgressLimit: 10, Sandbox: sandbox.Config{Mode: sandbox.Off}}
	a, err := Parts{}.Registry(map[string]agent.CommandSpec{"fake": cmd}, nil, nil).Get("fake")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	first, err := StartLoop(context.Background(), spec, a, "count to three", state, Parts{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != engine.StatusMaxIterations || first.Iterations != 2 || first.ExitCode == 0 {
		t.Fatalf("first run: %s (exit %d) after %d iterations", first.Status, first.ExitCode, first.Iterations)
	}

	run, events := openLocked(t, state, first.RunID)
	more := 5
	res, done, err := ResumeLoop(context.Background(), state, run, events, Limits{MaxIterations: &more}, Parts{})
	if err != nil || done {
		t.Fatalf("resume: done %v, %v", done, err)
	}
	if res.Status != engine.StatusDone || res.Iterations != 3 || res.ExitCode != 0 || len(res.Transcript) != 3 || res.RunID != first.RunID {
		t.Fatalf("resumed: %s (exit %d) after %d iterations, %d in the transcript", res.Status, res.ExitCode, res.Iterations, len(res.Transcript))
	}
	if calls, _ := os.ReadFile(count); strings.Count(string(calls), "\n") != 3 {
		t.Errorf("the agent was called %d times, want 3", strings.Count(string(calls), "\n"))
	}

	events, _, err = Events(run)
	if err != nil {
		t.Fatal(err)
	}
	back, done, err := ResumeLoop(context.Background(), state, run, events, Limits{}, Parts{})
	if err != nil || !done {
		t.Fatalf("resume of a done loop: done %v, %v", done, err)
	}
	if back.Status != res.Status || back.Iterations != res.Iterations || back.Text != res.Text || back.ExitCode != res.ExitCode {
		t.Errorf("read back %s, %d iterations, %q; ended %s, %d, %q", back.Status, back.Iterations, back.Text, res.Status, res.Iterations, res.Text)
	}
	if calls, _ := os.ReadFile(count); strings.Count(string(calls), "\n") != 3 {
		t.Errorf("reading a done loop back called the agent")
	}
}

// A limit that a run cannot take is refused by resume with a usage error
// naming the flag.
func TestLimitsRefusedForTheWrongRun(t *testing.T) {
	n, budget := 3, 1.0
	for _, c := range []struct {
		command string
		limits  Limits
		want    string
	}{
		{"task", Limits{MaxIterations: &n}, "--max-iterations is a loop's limit"},
		{"loop", Limits{BudgetUSD: &budget}, "--budget is a task's"},
		{"batch", Limits{MaxIterations: &n}, "--max-iterations is a task's or a loop's"},
	} {
		if err := c.limits.Check(c.command, "R"); !exit.IsUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error %q", c.command, err, c.want)
		}
	}
	if err := (Limits{MaxIterations: &n}).Check("loop", "R"); err != nil {
		t.Errorf("a loop's --max-iterations refused: %v", err)
	}
}

// A task resumed and killed before it stopped again has a journal that
// went further than its report: it is read back from the journal, with its
// every attempt, and the user is told why; a report as far as the journal
// is read as it is.
func TestTaskResultOfAJournalThatWentFurther(t *testing.T) {
	repo := gitRepo(t)
	res, _, state := runScripted(t, repo, "Make the answer 42", "echo 43 > answer.txt", "grep -qx 42 answer.txt", git.MergeSquash)
	if res.Status == engine.StatusDone || len(res.Attempts) != 1 {
		t.Fatalf("%s after %d attempts", res.Status, len(res.Attempts))
	}
	run, events := openLocked(t, state, res.RunID)
	old, err := os.ReadFile(run.ReportPath())
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := ResumeTask(context.Background(), state, run, events, Limits{}, Parts{})
	if err != nil || len(again.Attempts) != 2 {
		t.Fatalf("resume: %d attempts, %v", len(again.Attempts), err)
	}
	events, _, err = Events(run)
	if err != nil {
		t.Fatal(err)
	}
	var s said
	if got, err := TaskResultOf(run, events, Parts{Say: &s}); err != nil || len(got.Attempts) != 2 || got.Status != again.Status || len(s.lines) != 0 {
		t.Errorf("with its last report: %s, %d attempts, %v; said %q", got.Status, len(got.Attempts), err, s.lines)
	}
	// Killed before it wrote its new report: the first run's is there.
	if err := os.WriteFile(run.ReportPath(), old, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := TaskResultOf(run, events, Parts{Say: &s})
	if err != nil || len(got.Attempts) != 2 || got.Status != again.Status {
		t.Errorf("from the journal: %s, %d attempts, %v", got.Status, len(got.Attempts), err)
	}
	if said := strings.Join(s.lines, "\n"); !strings.Contains(said, "went on after it wrote report.json (1 attempt, the journal has 2)") {
		t.Errorf("said:\n%s", said)
	}
}

// A resumed task is listed running from its start, before its first
// checkpoint (the first heartbeat is 10s away): `runs --status running`
// finds it while its agent works, and its row says how it ended after.
func TestResumedTaskIndexedRunningAtOnce(t *testing.T) {
	repo := gitRepo(t)
	dir := t.TempDir()
	mark, started, goOn := filepath.Join(dir, "mark"), filepath.Join(dir, "started"), filepath.Join(dir, "go")
	script := `if [ -f "` + mark + `" ]; then touch "` + started + `"; while [ ! -f "` + goOn + `" ]; do sleep 0.05; done; echo 42 > answer.txt; else touch "` + mark + `"; fi`
	spec := TaskSpec{
		Tiers:    []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; " + script}}},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: git.MergeSquash,
		Checks:  []gate.Check{{Name: "check", Shell: "grep -qx 42 answer.txt"}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	state := t.TempDir()
	res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", Spec: spec, StateDir: state}, Parts{})
	if err != nil || res.Status != engine.StatusMaxIterations {
		t.Fatalf("first run: %v %s", err, res.Status)
	}
	running := func() bool {
		idx, err := store.OpenIndex(state)
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		rows, err := idx.List(store.Filter{Status: store.Running})
		return err == nil && len(rows) == 1 && rows[0].ID == res.RunID
	}
	if running() {
		t.Fatal("listed running before it was resumed")
	}
	run, events := openLocked(t, state, res.RunID)
	ended := make(chan taskengine.Result, 1)
	go func() {
		back, _, err := ResumeTask(context.Background(), state, run, events, Limits{}, Parts{})
		if err != nil {
			t.Error(err)
		}
		ended <- back
	}()
	// Once its agent works, at once: its heartbeat, which would write the
	// row too, comes 10s after the attempt began.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the resumed task's agent never started")
		}
	}
	listed := running()
	if err := os.WriteFile(goOn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !listed {
		t.Error("the resumed task is not listed running while its agent works")
	}
	if back := <-ended; back.Status != engine.StatusDone {
		t.Fatalf("resumed: %s (%s)", back.Status, back.Details)
	}
	if running() {
		t.Error("still listed running once done")
	}
}
