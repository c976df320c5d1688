package local

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// copyFixture copies the run directory testdata/format1/<name> into a state
// root under a temporary directory, @CWD@ becoming cwd.
func copyFixture(t *testing.T, name, id, cwd string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "runs", id)
	if err := os.MkdirAll(filepath.Join(dir, "output"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "format1", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "@CWD@", cwd))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A loop written by the format-1 jlgcli (capitalised keys, a check's timeout
// in nanoseconds, no handoff key) resumes: its settings are read, its
// iteration kept, and its fresh sessions still handed off as they were.
func TestResumeLoopOfFormat1(t *testing.T) {
	cwd := t.TempDir()
	const id = "20261124T192948Z-c056e766"
	root := copyFixture(t, "loop", id, cwd)
	run, err := store.Open(root, id)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Lock(); err != nil {
		t.Fatal(err)
	}
	var s LoopSpec
	if err := json.Unmarshal(run.Meta.Options, &s); err != nil {
		t.Fatal(err)
	}
	want := LoopSpec{Backend: "fake", Command: &agent.CommandSpec{Command: []string{"sh", "-c", "cat >/dev/null; echo 'still working'"}, Prompt: "stdin"},
		Cwd: cwd, MaxIterations: 1, TimeoutMs: 300000, CompletionMode: "marker", Marker: "DONE", NoProgressLimit: 3,
		StallTimeoutMs: 600000, MaxWaitMs: 3600000, Session: "fresh",
		Checks:    []gate.Check{{Name: "true", Shell: "true", Timeout: 10 * time.Minute}},
		Premature: config.Premature{Enabled: true}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("format-1 settings (-want +got):\n%s", diff)
	}

	events, _, err := Events(run)
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	res, done, err := ResumeLoop(context.Background(), root, run, events, Limits{MaxIterations: &two}, Parts{})
	if err != nil || done {
		t.Fatalf("resume: done %v, %v", done, err)
	}
	if res.Status != engine.StatusMaxIterations || res.Iterations != 2 || len(res.Transcript) != 2 {
		t.Fatalf("%s after %d iterations (%d in the transcript): %s", res.Status, res.Iterations, len(res.Transcript), res.Details)
	}
	if res.Transcript[0].Response != "still working" || !strings.HasPrefix(res.Transcript[0].Prompt, "Say DONE when done\n\nKeep short progress notes") {
		t.Errorf("the first iteration is not the fixture's: %+v", res.Transcript[0])
	}
	if !strings.HasPrefix(res.Transcript[1].Prompt, "You are continuing a task") {
		t.Errorf("a format-1 loop must go on with its handoff; the 2nd prompt is:\n%s", res.Transcript[1].Prompt)
	}
}

// A task's settings written by the format-1 jlgcli are read whole.
func TestTaskSpecOfFormat1(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "format1", "task", "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta store.Meta
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	var s TaskSpec
	if err := json.Unmarshal(meta.Options, &s); err != nil {
		t.Fatal(err)
	}
	if meta.Format != 1 || len(s.Checks) != 1 || s.Checks[0].Timeout != 10*time.Minute || s.Checks[0].Shell != "sh check.sh" {
		t.Errorf("checks %+v (format %d)", s.Checks, meta.Format)
	}
	if c := s.Commands["fake"]; len(c.Command) != 3 || c.Prompt != "stdin" {
		t.Errorf("command backend %+v", c)
	}
	if s.Worktree.Branch != "jlgcli/make-the-answer-42-7e95375f" || s.Worktree.Base == "" || s.TimeoutMs != 1800000 || s.Tiers[0].Attempts != 3 {
		t.Errorf("spec %+v", s)
	}
}

// golden compares got with testdata/golden/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// The files of a run directory as this version writes them: meta.json,
// checkpoint.json and a journal line, for a task and a loop.
func TestRunFilesGolden(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	check := gate.Check{Name: "go test", Shell: "go test ./...", Timeout: 5 * time.Minute}
	task := TaskSpec{
		Tiers:    []TierSpec{{Name: "fast", Backend: "claude", Model: "haiku", Attempts: 3}, {Name: "smart", Backend: "claude", Model: "sonnet", Attempts: 2}},
		Commands: map[string]agent.CommandSpec{"mine": {Command: []string{"my-agent", "--yes"}, Prompt: "stdin"}},
		Repo:     "/repo", TimeoutMs: 1800000, StallTimeoutMs: 600000, MaxWaitMs: 3600000, BudgetUSD: 1,
		EscalateFrom: "base", AntiGaming: "refuse", Checks: []gate.Check{check}, Similarity: 0.9, SameErrors: 3,
		Embeddings: &config.Embeddings{URL: "http://127.0.0.1:9/v1", Model: "embed", APIKeyEnv: "EMBED_KEY", Threshold: 0.95},
		Commit:     "branch", Merge: "squash",
		Worktree: git.Worktree{ID: "20261124T120000Z-0123abcd", RepoDir: "/repo", Path: "/repo/.jlgcli/worktrees/20261124T120000Z-0123abcd",
			Branch: "jlgcli/make-the-answer-42-0123abcd", Base: "1111111111111111111111111111111111111111", BaseBranch: "main"},
	}
	loop := LoopSpec{Backend: "codex", Cwd: "/repo", MaxIterations: 10, TimeoutMs: 300000, CompletionMode: "json", Marker: "DONE",
		NoProgressLimit: 3, StallTimeoutMs: 600000, MaxWaitMs: 3600000, Session: "fresh", Handoff: true,
		Checks: []gate.Check{check}, Baseline: true, Premature: config.Premature{Enabled: true, Phrases: []string{"next steps"}}}

	files := func(command string, spec any, cp any, ev engine.Event) (meta, checkpoint, line []byte) {
		root := t.TempDir()
		opts, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		run, err := store.Create(root, "20261124T120000Z-0123abcd", store.Meta{Command: command, Backend: "claude", Prompt: "Make the answer 42",
			Options: opts, Cwd: "/repo", StartedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		if err := run.WriteCheckpoint(cp); err != nil {
			t.Fatal(err)
		}
		if err := run.Append(ev); err != nil {
			t.Fatal(err)
		}
		read := func(name string) []byte {
			data, err := os.ReadFile(filepath.Join(run.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
		return read("meta.json"), read("checkpoint.json"), read("events.jsonl")
	}

	state := taskengine.State{Attempts: 1, InTier: 1, Start: "2222222222222222222222222222222222222222", StepBase: "2222222222222222222222222222222222222222",
		ElapsedMs: 61000, Outcomes: map[string]string{"fast": "passed"}}
	tcp := taskengine.Checkpoint{RunID: "20261124T120000Z-0123abcd", State: state}
	tcp.Status, tcp.Iterations, tcp.CostUSD, tcp.CostKnown, tcp.DurationMs, tcp.Heartbeat = "running", 1, 0.0123, true, 61000, at
	tcp.Tiers = []taskengine.TierStat{{Name: "fast", Attempts: 1, CostUSD: 0.0123, Passed: 1}, {Name: "smart"}}
	attempt := taskengine.Attempt{Number: 1, Tier: "fast", InTier: 1, Backend: "claude", Model: "haiku", StartedAt: at, DurationMs: 60000,
		Prompt: "Make the answer 42", Response: "Done.", InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123, CostKnown: true,
		Start: "2222222222222222222222222222222222222222", Result: "3333333333333333333333333333333333333333",
		Change: taskengine.Change{Hash: "abc", Files: []git.FileChange{{Path: "answer.txt", Status: "M", Added: 1, Deleted: 1}}, Size: 120},
		Action: taskengine.ActionPass, Commit: "4444444444444444444444444444444444444444"}
	data, _ := json.Marshal(taskengine.AttemptData{Attempt: attempt, State: state})
	meta, cp, line := files("task", task, tcp, engine.Event{Type: taskengine.EventAttempt, Iteration: 1, Time: at, Data: data})
	golden(t, "task-meta.json", meta)
	golden(t, "task-checkpoint.json", cp)
	golden(t, "task-events.jsonl", line)

	lst := engine.State{Iterations: 1, ElapsedMs: 4000, Prompt: "Now write the tests", Repeats: 1}
	lcp := engine.Checkpoint{RunID: "20261124T120000Z-0123abcd", State: lst}
	lcp.Status, lcp.Iterations, lcp.DurationMs, lcp.Heartbeat = "running", 1, 4000, at
	entry := engine.Entry{Iteration: 1, StartedAt: "2026-11-24T12:00:00.000Z", Prompt: "Start the work",
		Response: `{"status":"continue","next":"Now write the tests"}`, DurationMs: 4000, SessionID: "s1"}
	data, _ = json.Marshal(engine.IterationData{Entry: entry, Verdict: "continue", State: lst})
	meta, cp, line = files("loop", loop, lcp, engine.Event{Type: engine.EventIteration, Iteration: 1, Time: at, Data: data})
	golden(t, "loop-meta.json", meta)
	golden(t, "loop-checkpoint.json", cp)
	golden(t, "loop-events.jsonl", line)
}
