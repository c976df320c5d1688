package temporal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// windowClaude stands in for Claude Code logged in with a subscription
// (as internal/cli's windows_*.txtar): each call prints, like the real one,
// a rate_limit_event with the 5-hour window's use and reset before its
// result. Call 1 reports the window at 92%, resetting 3 seconds later,
// and leaves the answer wrong; call 2 reports 10% and fixes it. Each call
// writes "START WORKER" to $JLGCLI_E2E_CALLS (seconds since the epoch),
// and the reset it reported to $JLGCLI_E2E_CALLS.reset.N.
const windowClaude = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
cat > /dev/null
echo "$(date +%s) $JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
n=$(wc -l < "$JLGCLI_E2E_CALLS")
if [ "$n" = 1 ]; then use=0.92; reset=$(( $(date +%s) + 3 )); echo wrong > answer.txt
else use=0.1; reset=$(( $(date +%s) + 18000 )); echo right > answer.txt; fi
echo "$reset" > "$JLGCLI_E2E_CALLS.reset.$n"
echo '{"type":"system","subtype":"init","session_id":"s'$n'"}'
echo '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":'$reset',"rateLimitType":"five_hour","utilization":'$use',"isUsingOverage":false,"surpassedThreshold":0.75},"session_id":"s'$n'"}'
printf '{"type":"result","subtype":"success","is_error":false,"result":"call %s","session_id":"s%s","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":1}}\n' "$n" "$n"
`

// claudeOnPath puts windowClaude on the PATH of the workers and clients of
// w, as the claude backend.
func claudeOnPath(t *testing.T, w *world) {
	bin := filepath.Join(w.dir, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "claude"), []byte(windowClaude), 0o755))
	for i, e := range w.env {
		if strings.HasPrefix(e, "PATH=") {
			w.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(e, "PATH=")
		}
	}
}

// TestWindowLimitOnWorkers: a task on the workers with --window-limit 80
// keeps to it as a local task does: its first attempt's agent reports the
// 5-hour window at 92%, and the second attempt, on whichever worker, does
// not start before the window's reset (the workflow carries the windows
// from one attempt to the next and waits on a timer, holding no worker);
// the wait is said, and the task is done.
func TestWindowLimitOnWorkers(t *testing.T) {
	w := newWorld(t)
	claudeOnPath(t, w)
	w.worker("w1", "--backends", "claude")
	w.worker("w2", "--backends", "claude")
	stdout, stderr, code := w.run("task", "--temporal", w.addr, "--temporal-namespace", w.ns, "--repo", "file://"+w.remote,
		"--base", "main", "-b", "claude", "--check", "grep -q right answer.txt", "--window-limit", "80", "--max-wait", "1m", "--json", "Fix the answer")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 {
		t.Fatalf("%s after %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	data, err := os.ReadFile(w.calls)
	must(t, err)
	calls := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(calls) != 2 {
		t.Fatalf("calls: %q", calls)
	}
	second, _ := strconv.ParseInt(strings.Fields(calls[1])[0], 10, 64)
	reset, err := os.ReadFile(w.calls + ".reset.1")
	must(t, err)
	if r, _ := strconv.ParseInt(strings.TrimSpace(string(reset)), 10, 64); second < r {
		t.Errorf("the second call started at %d, before the reset at %d that the first reported", second, r)
	}
	if !strings.Contains(stderr, "for a subscription window to reset: claude 5h window at 92% (--window-limit 80%)") {
		t.Errorf("the wait is not said:\n%s", stderr)
	}
	if len(res.Windows) != 1 || res.Windows[0].Used != 0.1 {
		t.Errorf("the result's windows %+v, want the 5h window at 10%%", res.Windows)
	}
	if *update {
		recordHistory(t, w, res.RunID, filepath.Join("..", "..", "internal", "flow", "testdata", "task-windows-history.json"))
	}
	// The windows reported on the workers are known here: usage lists them.
	if out, _, code := w.run("usage"); code != 0 || !strings.Contains(out, "claude") || !strings.Contains(out, "10%") {
		t.Errorf("usage: exit %d\n%s", code, out)
	}
}

// liveAgent writes a line, says on its standard error that it retries (as
// a CLI whose provider is down does), and works on for 12 seconds before
// it fixes the answer.
const liveAgent = `#!/bin/sh
cat > /dev/null
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
echo "first words of the attempt"
echo "API error: connect ECONNREFUSED, retrying in 2s (attempt 1/5)" >&2
sleep 12
echo right > answer.txt
echo "fixed the answer"
`

// TestLiveOutputOnWorkers: while an attempt goes on on a worker, what its
// agent wrote there is seen here, through the server (its heartbeats): logs
// of the run shows it before the attempt ends, logs -f follows it, and the
// jlgcli that follows the task shows the agent's retry line, as for an
// attempt made here; show then says how the worker confined the agent.
func TestLiveOutputOnWorkers(t *testing.T) {
	w := newWorld(t)
	must(t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(liveAgent), 0o755))
	w.worker("w1")
	follower := w.start(w.submit("Fix the answer")...)
	w.firstCall()
	id := w.runID("task")
	logsF := w.start("logs", "-f", id)
	deadline := time.Now().Add(10 * time.Second) // the agent ends 12s after its call
	for {
		out, _, _ := w.run("logs", id)
		if strings.Contains(out, "first words of the attempt") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs did not show the attempt's output on its worker while it ran:\n%s", out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if calls := w.callsMade(); len(calls) != 1 {
		t.Fatalf("calls %v", calls)
	}
	if code := follower.wait(t, time.Minute); code != 0 {
		t.Fatalf("the task exited %d\n%s", code, follower.stderr.String())
	}
	if !strings.Contains(follower.stderr.String(), "retrying in 2s (attempt 1/5)") {
		t.Errorf("the agent's retry line is not shown:\n%s", follower.stderr.String())
	}
	if code := logsF.wait(t, 30*time.Second); code != 0 || !strings.Contains(logsF.stdout.String(), "first words of the attempt") {
		t.Errorf("logs -f: exit %d\n%s\n%s", code, logsF.stdout.String(), logsF.stderr.String())
	}
	// The record says how the worker confined the agent, as a local run's.
	if out, stderr, code := w.run("show", id); code != 0 || !sandboxLine.MatchString(out) {
		t.Errorf("show says no sandbox: exit %d\n%s\n%s", code, out, stderr)
	}
}

// sandboxLine is show's line of how a run's agents were confined.
var sandboxLine = regexp.MustCompile(`(?m)^sandbox +(bubblewrap|none|off)`)

// TestBatchTasksUnderTheirBatch: the tasks of a batch on the workers are
// runs of their own under their batch, as a local batch's are: runs lists
// them with their parent, show finds each (and how its worker confined
// it), and their hooks fire with each
// attempt (task.attempt) under the task's own run, one per attempt.
func TestBatchTasksUnderTheirBatch(t *testing.T) {
	w := newWorld(t)
	events := w.hookAll()
	w.worker("w1", "--concurrency", "2")
	sheets := w.sheets("", map[string]string{"a": "Fix the answer.", "b": "Fix the answer too."})
	stdout, stderr, code := w.run(w.batch(sheets, "--check", "true", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout), &sum))
	out, _, code := w.run("runs", "--json")
	var rows []struct{ ID, Command, Status, Parent string }
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("runs: exit %d\n%s", code, out)
	}
	children := map[string]string{}
	for _, r := range rows {
		if r.Parent != "" {
			children[r.ID] = r.Parent + " " + r.Command + " " + r.Status
		}
	}
	for _, task := range sum.Tasks {
		if task.RunID == nil {
			t.Fatalf("task %s has no run", task.ID)
		}
		if got, want := children[*task.RunID], sum.RunID+" task done"; got != want {
			t.Errorf("runs: task %s is %q, want %q\n%s", *task.RunID, got, want, out)
		}
		if out, stderr, code := w.run("show", *task.RunID); code != 0 || !sandboxLine.MatchString(out) {
			t.Errorf("show %s says no sandbox: exit %d\n%s\n%s", *task.RunID, code, out, stderr)
		}
		out, stderr, code := w.run("show", "--json", *task.RunID)
		var shown taskengine.Result
		if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Status != engine.StatusDone || len(shown.Attempts) != task.Attempts {
			t.Errorf("show %s: exit %d\n%s\n%s", *task.RunID, code, out, stderr)
		}
	}
	data, err := os.ReadFile(events)
	must(t, err)
	attempts := map[string]int{}
	for dec := json.NewDecoder(bytes.NewReader(data)); dec.More(); {
		var e struct{ Event, RunID string }
		must(t, dec.Decode(&e))
		if e.Event == "task.attempt" {
			attempts[e.RunID]++
		}
	}
	for _, task := range sum.Tasks {
		if attempts[*task.RunID] != task.Attempts {
			t.Errorf("task.attempt hooks of %s: %d, want %d (all: %v)", *task.RunID, attempts[*task.RunID], task.Attempts, attempts)
		}
	}
}

// twoAttemptsAgent leaves the answer wrong at its first call; its second
// works 10 seconds before it fixes it.
const twoAttemptsAgent = `#!/bin/sh
cat > /dev/null
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
if [ "$(wc -l < "$JLGCLI_E2E_CALLS")" -eq 1 ]; then echo wrong > answer.txt; echo "tried"; exit 0; fi
echo "second attempt under way"
sleep 10
echo right > answer.txt
echo "fixed the answer"
`

// TestShowWhileOnWorkers: while a task goes on on the workers, show of its
// local record says where it stands, as for a local task: during its
// second attempt, the first one, judged; show --follow draws it too, as
// the second attempt's output arrives.
func TestShowWhileOnWorkers(t *testing.T) {
	w := newWorld(t)
	must(t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(twoAttemptsAgent), 0o755))
	w.worker("w1")
	follower := w.start(w.submit("Fix the answer")...)
	id := w.runID("task")
	followed := w.start("show", "--follow", "--json", id)
	deadline := time.Now().Add(time.Minute)
	for len(w.callsMade()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second call: %v", w.callsMade())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var shown taskengine.Result
	for deadline = time.Now().Add(8 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		out, _, code := w.run("show", "--json", id)
		if code == 0 && json.Unmarshal([]byte(out), &shown) == nil && len(shown.Attempts) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("show during the second attempt: exit %d\n%s", code, out)
		}
	}
	if shown.Status != engine.StatusRunning || shown.Attempts[0].Gate.Status != "fail" {
		t.Errorf("show during the second attempt: %s, attempt 1's gate %s", shown.Status, shown.Attempts[0].Gate.Status)
	}
	if code := follower.wait(t, time.Minute); code != 0 {
		t.Fatalf("the task exited %d\n%s", code, follower.stderr.String())
	}
	if code := followed.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("show --follow exited %d\n%s", code, followed.stderr.String())
	}
	drawn := false
	for _, l := range strings.Split(strings.TrimSpace(followed.stdout.String()), "\n") {
		var r taskengine.Result
		if json.Unmarshal([]byte(l), &r) == nil && r.Status == engine.StatusRunning && len(r.Attempts) == 1 {
			drawn = true
		}
	}
	if !drawn {
		t.Errorf("show --follow never drew the task running after its first attempt:\n%s", followed.stdout.String())
	}
}
