package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Activity is what a run's agent is doing now, or did last: read from the
// tail of the output of its newest agent call.
type Activity struct {
	RunID string `json:"runId"`
	// Found: an agent call has written output; N is its number (the loop's
	// iteration, the task's attempt, 0 for a task's planner), Backend its
	// agent.
	Found   bool   `json:"found"`
	N       int    `json:"n"`
	Backend string `json:"backend,omitempty"`
	// Size is how many bytes that call's output log holds: it grows while
	// the agent writes.
	Size int64 `json:"size"`
	// Live: a process runs the run now (store.Run.Live; a run on Temporal:
	// its record says it runs).
	Live bool `json:"live"`
	// The last lines of the agent's text and its last tool calls
	// (agent.ActivityOf): the agent's own words, to be made safe where
	// they are shown.
	agent.Activity
}

// nowTail bounds what Now reads of an output log: its end only.
const nowTail = 64 << 10

// Now is what the agent of run id (or a unique prefix of it) under root is
// doing now, or did last: the newest agent call's number, its last lines
// (at most lines) of text and its last tool calls, read from the last
// nowTail bytes of its output log; and whether the run is live. A run
// whose agent wrote nothing yet (or a batch, whose agents write in their
// tasks' runs) has Found false.
func Now(root, id string, lines int) (Activity, error) {
	run, err := Open(root, id)
	if err != nil {
		return Activity{}, err
	}
	defer run.Close()
	act := Activity{RunID: run.ID, Activity: agent.Activity{Lines: []string{}, Tools: []agent.ToolCall{}}}
	if run.Meta.Temporal != nil {
		var p store.Progress
		act.Live = run.ReadCheckpoint(&p) == nil && p.Status == store.Running
	} else {
		act.Live = run.Live()
	}
	n, err := newestOutput(run.OutputDir())
	if err != nil || n < 0 {
		return act, err
	}
	tail, size, err := readTail(run.OutputPath(n), nowTail)
	if errors.Is(err, fs.ErrNotExist) {
		return act, nil // made again under us (an iteration redone)
	}
	if err != nil {
		return act, err
	}
	backend, dir := callOf(run, n)
	act.Found, act.N, act.Backend, act.Size = true, n, backend, size
	act.Activity = agent.ActivityOf(backend, tail, dir, lines)
	return act, nil
}

// readTail reads the last limit bytes of the file at path, from the start of
// a line (a first line cut by the bound is left out), and the file's size.
func readTail(path string, limit int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	from := max(0, size-limit)
	buf := make([]byte, size-from)
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, size, err
	}
	buf = buf[:n]
	if from > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	return buf, size, nil
}

// callOf is the backend that made agent call n of run, as far as its
// records tell, and the agent's working directory ("" when unknown). A
// task's call is its planner's (0), its attempt under way's (the tier its
// checkpoint is at), or its last attempt's; a tier whose backend is a
// configured command has none to parse ("").
func callOf(run *store.Run, n int) (backend, dir string) {
	dir = run.Meta.Cwd
	if run.Meta.Command != "task" || run.Meta.Temporal != nil {
		return run.Meta.Backend, dir
	}
	var spec local.TaskSpec
	_ = json.Unmarshal(run.Meta.Options, &spec)
	if spec.Worktree.Path != "" {
		dir = spec.Worktree.Path
	}
	var cp taskengine.Checkpoint
	_ = run.ReadCheckpoint(&cp)
	switch {
	case n == 0 && spec.Planner != nil:
		backend = spec.Planner.Backend
	case n > cp.State.Attempts && cp.State.Tier >= 0 && cp.State.Tier < len(spec.Tiers):
		backend = spec.Tiers[cp.State.Tier].Backend
	case n == cp.State.Attempts && cp.Backend != "":
		backend = cp.Backend
	default:
		backend = run.Meta.Backend
	}
	if _, ok := spec.Commands[backend]; ok {
		return "", dir
	}
	return backend, dir
}
