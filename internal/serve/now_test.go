package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// working is the wide board whose running tasks' agents write: at each
// write, every one of them has a line more of text and its newest tool
// call is another; the lines and the tool calls' inputs are longer than any
// window.
type working struct {
	*wideBoard
	mu     sync.Mutex
	writes int
}

func (w *working) write() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.writes
}

// running are the run ids of the batch's running tasks.
func (w *working) running() []string {
	var ids []string
	for _, t := range w.run.Batch.Tasks {
		if t.Status == "running" && t.RunID != nil {
			ids = append(ids, *t.RunID)
		}
	}
	return ids
}

func (w *working) Now(_ context.Context, id string, lines int) (runs.Activity, error) {
	w.mu.Lock()
	n := w.writes
	w.mu.Unlock()
	a := runs.Activity{RunID: id, Found: true, N: 2, Backend: "claude", Live: true, Size: int64(1000 * (n + 1))}
	var all []string
	for i := 0; i <= n; i++ {
		all = append(all, fmt.Sprintf("step %d of %s: ", i, runShort(id))+strings.Repeat("a_long_word_with_no_space_", 20))
	}
	a.Lines = all[max(0, len(all)-lines):]
	a.Tools = []agent.ToolCall{{Name: "Bash", Input: "go test ./... " + strings.Repeat("-run=TestSomething ", 20), Done: true},
		{Name: "Read", Input: "internal/gone.go", Done: true, Error: true},
		{Name: "Edit", Input: strings.Repeat("a_very_long_path_segment/", 12) + fmt.Sprintf("file%d.go", n)}}
	return a, nil
}

func (w *working) Show(ctx context.Context, id string) (Shown, error) {
	if slices.Contains(w.running(), id) {
		return Shown{ID: id, Command: "task", Title: "Write a part", Parent: wideBatch, Live: true, StartedAt: t0,
			Task: &taskengine.Result{Status: "running", Attempts: []taskengine.Attempt{{Number: 1, Tier: "fast", StartedAt: t0, DurationMs: 30000}}}}, nil
	}
	return w.wideBoard.Show(ctx, id)
}

// TestPreviewMovesInABrowser: at 700 and 1440 px, the runs page's Running
// lines, the board's running cards and a running task's page show what its
// agent is doing (its tool calls, its last lines); when the agent writes,
// the preview shows the new line without a reload, and nothing reaches past
// the window however long the lines.
func TestPreviewMovesInABrowser(t *testing.T) {
	src := &working{wideBoard: newWideBoard(60)}
	s, err := New(src, Options{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ctx := browser(t)
	task := src.running()[0]
	pages := []struct{ name, path, now string }{
		{"runs", "/", `#running li[data-run="` + task + `"] .now`},
		{"batch", "/runs/" + wideBatch, `section[data-col="running"] article[data-run="` + task + `"] .now`},
		{"task", "/runs/" + task, `.nowbox .now`},
	}
	for _, w := range []int{1440, 700} {
		for _, p := range pages {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), 900), chromedp.Navigate(ts.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.now+" .l"))); err != nil {
				t.Fatalf("%s at %d px: no preview: %v", p.name, w, err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce = true`)); err != nil {
				t.Fatal(err)
			}
			// What the agents write from now on is seen once the page
			// listens to the change stream.
			if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`body[data-listening*="/api/changes"]`))); err != nil {
				t.Fatal(err)
			}
			last := `(() => { const l = document.querySelectorAll(` + jsString(p.now+" .l") + `); return l.length ? l[l.length - 1].textContent : ""; })()`
			tools, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(p.now+" ul.tools")+`).innerText`))
			if err != nil || !strings.Contains(tools, "Edit") || !strings.Contains(tools, "✗") {
				t.Errorf("%s at %d px: tools read %q (%v)", p.name, w, tools, err)
			}
			n := src.write()
			want := fmt.Sprintf("step %d of %s", n, runShort(task))
			var got string
			for deadline := time.Now().Add(10 * time.Second); !strings.HasPrefix(got, want); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s at %d px: the preview's last line is %q, never %q", p.name, w, got, want)
				}
				if got, err = chromedp.Run(ctx, chromedp.Evaluate[string](last)); err != nil {
					t.Fatal(err)
				}
			}
			kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce === true`))
			if err != nil || !kept {
				t.Errorf("%s at %d px: the page was reloaded to show the new line (%v)", p.name, w, err)
			}
			f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFit](measureFit))
			if err != nil {
				t.Fatal(err)
			}
			if f.ScrollWidth > f.InnerWidth || len(f.Over) > 0 || len(f.Spilled) > 0 {
				t.Errorf("%s at %d px: %d px wide (window %d); past the window: %v; spilled: %v", p.name, w, f.ScrollWidth, f.InnerWidth, f.Over, f.Spilled)
			}
			screenshot(t, ctx, fmt.Sprintf("now-%s-%dpx", p.name, w))
		}
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// When a running agent writes, the page that has the live part before it
// gets the lines that changed: a delta, not the whole part.
func TestPreviewSentAsDelta(t *testing.T) {
	src := &working{wideBoard: newWideBoard(200)}
	s, err := New(src, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	get := func(have string) (string, []byte, string) {
		resp, err := http.Get(ts.URL + "/?fragment=1&have=" + have)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("X-Live-Version"), body, resp.Header.Get("Content-Type")
	}
	v1, whole, _ := get("")
	if !strings.Contains(string(whole), `<div class="now"`) {
		t.Fatal("the runs page has no preview")
	}
	src.write()
	v2, d, kind := get(v1)
	if v2 == v1 || kind != "application/json" || len(d)*5 > len(whole) {
		t.Errorf("after the agents wrote: version %s→%s, %s, %d bytes of %d", v1, v2, kind, len(d), len(whole))
	}
	t.Logf("runs page's live part: %d bytes; the agents wrote a line: %d bytes", len(whole), len(d))
}

// The change stream fires when a running run's agent writes, and not
// otherwise.
func TestChangesWhenAnAgentWrites(t *testing.T) {
	src := &working{wideBoard: newWideBoard(12)}
	h := func() string {
		rows, _ := src.List(context.Background())
		return rowsDigest(context.Background(), src, rows)
	}
	before := h()
	if h() != before {
		t.Fatal("the digest moves with nothing written")
	}
	src.write()
	if h() == before {
		t.Error("the digest did not move when the agents wrote")
	}
}
