package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
)

// slowAgent is a developer that says what it works on, takes a while, then
// writes the file its task names (task-<id>) with a two-line change, and
// says so; with JLGCLI_TEST_DRAFT=N, it writes a draft of it N seconds
// in, silently, first.
const slowAgent = `#!/bin/sh
n=$(grep -o 'task-[a-z]*' | head -1)
echo "working on $n"
if [ -n "$JLGCLI_TEST_DRAFT" ]; then sleep "$JLGCLI_TEST_DRAFT"; echo "a draft of $n" > "$n.txt"; fi
sleep "${JLGCLI_TEST_SLEEP:-2}"
printf 'first line of %s\nsecond line\n' "$n" > "$n.txt"
echo "wrote $n.txt"
`

// world is a git repository with a command backend "fake" (slowAgent),
// and the jlgcli binary built from this module.
type world struct {
	t   *testing.T
	dir string
	exe string
	env []string
}

var built string

func newWorld(t *testing.T) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("builds jlgcli and runs real batches")
	}
	if built == "" {
		exe := filepath.Join(os.TempDir(), fmt.Sprintf("jlgcli-serve-test-%d", os.Getpid()))
		cmd := exec.Command("go", "build", "-o", exe, "./cmd/jlgcli")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build jlgcli: %v\n%s", err, out)
		}
		built = exe
	}
	w := &world{t: t, dir: t.TempDir(), exe: built}
	agent := filepath.Join(w.dir, "agent.sh")
	if err := os.WriteFile(agent, []byte(slowAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(w.dir, "config"), "XDG_STATE_HOME="+filepath.Join(w.dir, "state"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "JLGCLI_SERVE_TOKEN=")
	repo := w.path("repo")
	w.write("repo/jlgcli.toml", fmt.Sprintf("backend = \"fake\"\n[backends.fake]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n", agent))
	w.write("repo/README.md", "a project\n")
	w.write("repo/.gitignore", ".jlgcli/\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return w
}

func (w *world) path(rel string) string { return filepath.Join(w.dir, rel) }

func (w *world) write(rel, text string) {
	w.t.Helper()
	p := w.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// start starts jlgcli with args in the repository; it is killed at the end.
func (w *world) start(env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	w.t.Helper()
	cmd := exec.Command(w.exe, args...)
	cmd.Dir, cmd.Env = w.path("repo"), append(w.env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
	})
	return cmd, &out
}

// serve starts `jlgcli serve` with extra args and returns its URL.
func (w *world) serve(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.exe, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = w.path("repo"), w.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`on (http://\S+/) `)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		w.t.Fatal("jlgcli serve did not say where it listens")
	}
	return ""
}

func getJSON(t *testing.T, url string, v any, hdr ...string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, data)
		}
	}
	return resp.StatusCode
}

// click clicks the element of selector in the page itself: a node the
// test held could be replaced meanwhile by the page's refresh of its live
// part.
func click(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector(`+"`"+selector+"`"+`); if (!b) return false; b.click(); return true })()`))
	if err != nil || !ok {
		t.Fatalf("click %s: %v (found: %v)", selector, err, ok)
	}
}

// waitFor polls cond every 200ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBoardOfARunningBatch: jlgcli serve over a batch of three scripted
// tasks (b depends on a) while it runs, in a real Chromium: the API lists
// the batch and streams its events; the batch page shows every task, the
// DAG and the board, and a task moves from running to done on the open
// page without a reload; a task's page shows its attempt's diff.
func TestBoardOfARunningBatch(t *testing.T) {
	w := newWorld(t)
	w.write("repo/sheets/a.md", "---\nid: a\nchecks: [\"true\"]\n---\n# task-a\nWrite task-a.\n")
	w.write("repo/sheets/b.md", "---\nid: b\ndepends: [a]\nchecks: [\"true\"]\n---\n# task-b\nWrite task-b.\n")
	w.write("repo/sheets/c.md", "---\nid: c\nchecks: [\"true\"]\n---\n# task-c\nWrite task-c.\n")
	batch, out := w.start([]string{"JLGCLI_TEST_SLEEP=4"}, "batch", "-j", "2", "--json", "sheets")
	url := w.serve()

	var list []struct {
		ID, Command, Status string
		Live                bool
	}
	batchID := ""
	waitFor(t, 30*time.Second, "the batch in /api/runs", func() bool {
		getJSON(t, url+"api/runs", &list)
		for _, r := range list {
			if r.Command == "batch" {
				batchID = r.ID
			}
		}
		return batchID != ""
	})

	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+batchID), chromedp.WaitVisible(chromedp.CSS(`svg.dag`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce = true`)); err != nil {
		t.Fatal(err)
	}
	nodes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.dag g.node").length`))
	if err != nil || nodes != 3 {
		t.Errorf("the DAG has %d nodes (%v), want 3", nodes, err)
	}
	// A running task's card says what its agent is doing: its output's
	// last lines (a command backend: plain text).
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-col="running"] article .now .l`))); err != nil {
		t.Fatalf("no running card shows its agent's output: %v", err)
	}
	said, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('section[data-col="running"] article .now .l').textContent`))
	if err != nil || !strings.HasPrefix(said, "working on task-") {
		t.Errorf("a running card's preview reads %q (%v)", said, err)
	}
	screenshot(t, ctx, "batch-running")
	// a moves to the board's done column on the page as it is: no reload
	// (the mark set on the page stays).
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-col="done"] article[data-task="a"]`))); err != nil {
		t.Fatalf("task a never showed done on the open page: %v", err)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce === true`))
	if err != nil || !kept {
		t.Errorf("the page was reloaded to show a done (%v)", err)
	}
	if err := batch.Wait(); err != nil {
		t.Fatalf("the batch: %v\n%s", err, out)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-col="done"] article[data-task="b"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-col="done"] article[data-task="c"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "batch-done")
	// Readable at 700 px: nothing wider than the window but what scrolls
	// in its own box (tables, the drawings).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(700, 900)); err != nil {
		t.Fatal(err)
	}
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || wide > 700 {
		t.Errorf("at 700 px the page is %d px wide (%v)", wide, err)
	}
	screenshot(t, ctx, "batch-done-700px")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 900)); err != nil {
		t.Fatal(err)
	}

	// The API: the batch as show --json, and its events as SSE.
	var sum struct {
		Status string
		Tasks  []struct {
			ID, Status string
			RunID      *string `json:"runId"`
		}
	}
	if code := getJSON(t, url+"api/runs/"+batchID, &sum); code != 200 || sum.Status != "done" || len(sum.Tasks) != 3 {
		t.Fatalf("GET /api/runs/%s: %d %+v", batchID, code, sum)
	}
	resp, err := http.Get(url + "api/runs/" + batchID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	events, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || !bytes.Contains(events, []byte("\nid: ")) || !bytes.Contains(events, []byte("event: end")) {
		t.Errorf("events of a finished batch:\n%s", events)
	}

	// The runs page, and a task's page with its attempt's diff.
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`table.runs`))); err != nil {
		t.Fatal(err)
	}
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.runs tbody tr").length`))
	if rows != 4 {
		t.Errorf("the runs page lists %d runs, want the batch and its 3 tasks", rows)
	}
	screenshot(t, ctx, "runs")
	taskRun := *sum.Tasks[0].RunID
	// The page may fetch its live part again at any moment (its event
	// stream replays the journal): open the attempt by its id, which a
	// refresh keeps open, rather than through a node that may be replaced.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+taskRun), chromedp.WaitReady(chromedp.CSS(`details#attempt-1`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("attempt-1").open = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`pre.diff span.da`))); err != nil {
		t.Fatalf("the diff of task a's attempt: %v", err)
	}
	added, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("pre.diff").innerText`))
	if !strings.Contains(added, "+first line of task-a") {
		t.Errorf("the diff shows:\n%s", added)
	}
	screenshot(t, ctx, "task")
}

// TestLiveDiffOfATaskUnderWay: while a task's attempt works, its page
// shows the worktree as it is now, measured by the board through the
// engine's git: no change yet, then, without a reload though the agent
// says nothing more, the file it drafted (+1); the diff opened shows it.
func TestLiveDiffOfATaskUnderWay(t *testing.T) {
	w := newWorld(t)
	// A task's agent gets only the environment the sandbox passes.
	w.start([]string{"JLGCLI_TEST_SLEEP=30", "JLGCLI_TEST_DRAFT=5", "JLGCLI_SANDBOX_PASS_ENV=JLGCLI_TEST_*"}, "task", "--check", "true", "Write task-w")
	url := w.serve()
	var list []struct {
		ID   string
		Live bool
	}
	waitFor(t, 30*time.Second, "the task, live", func() bool {
		getJSON(t, url+"api/runs", &list)
		return len(list) == 1 && list[0].Live
	})
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+list[0].ID), chromedp.WaitVisible(chromedp.CSS(`section.working`))); err != nil {
		t.Fatalf("the live task's page has no worktree: %v", err)
	}
	head, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("section.working").innerText`))
	if !strings.Contains(head, "No change yet") {
		t.Errorf("before the draft, the worktree reads %q", head)
	}
	waitFor(t, 20*time.Second, "the draft in the worktree's heading", func() bool {
		head, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("section.working h2") || {}).innerText || ""`))
		return strings.Contains(head, "1 file +1 −0")
	})
	if !strings.Contains(head, "The worktree now, attempt 1 under way") {
		t.Errorf("the worktree's heading reads %q", head)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("working").open = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#working pre.diff span.da`))); err != nil {
		t.Fatalf("the worktree's diff: %v", err)
	}
	diff, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#working pre.diff").innerText`))
	if !strings.Contains(diff, "task-w.txt") || !strings.Contains(diff, "+a draft of task-w") {
		t.Errorf("the worktree's diff shows:\n%s", diff)
	}
	screenshot(t, ctx, "task-working")
}

// TestStopThroughTheAPI: a loop stopped through POST /api/runs/ID/stop
// ends as on Ctrl-C: exit 130, status interrupted; the page then offers
// Resume, which starts it again in a process of its own.
func TestStopThroughTheAPI(t *testing.T) {
	w := newWorld(t)
	loop, out := w.start([]string{"JLGCLI_TEST_SLEEP=30"}, "loop", "--max-iterations", "3", "Write task-x")
	url := w.serve()
	var list []struct {
		ID   string
		Live bool
	}
	waitFor(t, 30*time.Second, "the loop, live", func() bool {
		getJSON(t, url+"api/runs", &list)
		return len(list) == 1 && list[0].Live
	})
	id := list[0].ID
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+id), chromedp.WaitVisible(chromedp.CSS(`button[data-act$="/stop"]`))); err != nil {
		t.Fatal(err)
	}
	// While it runs: what its agent does (a command backend: the last
	// lines of its output), its live badge and no guess beside it,
	// here and on the runs page.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.nowbox .now .l`))); err != nil {
		t.Fatalf("the live loop's page has no Now: %v", err)
	}
	for _, path := range []string{"runs/" + id, "", "runs/" + id + "?fragment=1"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(page, []byte(`<span class="live"`)) || bytes.Contains(page, []byte("or it was killed")) || bytes.Contains(page, []byte("killed, resumable")) ||
			!bytes.Contains(page, []byte(`<span class="l">working on task-x</span>`)) {
			t.Errorf("GET /%s of the live loop:\n%s", path, page)
		}
	}
	click(t, ctx, `button[data-act$="/stop"]`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#message.ok`))); err != nil {
		t.Fatal(err)
	}
	msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("message").innerText`))
	if !strings.Contains(msg, "interrupted") {
		t.Errorf("the page says %q", msg)
	}
	err := loop.Wait()
	if code := loop.ProcessState.ExitCode(); code != exit.Interrupted {
		t.Fatalf("the loop exited %d (%v), want 130\n%s", code, err, out)
	}
	var res engine.Result
	if getJSON(t, url+"api/runs/"+id, &res); res.Status != engine.StatusInterrupted {
		t.Errorf("status %s after stop", res.Status)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`button[data-act$="/resume"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "loop-stopped")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("message").className = "msg", true)`)); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, `button[data-act$="/resume"]`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#message.ok`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the loop resumed, live", func() bool {
		getJSON(t, url+"api/runs", &list)
		return len(list) == 1 && list[0].Live
	})
	resp, err := http.Post(url+"api/runs/"+id+"/stop", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stop the resumed loop: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestTokenOffLoopback: off loopback, serve refuses to start without a
// token; with one, a request without it gets 401 and with it the runs.
func TestTokenOffLoopback(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(w.exe, "serve", "--addr", "0.0.0.0:0")
	cmd.Dir, cmd.Env = w.path("repo"), w.env
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exit.Usage || !strings.Contains(string(out), "token") {
		t.Fatalf("serve off loopback without a token: %v\n%s", err, out)
	}
	w.env = append(w.env, "JLGCLI_SERVE_TOKEN=s3cret")
	url := w.serve("--addr", "0.0.0.0:0")
	url = strings.Replace(url, "0.0.0.0", "127.0.0.1", 1)
	url = strings.Replace(url, "[::]", "127.0.0.1", 1)
	if code := getJSON(t, url+"api/runs", nil); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code := getJSON(t, url+"api/runs", nil, "Authorization", "Bearer s3cret"); code != 200 {
		t.Errorf("the token: %d, want 200", code)
	}
}

// mergeAgent is a developer that takes its task's time (task-a 1s, task-b
// 2s, task-c 3s, task-d 1s), writes task-<id>.txt, and, for b and c, the
// same line of shared.txt: c's change conflicts with b's once b is merged.
const mergeAgent = `#!/bin/sh
n=$(grep -o 'task-[a-z]*' | head -1)
case $n in task-b) sleep 2 ;; task-c) sleep 3 ;; *) sleep 1 ;; esac
echo "$n" > "$n.txt"
case $n in task-b|task-c) echo "$n" > shared.txt ;; esac
echo "wrote $n.txt"
`

// mergeCheck passes; on a change laid on a moved base (the landing's
// checkout, <run>-land) it takes 5s, so that tasks queue for their merge.
const mergeCheck = `#!/bin/sh
case "$PWD" in *-land) sleep 5 ;; esac
exit 0
`

// TestBoardCountsAndMergeQueue: with -j 2, the board's running column
// never holds more than 2 tasks, while the tasks that ran and wait for
// their merge stand in the merge queue column apart; a done task's card
// counts its attempt (not 0 attempts) while the batch runs; c, whose change
// conflicts with b's once b is merged, is run again, and its card names
// that second run, why, and that it landed. Watched in a real Chromium.
func TestBoardCountsAndMergeQueue(t *testing.T) {
	w := newWorld(t)
	// The check is the project's own (a file in the host's /tmp named
	// inside a check's command line is not in the sandbox's /tmp).
	agent := w.path("merge-agent.sh")
	w.write("merge-agent.sh", mergeAgent)
	w.write("repo/check.sh", mergeCheck)
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	w.write("repo/jlgcli.toml", fmt.Sprintf("backend = \"fake\"\n[backends.fake]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n", agent))
	for _, id := range []string{"a", "b", "c", "d"} {
		w.write("repo/sheets/"+id+".md", fmt.Sprintf("---\nid: %s\nchecks: [\"sh check.sh\"]\n---\n# task-%s\nWrite task-%s.\n", id, id, id))
	}
	// The sheets are committed: the tasks' worktrees hold them too.
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "sheets"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = w.path("repo"), w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	batch, out := w.start(nil, "batch", "-j", "2", "--json", "sheets")
	url := w.serve()
	batchID := ""
	waitFor(t, 30*time.Second, "the batch in /api/runs", func() bool {
		var list []struct{ ID, Command string }
		getJSON(t, url+"api/runs", &list)
		for _, r := range list {
			if r.Command == "batch" {
				batchID = r.ID
			}
		}
		return batchID != ""
	})
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+batchID), chromedp.WaitVisible(chromedp.CSS(`section[data-col="merging"]`))); err != nil {
		t.Fatal(err)
	}
	// The page watches its own board as it is redrawn: the most tasks
	// seen running and in the merge queue at once, and what a done
	// card said while the batch ran.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		window.seen = {running: 0, merging: 0, doneCard: ""};
		const count = (col) => document.querySelectorAll('section[data-col="' + col + '"] article').length;
		const head = (col) => Number((document.querySelector('section[data-col="' + col + '"] .count') || {}).textContent || 0);
		setInterval(() => {
			window.seen.running = Math.max(window.seen.running, count("running"), head("running"));
			window.seen.merging = Math.max(window.seen.merging, count("merging"));
			const a = document.querySelector('section[data-col="done"] article[data-task="a"] .cmeta');
			if (a && !window.seen.doneCard && document.querySelector('section[data-col="merging"] article')) window.seen.doneCard = a.textContent;
		}, 100);
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-col="merging"] article`))); err != nil {
		t.Fatalf("no task ever showed in the merge queue: %v\n%s", err, out)
	}
	screenshot(t, ctx, "batch-merge-queue")
	if err := batch.Wait(); err != nil {
		t.Fatalf("the batch: %v\n%s", err, out)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-col="done"] article[data-task="c"] .rerun`))); err != nil {
		t.Fatalf("c's card never named its second run: %v", err)
	}
	screenshot(t, ctx, "batch-rerun")
	type seen struct {
		Running, Merging int
		DoneCard         string
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`window.seen`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Running > 2 || s.Running == 0 {
		t.Errorf("the running column held %d tasks at most, with -j 2", s.Running)
	}
	if s.Merging < 2 {
		t.Errorf("the merge queue held %d tasks at most, want 2 or more (b merging, c and d waiting)", s.Merging)
	}
	if !strings.Contains(s.DoneCard, "1 attempt") {
		t.Errorf("a's card said %q while the batch ran, want 1 attempt", s.DoneCard)
	}
	card, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('section[data-col="done"] article[data-task="c"]').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 attempts", "re-run ", ", landed", "re-run as 2", "after a conflict with b, which landed"} {
		if !strings.Contains(card, want) {
			t.Errorf("c's card lacks %q:\n%s", want, card)
		}
	}
	// The second run's own page says whose re-run it is.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"runs/"+batchID)); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, `section[data-col="done"] article[data-task="c"] .rerun a`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`dl.facts`))); err != nil {
		t.Fatal(err)
	}
	facts, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("dl.facts").innerText`))
	if !strings.Contains(facts, "re-run of") || !strings.Contains(facts, "after a conflict with b") {
		t.Errorf("the second run's page:\n%s", facts)
	}
}
