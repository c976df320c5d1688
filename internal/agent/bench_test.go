package agent

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkCommandFlood runs a command backend that prints 256 MiB and
// reports the peak heap growth (MiB) seen while it runs: the reply kept is
// bounded by MaxReplyBytes whatever the agent prints.
func BenchmarkCommandFlood(b *testing.B) {
	const size = 256 << 20
	c := &Command{BackendName: "flood", Argv: []string{"sh", "-c", "head -c 268435456 /dev/zero | tr '\\0' 'a'"}, Prompt: PromptArg}
	var before, after runtime.MemStats
	b.SetBytes(size)
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := c.Run(context.Background(), Request{Prompt: "go"})
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if !r.Truncated || len(r.Text) > MaxReplyBytes {
			b.Fatalf("reply of %d bytes, truncated=%v", len(r.Text), r.Truncated)
		}
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MiB-alloc/op")
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MiB-heap")
}
