package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// bigBatch is a source whose one run is a batch of n tasks in ten levels,
// each task depending on one of the level before, with three attempts
// each for the tasks that started.
type bigBatch struct {
	fakeSource
	run Shown
}

func newBigBatch(n int) *bigBatch {
	id := "20261125T100000Z-bbbbbbbb"
	sum := &batch.Summary{RunID: id, Status: "running", StartedAt: t0}
	tasks := map[string]*taskengine.Result{}
	statuses := []string{"done", "done", "running", "pending", "failed", "blocked"}
	for i := range n {
		level := i * 10 / n
		t := batch.TaskSummary{ID: fmt.Sprintf("task-%03d", i), Title: fmt.Sprintf("Write part %d of the thing", i), Status: statuses[i%len(statuses)],
			Level: level, DependsOn: []string{}, Attempts: 3, RunID: ptr(fmt.Sprintf("20261125T1001%02dZ-aaaa%04d", i%60, i))}
		if level > 0 {
			t.DependsOn = []string{fmt.Sprintf("task-%03d", i-n/10)}
		}
		if t.Status != "pending" && t.Status != "blocked" {
			start := t0.Add(time.Duration(i) * 20 * time.Second)
			t.StartedAt, t.DurationMs = &start, 90000
			res := &taskengine.Result{}
			for a := range 3 {
				res.Attempts = append(res.Attempts, taskengine.Attempt{Number: a + 1, TierIndex: a / 2, Tier: "t", StartedAt: start.Add(time.Duration(a) * 30 * time.Second), DurationMs: 28000})
			}
			tasks[t.ID] = res
		}
		sum.Tasks = append(sum.Tasks, t)
	}
	return &bigBatch{run: Shown{ID: id, Command: "batch", Live: true, StartedAt: t0, Batch: sum, Tasks: tasks}}
}

func (b *bigBatch) Show(context.Context, string) (Shown, error) { return b.run, nil }
func (b *bigBatch) List(context.Context) ([]runs.Listed, error) { return nil, nil }

// benchPage serves src and measures the server's side of its page at path:
// time, allocations and the page's size.
func benchPage(b *testing.B, src Source, path string) {
	s, err := New(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

// BenchmarkBatchPage200: the server's side of the page of a batch of 200
// tasks (board, DAG, chart, table).
func BenchmarkBatchPage200(b *testing.B) {
	benchPage(b, newBigBatch(200), "/runs/20261125T100000Z-bbbbbbbb")
}

// BenchmarkBatchPage200FirstPaint: the first contentful paint of that page
// in a real headless Chromium, from navigation start.
func BenchmarkBatchPage200FirstPaint(b *testing.B) {
	s, err := New(newBigBatch(200), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close) // after the browser's own cleanup: its streams are closed first
	ctx := benchBrowser(b)
	var total float64
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/runs/20261125T100000Z-bbbbbbbb"), chromedp.WaitVisible(chromedp.CSS(`svg.dag`))); err != nil {
			b.Fatal(err)
		}
		// The paint's timing entry is recorded a moment after the paint.
		var fcp float64
		for deadline := time.Now().Add(5 * time.Second); fcp == 0 && time.Now().Before(deadline); {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: 0}).startTime`))
			if err != nil {
				b.Fatal(err)
			}
			fcp = v
		}
		if fcp == 0 {
			b.Fatal("no first-contentful-paint entry")
		}
		total += fcp
	}
	b.ReportMetric(total/float64(b.N), "ms-first-paint")
}

// benchHeight serves src and measures how tall its page at path is in a
// real headless Chromium, 1440 and 700 px wide, once shown is visible.
func benchHeight(b *testing.B, src Source, path, shown string) {
	s, err := New(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	ctx := benchBrowser(b)
	for b.Loop() {
		for _, w := range []int64{1440, 700} {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900), chromedp.Navigate(ts.URL+path), chromedp.WaitVisible(chromedp.CSS(shown))); err != nil {
				b.Fatal(err)
			}
			h, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollHeight`))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(h), fmt.Sprintf("px-tall-at-%d", w))
		}
	}
}

// BenchmarkBatchPage200Height: how tall the page of that batch is in a
// real headless Chromium, 1440 and 700 px wide (the screens it takes: 900
// px each).
func BenchmarkBatchPage200Height(b *testing.B) {
	benchHeight(b, newBigBatch(200), "/runs/20261125T100000Z-bbbbbbbb", `svg.dag`)
}

// manyRuns is a state directory of n runs, newest first: tasks, loops and
// batches, most done, some failed, two running.
type manyRuns struct {
	fakeSource
	n int
}

func (m *manyRuns) List(context.Context) ([]runs.Listed, error) {
	kinds := []string{"task", "task", "loop", "task", "batch"}
	statuses := []string{"done", "done", "done", "failed", "done", "interrupted", "done", "max-iterations"}
	out := make([]runs.Listed, 0, m.n)
	for i := range m.n {
		at := t0.Add(-time.Duration(i) * 17 * time.Minute)
		row := runs.Listed{RunRow: store.RunRow{ID: fmt.Sprintf("%sZ-%08x", at.Format("20060102T150405"), i), Command: kinds[i%len(kinds)],
			Status: statuses[i%len(statuses)], Title: fmt.Sprintf("Run %d: make the thing do what its issue asks", i), Backend: "claude", Model: "claude-sonnet-4-5",
			Iterations: 1 + i%4, DurationMs: millis.Duration(60000 + i*1000), StartedAt: at, UpdatedAt: at}, SpentUSD: 0.05 * float64(1+i%7), SpentKnown: true}
		if i < 2 {
			row.Status, row.Live, row.Current = "running", true, &runs.Current{Attempt: 2, Tier: "strong"}
		}
		out = append(out, row)
	}
	return out, nil
}

// BenchmarkRunsPage500: the server's side of the runs page of a state
// directory of 500 runs (the first screen, then the table).
func BenchmarkRunsPage500(b *testing.B) {
	benchPage(b, &manyRuns{n: 500}, "/")
}

// BenchmarkRunsPage500Height: how tall the runs page of 500 runs is in a
// real headless Chromium, 1440 and 700 px wide.
func BenchmarkRunsPage500Height(b *testing.B) {
	benchHeight(b, &manyRuns{n: 500}, "/", `table.runs`)
}
