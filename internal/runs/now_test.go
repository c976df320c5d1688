package runs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// sample is a real stream of backend's CLI (internal/agent/testdata).
func sample(t *testing.T, backend, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "agent", "testdata", backend, name+".stdout"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeOutput writes the output log of call n of run.
func writeOutput(t *testing.T, run *store.Run, n int, data []byte) {
	t.Helper()
	w, err := run.Output(n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A live loop's newest call: claude's stream, a tool under way at its end.
func TestNowLiveLoop(t *testing.T) {
	root := t.TempDir()
	const id = "20261124T120000Z-00000loop"
	run, err := store.Create(root, id, store.Meta{Command: "loop", Backend: "claude", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.WriteCheckpoint(store.Progress{Status: store.Running, Iterations: 1}); err != nil {
		t.Fatal(err)
	}
	writeOutput(t, run, 1, []byte("old call\n"))
	now := `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Let me run the tests.\nThen fix them."}]}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./..."}}]}}
`
	writeOutput(t, run, 2, []byte(now))
	got, err := Now(root, id[:20], 5)
	if err != nil {
		t.Fatal(err)
	}
	want := Activity{RunID: id, Found: true, N: 2, Backend: "claude", Size: int64(len(now)), Live: true,
		Activity: agent.Activity{Lines: []string{"Let me run the tests.", "Then fix them."}, Tools: []agent.ToolCall{{Name: "Bash", Input: "go test ./..."}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("now (-want +got):\n%s", diff)
	}
	run.Close()
	if got, err := Now(root, id, 1); err != nil || got.Live || !cmp.Equal(got.Lines, []string{"Then fix them."}) {
		t.Errorf("after its process let go: live %v, lines %q, err %v", got.Live, got.Lines, err)
	}
}

// A task's call is parsed as its tier's backend: the attempt under way's
// tier from the checkpoint, the last attempt's backend, the planner's; a
// tier whose backend is a configured command is plain text.
func TestNowTaskTiers(t *testing.T) {
	spec := local.TaskSpec{
		Tiers:    []local.TierSpec{{Name: "fast", Backend: "codex"}, {Name: "smart", Backend: "claude"}, {Name: "own", Backend: "mine"}},
		Planner:  &local.TierSpec{Name: "plan", Backend: "gemini"},
		Commands: map[string]agent.CommandSpec{"mine": {Command: []string{"./agent.sh"}}},
		Worktree: git.Worktree{Path: "/tmp/TestAgentConformanceclaudewrite2493508416/001/work"},
	}
	opts, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		logs      map[int][]byte
		attempts  int
		tier      int
		last      string
		backend   string
		wantLines []string
		wantTools []agent.ToolCall
	}{
		{"planner", map[int][]byte{0: sample(t, "gemini", "rec-text")}, 0, 0, "", "gemini", []string{"Hello from the script", "DONE"}, []agent.ToolCall{}},
		{"attempt under way in the second tier", map[int][]byte{1: sample(t, "codex", "rec-write"), 2: sample(t, "claude", "rec-write")}, 1, 1, "codex",
			"claude", []string{"wrote it", "DONE"}, []agent.ToolCall{{Name: "Write", Input: "out.txt", Done: true}}},
		{"last attempt ended", map[int][]byte{1: sample(t, "codex", "tool-shell")}, 1, 1, "codex",
			"codex", []string{"I will run a command first.", "Hello from the fake model. All done."}, []agent.ToolCall{{Name: "command_execution", Input: "echo tool-ran > tool-output.txt", Done: true}}},
		{"a command's tier", map[int][]byte{3: []byte("step 1\nstep 2\n{\"type\":\"not parsed\"}\n")}, 2, 2, "claude",
			"", []string{"step 2", `{"type":"not parsed"}`}, []agent.ToolCall{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			const id = "20261124T120000Z-00000task"
			run, err := store.Create(root, id, store.Meta{Command: "task", Backend: "codex", Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			cp := taskengine.Checkpoint{Progress: store.Progress{Status: store.Running, Backend: tc.last}, State: taskengine.State{Attempts: tc.attempts, Tier: tc.tier}}
			if err := run.WriteCheckpoint(cp); err != nil {
				t.Fatal(err)
			}
			for n, b := range tc.logs {
				writeOutput(t, run, n, b)
			}
			run.Close()
			got, err := Now(root, id, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got.Backend != tc.backend || got.Live || !got.Found {
				t.Errorf("backend %q, live %v, found %v; want %q, not live, found", got.Backend, got.Live, got.Found, tc.backend)
			}
			if diff := cmp.Diff(tc.wantLines, got.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTools, got.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// Only the end of a long log is read: a 64 MiB log (its start a hole that
// reading would fill with zeros) costs well under a MiB.
func TestNowReadsOnlyTheTail(t *testing.T) {
	root := t.TempDir()
	const id = "20261124T120000Z-000000big"
	run, err := store.Create(root, id, store.Meta{Command: "run", Backend: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	writeOutput(t, run, 1, nil)
	run.Close()
	f, err := os.OpenFile(run.OutputPath(1), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const hole = 64 << 20
	tail := strings.Repeat("x", 100<<10) + "\ncut line\nlast line\n" // the first line is longer than the tail read
	if _, err := f.WriteAt([]byte(tail), hole); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := Now(root, id, 10)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got.Lines, []string{"cut line", "last line"}) || got.Size != hole+int64(len(tail)) {
		t.Errorf("lines %q, size %d", got.Lines, got.Size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("Now allocated %d bytes for a log of %d", alloc, got.Size)
	}
}

// A batch's agents write in its tasks' runs: the batch has no call of its
// own. An unknown id is a usage error.
func TestNowWithoutOutput(t *testing.T) {
	root := killedBatch(t)
	got, err := Now(root, batchID, 3)
	if err != nil || got.Found || got.Live || got.RunID != batchID || got.Lines == nil || got.Tools == nil {
		t.Errorf("batch: %+v, %v", got, err)
	}
	_, err = Now(root, "nope", 3)
	if ue := (*exit.UsageError)(nil); !errors.As(err, &ue) {
		t.Errorf("unknown run: %v, want a usage error", err)
	}
}
