package temporal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tinyAgent does a trivial task: it writes the file the prompt names
// (task-N.txt), so that every task has its own change.
const tinyAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
echo done > "$n.txt"
echo "wrote $n.txt"
`

const benchTasks = 40

// BenchmarkWorkers runs a batch of 40 trivial task sheets on 1, 2 and 4
// workers (one attempt at a time each) through a real Temporal server
// (batch --temporal), and the same batch locally with jlgcli batch -j 1, 2
// and 4: the throughput and the time per task of each (BENCHMARKS.md).
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
	sheets := writeSheets(b, w)
	b.StartTimer()
	began := time.Now()
	cmd := []string{"batch", "--temporal", w.addr, "--temporal-namespace", w.ns, "--repo", "file://" + w.remote, "--base", "main",
		"-b", "fake", "--check", "true", "-j", fmt.Sprint(benchTasks), sheets}
	if _, stderr, code := w.run(cmd...); code != 0 {
		b.Fatalf("batch --temporal: exit %d: %s", code, stderr)
	}
	report(b, time.Since(began))
}

// writeSheets writes the batch's sheets, one trivial task each.
func writeSheets(b *testing.B, w *world) string {
	sheets := filepath.Join(w.dir, "sheets")
	must(b, os.MkdirAll(sheets, 0o755))
	for i := range benchTasks {
		must(b, os.WriteFile(filepath.Join(sheets, fmt.Sprintf("task-%02d.md", i)), []byte(fmt.Sprintf("# Write task-%02d\n", i)), 0o644))
	}
	return sheets
}

func benchBatch(b *testing.B, jobs int) {
	b.StopTimer()
	w := benchWorld(b)
	clone := filepath.Join(w.dir, "clone")
	w.git("", "clone", "--quiet", w.remote, clone)
	sheets := writeSheets(b, w)
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
