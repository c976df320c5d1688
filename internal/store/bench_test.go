package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkAppend measures durable appends to events.jsonl: one write and
// one fsync per event, on the file system of the temporary directory.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			r, err := Create(b.TempDir(), "bench", Meta{Command: "loop"})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			data, _ := json.Marshal(map[string]string{"reply": strings.Repeat("x", size)})
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				if err := r.Append(Event{Type: "iteration", Iteration: i, Data: data}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkCheckpoint measures an atomic checkpoint of 4 KiB: temporary
// file, fsync, rename, fsync of the directory.
func BenchmarkCheckpoint(b *testing.B) {
	r, err := Create(b.TempDir(), "bench", Meta{Command: "loop"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cp := struct {
		Progress
		Pad string `json:"pad"`
	}{Progress{Status: Running}, strings.Repeat("x", 4<<10)}
	for i := 0; b.Loop(); i++ {
		cp.Iterations = i
		if err := r.WriteCheckpoint(cp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexUpsert measures one row written to the SQLite index.
func BenchmarkIndexUpsert(b *testing.B) {
	x, err := OpenIndex(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for i := 0; b.Loop(); i++ {
		row := RunRow{ID: fmt.Sprintf("r%d", i%100), Status: Running, Iterations: i, StartedAt: t0}
		if err := x.Upsert(row); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexList measures `jlgcli runs` over 1000 runs: reconciling
// with the run directories, the query, and a liveness probe per run.
func BenchmarkIndexList(b *testing.B) {
	root := b.TempDir()
	x, err := OpenIndex(root)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for i := range 1000 {
		r, err := Create(root, fmt.Sprintf("r%04d", i), Meta{Command: "loop", StartedAt: t0.Add(time.Duration(i) * time.Second)})
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	for b.Loop() {
		rows, err := x.List(Filter{})
		if err != nil || len(rows) != 1000 {
			b.Fatal(len(rows), err)
		}
	}
}
