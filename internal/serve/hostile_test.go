package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// evil is what a hostile agent, check or task sheet writes to be read as
// markup on the board: tags that leave their element, script, an event
// handler in an attribute, a javascript: link, and ANSI colours and an OSC
// sequence around them.
const evil = "\x1b[31m</pre></code></p><script>alert(1)</script><img src=x onerror=alert(2)>" +
	"\" onmouseover=\"alert(3)\" x='<a href=\"javascript:alert(4)\">'\x1b[0m\x1b]8;;javascript:alert(5)\x07"

// hostileSource is fakeSource whose runs hold text wherever an agent, a
// check or a sheet writes.
type hostileSource struct {
	fakeSource
	text string
}

const (
	evilTask  = "20261125T100001Z-eeee0001"
	evilBatch = "20261125T100000Z-eeeeeeee"
	evilLoop  = "20261125T090000Z-eeeeeeee"
	// evilLive is a task that runs, whose agent writes and calls tools.
	evilLive = "20261125T100002Z-eeee0002"
)

func (h *hostileSource) List(context.Context) ([]runs.Listed, error) {
	return []runs.Listed{
		{RunRow: store.RunRow{ID: evilBatch, Command: "batch", Status: "failed", Title: h.text, StartedAt: t0}},
		{RunRow: store.RunRow{ID: evilTask, Command: "task", Status: "failed", Title: h.text, Backend: h.text, Parent: evilBatch, StartedAt: t0}},
		{RunRow: store.RunRow{ID: evilLoop, Command: "loop", Status: "done", Title: h.text, StartedAt: t0}},
		{RunRow: store.RunRow{ID: evilLive, Command: "task", Status: "running", Title: h.text, Live: true, StartedAt: t0}},
	}, nil
}

// Now: the running task's agent wrote the text and called tools named by
// it, with it as their input.
func (h *hostileSource) Now(_ context.Context, id string, _ int) (runs.Activity, error) {
	if id != evilLive {
		return h.fakeSource.Now(context.Background(), id, 0)
	}
	return runs.Activity{RunID: id, Found: true, N: 2, Backend: h.text, Live: true, Activity: agent.Activity{Lines: []string{h.text, h.text},
		Tools: []agent.ToolCall{{Name: h.text, Input: h.text, Done: true}, {Name: h.text, Input: h.text, Error: true, Done: true}, {Name: h.text, Input: h.text}}}}, nil
}

func (h *hostileSource) Show(_ context.Context, id string) (Shown, error) {
	switch id {
	case evilTask:
		a := taskengine.Attempt{Number: 1, Tier: h.text, Prompt: h.text, Response: h.text, Action: h.text, StartedAt: t0,
			Change: taskengine.Change{Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-" + h.text + "\n+" + h.text + "\n", Files: []git.FileChange{{Path: h.text, Status: "M"}}}}
		a.Gate = gate.Report{Status: h.text, TestFailures: []gate.TestFailure{{Test: h.text, File: h.text, Error: h.text}},
			Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: h.text, Command: h.text, OutputTail: h.text}}}}
		a.Detection = &detect.Detection{Rule: h.text, Details: h.text}
		return Shown{ID: id, Command: "task", Title: h.text, Parent: evilBatch, Task: &taskengine.Result{Status: "failed", Details: h.text,
			Plan: []string{h.text}, Tiers: []taskengine.TierSummary{{Name: h.text, Backend: h.text, Model: h.text, Attempts: 1}}, Attempts: []taskengine.Attempt{a},
			Git: &taskengine.GitInfo{Branch: h.text}}}, nil
	case evilBatch:
		return Shown{ID: id, Command: "batch", Title: h.text, StartedAt: t0, Batch: &batch.Summary{RunID: id, Status: "failed", StartedAt: t0,
			Tasks: []batch.TaskSummary{
				{ID: h.text, Title: h.text, Status: "failed", Details: h.text, RunID: ptr(evilTask), DependsOn: []string{}, StartedAt: ptr(t0), DurationMs: 1000, Attempts: 1},
				{ID: "b" + h.text, Title: h.text, Status: "blocked", Details: h.text, DependsOn: []string{h.text}, Level: 1},
			}},
			Tasks: map[string]*taskengine.Result{h.text: {Attempts: []taskengine.Attempt{{Number: 1, Tier: h.text, StartedAt: t0, DurationMs: 500}}}}}, nil
	case evilLive:
		return Shown{ID: id, Command: "task", Title: h.text, Live: true, StartedAt: t0, Task: &taskengine.Result{Status: "running"}}, nil
	case evilLoop:
		return Shown{ID: id, Command: "loop", Title: h.text, Loop: &engine.Result{Status: "done", Details: h.text, Text: h.text,
			Transcript: []engine.Entry{{Iteration: 1, Prompt: h.text, Response: h.text, Failure: nil}}}}, nil
	}
	return h.fakeSource.Show(context.Background(), id)
}

func (h *hostileSource) Output(ctx context.Context, id string, from int64, fn func(Chunk) error) error {
	return fn(Chunk{Call: 1, Offset: 5, Data: []byte(h.text + "\r\ndata: injected\n\nevent: end\r")})
}

// tags are the tags of an HTML page, their attributes' values left out:
// what the page's structure is, whatever its texts.
func tags(page string) []string {
	var out []string
	for _, t := range regexp.MustCompile(`<[^>]*>`).FindAllString(page, -1) {
		out = append(out, regexp.MustCompile(`="[^"]*"`).ReplaceAllString(t, `=""`))
	}
	return out
}

// The board's pages and API show what an agent, a check or a sheet wrote
// as text: html/template escapes it in every context (element, attribute,
// URL, SVG), so that each page has the very tags it has with a plain
// text in its place; no template.HTML wraps it, ANSI colours are not
// rendered as markup, and the output stream keeps each chunk inside one
// event.
func TestBoardEscapesHostileText(t *testing.T) {
	serve := func(text string) *httptest.Server {
		s, err := New(&hostileSource{text: text}, Options{Poll: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s)
		t.Cleanup(ts.Close)
		return ts
	}
	ts, plain := serve(evil), serve("plain text")
	for _, path := range []string{"/", "/runs/" + evilTask, "/runs/" + evilBatch, "/runs/" + evilLoop, "/runs/" + evilTask + "?fragment=1", "/runs/" + evilLive} {
		code, body := get(t, ts, path)
		_, want := get(t, plain, path)
		if code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, code, body)
		}
		if got, want := tags(body), tags(want); strings.Join(got, "\n") != strings.Join(want, "\n") {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Errorf("GET %s: tag %d is %q, with a plain text %q", path, i, got[i], want[i])
					break
				}
			}
			t.Errorf("GET %s: %d tags, %d with a plain text", path, len(got), len(want))
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the agent's text is not shown escaped", path)
		}
	}
	// The running task's preview (its agent's lines and tools) is there,
	// escaped as the rest.
	for _, path := range []string{"/", "/runs/" + evilLive} {
		_, body := get(t, ts, path)
		if !strings.Contains(body, `<div class="now"`) || strings.Count(body, `<span class="tn">`) != 3 || strings.Count(body, `<span class="l">`) != 2 {
			t.Errorf("GET %s: no preview of the running agent's tools", path)
		}
	}
	code, body := get(t, ts, "/api/runs/"+evilTask)
	var res taskengine.Result
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Details != evil || strings.Contains(body, "<script") {
		t.Errorf("GET /api/runs/ID: %d, details %q\n%s", code, res.Details, body)
	}
	code, body = get(t, ts, "/api/runs/"+evilTask+"/output")
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	if code != 200 || len(events) != 2 || !strings.HasPrefix(events[0], "id: 5\ndata: {") || strings.Count(events[0], "\n") != 1 ||
		!strings.HasPrefix(events[1], "event: end\n") {
		t.Errorf("output: %d, events %q", code, events)
	}
	var chunk struct{ Text string }
	if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.SplitN(events[0], "\n", 2)[1], "data: ")), &chunk); err != nil ||
		!strings.HasPrefix(chunk.Text, evil) {
		t.Errorf("output's chunk: %q, %v", chunk.Text, err)
	}
}

// No template of the board trusts a value as markup, and the script
// writes the agent's output as text.
func TestBoardTemplatesTrustNoValue(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	assets, _ := filepath.Glob("assets/*.html")
	js, _ := filepath.Glob("assets/static/*.js")
	for _, f := range append(append(files, assets...), js...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"template.HTML", "template.JS", "template.URL", "template.CSS", "template.HTMLAttr", "text/template", "safeHTML", "outerHTML", "insertAdjacentHTML", "document.write"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", f, bad)
			}
		}
	}
	b, _ := os.ReadFile("assets/static/live.js")
	if !strings.Contains(string(b), "out.textContent += c.text") {
		t.Error("live.js no longer appends the output as text")
	}
}
