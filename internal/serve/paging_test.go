package serve

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The runs table shows runsPerPage runs at once, newest first, with links
// to the newer and older pages that keep the filter; a page beyond the last
// shows the last, anything but a number the first.
func TestRunsPages(t *testing.T) {
	s, err := New(&manyRuns{n: 120}, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	row := regexp.MustCompile(`<tr data-id="([^"]+)"`)
	ids := func(body string) []string {
		var out []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	all, _ := (&manyRuns{n: 120}).List(t.Context())
	for _, tc := range []struct {
		query       string
		first, rows int
		count       string
		newer       string
		older       string
	}{
		{"", 0, 50, "120 of 120 runs, newest first: 1–50 below", "", `href="/?page=2" rel="next"`},
		{"?page=2", 50, 50, "120 of 120 runs, newest first: 51–100 below", `href="/?" rel="prev"`, `href="/?page=3" rel="next"`},
		{"?page=3", 100, 20, "101–120 below", `href="/?page=2" rel="prev"`, ""},
		{"?page=99", 100, 20, "page 3 of 3", `href="/?page=2" rel="prev"`, ""},
		{"?page=x", 0, 50, "page 1 of 3", "", `href="/?page=2" rel="next"`},
	} {
		code, body := get(t, ts, "/"+tc.query)
		got := ids(body)
		if code != 200 || len(got) != tc.rows || got[0] != all[tc.first].ID {
			t.Errorf("%s: %d, %d rows from %v, want %d from %s", tc.query, code, len(got), got[:min(1, len(got))], tc.rows, all[tc.first].ID)
		}
		for _, want := range []string{tc.count, tc.newer, tc.older} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %q", tc.query, want)
			}
		}
		if tc.newer == "" && strings.Contains(body, `rel="prev"`) || tc.older == "" && strings.Contains(body, `rel="next"`) {
			t.Errorf("%s: a link to a page that is not there", tc.query)
		}
	}
	// Filtered: 24 loops, one page, no links; the filter is kept in
	// the links of a filter with more.
	if _, body := get(t, ts, "/?kind=loop"); len(ids(body)) != 24 || strings.Contains(body, `class="pages"`) || !strings.Contains(body, "24 of 120 runs") {
		t.Errorf("loops: %d rows", len(ids(body)))
	}
	if _, body := get(t, ts, "/?kind=task&page=2"); len(ids(body)) != 22 || !strings.Contains(body, `href="/?kind=task" rel="prev"`) {
		t.Errorf("tasks' second page: %d rows", len(ids(body)))
	}
	// The live part of a page is that page's.
	if _, body := get(t, ts, "/?page=3&fragment=1"); len(ids(body)) != 20 {
		t.Errorf("the live part of page 3 has %d rows", len(ids(body)))
	}
}
