package local

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/gate"
)

// BenchmarkBatch runs a batch of 50 independent trivial tasks (an agent
// that writes one file at once, the check `true`) with 1 and 4 jobs: what a
// task costs jlgcli itself (worktree, snapshots, gate, commit, report,
// merge, journal) and how far jobs spread it. Run it with -benchtime=1x:
// one batch is already 50 tasks.
func BenchmarkBatch(b *testing.B) {
	const n = 50
	for _, jobs := range []int{1, 4} {
		b.Run(fmt.Sprintf("tasks=%d/jobs=%d", n, jobs), func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				repo := gitRepo(b)
				spec := BatchSpec{Repo: repo, Jobs: jobs}
				for k := 0; k < n; k++ {
					id := fmt.Sprintf("t%02d", k)
					spec.Tasks = append(spec.Tasks, BatchTask{ID: id, File: id + ".md", Title: id, Depends: []string{}, Prompt: "# " + id,
						Spec: TaskSpec{Tiers: []TierSpec{{Name: "fake", Backend: "fake", Attempts: 1}},
							Commands:  map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c", "cat >/dev/null; echo x > " + id + ".txt"}}},
							TimeoutMs: 60000, EscalateFrom: "base", AntiGaming: "refuse", Commit: "branch", Merge: "none",
							Checks: []gate.Check{{Name: "true", Shell: "true"}}}})
				}
				state := b.TempDir()
				opened, err := OpenRepo(context.Background(), repo)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				res, err := StartBatch(context.Background(), opened, spec, state, BatchParts{})
				total += time.Since(start)
				if err != nil || res.Status != "done" {
					b.Fatalf("%v: %s %s", err, res.Status, res.Details)
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N*n), "ms/task")
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "tasks/s")
		})
	}
}
