package local

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
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
	var saved engine.TaskResult
	if found, err := run.ReadReport(&saved); !found || err != nil || saved.Status != engine.StatusDone {
		t.Errorf("report.json after resume: found %v, %v, %s", found, err, saved.Status)
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "is done but was stopped before its end") {
		t.Errorf("said:\n%s", strings.Join(s.lines, "\n"))
	}
}
