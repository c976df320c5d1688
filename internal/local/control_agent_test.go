package local

import (
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
	"github.com/jlgcli/jlgcli/internal/store"
)

// scripted is an in-process agent whose each call runs do in the request's
// directory and replies reply.
type scripted struct {
	do    func(dir string) error
	reply string
	calls int
}

func (a *scripted) Name() string { return "scripted" }
func (a *scripted) Check(context.Context) agent.Availability {
	return agent.Availability{Status: agent.Available}
}
func (a *scripted) Run(_ context.Context, req agent.Request) (agent.Response, error) {
	a.calls++
	if a.do != nil {
		if err := a.do(req.Dir); err != nil {
			return agent.Response{}, err
		}
	}
	return agent.Response{Text: a.reply}, nil
}

// An agent wrapped by WatchGit (`jlgcli run` in a repository) that changes
// the repository's config and adds a hook gets its reply through, and both
// changes are put back and said; a call that changes nothing says nothing.
func TestWatchGitPutsBackWhatTheAgentChanged(t *testing.T) {
	dir := gitRepo(t)
	config := filepath.Join(dir, ".git", "config")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	change := true
	a := &scripted{reply: "ok", do: func(string) error {
		if !change {
			return nil
		}
		if err := os.WriteFile(config, append(before, "[core]\n\thooksPath = /tmp/evil\n"...), 0o644); err != nil {
			return err
		}
		return os.WriteFile(hook, []byte("#!/bin/sh\ncurl evil\n"), 0o755)
	}}
	var s said
	w, err := WatchGit(context.Background(), a, dir, Parts{Say: &s})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := w.Run(context.Background(), agent.Request{Prompt: "p", Dir: dir})
	if err != nil || resp.Text != "ok" || a.calls != 1 {
		t.Fatalf("the call: %+v, %v (calls %d)", resp, err, a.calls)
	}
	if after, _ := os.ReadFile(config); string(after) != string(before) {
		t.Errorf("config not put back:\n%s", after)
	}
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Errorf("the hook the agent created is still there: %v", err)
	}
	lines := strings.Join(s.lines, "\n")
	if !strings.Contains(lines, "warning: the agent changed git's control files and jlgcli undid it: ") ||
		!strings.Contains(lines, "modified .git/config") || !strings.Contains(lines, "created .git/hooks/pre-commit") {
		t.Errorf("said:\n%s", lines)
	}

	change = false
	s.lines = nil
	if _, err := w.Run(context.Background(), agent.Request{Prompt: "p", Dir: dir}); err != nil || len(s.lines) != 0 {
		t.Errorf("a call that changed nothing: %v, said %q", err, s.lines)
	}

	// Outside a repository there is nothing of git's to keep.
	plain := t.TempDir()
	if w, err := WatchGit(context.Background(), a, plain, Parts{}); err != nil || w != agent.Agent(a) {
		t.Errorf("outside a repository: %T, %v", w, err)
	}
}

// A task's attempt whose agent changes the repository's config fails its
// gate with a git-control finding, its checks not run, even though its
// change would pass them; the config is put back and the journal and the
// journal keeps what was undone.
func TestTaskAttemptThatChangesGitConfigFails(t *testing.T) {
	repo := gitRepo(t)
	config := filepath.Join(repo, ".git", "config")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	script := `echo 42 > answer.txt; printf '[core]\n\tfsmonitor = /tmp/payload\n' >> "$(git rev-parse --git-common-dir)/config"`
	res, s, state := runScripted(t, repo, "Make the answer 42", script, "grep -qx 42 answer.txt", git.MergeSquash)
	if res.Status == engine.StatusDone || len(res.Attempts) != 1 {
		t.Fatalf("%s after %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	g := res.Attempts[0].Gate
	if g.Status != gate.StatusFail || len(g.Gaming) != 1 || g.Gaming[0].Rule != gate.RuleGitControl || len(g.NotRun) != 1 || g.NotRun[0] != "check" {
		t.Errorf("the attempt's gate: %s, findings %+v, not run %v", g.Status, g.Gaming, g.NotRun)
	}
	if after, _ := os.ReadFile(config); string(after) != string(before) {
		t.Errorf("config not put back:\n%s", after)
	}
	undone := gitControlEvents(t, state, res.RunID)
	if len(undone) != 1 || undone[0].After != "agent" || len(undone[0].Changes) != 1 || undone[0].Changes[0].Change != "modified" ||
		undone[0].Changes[0].Path != config || undone[0].Error != "" {
		t.Errorf("journaled: %+v", undone)
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "warning: the agent changed git's control files and jlgcli undid it: modified ") {
		t.Errorf("said:\n%s", strings.Join(s.lines, "\n"))
	}
}

// gitControlEvents are the git-control events of run id's journal.
func gitControlEvents(t *testing.T, state, id string) []GitControlData {
	t.Helper()
	run, err := store.Open(state, id)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	events, _, err := Events(run)
	if err != nil {
		t.Fatal(err)
	}
	var out []GitControlData
	for _, ev := range events {
		if ev.Type == EventGitControl {
			var d GitControlData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}
