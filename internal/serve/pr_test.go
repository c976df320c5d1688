package serve

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jlgcli/jlgcli/internal/runs/runstest"
)

// prBoard serves the board of a state root holding runstest.PR's world,
// its text text; live: the pull-request run goes on (in round 2) until
// the world's End.
func prBoard(t *testing.T, text string, live bool) (*runstest.PRWorld, *httptest.Server) {
	t.Helper()
	root := t.TempDir()
	w := runstest.PR(t, root, text, live)
	s, err := New(&Runtime{Root: root}, Options{Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return w, ts
}

// The pages of a pull-request run, in HTML: the runs page lists it with
// its pull request (number, link, target) and its rounds by number; its
// page has the pull request, the checks, each round linked to its task
// run, which links back; needs-you reads as needing the user.
func TestPRPages(t *testing.T) {
	_, ts := prBoard(t, "plain text", false)
	code, body := get(t, ts, "/")
	for _, want := range []string{`<a class="pr" href="` + runstest.PRURL + `" rel="noreferrer">#42</a>`, `until merged`, `Rate limits plain text`,
		`<strong>round 2</strong>`, `<span class="st you" title="it gave up: a person must see to it">needs-you</span>`, `class="glance needyou" id="needyou"`,
		`Needs you <span class="count">1</span>`, `2 rounds`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("the runs page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/runs/"+runstest.PRID)
	for _, want := range []string{`<a class="pr" href="` + runstest.PRURL + `"`, `<code>jlgcli/rate-limits</code> into <code>main</code>`,
		`<dd>merged</dd>`, `href="/runs/` + runstest.Round1ID + `"`, `href="/runs/` + runstest.Round2ID + `"`, `<code>2222222222</code>`,
		`<span class="st bad">failure</span> <a href="https://ci.example/build/7" rel="noreferrer">ci plain text</a>`, `This run needs you.`,
		`jlgcli pr 42 --until merged`, `href="` + runstest.PRURL + `#issuecomment-9"`, `task run <a href="/runs/` + runstest.TaskID + `">`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("the pr page lacks %s", want)
		}
	}
	if strings.Contains(body, `data-act="/api/runs/`+runstest.PRID+`/resume"`) || strings.Contains(body, `id="output"`) {
		t.Errorf("the page of a pr run that gave up offers resume, or an agent's output")
	}
	code, body = get(t, ts, "/runs/"+runstest.Round2ID)
	for _, want := range []string{`<a href="/runs/` + runstest.PRID + `">pull-request run ` + runstest.PRID + `</a> › round 2`, `round 2 of the <a href="/runs/` + runstest.PRID + `">`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("round 2's page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/api/runs/"+runstest.PRID)
	if code != 200 || !strings.Contains(body, `"number": 42`) || !strings.Contains(body, `"status": "needs-you"`) {
		t.Errorf("GET /api/runs/PR: %d\n%s", code, body)
	}
	if code, body = get(t, ts, "/?kind=pr"); code != 200 || !strings.Contains(body, "1 of 4 runs") {
		t.Errorf("the runs page filtered by kind pr: %d", code)
	}
}

// Whatever the forge's words are (the title, a check's name, a blocker,
// the reason), the pages of a pull-request run have the tags they have
// with a plain text.
func TestPRPagesEscapeTheForge(t *testing.T) {
	_, evilTS := prBoard(t, evil, false)
	_, plainTS := prBoard(t, "plain text", false)
	for _, path := range []string{"/", "/runs/" + runstest.PRID, "/runs/" + runstest.PRID + "?fragment=1", "/runs/" + runstest.Round2ID} {
		_, body := get(t, evilTS, path)
		_, want := get(t, plainTS, path)
		if got, want := tags(body), tags(want); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("GET %s: %d tags, %d with a plain text", path, len(got), len(want))
		}
		if path != "/runs/"+runstest.Round2ID && !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the forge's text is not shown escaped", path)
		}
	}
}

// TestPRRunInABrowser: a pull-request run in a real Chromium, at 700 and
// 1440 px: its page, live in round 2, shows the round under way, then,
// without a reload, that it gave up and needs the user; its rounds link to
// their task runs, which link back; the runs page shows that it needs the
// user. Nothing is wider than the window but what scrolls in its own box.
func TestPRRunInABrowser(t *testing.T) {
	long := "a-check-name-that-goes-on-" + strings.Repeat("and-on-", 30) + "<b>bold</b>"
	w, ts := prBoard(t, long, true)
	ctx := browser(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fits := func(width int64, name string) {
		t.Helper()
		must(chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)))
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil || int64(wide) > width {
			t.Errorf("%s at %d px: the page is %d px wide (%v)", name, width, wide, err)
		}
		screenshot(t, ctx, fmt.Sprintf("%s-%dpx", name, width))
	}
	must(chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/runs/"+runstest.PRID),
		chromedp.WaitVisible(chromedp.CSS(`table.rounds tr.current`))))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce = true`)); err != nil {
		t.Fatal(err)
	}
	current, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("table.rounds tr.current").innerText`))
	must(err)
	if !strings.Contains(current, "under way") || !strings.Contains(current, "thread on api.go:12") {
		t.Errorf("round 2 under way reads %q", current)
	}
	fits(1440, "pr-running")
	fits(700, "pr-running")
	w.End()
	must(chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.needyou`)), chromedp.WaitVisible(chromedp.CSS(`dl.facts span.st.you`))))
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce === true`))
	if err != nil || !kept {
		t.Errorf("the page was reloaded to show the end (%v)", err)
	}
	alert, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".needyou").innerText`))
	must(err)
	if !strings.Contains(alert, "This run needs you.") || !strings.Contains(alert, "jlgcli pr 42 --until merged") || !strings.Contains(alert, "<b>bold</b>") {
		t.Errorf("the needs-you notice reads %q", alert)
	}
	bold, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#live b").length`))
	if err != nil || bold != 0 {
		t.Errorf("the forge's <b> became %d elements (%v)", bold, err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.rounds tbody tr").length`))
	if err != nil || rows != 2 {
		t.Errorf("the rounds table has %d rows (%v), want 2", rows, err)
	}
	fits(700, "pr-needs-you")
	fits(1440, "pr-needs-you")
	// Round 2's page, from its link, and back.
	click(t, ctx, `table.rounds tr[data-round="2"] a`)
	must(chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`details#attempt-1`))))
	crumbs, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".crumbs").innerText`))
	must(err)
	if !strings.Contains(crumbs, "pull-request run "+runstest.PRID) || !strings.Contains(crumbs, "round 2") {
		t.Errorf("round 2's crumbs: %q", crumbs)
	}
	fits(700, "pr-round")
	click(t, ctx, `.crumbs a[href="/runs/`+runstest.PRID+`"]`)
	must(chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`table.rounds`))))
	// The runs page: the run that needs the user says so.
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+runstest.PRID+`"] span.st.you`)),
		chromedp.WaitVisible(chromedp.CSS(`.needyou a[href="/runs/`+runstest.PRID+`"]`))))
	colour, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('tr[data-id="`+runstest.PRID+`"] span.st')).backgroundColor`))
	if err != nil || colour != "rgb(130, 80, 223)" {
		t.Errorf("needs-you is drawn in %q (%v), want the colour of needs-you", colour, err)
	}
	fits(1440, "pr-runs")
	fits(700, "pr-runs")
}
