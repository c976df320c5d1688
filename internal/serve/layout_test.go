package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// Ids of the wide board's runs.
const (
	wideBatch = "20261125T100000Z-bbbbbbbb"
	wideTask  = "20261125T100500Z-tttttttt"
	wideLoop  = "20261125T090000Z-llllllll"
)

// wideBoard is a state directory as a user of many agents has it: a
// running batch of 200 tasks (bigBatch), its task runs listed with long
// titles and every status, a task run with tiers and a long diff line, and
// a loop whose "done"s were refused.
type wideBoard struct {
	*bigBatch
}

func newWideBoard(n int) *wideBoard { return &wideBoard{newBigBatch(n)} }

func (w *wideBoard) List(context.Context) ([]runs.Listed, error) {
	out := []runs.Listed{{RunRow: store.RunRow{ID: wideBatch, Command: "batch", Status: "running", Title: "200 task sheets", Live: true, StartedAt: t0, Backend: "claude"},
		Current: &runs.Current{Tasks: []runs.RunningTask{{ID: "task-002", Attempt: 2, Tier: "strong"}}}}}
	for i, t := range w.run.Batch.Tasks {
		if t.RunID == nil || i >= 40 {
			continue
		}
		row := runs.Listed{RunRow: store.RunRow{ID: *t.RunID, Command: "task", Status: t.Status, Parent: wideBatch, Backend: "claude", Model: "claude-sonnet-4-5",
			Title: t.Title + " — and a long line of what the sheet asks so that the title is longer than any column could hold", CostUSD: 0.42, CostKnown: true,
			DurationMs: 754000, StartedAt: t0.Add(time.Duration(i) * time.Minute), Iterations: 3}, Sheet: t.ID, SpentUSD: 0.42, SpentKnown: true}
		switch t.Status {
		case "running":
			row.Live = true
			row.Current = &runs.Current{Attempt: 2, Tier: "strong"}
		case "failed":
			row.Status = "max-iterations"
			row.Title = t.Title + ": the gate failed three times"
		case "pending", "blocked":
			continue
		}
		out = append(out, row)
	}
	out = append(out,
		runs.Listed{RunRow: store.RunRow{ID: wideTask, Command: "task", Status: "done", Title: "Add the rate limits", Backend: "codex", StartedAt: t0, DurationMs: 65000, CostUSD: 1.5, CostKnown: true}, SpentUSD: 1.5, SpentKnown: true},
		runs.Listed{RunRow: store.RunRow{ID: wideLoop, Command: "loop", Status: "max-iterations", Title: "say hi until it is done", Backend: "claude", Iterations: 4, StartedAt: t0}})
	return out, nil
}

func (w *wideBoard) Show(_ context.Context, id string) (Shown, error) {
	switch id {
	case wideBatch:
		return w.run, nil
	case wideLoop:
		l := &engine.Result{Status: "max-iterations", Details: "4 iterations, each done refused"}
		for i := range 4 {
			e := engine.Entry{Iteration: i + 1, Prompt: "say hi", Response: "hi <promise>DONE</promise>", DurationMs: 3000}
			if i < 3 {
				e.Refusal = &engine.Refusal{Guard: "checks", Details: "go test ./... failed: TestHi"}
			}
			l.Transcript = append(l.Transcript, e)
		}
		return Shown{ID: id, Command: "loop", Title: "say hi until it is done", StartedAt: t0, Loop: l}, nil
	}
	res := &taskengine.Result{Status: "done", CostUSD: 1.5, CostKnown: true, Details: "done at attempt 2",
		Tiers: []taskengine.TierSummary{{Name: "fast", Backend: "codex", Model: "gpt-5-codex-mini", Attempts: 1, CostUSD: 0.25, CostKnown: true},
			{Name: "strong", Backend: "claude", Model: "claude-opus-4-1", Attempts: 12, CostUSD: 11.25, CostKnown: true}}}
	for a := range 2 {
		at := taskengine.Attempt{Number: a + 1, Tier: "fast", TierIndex: a, StartedAt: t0, DurationMs: 30000, Prompt: "add the rate limits", Response: "added them",
			Change: taskengine.Change{Diff: "--- a/limits.go\n+++ b/limits.go\n@@ -1 +1 @@\n-old\n+" + strings.Repeat("a_very_long_identifier_", 12) + "\n",
				Files: []git.FileChange{{Path: "limits.go", Status: "M", Added: 1, Deleted: 1}, {Path: strings.Repeat("a_deep_directory/", 12) + "limits_test.go", Status: "A", Added: 240}}}}
		at.Gate.Status = "pass"
		res.Attempts = append(res.Attempts, at)
	}
	return Shown{ID: id, Command: "task", Title: "Add the rate limits", Parent: wideBatch, StartedAt: t0, Task: res}, nil
}

// pageFit is how a page lays out at one width.
type pageFit struct {
	ScrollWidth, InnerWidth, Height int
	// Over are the elements that reach past the viewport's right edge
	// (or its left), but for those inside a drawing's own scrolling frame
	// (.pan) and the ends of lines cut short (overflow hidden, an
	// ellipsis): a table in a frame that scrolls counts.
	Over []string
	// Hidden are the runs table's headings that cannot be seen, of those
	// that must be (Status, Tier, Cost, Duration; Started when wide), and
	// the cells of numbers and dates cut short ("cut: ...").
	Hidden []string
	// Spilled are the board's cards whose content is wider than they are.
	Spilled []string
}

const measureFit = `(() => {
  const w = window.innerWidth, out = {ScrollWidth: document.documentElement.scrollWidth, InnerWidth: w, Height: document.documentElement.scrollHeight, Over: [], Hidden: [], Spilled: []};
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
  for (const e of document.body.querySelectorAll("*")) {
    if (e.parentElement.closest(".pan")) continue;
    let cut = false;
    for (let a = e.parentElement; a && !cut; a = a.parentElement) cut = getComputedStyle(a).overflowX === "hidden";
    if (cut) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > w + 1 || r.left < -1) out.Over.push(name(e) + " " + Math.round(r.left) + ".." + Math.round(r.right));
  }
  const want = ["Status", "Tier", "Cost", "Duration"];
  if (w >= 1200) want.push("Started");
  for (const th of document.querySelectorAll("table.runs.list thead th, body > main > #live > div.scroll > table.runs thead th")) {
    const t = th.textContent.trim();
    if (!want.some((x) => t.startsWith(x))) continue;
    const r = th.getBoundingClientRect();
    if (r.width === 0 || r.right > w + 1) out.Hidden.push(t);
  }
  for (const td of document.querySelectorAll("table.list td.num, table.list td.opt, table.tasks td.num")) {
    if (td.offsetWidth > 0 && td.scrollWidth > td.clientWidth + 1) out.Hidden.push("cut: " + td.textContent.trim());
  }
  for (const c of document.querySelectorAll("article.card, article.card *")) {
    if (c.scrollWidth > c.clientWidth + 1 && getComputedStyle(c).overflow === "visible") out.Spilled.push(name(c) + " " + (c.textContent || "").trim().slice(0, 40));
  }
  return out;
})()`

// fitAt opens url in a viewport w px wide and measures how it lays out.
func fitAt(t *testing.T, ctx context.Context, url string, w int) pageFit {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), 900), chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`#live`))); err != nil {
		t.Fatal(err)
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFit](measureFit))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLayoutsFit: at 700 and at 1440 px, no page is wider than the
// window, no element reaches past it (a drawing scrolls in its own frame),
// the runs table shows its status, tier, cost and duration (and when wide
// its start), and no card of the board lets its text spill out.
func TestLayoutsFit(t *testing.T) {
	s, err := New(newWideBoard(200), Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ctx := browser(t)
	pages := []struct{ name, path string }{{"runs", "/"}, {"batch", "/runs/" + wideBatch}, {"task", "/runs/" + wideTask}, {"loop", "/runs/" + wideLoop}}
	for _, w := range []int{700, 1440} {
		for _, p := range pages {
			f := fitAt(t, ctx, ts.URL+p.path, w)
			if p.name == "task" {
				// Its attempts open: their files (a long path, lines
				// added and deleted) and diffs fit too.
				var err error
				f, err = chromedp.Run(ctx, chromedp.Evaluate[pageFit](`document.querySelectorAll("details").forEach((d) => d.open = true), `+measureFit))
				if err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s at %d px: %d px wide (window %d), %d px tall", p.name, w, f.ScrollWidth, f.InnerWidth, f.Height)
			if f.ScrollWidth > f.InnerWidth {
				t.Errorf("%s at %d px: the page is %d px wide", p.name, w, f.ScrollWidth)
			}
			if len(f.Over) > 0 {
				t.Errorf("%s at %d px: %d elements reach past the window, e.g. %s", p.name, w, len(f.Over), strings.Join(f.Over[:min(len(f.Over), 5)], "; "))
			}
			if len(f.Hidden) > 0 {
				t.Errorf("%s at %d px: the runs table hides %v", p.name, w, f.Hidden)
			}
			if len(f.Spilled) > 0 {
				t.Errorf("%s at %d px: %d cards spill, e.g. %s", p.name, w, len(f.Spilled), strings.Join(f.Spilled[:min(len(f.Spilled), 3)], "; "))
			}
			screenshot(t, ctx, fmt.Sprintf("wide-%s-%dpx", p.name, w))
		}
	}
}

// failing is the wide board where one more task run, task-199's, runs until
// fail is set, then ends max-iterations.
type failing struct {
	*wideBoard
	mu     sync.Mutex
	failed bool
}

const failingRun = "20261125T110000Z-fa11fa11"

func (f *failing) List(ctx context.Context) ([]runs.Listed, error) {
	rows, err := f.wideBoard.List(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	row := runs.Listed{RunRow: store.RunRow{ID: failingRun, Command: "task", Status: "running", Title: "Write the last part", Parent: wideBatch, Live: true,
		StartedAt: t0.Add(time.Hour), UpdatedAt: t0.Add(time.Hour)}, Sheet: "task-199", Current: &runs.Current{Attempt: 3, Tier: "strong"}}
	if f.failed {
		row.Status, row.Live, row.Current, row.UpdatedAt = "max-iterations", false, nil, t0.Add(2*time.Hour)
	}
	return append([]runs.Listed{row}, rows...), err
}

func (f *failing) Show(ctx context.Context, id string) (Shown, error) {
	if id != failingRun {
		return f.wideBoard.Show(ctx, id)
	}
	return Shown{ID: id, Command: "task", Task: &taskengine.Result{Status: "max-iterations", Details: "the checks failed after 3 attempts"}}, nil
}

// TestNeedsYouInABrowser: the runs page's first screen lists what needs
// the user (failed task runs, a batch's blocked tasks) and what runs; when
// a running task fails, its line leaves "Running" for "Needs you", newest
// first, with its status and why, without a reload; a user who asked for
// notifications gets one for it, and none for the lines already there.
func TestNeedsYouInABrowser(t *testing.T) {
	src := &failing{wideBoard: newWideBoard(12)}
	s, err := New(src, Options{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ctx := browser(t)
	line := `li[data-run="` + failingRun + `"]`
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#running `+line))); err != nil {
		t.Fatal(err)
	}
	running, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#running `+line+`').innerText`))
	if err != nil || !strings.Contains(running, "task-199 Write the last part") || !strings.Contains(running, "strong · attempt 3") {
		t.Errorf("the running line reads %q (%v)", running, err)
	}
	blocked, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#needyou li[data-status="blocked"]').length`))
	if err != nil || blocked == 0 {
		t.Errorf("no blocked task under Needs you (%v)", err)
	}
	screenshot(t, ctx, "glance-running-1440px")
	// The user asks for notifications (the browser's own, recorded here).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		window.sent = [];
		window.Notification = function (title, o) { window.sent.push(title + " | " + o.body); };
		window.Notification.permission = "granted";
		window.Notification.requestPermission = () => Promise.resolve("granted");
		document.getElementById("notify").click();
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#notify[aria-pressed="true"]`))); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.failed = true
	src.mu.Unlock()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#needyou `+line))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		First, Text, Colour string
		Still               bool
	}](`({First: document.querySelector('#needyou li').dataset.run, Text: document.querySelector('#needyou `+line+`').innerText,
		Colour: getComputedStyle(document.querySelector('#needyou `+line+` .st')).backgroundColor,
		Still: !!document.querySelector('#running `+line+`')})`))
	if err != nil {
		t.Fatal(err)
	}
	if got.First != failingRun || got.Still {
		t.Errorf("the failed run is not the first line under Needs you (first: %s), or still under Running (%v)", got.First, got.Still)
	}
	for _, want := range []string{"task-199 Write the last part", "max-iterations", "the checks failed after 3 attempts"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("its line %q lacks %q", got.Text, want)
		}
	}
	if got.Colour != "rgb(207, 34, 46)" {
		t.Errorf("its status is drawn in %s, want the failure's red", got.Colour)
	}
	sent, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.sent`))
	if err != nil || len(sent) != 1 || sent[0] != "Needs you: task-199 Write the last part | max-iterations: the checks failed after 3 attempts" {
		t.Errorf("notified %q (%v), want the failed run's line once", sent, err)
	}
	screenshot(t, ctx, "glance-failed-1440px")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(700, 900)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "glance-failed-700px")
}
