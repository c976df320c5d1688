package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// fakeSource is a state directory of three runs: a batch of two tasks
// (one done, one running) and a loop.
type fakeSource struct {
	from    int64 // the offset Follow was asked for
	stopped []string
}

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func (f *fakeSource) List(context.Context) ([]runs.Listed, error) {
	return []runs.Listed{
		{RunRow: store.RunRow{ID: "20261125T100000Z-bbbbbbbb", Command: "batch", Status: "running", Title: "2 task sheets", Live: true, StartedAt: t0}},
		{RunRow: store.RunRow{ID: "20261125T100001Z-aaaa0001", Command: "task", Status: "done", Title: "write a", Parent: "20261125T100000Z-bbbbbbbb", StartedAt: t0}},
		{RunRow: store.RunRow{ID: "20261125T090000Z-cccccccc", Command: "loop", Status: "interrupted", Title: "say hi", StartedAt: t0}},
	}, nil
}

func (f *fakeSource) Show(_ context.Context, id string) (Shown, error) {
	switch id {
	case "20261125T100000Z-bbbbbbbb":
		return Shown{ID: id, Command: "batch", Live: true, StartedAt: t0, Batch: &batch.Summary{RunID: id, Status: "running", StartedAt: t0,
			Tasks: []batch.TaskSummary{
				{ID: "a", Status: "done", RunID: ptr("20261125T100001Z-aaaa0001"), DependsOn: []string{}, StartedAt: ptr(t0), DurationMs: 60000, Attempts: 1},
				{ID: "b", Status: "running", RunID: ptr("20261125T100102Z-aaaa0002"), DependsOn: []string{"a"}, Level: 1, StartedAt: ptr(t0.Add(time.Minute))},
			}},
			Tasks: map[string]*taskengine.Result{"a": {Attempts: []taskengine.Attempt{{Number: 1, Tier: "fast", StartedAt: t0, DurationMs: 50000}}}}}, nil
	case "20261125T100001Z-aaaa0001":
		res := &taskengine.Result{Status: "done", Attempts: []taskengine.Attempt{{Number: 1, Tier: "fast", Prompt: "write a", Response: "wrote a",
			Change: taskengine.Change{Diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n",
				Files: []git.FileChange{{Path: "a.txt", Status: "M", Added: 3, Deleted: 1}, {Path: "logo.png", Status: "A", Added: -1, Deleted: -1}, {Path: "b.txt", Status: "A", Added: 7}}}}}}
		res.Attempts[0].Gate.Status = "pass"
		return Shown{ID: id, Command: "task", Parent: "20261125T100000Z-bbbbbbbb", Task: res}, nil
	case "20261125T090000Z-cccccccc":
		return Shown{ID: id, Command: "loop", Loop: &engine.Result{Status: "interrupted", Transcript: []engine.Entry{{Iteration: 1, Prompt: "say hi", Response: "hi"}}}}, nil
	}
	return Shown{}, &StatusError{Code: http.StatusNotFound, Err: errors.New("no run " + id)}
}

func (f *fakeSource) Follow(ctx context.Context, id string, from int64, fn func(Event) error) error {
	f.from = from
	for _, e := range []Event{{Offset: 40, Line: json.RawMessage(`{"type":"start"}`)}, {Offset: 80, Line: json.RawMessage(`{"type":"stop"}`)}} {
		if e.Offset <= from {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) Output(ctx context.Context, id string, from int64, fn func(Chunk) error) error {
	return fn(Chunk{Call: 1, Offset: 5, Data: []byte("hello")})
}

// Now: the fake runs' agents wrote nothing.
func (f *fakeSource) Now(_ context.Context, id string, _ int) (runs.Activity, error) {
	return runs.Activity{RunID: id, Activity: agent.Activity{Lines: []string{}, Tools: []agent.ToolCall{}}}, nil
}

func (f *fakeSource) Stop(_ context.Context, id string) (string, error) {
	if id != "20261125T100000Z-bbbbbbbb" {
		return "", &StatusError{Code: http.StatusBadRequest, Err: errors.New("run " + id + " is not running")}
	}
	f.stopped = append(f.stopped, id)
	return "stopping run " + id, nil
}

func (f *fakeSource) Resume(_ context.Context, id string) (string, error) {
	return "resuming " + id, nil
}

func newTest(t *testing.T, token string) (*fakeSource, *httptest.Server) {
	t.Helper()
	src := &fakeSource{}
	s, err := New(src, Options{Token: token, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return src, ts
}

func get(t *testing.T, ts *httptest.Server, path string, hdr ...string) (int, string) {
	t.Helper()
	return do(t, ts, http.MethodGet, path, hdr...)
}

func post(t *testing.T, ts *httptest.Server, path string, hdr ...string) (int, string) {
	t.Helper()
	return do(t, ts, http.MethodPost, path, hdr...)
}

// do makes a request of ts with the headers hdr (name, value, …) and
// returns its status and body.
func do(t *testing.T, ts *httptest.Server, method, path string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAPI(t *testing.T) {
	src, ts := newTest(t, "")
	code, body := get(t, ts, "/api/runs?kind=task")
	var rows []store.RunRow
	if code != 200 || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 1 || rows[0].Parent == "" {
		t.Errorf("GET /api/runs?kind=task: %d %s", code, body)
	}
	code, body = get(t, ts, "/api/runs/20261125T100001Z-aaaa0001")
	var res taskengine.Result
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Status != "done" {
		t.Errorf("GET /api/runs/ID: %d %s", code, body)
	}
	if code, _ := get(t, ts, "/api/runs/nope"); code != 404 {
		t.Errorf("a missing run: %d, want 404", code)
	}
	// Events resume after the Last-Event-ID a reconnecting browser sends.
	code, body = get(t, ts, "/api/runs/20261125T100001Z-aaaa0001/events", "Last-Event-ID", "40")
	if code != 200 || src.from != 40 || strings.Contains(body, `"start"`) || !strings.Contains(body, "id: 80\ndata: {\"type\":\"stop\"}\n\n") ||
		!strings.Contains(body, "event: end\n") {
		t.Errorf("events from 40: %d (from %d)\n%s", code, src.from, body)
	}
	code, body = get(t, ts, "/api/runs/20261125T100001Z-aaaa0001/output")
	if code != 200 || !strings.Contains(body, `"text":"hello"`) {
		t.Errorf("output: %d %s", code, body)
	}
}

func TestActions(t *testing.T) {
	src, ts := newTest(t, "")
	code, body := post(t, ts, "/api/runs/20261125T100000Z-bbbbbbbb/stop")
	if code != 200 || !strings.Contains(body, "stopping run") || len(src.stopped) != 1 {
		t.Errorf("stop: %d %s", code, body)
	}
	if code, body := post(t, ts, "/api/runs/20261125T090000Z-cccccccc/stop"); code != 400 || !strings.Contains(body, "not running") {
		t.Errorf("stop of a stopped run: %d %s", code, body)
	}
	// Another site's page cannot make the browser stop a run.
	if code, _ := post(t, ts, "/api/runs/20261125T100000Z-bbbbbbbb/stop", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Errorf("a cross-site stop: %d, want 403", code)
	}
	if len(src.stopped) != 1 {
		t.Errorf("stopped %v", src.stopped)
	}
}

func TestToken(t *testing.T) {
	_, ts := newTest(t, "s3cret")
	if code, _ := get(t, ts, "/api/runs"); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := get(t, ts, "/api/runs", "Authorization", "Bearer wrong"); code != 401 {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	if code, _ := get(t, ts, "/api/runs", "Authorization", "Bearer s3cret"); code != 200 {
		t.Errorf("the token: %d, want 200", code)
	}
	// A browser is sent to the form, gives the token once, and is let in
	// by its cookie after.
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(ts.URL + "/runs/20261125T090000Z-cccccccc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
		t.Fatalf("a page without the token: %d to %q", resp.StatusCode, loc)
	}
	resp, err = c.PostForm(ts.URL+"/login", url.Values{"token": {"wrong"}, "next": {"/runs/20261125T090000Z-cccccccc"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("a wrong token in the form: %d", resp.StatusCode)
	}
	resp, err = c.PostForm(ts.URL+"/login", url.Values{"token": {"s3cret"}, "next": {"//evil.example/x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.Header.Get("Location") != "/" || len(cookies) != 1 || !cookies[0].HttpOnly {
		t.Fatalf("login: %d to %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), cookies)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/runs/20261125T090000Z-cccccccc", nil)
	req.AddCookie(cookies[0])
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with the cookie: %d", resp.StatusCode)
	}
}

// Without a token the server answers only to loopback names: a page that
// reaches it through another name (DNS rebinding) gets nothing.
func TestLoopbackOnlyWithoutToken(t *testing.T) {
	_, ts := newTest(t, "")
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/runs", nil)
	req.Host = "attacker.example:80"
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("another host name: %d", resp.StatusCode)
	}
	for addr, want := range map[string]bool{"127.0.0.1:8080": false, "localhost:1": false, "[::1]:80": false, ":8080": true, "0.0.0.0:80": true, "192.168.1.5:80": true} {
		if NeedsToken(addr) != want {
			t.Errorf("NeedsToken(%q) = %v", addr, !want)
		}
	}
}

// --token, else JLGCLI_SERVE_TOKEN, is the token; off loopback one is
// needed: without it, a usage error saying how to give one.
func TestTokenOfFlagOrEnvironment(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "JLGCLI_SERVE_TOKEN" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct{ addr, given, env, want string }{
		{"0.0.0.0:80", "flag", "env", "flag"}, {"0.0.0.0:80", "", "env", "env"}, {"127.0.0.1:0", "", "", ""},
	} {
		if got, err := Token(c.addr, c.given, env(c.env)); got != c.want || err != nil {
			t.Errorf("Token(%s, %q, $JLGCLI_SERVE_TOKEN=%q) = %q, %v; want %q", c.addr, c.given, c.env, got, err, c.want)
		}
	}
	_, err := Token("0.0.0.0:80", "", env(""))
	var u *exit.UsageError
	if !errors.As(err, &u) || err.Error() != "--addr 0.0.0.0:80 is not a loopback address: the board needs a token there" ||
		u.Hint != "give one with --token TOKEN or JLGCLI_SERVE_TOKEN, or listen on 127.0.0.1" {
		t.Errorf("Token off loopback without one = %v, want the usage error with its hint", err)
	}
}

func TestPages(t *testing.T) {
	_, ts := newTest(t, "")
	code, body := get(t, ts, "/?kind=task")
	if code != 200 || !strings.Contains(body, "20261125T100001Z-aaaa0001") || strings.Contains(body, "20261125T090000Z-cccccccc\"") {
		t.Errorf("runs page filtered by kind: %d\n%s", code, body)
	}
	code, body = get(t, ts, "/runs/20261125T100000Z-bbbbbbbb")
	for _, want := range []string{`data-col="running"`, `<g class="node ok" data-task="a">`, `<g class="node run" data-task="b">`, `class="edge ok"`,
		`<g class="row" data-task="a">`, `class="seg t0"`, `data-act="/api/runs/20261125T100000Z-bbbbbbbb/stop"`} {
		if !strings.Contains(body, want) {
			t.Errorf("batch page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/runs/20261125T100001Z-aaaa0001")
	for _, want := range []string{`<span class="dd">-old</span>`, `<span class="da">&#43;new</span>`, "wrote a", `href="/runs/20261125T100000Z-bbbbbbbb"`,
		// Each file's lines added and deleted, and their sums (a
		// binary file has none).
		`<code>a.txt</code> <span class="add">+3</span> <span class="del">−1</span>`, `<code>logo.png</code> <span class="bin">binary</span>`,
		`<code>b.txt</code> <span class="add">+7</span> <span class="del">−0</span>`, `3 files <span class="add">+10</span> <span class="del">−1</span>`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("task page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/runs/20261125T090000Z-cccccccc?fragment=1")
	if code != 200 || strings.Contains(body, "<html") || !strings.Contains(body, "Resume") {
		t.Errorf("a fragment: %d\n%s", code, body)
	}
}
