package temporal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/engine"
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
	var res engine.TaskResult
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
