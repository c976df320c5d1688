package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// applyDelta does what live.js's apply does.
func applyDelta(t testing.TB, old string, ops []any) string {
	t.Helper()
	from, at := strings.Split(old, "\n"), 0
	var out []string
	for _, op := range ops {
		switch op := op.(type) {
		case string:
			out = append(out, strings.Split(op, "\n")...)
		case int:
			if op > 0 {
				out = append(out, from[at:at+op]...)
				at += op
			} else {
				at -= op
			}
		case float64: // as decoded from JSON
			n := int(op)
			if n > 0 {
				out = append(out, from[at:at+n]...)
				at += n
			} else {
				at -= n
			}
		}
	}
	if at != len(from) {
		t.Fatalf("the delta covers %d of %d lines", at, len(from))
	}
	return strings.Join(out, "\n")
}

// A delta turns the old text into the new one, whatever the edits.
func TestDeltaRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var a []string
		for range r.IntN(60) {
			a = append(a, fmt.Sprint(r.IntN(8)))
		}
		b := append([]string(nil), a...)
		for range r.IntN(10) {
			switch at := r.IntN(len(b) + 1); r.IntN(3) {
			case 0:
				b = append(b[:at], append([]string{fmt.Sprint("new", r.IntN(5))}, b[at:]...)...)
			case 1:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			case 2:
				if at < len(b) {
					b[at] = "changed"
				}
			}
		}
		old, new := strings.Join(a, "\n"), strings.Join(b, "\n")
		ops, ok := deltaOf(old, new)
		if !ok {
			t.Fatalf("case %d: no delta", i)
		}
		if got := applyDelta(t, old, ops); got != new {
			t.Fatalf("case %d: %q + %v = %q, want %q", i, old, ops, got, new)
		}
	}
	if _, ok := deltaOf(strings.Repeat("a\n", 1000), strings.Repeat("b\n", 1000)); ok {
		t.Errorf("a delta of 2000 edits was looked for (maxEdits %d)", maxEdits)
	}
}

// moving is a batch of n tasks of which one more is done at each move.
type moving struct {
	*bigBatch
	mu    sync.Mutex
	moved int
	// moves, when made, is told of each move (Follow sends it on).
	moves chan int
}

func (m *moving) move() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	defer func() {
		if m.moves != nil {
			m.moves <- m.moved
		}
	}()
	for i := range m.run.Batch.Tasks {
		if t := &m.run.Batch.Tasks[i]; t.Status == "running" {
			t.Status, t.DurationMs = "done", 120000
			m.moved++
			return t.ID
		}
	}
	return ""
}

// Follow sends a line of the journal at each move, once moves is made.
func (m *moving) Follow(ctx context.Context, id string, from int64, fn func(Event) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case n := <-m.moves:
			if err := fn(Event{Offset: int64(n), Line: json.RawMessage(`{"type":"task"}`)}); err != nil {
				return err
			}
		}
	}
}

func (m *moving) Show(ctx context.Context, id string) (Shown, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	run := m.run
	b := *run.Batch
	b.Tasks = append(b.Tasks[:0:0], b.Tasks...)
	run.Batch = &b
	return run, nil
}

// fragment gets the live part of the batch's page, giving the version
// have; it returns the answer's status, version, body and content type.
func fragment(t testing.TB, url, have string) (int, string, []byte, string) {
	t.Helper()
	resp, err := http.Get(url + "/runs/" + wideBatch + "?fragment=1&have=" + have)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Live-Version"), body, resp.Header.Get("Content-Type")
}

// The live part is sent whole once, then as the lines that changed from
// the version the page has, or not at all when nothing did; a version the
// server no longer has gets it whole.
func TestLiveDelta(t *testing.T) {
	src := &moving{bigBatch: newBigBatch(200)}
	s, err := New(src, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	code, v1, whole, kind := fragment(t, ts.URL, "")
	if code != 200 || v1 == "" || !strings.HasPrefix(kind, "text/html") {
		t.Fatalf("first fetch: %d %q %s", code, v1, kind)
	}
	src.move()
	code, v2, body, kind := fragment(t, ts.URL, v1)
	if code != 200 || v2 == v1 || kind != "application/json" {
		t.Fatalf("after a move: %d %q %s", code, v2, kind)
	}
	var d struct {
		From, To string
		Ops      []any
	}
	if err := json.Unmarshal(body, &d); err != nil || d.From != v1 || d.To != v2 {
		t.Fatalf("the delta: %v %s", err, body)
	}
	now, _ := s.pages.sent.get(v2)
	if got := applyDelta(t, string(whole), d.Ops); got != now {
		t.Errorf("the delta applied is not the live part")
	}
	if len(body)*10 > len(whole) {
		t.Errorf("a move of one task sent %d bytes of %d", len(body), len(whole))
	}
	t.Logf("whole: %d bytes; a task done: %d bytes", len(whole), len(body))
	if code, v3, body, _ := fragment(t, ts.URL, v2); v3 == v2 && (code != http.StatusNoContent || len(body) != 0) {
		t.Errorf("nothing changed: %d, %d bytes", code, len(body))
	}
}

// BenchmarkLiveUpdate200: the bytes a page of a running batch of 200
// tasks downloads when one task is done, whole (as before) and as a delta.
func BenchmarkLiveUpdate200(b *testing.B) {
	src := &moving{bigBatch: newBigBatch(200)}
	s, err := New(src, Options{Poll: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	_, have, _, _ := fragment(b, ts.URL, "")
	var whole, sent, n float64
	for b.Loop() {
		src.move()
		_, v, body, _ := fragment(b, ts.URL, have)
		_, _, all, _ := fragment(b, ts.URL, "unknown")
		sent += float64(len(body))
		whole += float64(len(all))
		n++
		have = v
	}
	b.ReportMetric(whole/n, "B-whole/update")
	b.ReportMetric(sent/n, "B-sent/update")
}

// In a real browser, the batch's page follows the moves of its tasks: the
// first change fetches its live part whole, the next ones the lines that
// changed, which the page applies.
func TestLiveDeltaInABrowser(t *testing.T) {
	src := &moving{bigBatch: newBigBatch(200), moves: make(chan int, 10)}
	s, err := New(src, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/runs/"+wideBatch), chromedp.WaitVisible(chromedp.CSS(`svg.dag`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce = true`)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		id := src.move()
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`section[data-col="done"] article[data-task="`+id+`"]`))); err != nil {
			t.Fatal(err)
		}
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Sizes []int
		Kept  bool
		Rows  int
	}](`({Sizes: performance.getEntriesByType("resource").filter((e) => e.name.includes("fragment=1") && e.responseStatus === 200).map((e) => e.encodedBodySize),
		Kept: window.loadedOnce === true, Rows: document.querySelectorAll('details#group-done tr[data-task]').length})`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fragment fetches: %v bytes", got.Sizes)
	done := 0
	for _, task := range src.run.Batch.Tasks {
		if task.Status == "done" {
			done++
		}
	}
	if !got.Kept || len(got.Sizes) < 2 || got.Rows != done {
		t.Fatalf("the page reloaded (%v), fetched %v, or has %d done rows, want %d", !got.Kept, got.Sizes, got.Rows, done)
	}
	if last := got.Sizes[len(got.Sizes)-1]; last*10 > got.Sizes[0] {
		t.Errorf("the last update downloaded %d bytes, the first %d", last, got.Sizes[0])
	}
}
