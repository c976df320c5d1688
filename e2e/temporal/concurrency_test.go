package temporal

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pairAgent is a developer that records its call and, when
// $JLGCLI_E2E_PAIRS is set, meets another: the calls are numbered in the
// order they arrive (a directory made per number), and calls 2k-1 and 2k
// each wait until both have arrived (up to a minute; one that waits in vain
// notes it in $JLGCLI_E2E_CALLS.alone). Two calls can meet only when two
// agents run at once: an attempt held by a busy worker while another sat
// idle would never find its partner. A call that starts while another
// agent of the same worker runs notes it in $JLGCLI_E2E_CALLS.overlap.
// Each call writes "start|end WORKER TASK ARRIVAL" lines to
// $JLGCLI_E2E_CALLS.log.
const pairAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
me="$JLGCLI_E2E_WORKER"
echo "$me" >> "$JLGCLI_E2E_CALLS"
lock="$JLGCLI_E2E_CALLS.$me.running"
if ! mkdir "$lock" 2>/dev/null; then echo "$n on $me" >> "$JLGCLI_E2E_CALLS.overlap"; fi
k=1
while ! mkdir "$JLGCLI_E2E_CALLS.arrival.$k" 2>/dev/null; do k=$((k+1)); done
echo "start $me $n $k" >> "$JLGCLI_E2E_CALLS.log"
if [ -n "$JLGCLI_E2E_PAIRS" ]; then
	pair=$(( (k+1)/2 ))
	i=0
	until [ -d "$JLGCLI_E2E_CALLS.arrival.$((2*pair-1))" ] && [ -d "$JLGCLI_E2E_CALLS.arrival.$((2*pair))" ]; do
		i=$((i+1))
		if [ $i -gt 600 ]; then echo "$n on $me (arrival $k)" >> "$JLGCLI_E2E_CALLS.alone"; break; fi
		sleep 0.1
	done
fi
sleep 1
echo "end $me $n $k" >> "$JLGCLI_E2E_CALLS.log"
rmdir "$lock" 2>/dev/null
echo done > "$n.txt"
echo "wrote $n.txt"
`

// fourBackends configures four command backends, fake to fake4, that run
// agent.sh: a sheet of each, as a team runs one backend per sheet.
func fourBackends(t *testing.T, w *world) {
	agent := filepath.Join(w.dir, "agent.sh")
	var cfg strings.Builder
	for _, b := range []string{"fake", "fake2", "fake3", "fake4"} {
		fmt.Fprintf(&cfg, "[backends.%s]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n", b, agent)
	}
	must(t, os.WriteFile(filepath.Join(w.dir, "config", "jlgcli", "config.toml"), []byte(cfg.String()), 0o644))
}

// fourSheets are four independent sheets, task-0 to task-3, each of its
// own backend (fake, fake2, fake3, fake4).
func fourSheets() map[string]string {
	sheets := map[string]string{}
	for i, b := range []string{"fake", "fake2", "fake3", "fake4"} {
		sheets[fmt.Sprintf("task-%d", i)] = fmt.Sprintf("---\nbackend: %s\n---\n# Write task-%d\n", b, i)
	}
	return sheets
}

// callLog is what pairAgent's log says of each call: the worker and the
// task of each start, in order.
func (w *world) callLog() (starts [][2]string) {
	data, _ := os.ReadFile(w.calls + ".log")
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "start" {
			starts = append(starts, [2]string{f[1], f[2]})
		}
	}
	return starts
}

// TestWorkersTakeWhatTheyHaveRoomFor: four independent sheets, each of
// its own backend (every worker polls the four queues), on two workers
// with --concurrency 1 run two at a time, one on each worker: the calls
// meet in pairs (pairAgent), which they cannot when a busy worker holds an
// attempt while the other is idle; each worker makes two calls, never two
// at once. With one worker they run one at a time, and none is lost.
func TestWorkersTakeWhatTheyHaveRoomFor(t *testing.T) {
	for _, workers := range []int{2, 1} {
		t.Run(fmt.Sprintf("%d-workers", workers), func(t *testing.T) {
			var env []string
			wait := "10m"
			if workers == 2 {
				env = append(env, "JLGCLI_E2E_PAIRS=1")
			} else {
				// The attempts wait for the one worker longer than this:
				// each is scheduled again while a worker with its backend
				// is up, and none is lost.
				wait = "2s"
			}
			w := newWorld(t, env...)
			fourBackends(t, w)
			for i := range workers {
				w.worker(fmt.Sprintf("w%d", i+1), "--concurrency", "1")
			}
			stdout, stderr, code := w.run(w.batch(w.sheets(pairAgent, fourSheets()), "--check", "true", "-j", "4", "--worker-wait", wait, "--json")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			var sum batchResult
			must(t, json.Unmarshal([]byte(stdout), &sum))
			if sum.Status != "done" || len(sum.Tasks) != 4 {
				t.Fatalf("batch %s with %d tasks:\n%s", sum.Status, len(sum.Tasks), stdout)
			}
			for _, tk := range sum.Tasks {
				if tk.Status != "done" || tk.Attempts != 1 {
					t.Errorf("task %s: %s after %d attempts, want done after 1", tk.ID, tk.Status, tk.Attempts)
				}
			}
			if data, err := os.ReadFile(w.calls + ".overlap"); err == nil {
				t.Errorf("agents ran at once on one worker with --concurrency 1: %s", strings.TrimSpace(string(data)))
			}
			if data, err := os.ReadFile(w.calls + ".alone"); err == nil {
				t.Errorf("a call waited for a second agent that never ran (an attempt held by a busy worker while another was idle): %s\ncalls: %v",
					strings.TrimSpace(string(data)), w.callLog())
			}
			byWorker := map[string][]string{}
			var tasks []string
			for _, s := range w.callLog() {
				byWorker[s[0]] = append(byWorker[s[0]], s[1])
				tasks = append(tasks, s[1])
			}
			slices.Sort(tasks)
			if !slices.Equal(tasks, []string{"task-0", "task-1", "task-2", "task-3"}) {
				t.Errorf("agent calls for %v, want one per task", tasks)
			}
			for i := range workers {
				name := fmt.Sprintf("w%d", i+1)
				if got := len(byWorker[name]); got != 4/workers {
					t.Errorf("worker %s made %d calls (%v), want %d: calls by worker %v", name, got, byWorker[name], 4/workers, byWorker)
				}
			}
		})
	}
}

// slowFourAgent is pairAgent's call log without the meeting: each call
// works 4 seconds, so that while both workers are busy the other
// attempts are handed back again and again.
const slowFourAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
me="$JLGCLI_E2E_WORKER"
echo "$me" >> "$JLGCLI_E2E_CALLS"
echo "start $me $n" >> "$JLGCLI_E2E_CALLS.log"
sleep 4
echo "end $me $n" >> "$JLGCLI_E2E_CALLS.log"
echo done > "$n.txt"
echo "wrote $n.txt"
`

// TestWorkerKilledWhileFull: four sheets on two workers with --concurrency
// 1, so that attempts are handed back by the full workers all along; one
// worker is killed (SIGKILL) during its first call, and another is started
// later. No attempt is lost and none is made twice: every task is done
// with one attempt, the killed call is made once more (the only agent call
// made twice), and each task's attempt record is on the remote once.
func TestWorkerKilledWhileFull(t *testing.T) {
	w := newWorld(t)
	fourBackends(t, w)
	workers := map[string]*exec.Cmd{"w1": w.worker("w1", "--concurrency", "1"), "w2": w.worker("w2", "--concurrency", "1")}
	follower := w.start(w.batch(w.sheets(slowFourAgent, fourSheets()), "--check", "true", "-j", "4", "--heartbeat-timeout", "10s", "--json")...)
	first := w.firstCall()
	must(t, workers[first].Process.Signal(syscall.SIGKILL))
	time.Sleep(2 * time.Second)
	w.worker("w3", "--concurrency", "1")
	if code := follower.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("the batch exited %d\n%s\n%s", code, follower.stdout.String(), follower.stderr.String())
	}
	var sum batchResult
	must(t, json.Unmarshal(follower.stdout.Bytes(), &sum))
	if sum.Status != "done" || len(sum.Tasks) != 4 {
		t.Fatalf("batch %s with %d tasks:\n%s", sum.Status, len(sum.Tasks), follower.stdout.String())
	}
	for _, tk := range sum.Tasks {
		if tk.Status != "done" || tk.Attempts != 1 {
			t.Errorf("task %s: %s after %d attempts, want done after 1", tk.ID, tk.Status, tk.Attempts)
		}
		if tk.RunID == nil || !w.remoteHas("refs/jlgcli/"+*tk.RunID+"/1-outcome") || w.remoteHas("refs/jlgcli/"+*tk.RunID+"/2-outcome") {
			t.Errorf("task %s: its attempt's record is not on the remote once", tk.ID)
		}
	}
	calls := map[string][]string{}
	for _, s := range w.callLog4() {
		calls[s[1]] = append(calls[s[1]], s[0])
	}
	twice := 0
	for task, on := range calls {
		switch {
		case len(on) == 2 && on[0] == first && on[1] != first:
			twice++
		case len(on) != 1:
			t.Errorf("task %s: agent called on %v", task, on)
		}
	}
	if len(calls) != 4 || twice != 1 {
		t.Errorf("agent calls by task %v: want one each, and the killed call once more on another worker", calls)
	}
}

// callLog4 is what slowFourAgent's log says of each call: the worker and
// the task of each start, in order.
func (w *world) callLog4() (starts [][2]string) {
	data, _ := os.ReadFile(w.calls + ".log")
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "start" {
			starts = append(starts, [2]string{f[1], f[2]})
		}
	}
	return starts
}
