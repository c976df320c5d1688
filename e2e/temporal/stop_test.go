package temporal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// background is a jlgcli started and not waited for.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// start starts jlgcli with args in the world's directory; it is killed at
// the end of the test if it still runs.
func (w *world) start(args ...string) *background {
	w.t.Helper()
	b := &background{cmd: exec.Command(jlgcli, args...)}
	b.cmd.Env, b.cmd.Dir = w.env, w.dir
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	must(w.t, b.cmd.Start())
	w.t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			_ = b.cmd.Process.Kill()
			_ = b.cmd.Wait()
		}
	})
	return b
}

// wait waits (at most limit) for b to end and returns its exit code.
func (b *background) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		must(t, err)
		return 0
	case <-time.After(limit):
		_ = b.cmd.Process.Kill()
		<-done
		t.Fatalf("jlgcli %s still ran after %s\n%s\n%s", strings.Join(b.cmd.Args[1:], " "), limit, b.stdout.String(), b.stderr.String())
		return -1
	}
}

// runID is the id of the newest run of command kept by the world's
// jlgcli, waiting for it to be listed.
func (w *world) runID(command string) string {
	w.t.Helper()
	return w.runIDIn(w.dir, command)
}

// runIDIn is runID for the runs of the repository of dir.
func (w *world) runIDIn(dir, command string) string {
	w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out, _, _ := w.runIn(dir, "runs", "--json")
		var rows []struct{ ID, Command string }
		if json.Unmarshal([]byte(out), &rows) == nil {
			for _, r := range rows {
				if r.Command == command {
					return r.ID
				}
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("no %s run listed:\n%s", command, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// running reports whether a process runs `sleep arg`.
func running(arg string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		if data, err := os.ReadFile(f); err == nil && string(data) == "sleep\x00"+arg+"\x00" {
			return true
		}
	}
	return false
}

// TestStopATaskOnWorkers: jlgcli stop of a task running on a worker
// cancels its workflow: the agent under way is stopped, the jlgcli that
// follows the task exits 130 saying how to resume it, its record says
// interrupted, and jlgcli resume finishes it on the workers (the stopped
// attempt made again, counted once).
func TestStopATaskOnWorkers(t *testing.T) {
	w := newWorld(t, "JLGCLI_E2E_SLOW=317")
	w.worker("w1")
	follower := w.start(w.submit("--json", "Fix the answer")...)
	w.firstCall()
	id := w.runID("task")
	if !running("317") {
		t.Fatal("the agent is not running")
	}
	stdout, stderr, code := w.run("stop", id)
	if code != 0 || !strings.Contains(stdout, "stopped task run "+id+": interrupted") {
		t.Fatalf("stop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if running("317") {
		t.Error("the agent still runs after stop returned")
	}
	if code := follower.wait(t, time.Minute); code != exit.Interrupted {
		t.Fatalf("the following jlgcli exited %d, want %d\n%s\n%s", code, exit.Interrupted, follower.stdout.String(), follower.stderr.String())
	}
	var res taskengine.Result
	must(t, json.Unmarshal(follower.stdout.Bytes(), &res))
	if res.Status != engine.StatusInterrupted || len(res.Attempts) != 0 || !strings.Contains(res.Details, "interrupted during attempt 1") {
		t.Errorf("the stopped task: %s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	if want := "continue it with: jlgcli resume " + id; !strings.Contains(follower.stderr.String(), want) {
		t.Errorf("the follower did not say %q:\n%s", want, follower.stderr.String())
	}
	out, stderr, code := w.run("show", "--json", id)
	var shown taskengine.Result
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Status != engine.StatusInterrupted {
		t.Errorf("show of the stopped task: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, stderr, code := w.run("stop", id); code != exit.Usage || !strings.Contains(stderr, "has ended") {
		t.Errorf("stop of the stopped task: exit %d, want %d\n%s", code, exit.Usage, stderr)
	}
	if *update {
		recordHistory(t, w, id, filepath.Join("..", "..", "internal", "temporal", "testdata", "task-stop-history.json"))
	}

	stdout, stderr, code = w.run("resume", "--json", id)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 {
		t.Errorf("after resume: %s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	if calls := w.callsMade(); len(calls) != 2 {
		t.Errorf("agent calls: %v, want the stopped one and the one of the resume", calls)
	}
	if got := w.git("", "--git-dir", w.remote, "show", res.Git.Branch+":answer.txt"); got != "right" {
		t.Errorf("the task branch has answer.txt %q", got)
	}
}

// holdAgent writes <id>.txt for the sheet whose heading is # <id>; a's
// first call sleeps 319 seconds.
const holdAgent = `#!/bin/sh
p=$(cat)
id=$(printf '%s\n' "$p" | sed -n 's/^# \([a-z]*\)$/\1/p' | head -1)
echo "$JLGCLI_E2E_WORKER-$id" >> "$JLGCLI_E2E_CALLS"
if [ "$id" = a ] && [ "$(grep -c -- -a "$JLGCLI_E2E_CALLS")" -eq 1 ]; then sleep 319; fi
echo right > "$id.txt"
echo "wrote $id.txt"
`

// TestStopATaskOfABatchOnWorkers: jlgcli stop of one task of a batch on
// the workers stops that task alone: the other task is done and lands, the
// task that depends on the stopped one is left unstarted, the batch ends
// incomplete (3); jlgcli resume BATCH goes on with the stopped task and
// its dependent to done.
func TestStopATaskOfABatchOnWorkers(t *testing.T) {
	w := newWorld(t)
	w.worker("w1", "--concurrency", "2")
	sheets := w.sheets(holdAgent, map[string]string{"a": "# a\n", "b": "---\ndepends: [a]\n---\n# b\n", "c": "# c\n"})
	follower := w.start(w.batch(sheets, "--check", "true", "-j", "2", "--json")...)
	batchID := w.runID("batch")
	deadline := time.Now().Add(time.Minute)
	for !running("319") || !strings.Contains(strings.Join(w.callsMade(), " "), "-c") {
		if time.Now().After(deadline) {
			t.Fatalf("a and c did not both start: %v", w.callsMade())
		}
		time.Sleep(100 * time.Millisecond)
	}
	stdout, stderr, code := w.run("stop", batchID+"-a")
	if code != 0 || !strings.Contains(stdout, "stopped task run "+batchID+"-a: interrupted") || !strings.Contains(stderr, "'jlgcli resume "+batchID+"' runs it later") {
		t.Fatalf("stop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code := follower.wait(t, 2*time.Minute); code != 3 {
		t.Fatalf("the batch exited %d, want 3\n%s\n%s", code, follower.stdout.String(), follower.stderr.String())
	}
	var sum batchResult
	must(t, json.Unmarshal(follower.stdout.Bytes(), &sum))
	got := map[string]string{}
	for _, tk := range sum.Tasks {
		got[tk.ID] = tk.Status + ": " + tk.Details
	}
	if sum.Status != "incomplete" || !strings.HasPrefix(got["a"], "interrupted") || !strings.HasPrefix(got["c"], "done") ||
		got["b"] != "pending: not started: dependency a was interrupted" {
		t.Fatalf("batch %s, tasks %v", sum.Status, got)
	}
	stdout, stderr, code = w.run("resume", "--json", batchID)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var again batchResult
	must(t, json.Unmarshal([]byte(stdout), &again))
	for _, tk := range again.Tasks {
		if tk.Status != "done" {
			t.Errorf("after resume, task %s: %s (%s)", tk.ID, tk.Status, tk.Details)
		}
	}
	branch := "jlgcli/batch-" + batchID
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if got := w.git("", "--git-dir", w.remote, "show", branch+":"+f); got != "right" {
			t.Errorf("the batch's branch has %s %q", f, got)
		}
	}
}

// TestStopABatchOnWorkers: jlgcli stop of a batch on the workers stops it
// as Ctrl-C stops a local batch: its running task is stopped, no other
// starts, the jlgcli that follows it exits 130; jlgcli resume BATCH runs
// every task to done.
func TestStopABatchOnWorkers(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	sheets := w.sheets(holdAgent, map[string]string{"a": "# a\n", "b": "---\ndepends: [a]\n---\n# b\n", "c": "# c\n"})
	follower := w.start(w.batch(sheets, "--check", "true", "-j", "1", "--json")...)
	batchID := w.runID("batch")
	deadline := time.Now().Add(time.Minute)
	for !running("319") {
		if time.Now().After(deadline) {
			t.Fatalf("a did not start: %v", w.callsMade())
		}
		time.Sleep(100 * time.Millisecond)
	}
	stdout, stderr, code := w.run("stop", batchID)
	if code != 0 || !strings.Contains(stdout, "stopped batch run "+batchID+": interrupted") {
		t.Fatalf("stop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if running("319") {
		t.Error("a's agent still runs after stop returned")
	}
	if code := follower.wait(t, time.Minute); code != exit.Interrupted {
		t.Fatalf("the batch exited %d, want %d\n%s\n%s", code, exit.Interrupted, follower.stdout.String(), follower.stderr.String())
	}
	if want := "continue it with: jlgcli resume " + batchID; !strings.Contains(follower.stderr.String(), want) {
		t.Errorf("the follower did not say %q:\n%s", want, follower.stderr.String())
	}
	var sum batchResult
	must(t, json.Unmarshal(follower.stdout.Bytes(), &sum))
	got := map[string]string{}
	for _, tk := range sum.Tasks {
		got[tk.ID] = tk.Status
	}
	if sum.Status != "interrupted" || got["a"] != "interrupted" || got["b"] != "pending" || got["c"] != "pending" {
		t.Fatalf("batch %s, tasks %v; want interrupted with a interrupted, b and c not started", sum.Status, got)
	}
	if *update {
		recordHistory(t, w, batchID, filepath.Join("..", "..", "internal", "temporal", "testdata", "batch-stop-history.json"))
	}
	stdout, stderr, code = w.run("resume", "--json", batchID)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var again batchResult
	must(t, json.Unmarshal([]byte(stdout), &again))
	for _, tk := range again.Tasks {
		if tk.Status != "done" {
			t.Errorf("after resume, task %s: %s (%s)", tk.ID, tk.Status, tk.Details)
		}
	}
}

// waitAgent is rate limited at its first call (a reset in 15s), answers
// wrong at its second and right at its third.
const waitAgent = `#!/bin/sh
cat > /dev/null
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
case $(wc -l < "$JLGCLI_E2E_CALLS") in
1) echo "Error 429: rate limit reached, try again in 15s" >&2; exit 1;;
2) echo wrong > answer.txt; echo "tried";;
*) echo right > answer.txt; echo "fixed the answer";;
esac
`

// TestHooksOfATaskOnWorkers: the hooks of a task on the workers fire on
// the side that follows it with the events of a task run here: its start,
// its wait for a rate limit (with the reset time), each attempt's verdict,
// its end.
func TestHooksOfATaskOnWorkers(t *testing.T) {
	w := newWorld(t)
	must(t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(waitAgent), 0o755))
	events := w.hookAll()
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--json", "--max-wait", "1m", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	data, err := os.ReadFile(events)
	must(t, err)
	var got []string
	for dec := json.NewDecoder(bytes.NewReader(data)); dec.More(); {
		var e struct {
			Event, RunID, Action, ResetAt string
			Attempt                       int
		}
		must(t, dec.Decode(&e))
		line := fmt.Sprintf("%+v", e)
		if e.RunID != res.RunID {
			t.Errorf("event %s of run %s, want %s", e.Event, e.RunID, res.RunID)
		}
		switch e.Event {
		case "task.attempt":
			got = append(got, fmt.Sprintf("%s %d %s", e.Event, e.Attempt, e.Action))
		case "run.waiting":
			if e.ResetAt == "" {
				t.Errorf("run.waiting without its reset time: %s", line)
			}
			got = append(got, e.Event)
		default:
			got = append(got, e.Event)
		}
	}
	want := []string{"run.started", "run.waiting", "task.attempt 1 retry", "task.attempt 2 pass", "run.ended"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("hook events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStopADetachedTask: a task submitted with --detach, which no jlgcli
// follows, is stopped all the same; its record learns from the server that
// it ended interrupted.
func TestStopADetachedTask(t *testing.T) {
	w := newWorld(t, "JLGCLI_E2E_SLOW=318")
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--detach", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	id := strings.TrimSpace(stdout)
	w.firstCall()
	stdout, stderr, code = w.run("stop", "--json", id)
	var run struct{ ID, Status string }
	if code != 0 || json.Unmarshal([]byte(stdout), &run) != nil || run.ID != id || run.Status != "interrupted" {
		t.Fatalf("stop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if running("318") {
		t.Error("the agent still runs after stop returned")
	}
	out, stderr, code := w.run("runs", "--json")
	if code != 0 || !strings.Contains(out, `"status": "interrupted"`) {
		t.Errorf("runs after the stop: exit %d\n%s\n%s", code, out, stderr)
	}
}
