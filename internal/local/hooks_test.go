package local

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// A command hook of a task is told, in order, that it started, its
// attempt's verdict, and its end with its branch, status and exit code;
// a done task whose landing was refused also needs the user, and says why.
func TestTaskHooksToldOfItsLife(t *testing.T) {
	repo := gitRepo(t)
	got := filepath.Join(t.TempDir(), "events")
	d := &hooks.Dispatcher{Hooks: []hooks.Hook{{On: []string{"*"}, Command: []string{"sh", "-c", "cat >> " + got + "; echo >> " + got}}}}
	spec := TaskSpec{
		Tiers: []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
		// The user edits a tracked file of their checkout while the task runs.
		Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo 42 > answer.txt; echo mine > " + filepath.Join(repo, "answer.txt")}}},
		Repo:     repo, TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: git.MergeSquash,
		Checks:  []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
		Sandbox: sandbox.Config{Mode: sandbox.Off},
	}
	res, err := StartTask(context.Background(), NewTask{Prompt: "Make the answer 42", Spec: spec, StateDir: t.TempDir()}, Parts{Hooks: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusDone || res.Git.Merge.Status != git.MergeRefused {
		t.Fatalf("%s: %s; merge %+v", res.Status, res.Details, res.Git.Merge)
	}
	f, err := os.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []hooks.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e hooks.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Event)
		if e.RunID != res.RunID || e.Command != "task" || e.Title != "Make the answer 42" {
			t.Errorf("%s: run %q, command %q, title %q", e.Event, e.RunID, e.Command, e.Title)
		}
	}
	want := []string{hooks.RunStarted, hooks.TaskAttempt, hooks.RunEnded, hooks.RunNeedsAttention}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if a := events[1]; a.Attempt != 1 || a.Tier != "fake" || a.Action != taskengine.ActionPass || a.Gate != "pass" {
		t.Errorf("attempt: %+v", a)
	}
	if e := events[2]; e.Status != "done" || e.ExitCode == nil || *e.ExitCode != res.ExitCode || e.Branch != res.Git.Branch {
		t.Errorf("end: %+v", e)
	}
	if e := events[3]; !strings.HasPrefix(e.Reason, "its landing was refused: dirty: ") || !strings.Contains(e.Text, "needs you") {
		t.Errorf("needs attention: %+v", e)
	}
}
