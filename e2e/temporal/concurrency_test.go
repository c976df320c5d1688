package temporal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overlapAgent is a developer that takes a while and notes, in
// $JLGCLI_E2E_CALLS.overlap, every call that started while another agent
// of the same worker was running (a lock directory per worker).
const overlapAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
lock="$JLGCLI_E2E_CALLS.$JLGCLI_E2E_WORKER.running"
if ! mkdir "$lock" 2>/dev/null; then echo "$n on $JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS.overlap"; fi
sleep 3
rmdir "$lock" 2>/dev/null
echo done > "$n.txt"
echo "wrote $n.txt"
`

// TestWorkerConcurrencyBoundsTheMachine: --concurrency bounds the attempts
// a worker runs at once over all its backends together. A batch of four
// tasks on two backends, four at a time, on one worker with --concurrency
// 1: no two agents ever run at once on it. With a second such worker, both
// take tasks: a full worker does not hold what it cannot run.
func TestWorkerConcurrencyBoundsTheMachine(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d-workers", workers), func(t *testing.T) {
			w := newWorld(t)
			agent := filepath.Join(w.dir, "agent.sh")
			cfg := filepath.Join(w.dir, "config", "jlgcli", "config.toml")
			must(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[backends.fake]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n"+
				"[backends.fake2]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n", agent, agent)), 0o644))
			for i := range workers {
				w.worker(fmt.Sprintf("w%d", i+1), "--concurrency", "1")
			}
			sheets := map[string]string{}
			for i := range 4 {
				backend := "fake"
				if i%2 == 1 {
					backend = "fake2"
				}
				sheets[fmt.Sprintf("task-%d", i)] = fmt.Sprintf("---\nbackend: %s\n---\n# Write task-%d\n", backend, i)
			}
			stdout, stderr, code := w.run(w.batch(w.sheets(overlapAgent, sheets), "--check", "true", "-j", "4", "--json")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			var sum batchResult
			must(t, json.Unmarshal([]byte(stdout), &sum))
			if sum.Status != "done" || len(sum.Tasks) != 4 {
				t.Fatalf("batch %s with %d tasks:\n%s", sum.Status, len(sum.Tasks), stdout)
			}
			if data, err := os.ReadFile(w.calls + ".overlap"); err == nil {
				t.Errorf("agents ran at once on one worker with --concurrency 1: %s", strings.TrimSpace(string(data)))
			}
			byWorker := map[string]int{}
			for _, c := range w.callsMade() {
				byWorker[c]++
			}
			if len(byWorker) != workers {
				t.Errorf("agent calls by worker: %v; want calls on each of %d", byWorker, workers)
			}
		})
	}
}
