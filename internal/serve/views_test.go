package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// details is a source of one run, shown as given.
type details struct {
	fakeSource
	run Shown
}

func (d *details) Show(context.Context, string) (Shown, error) { return d.run, nil }

func pageOf(t *testing.T, run Shown) string {
	t.Helper()
	s, err := New(&details{run: run}, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	code, body := get(t, ts, "/runs/"+run.ID)
	if code != 200 {
		t.Fatalf("GET /runs/%s: %d\n%s", run.ID, code, body)
	}
	return body
}

// A failed check's output is printed once: under the check, from its own
// failure's words when no parser understood it, else from its tail below
// the tests that it names.
func TestGateOutputOnce(t *testing.T) {
	tail := "FAIL: something odd\nline two of the output"
	r := gate.Report{Status: "fail",
		Checks: []gate.CheckReport{{CheckResult: gate.CheckResult{Name: "make check", Command: "make check", ExitCode: 2, OutputTail: tail}},
			{CheckResult: gate.CheckResult{Name: "go test", Command: "go test ./...", ExitCode: 1, OutputTail: "--- FAIL: TestHi\nFAIL"}}},
		TestFailures: []gate.TestFailure{{Test: "make check", Check: "make check", Error: "exited with status 2:\n" + tail},
			{Test: "TestHi", Check: "go test", Error: "want hi"}, {Test: "anti-gaming: deleted-test", Error: "a test file was deleted"}}}
	res := &taskengine.Result{Status: "max-iterations", Attempts: []taskengine.Attempt{{Number: 1, Tier: "fast", Gate: r}}}
	body := pageOf(t, Shown{ID: "20261125T100001Z-aaaa0001", Command: "task", Task: res})
	if n := strings.Count(body, "line two of the output"); n != 1 {
		t.Errorf("the output of the check no parser understood is printed %d times, want once", n)
	}
	for _, want := range []string{"exited with status 2:", "<strong>TestHi</strong>: want hi", "--- FAIL: TestHi", "a test file was deleted"} {
		if !strings.Contains(body, want) {
			t.Errorf("the gate lacks %q", want)
		}
	}
	v := gateOf(r)
	if len(v.Checks) != 2 || v.Checks[0].Output != r.TestFailures[0].Error || len(v.Checks[0].Failures) != 0 ||
		v.Checks[1].Output != "--- FAIL: TestHi\nFAIL" || len(v.Checks[1].Failures) != 1 || len(v.Others) != 1 {
		t.Errorf("gateOf = %+v", v)
	}
}

// What became of a task's branch reads in one phrase: "merged", not
// "merge merged".
func TestMergeWords(t *testing.T) {
	for _, c := range []struct {
		m    taskengine.MergeInfo
		want string
	}{
		{taskengine.MergeInfo{Status: git.MergeMerged, Into: "main", Commit: "0123456789abcdef"}, "merged into main as 0123456789"},
		{taskengine.MergeInfo{Status: git.MergeFastForwarded}, "fast-forwarded"},
		{taskengine.MergeInfo{Status: git.MergeNothing}, "nothing to merge"},
		{taskengine.MergeInfo{Status: git.MergeRefused, Reason: "review: touches jlgcli.toml"}, "merge refused: review: touches jlgcli.toml"},
	} {
		if got := mergeWords(&c.m); got != c.want {
			t.Errorf("mergeWords(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
	res := &taskengine.Result{Status: "done", Git: &taskengine.GitInfo{Branch: "jlgcli/a", Merge: &taskengine.MergeInfo{Status: git.MergeMerged, Into: "main", Commit: "0123456789abcdef"}}}
	body := pageOf(t, Shown{ID: "20261125T100001Z-aaaa0001", Command: "task", Task: res})
	if !strings.Contains(body, "<code>jlgcli/a</code> — merged into main as 0123456789") || strings.Contains(body, "merge merged") {
		t.Errorf("the branch's line is not one phrase:\n%s", body)
	}
}

// A loop's iteration whose "done" a guard refused reads as refused, by
// that guard, and why; not as "exit 0".
func TestLoopRefusal(t *testing.T) {
	l := &engine.Result{Status: "max-iterations", Transcript: []engine.Entry{
		{Iteration: 1, Refusal: &engine.Refusal{Guard: "checks", Details: "go test ./... failed: TestHi"}},
		{Iteration: 2, ExitCode: 3}}}
	body := pageOf(t, Shown{ID: "20261125T090000Z-cccccccc", Command: "loop", Loop: l})
	for _, want := range []string{`done refused</span> <span class="det">by checks</span> <span class="why">go test ./... failed: TestHi</span>`, "exit 3"} {
		if !strings.Contains(body, want) {
			t.Errorf("the loop's page lacks %s", want)
		}
	}
	if strings.Contains(body, "exit 0") {
		t.Errorf("the refused iteration reads exit 0")
	}
}

// A running run's page says nothing of whether it is live but the badge:
// not "it is live, or it was killed" beside it; a killed one says it was,
// and that it is resumable, whatever its kind.
func TestLiveNotKilled(t *testing.T) {
	l := &engine.Result{Status: engine.StatusRunning, Details: "the run has not stopped after 1 iteration: it is live, or it was killed and can be resumed"}
	const live = `<span class="live" title="a process is running it now">live</span>`
	body := pageOf(t, Shown{ID: "20261125T090000Z-cccccccc", Command: "loop", Live: true, Loop: l})
	if strings.Contains(body, "or it was killed") || !strings.Contains(body, live) || strings.Contains(body, "killed, resumable") {
		t.Errorf("a live run's page:\n%s", body)
	}
	for _, run := range []Shown{{ID: "20261125T090000Z-cccccccc", Command: "loop", Loop: l},
		{ID: "20261125T100000Z-bbbbbbbb", Command: "batch", Batch: &batch.Summary{Status: "running"}}} {
		body = pageOf(t, run)
		if !strings.Contains(body, "<dd>"+killedWhy+"</dd>") || !strings.Contains(body, `>killed, resumable</span>`) || strings.Contains(body, live) ||
			strings.Contains(body, "or it was killed") {
			t.Errorf("a killed %s's page does not say it was killed, and resumable", run.Command)
		}
	}
}

// The timeline's legend names the tiers its colours stand for.
func TestGanttLegend(t *testing.T) {
	body := pageOf(t, newBigBatch(12).run)
	if !strings.Contains(body, `<ul class="legend"`) || !strings.Contains(body, `<span class="sw t0"></span> t</li>`) {
		t.Errorf("the timeline has no legend of its tiers")
	}
	c := chartOf(*newBigBatch(12).run.Batch, map[string]*taskengine.Result{"task-000": {Attempts: []taskengine.Attempt{{Tier: "fast"}, {Tier: "strong", TierIndex: 1}, {Tier: "best", TierIndex: 4}}},
		"task-001": {Attempts: []taskengine.Attempt{{Tier: "cheap"}}}}, t0.Add(time.Hour))
	want := []tierColour{{0, "fast, best, cheap"}, {1, "strong"}}
	if len(c.Legend) != 2 || c.Legend[0] != want[0] || c.Legend[1] != want[1] {
		t.Errorf("legend = %+v, want %+v", c.Legend, want)
	}
}

// killedList is a state directory of one loop recorded as running that no
// process runs, and one that runs.
type killedList struct{ fakeSource }

func (killedList) List(context.Context) ([]runs.Listed, error) {
	return []runs.Listed{
		{RunRow: store.RunRow{ID: "20261125T090000Z-cccccccc", Command: "loop", Status: "running", Title: "killed", StartedAt: t0}},
		{RunRow: store.RunRow{ID: "20261125T090001Z-dddddddd", Command: "loop", Status: "running", Title: "live", Live: true, StartedAt: t0}},
	}, nil
}

// The runs page says of a run recorded as running whether a process runs it
// (live) or it was killed (and resume goes on), in its table and on its
// first screen.
func TestRunsPageKilledOrLive(t *testing.T) {
	s, err := New(&killedList{}, Options{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	_, body := get(t, ts, "/")
	row := func(id string) string {
		i := strings.Index(body, `<tr data-id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no row of %s", id)
		}
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	if killed := row("20261125T090000Z-cccccccc"); !strings.Contains(killed, ">killed, resumable</span>") || strings.Contains(killed, `class="live"`) {
		t.Errorf("the killed run's row:\n%s", killed)
	}
	if live := row("20261125T090001Z-dddddddd"); strings.Contains(live, "killed") || !strings.Contains(live, `class="live"`) {
		t.Errorf("the live run's row:\n%s", live)
	}
	if !strings.Contains(body, `<span class="st stop">killed, resumable</span>`) || !strings.Contains(body, killedWhy) {
		t.Errorf("the killed run's line under Needs you does not say it was killed")
	}
}

// A live task whose worktree is still being measured (an agent left a file
// of gigabytes in it) has its section all the same, saying so, and the
// page keeps asking for it (data-refresh): it is not left without the
// worktree once the measurement ends.
func TestWorktreeBeingMeasured(t *testing.T) {
	res := &taskengine.Result{Status: engine.StatusRunning}
	body := pageOf(t, Shown{ID: "20261128T090000Z-dddddddd", Command: "task", Live: true, Task: res, Measuring: true})
	if !strings.Contains(body, `<section class="working" data-refresh=`) || !strings.Contains(body, "being measured") {
		t.Errorf("a worktree being measured:\n%s", body)
	}
	ch := taskengine.Change{Empty: true, Files: []git.FileChange{}}
	body = pageOf(t, Shown{ID: "20261128T090000Z-dddddddd", Command: "task", Live: true, Task: res, Working: &ch})
	if !strings.Contains(body, `<section class="working" data-refresh=`) || !strings.Contains(body, "No change yet") || strings.Contains(body, "being measured") {
		t.Errorf("a worktree measured:\n%s", body)
	}
	if body = pageOf(t, Shown{ID: "20261128T090000Z-dddddddd", Command: "task", Task: res}); strings.Contains(body, "data-refresh") {
		t.Errorf("a task not under way here asks again for its worktree")
	}
}

// An agent may fill its worktree with files by the hundred thousand: the
// page lists the first MaxFilesShown of a change and counts the others,
// for the worktree asked again every 2 seconds as for an attempt's.
func TestChangeOfManyFilesIsBounded(t *testing.T) {
	var files []git.FileChange
	for i := range 100000 {
		files = append(files, git.FileChange{Path: fmt.Sprintf("junk/%06d.txt", i), Status: "A", Added: 1})
	}
	ch := taskengine.Change{Files: files, Diff: "diff --git a/junk/000000.txt b/junk/000000.txt\n"}
	res := &taskengine.Result{Status: engine.StatusRunning, Attempts: []taskengine.Attempt{{Number: 1, Tier: "fast", Change: ch}}}
	body := pageOf(t, Shown{ID: "20261128T090000Z-eeeeeeee", Command: "task", Live: true, Task: res, Working: &ch})
	if len(body) > 1<<20 {
		t.Fatalf("the page of a change of 100000 files is %d bytes", len(body))
	}
	if !strings.Contains(body, "junk/000000.txt") || strings.Contains(body, fmt.Sprintf("junk/%06d.txt", MaxFilesShown)) ||
		!strings.Contains(body, fmt.Sprintf("and %d more files", 100000-MaxFilesShown)) || !strings.Contains(body, "100000 files") {
		t.Errorf("the files of a change of 100000 files are not the first %d and a count", MaxFilesShown)
	}
}
