package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
)

// tinyAgent does a trivial task: it writes the file the prompt names
// (task-N.txt), so that every task has its own change.
const tinyAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
echo done > "$n.txt"
echo "wrote $n.txt"
`

const benchTasks = 40

// BenchmarkWorkers runs 40 trivial tasks on 1, 2 and 4 workers through a
// real Temporal server (each submitted with task --temporal --detach), and
// the same 40 as local task sheets with jlgcli batch -j 1, 2 and 4: the
// throughput and the time per task of each (BENCHMARKS.md).
func BenchmarkWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("temporal/workers=%d", n), func(b *testing.B) {
			for b.Loop() {
				benchTemporal(b, n)
			}
		})
		b.Run(fmt.Sprintf("local-batch/jobs=%d", n), func(b *testing.B) {
			for b.Loop() {
				benchBatch(b, n)
			}
		})
	}
}

func benchWorld(b *testing.B) *world {
	w := newWorld(b)
	must(b, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(tinyAgent), 0o755))
	return w
}

func benchTemporal(b *testing.B, workers int) {
	b.StopTimer()
	w := benchWorld(b)
	for i := range workers {
		w.worker(fmt.Sprintf("w%d", i+1))
	}
	b.StartTimer()
	began := time.Now()
	var ids []string
	for i := range benchTasks {
		args := []string{"task", "--temporal", w.addr, "--temporal-namespace", w.ns, "--repo", "file://" + w.remote,
			"--base", "main", "-b", "fake", "--check", "true", "--detach", fmt.Sprintf("Write task-%02d", i)}
		out, stderr, code := w.run(args...)
		if code != 0 {
			b.Fatalf("submit: exit %d: %s", code, stderr)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	c := w.ts.GetDefaultClient()
	for _, id := range ids {
		var res engine.TaskResult
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		err := c.GetWorkflow(ctx, id, "").Get(ctx, &res)
		cancel()
		if err != nil || res.Status != engine.StatusDone {
			b.Fatalf("task %s: %v %s %s", id, err, res.Status, res.Details)
		}
	}
	report(b, time.Since(began))
}

func benchBatch(b *testing.B, jobs int) {
	b.StopTimer()
	w := benchWorld(b)
	clone := filepath.Join(w.dir, "clone")
	w.git("", "clone", "--quiet", w.remote, clone)
	sheets := filepath.Join(w.dir, "sheets")
	must(b, os.MkdirAll(sheets, 0o755))
	for i := range benchTasks {
		must(b, os.WriteFile(filepath.Join(sheets, fmt.Sprintf("task-%02d.md", i)), []byte(fmt.Sprintf("# Write task-%02d\n", i)), 0o644))
	}
	b.StartTimer()
	began := time.Now()
	cmd := []string{"batch", "-b", "fake", "--check", "true", "-j", fmt.Sprint(jobs), "--cwd", clone, sheets}
	if _, stderr, code := w.run(cmd...); code != 0 {
		b.Fatalf("batch: exit %d: %s", code, stderr)
	}
	report(b, time.Since(began))
}

func report(b *testing.B, d time.Duration) {
	b.ReportMetric(float64(benchTasks)/d.Minutes(), "tasks/min")
	b.ReportMetric(float64(d.Milliseconds())/benchTasks, "ms/task")
}
