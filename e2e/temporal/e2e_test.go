package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/server/temporaltest"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

var update = flag.Bool("update", false, "write the recorded workflow histories for the replay tests of internal/temporal")

// jlgcli is the binary under test, built once.
var jlgcli string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "jlgcli-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	jlgcli = filepath.Join(dir, "jlgcli")
	// Built in the main module, with its own go.mod and go.sum.
	build := exec.Command("go", "build", "-o", jlgcli, "./cmd/jlgcli")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build jlgcli:", err)
		os.Exit(1)
	}
	code := m.Run()
	giteaSrv.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentScript is the developer of these tests, a command backend: it
// records its call (the worker it ran on), sleeps on the first call when
// JLGCLI_E2E_SLOW says so, and fixes the answer.
const agentScript = `#!/bin/sh
prompt=$(cat)
case "$prompt" in *"You are the planner"*)
	echo '{"steps": ["write right into answer.txt", "say so"]}'; exit 0;;
*"You are the reviewer"*)
	echo "review@$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
	if [ -e "$JLGCLI_E2E_REVIEWED" ]; then echo '{"verdict": "approve", "summary": "good"}'; exit 0; fi
	: > "$JLGCLI_E2E_REVIEWED"
	echo 'One thing. {"verdict": "changes", "comments": [{"file": "answer.txt", "line": 1, "text": "Say it twice."}]}'; exit 0;;
esac
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
case "$prompt" in *"answer.txt:1: Say it twice."*)
	printf 'right\nright\n' > answer.txt; echo "said it twice"; exit 0;;
esac
if [ -n "$JLGCLI_E2E_SLOW" ] && [ "$(wc -l < "$JLGCLI_E2E_CALLS")" -eq 1 ]; then sleep "$JLGCLI_E2E_SLOW"; fi
if [ -n "$JLGCLI_E2E_FIX" ] && [ ! -e "$JLGCLI_E2E_FIX" ]; then echo "still wrong" > answer.txt; echo "tried"; exit 0; fi
echo right > answer.txt
echo "fixed the answer"
`

// world is a Temporal server, a remote repository whose answer.txt is
// wrong, and the configuration workers and clients share.
type world struct {
	t      testing.TB
	ts     *temporaltest.TestServer
	addr   string
	ns     string
	dir    string
	remote string
	calls  string
	env    []string
}

func newWorld(t testing.TB, extraEnv ...string) *world {
	t.Helper()
	return newWorldOn(t, nil, extraEnv...)
}

// newWorldOn is newWorld with a server made with opts.
func newWorldOn(t testing.TB, opts []temporaltest.TestServerOption, extraEnv ...string) *world {
	t.Helper()
	var ts *temporaltest.TestServer
	if tt, ok := t.(*testing.T); ok {
		ts = temporaltest.NewServer(append(opts, temporaltest.WithT(tt))...)
	} else {
		ts = temporaltest.NewServer(opts...)
		t.Cleanup(ts.Stop)
	}
	w := &world{t: t, ts: ts, addr: ts.GetFrontendHostPort(), ns: ts.GetDefaultNamespace(), dir: t.TempDir()}
	w.remote = filepath.Join(w.dir, "remote.git")
	w.calls = filepath.Join(w.dir, "calls")
	agent := filepath.Join(w.dir, "agent.sh")
	must(t, os.WriteFile(agent, []byte(agentScript), 0o755))
	cfg := filepath.Join(w.dir, "config", "jlgcli")
	must(t, os.MkdirAll(cfg, 0o755))
	must(t, os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(fmt.Sprintf("[backends.fake]\ncommand = [\"sh\", %q]\nprompt = \"stdin\"\n[backends.other]\ncommand = [\"true\"]\n", agent)), 0o644))
	w.env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(w.dir, "config"), "XDG_STATE_HOME="+filepath.Join(w.dir, "state"),
		"JLGCLI_E2E_CALLS="+w.calls, "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com", "GIT_CONFIG_NOSYSTEM=1",
		// The agents run confined on the workers (the submitted task's
		// sandbox, auto): the calls they record are outside their worktree.
		"JLGCLI_SANDBOX_ALLOW_WRITE="+w.dir,
		// and they read their settings from JLGCLI_E2E_*, which a confined
		// agent gets when the user names it.
		"JLGCLI_SANDBOX_PASS_ENV=JLGCLI_E2E_*")
	w.env = append(w.env, extraEnv...)

	seed := filepath.Join(w.dir, "seed")
	w.git("", "init", "--quiet", "--bare", "-b", "main", w.remote)
	w.git("", "init", "--quiet", "-b", "main", seed)
	must(t, os.WriteFile(filepath.Join(seed, "answer.txt"), []byte("wrong\n"), 0o644))
	w.git(seed, "add", "answer.txt")
	w.git(seed, "commit", "--quiet", "-m", "the answer is wrong")
	w.git(seed, "push", "--quiet", w.remote, "main")
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// remoteHas reports whether the remote has ref.
func (w *world) remoteHas(ref string) bool {
	cmd := exec.Command("git", "--git-dir", w.remote, "rev-parse", "-q", "--verify", ref)
	return cmd.Run() == nil
}

// hookAll adds to the world's configuration a hook on every event that
// appends the event's JSON to a file, and returns the file's path.
func (w *world) hookAll() string {
	w.t.Helper()
	events := filepath.Join(w.dir, "events.jsonl")
	f, err := os.OpenFile(filepath.Join(w.dir, "config", "jlgcli", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	must(w.t, err)
	_, err = f.WriteString("[[hooks]]\non = [\"*\"]\ncommand = [\"sh\", \"-c\", \"cat >> " + events + "\"]\n")
	must(w.t, err)
	must(w.t, f.Close())
	return events
}

// worker starts `jlgcli worker` named name; it is killed at the end.
func (w *world) worker(name string, extra ...string) *exec.Cmd {
	w.t.Helper()
	log := filepath.Join(w.dir, name+".log")
	f, err := os.Create(log)
	must(w.t, err)
	cmd := exec.Command(jlgcli, append([]string{"worker", "--temporal", w.addr, "--temporal-namespace", w.ns, "--state-dir", filepath.Join(w.dir, name)}, extra...)...)
	cmd.Env = append(w.env, "JLGCLI_E2E_WORKER="+name)
	cmd.Stdout, cmd.Stderr = f, f
	must(w.t, cmd.Start())
	w.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if w.t.Failed() {
			data, err := os.ReadFile(log)
			w.t.Logf("worker %s (%v):\n%s", name, err, data)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(log)
		if bytes.Contains(data, []byte("jlgcli: worker on ")) {
			return cmd
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("worker %s did not start:\n%s", name, data)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run runs jlgcli with args and returns its stdout, stderr and exit code.
func (w *world) run(args ...string) (string, string, int) {
	w.t.Helper()
	return w.runIn(w.dir, args...)
}

// runIn runs jlgcli with args in dir.
func (w *world) runIn(dir string, args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(jlgcli, args...)
	cmd.Env, cmd.Dir = w.env, dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func (w *world) submit(extra ...string) []string {
	return append([]string{"task", "--temporal", w.addr, "--temporal-namespace", w.ns, "--repo", "file://" + w.remote,
		"--base", "main", "-b", "fake", "--check", "grep -q right answer.txt"}, extra...)
}

// batchResult is what the tests read of a batch's --json result.
type batchResult struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	Tasks  []struct {
		ID, Status, Details, Branch string
		Attempts                    int
		Commit                      *string
		RunID                       *string `json:"runId"`
	} `json:"tasks"`
}

// batch is the command line of a batch of the sheets in dir sent to the
// server, with the fake backend and extra flags.
func (w *world) batch(dir string, extra ...string) []string {
	args := []string{"batch", "--temporal", w.addr, "--temporal-namespace", w.ns, "--repo", "file://" + w.remote, "--base", "main", "-b", "fake"}
	return append(append(args, extra...), dir)
}

// sheets writes the task sheets (name without .md: text) in a folder of
// their own and returns it; agent, when not "", replaces the agent script.
func (w *world) sheets(agent string, sheets map[string]string) string {
	w.t.Helper()
	if agent != "" {
		must(w.t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(agent), 0o755))
	}
	dir := filepath.Join(w.dir, "sheets")
	must(w.t, os.MkdirAll(dir, 0o755))
	for name, text := range sheets {
		must(w.t, os.WriteFile(filepath.Join(dir, name+".md"), []byte(text), 0o644))
	}
	return dir
}

// firstCall waits for the agent's first call and returns the worker that
// made it.
func (w *world) firstCall() string {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(w.callsMade()) == 0 {
		if time.Now().After(deadline) {
			w.t.Fatal("no worker called the agent")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return w.callsMade()[0]
}

func (w *world) callsMade() []string {
	data, _ := os.ReadFile(w.calls)
	return strings.Fields(string(data))
}

// TestTaskRunsOnWorkers: a task submitted to the server is done by the
// workers; the remote has the task branch with the fix, the attempt's
// refs and record, and the squash commit on the ready branch; the base
// branch is not touched.
func TestTaskRunsOnWorkers(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	w.worker("w2")
	stdout, stderr, code := w.run(w.submit("--json", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 || res.Attempts[0].Action != taskengine.ActionPass {
		t.Fatalf("result: %s %s, %d attempts", res.Status, res.Details, len(res.Attempts))
	}
	if res.Git == nil || res.Git.Merge == nil {
		t.Fatalf("no git details: %+v", res.Git)
	}
	branch := res.Git.Branch
	if got := w.git("", "--git-dir", w.remote, "show", branch+":answer.txt"); got != "right" {
		t.Errorf("the task branch has answer.txt %q", got)
	}
	ready := branch + "-ready"
	if got := w.git("", "--git-dir", w.remote, "log", "-1", "--format=%s", ready); got != "feat: Fix the answer" {
		t.Errorf("the ready branch's commit is %q", got)
	}
	if got, base := w.git("", "--git-dir", w.remote, "rev-parse", ready+"^"), w.git("", "--git-dir", w.remote, "rev-parse", "main"); got != base {
		t.Errorf("the squash commit's parent is %s, not the base %s", got, base)
	}
	if got := w.git("", "--git-dir", w.remote, "show", "main:answer.txt"); got != "wrong" {
		t.Errorf("the base branch was changed: %q", got)
	}
	for _, ref := range []string{"refs/jlgcli/" + res.RunID + "/1", "refs/jlgcli/" + res.RunID + "/1-result", "refs/jlgcli/" + res.RunID + "/1-outcome"} {
		if !w.remoteHas(ref) {
			t.Errorf("the remote has no %s", ref)
		}
	}
	if !strings.Contains(stderr, "tier fake (1/1) · attempt 1/3") {
		t.Errorf("no progress line of the attempt on stderr:\n%s", stderr)
	}
	// The run is kept locally: show and report find it.
	out, stderr, code := w.run("show", "--json", res.RunID)
	var shown taskengine.Result
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Status != engine.StatusDone || len(shown.Attempts) != 1 {
		t.Errorf("show: exit %d, %s\n%s", code, out, stderr)
	}
	if out, stderr, code := w.run("report", res.RunID); code != 0 || !strings.Contains(out, "done") {
		t.Errorf("report: exit %d\n%s\n%s", code, out, stderr)
	}
	if out, stderr, code := w.run("runs", "--json"); code != 0 || !strings.Contains(out, res.RunID) || !strings.Contains(out, `"status": "done"`) {
		t.Errorf("runs: exit %d\n%s\n%s", code, out, stderr)
	}
	if *update {
		recordHistory(t, w, res.RunID, filepath.Join("..", "..", "internal", "temporal", "testdata", "task-history.json"))
	}
}

// TestResumeAStoppedTask: a task that spent its attempts on the workers
// (exit 4) is resumed from its history by jlgcli resume: a new turn of its
// tier, which passes.
func TestResumeAStoppedTask(t *testing.T) {
	// The file that says "fixed" is in the world's directory, which the
	// confined agent sees (not in the host's /tmp, which it does not).
	w := newWorld(t)
	fix := filepath.Join(w.dir, "fixed")
	w.env = append(w.env, "JLGCLI_E2E_FIX="+fix)
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--attempts", "1", "--json", "Fix the answer")...)
	if code != exit.MaxIterations {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exit.MaxIterations, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	must(t, os.WriteFile(fix, nil, 0o644))
	stdout, stderr, code = w.run("resume", "--json", res.RunID)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 || res.Attempts[1].InTier != 1 {
		t.Errorf("after resume: %s with %d attempts", res.Status, len(res.Attempts))
	}
	if got := w.git("", "--git-dir", w.remote, "show", res.Git.Branch+":answer.txt"); got != "right" {
		t.Errorf("the task branch has answer.txt %q", got)
	}
}

// recordHistory writes the workflow's history as the replay test reads it.
func recordHistory(t *testing.T, w *world, runID, path string) {
	c := w.ts.GetDefaultClient()
	it := c.GetWorkflowHistory(context.Background(), runID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h history.History
	for it.HasNext() {
		ev, err := it.Next()
		must(t, err)
		h.Events = append(h.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(&h)
	must(t, err)
	must(t, os.WriteFile(path, data, 0o644))
}

// slowTaskOnTwo starts workers w1 and w2 and submits a task, detached,
// whose attempts heartbeat within heartbeat; it returns the run id and the
// workers by name.
func (w *world) slowTaskOnTwo(heartbeat string) (string, map[string]*exec.Cmd) {
	w.t.Helper()
	workers := map[string]*exec.Cmd{"w1": w.worker("w1"), "w2": w.worker("w2")}
	stdout, stderr, code := w.run(w.submit("--detach", "--heartbeat-timeout", heartbeat, "Fix the answer")...)
	if code != 0 {
		w.t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	return strings.TrimSpace(stdout), workers
}

// TestWorkerKilledDuringAttempt: the worker running an attempt is killed
// (SIGKILL); the other worker makes the attempt again once the heartbeats
// stop, and the task is done with one attempt: the agent was called once
// more, not more, and the attempt is counted once.
func TestWorkerKilledDuringAttempt(t *testing.T) {
	w := newWorld(t, "JLGCLI_E2E_SLOW=120")
	runID, workers := w.slowTaskOnTwo("10s")
	if out, stderr, code := w.run("show", runID); code != 0 || !strings.Contains(out, "running (on the workers of "+w.addr) {
		t.Errorf("show of a running task: exit %d\n%s\n%s", code, out, stderr)
	}
	first := w.firstCall()
	must(t, workers[first].Process.Signal(syscall.SIGKILL))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var res taskengine.Result
	must(t, w.ts.GetDefaultClient().GetWorkflow(ctx, runID, "").Get(ctx, &res))
	if res.Status != engine.StatusDone {
		t.Fatalf("status %s: %s", res.Status, res.Details)
	}
	calls := w.callsMade()
	if len(calls) != 2 || calls[1] == first {
		t.Errorf("agent calls by worker: %v; want one on %s, then one on the other", calls, first)
	}
	if len(res.Attempts) != 1 {
		t.Errorf("%d attempts recorded, want 1", len(res.Attempts))
	}
	// The detached run's record learns its end from the server.
	out, stderr, code := w.run("resume", "--json", runID)
	var got taskengine.Result
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Status != engine.StatusDone {
		t.Errorf("resume of a task done on the workers: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestNoWorkerHasTheBackend: a task whose backend no worker has fails once
// the wait is over, naming the backend, instead of waiting forever.
func TestNoWorkerHasTheBackend(t *testing.T) {
	w := newWorld(t)
	// fake is installed on this machine, but the worker takes only other's
	// attempts (--backends).
	w.worker("w1", "--backends", "other")
	for _, backend := range []string{"nosuch", "fake"} {
		args := w.submit("--worker-wait", "3s", "Fix the answer")
		for i, a := range args {
			if a == "fake" {
				args[i] = backend
			}
		}
		_, stderr, code := w.run(args...)
		if code != exit.BackendMissing || !strings.Contains(stderr, "no worker with backend "+backend) {
			t.Errorf("-b %s: exit %d, want %d naming the backend:\n%s", backend, code, exit.BackendMissing, stderr)
		}
	}
	if calls := w.callsMade(); len(calls) != 0 {
		t.Errorf("the agent was called by %v", calls)
	}
}

// TestRemoteThatCannotBeFetched: the task fails with git's own message.
func TestRemoteThatCannotBeFetched(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	args := w.submit("Fix the answer")
	for i, a := range args {
		if strings.HasPrefix(a, "file://") {
			args[i] = "file://" + filepath.Join(w.dir, "no-such-remote.git")
		}
	}
	_, stderr, code := w.run(args...)
	if code == 0 || !strings.Contains(stderr, "no-such-remote.git") || !strings.Contains(stderr, "does not appear to be a git repository") {
		t.Errorf("exit %d; want a failure with git's message:\n%s", code, stderr)
	}
}

// answerTest is a Go test that wants the right answer.
const answerTest = `package answer

import (
	"os"
	"strings"
	"testing"
)

func TestAnswer(t *testing.T) {
	data, _ := os.ReadFile("answer.txt")
	if got := strings.TrimSpace(string(data)); got != "right" {
		t.Fatalf("the answer is %q", got)
	}
}
`

// TestChecksDetectedAtSubmission: a task sent without --check makes the
// pre-flight of a local task in the checkout it is sent from: with nothing
// to detect there it is refused before it is submitted (exit 64, no agent
// called); in a Go module the workers judge it with the module's default
// checks (go build, go vet, go test).
func TestChecksDetectedAtSubmission(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	clone := filepath.Join(w.dir, "clone")
	w.git("", "clone", "--quiet", "file://"+w.remote, clone)
	task := []string{"task", "--temporal", w.addr, "--temporal-namespace", w.ns, "-b", "fake", "--json", "Fix the answer"}
	_, stderr, code := w.runIn(clone, task...)
	if code != exit.Usage || !strings.Contains(stderr, "no checks to judge the work with") {
		t.Errorf("no check to detect: exit %d, want %d refusing:\n%s", code, exit.Usage, stderr)
	}
	if calls := w.callsMade(); len(calls) != 0 {
		t.Errorf("the agent was called by %v", calls)
	}

	must(t, os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module example.com/answer\n\ngo 1.22\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(clone, "answer_test.go"), []byte(answerTest), 0o644))
	w.git(clone, "add", "go.mod", "answer_test.go")
	w.git(clone, "commit", "--quiet", "-m", "a test of the answer")
	w.git(clone, "push", "--quiet", "origin", "main")
	stdout, stderr, code := w.runIn(clone, task...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 {
		t.Fatalf("result: %s %s, %d attempts", res.Status, res.Details, len(res.Attempts))
	}
	var ran []string
	for _, c := range res.Attempts[0].Gate.Checks {
		ran = append(ran, c.Name)
	}
	if !slices.Contains(ran, "go test -json ./...") {
		t.Errorf("the attempt's gate ran %q, not the Go module's default checks", ran)
	}
	if res.Baseline == nil || res.Baseline.Status == "" || res.Baseline.Status == gate.StatusPass {
		t.Errorf("the baseline %+v: want the Go test failing at the base", res.Baseline)
	}
}

// TestNoServer: no server at the address is said at once, naming it.
func TestNoServer(t *testing.T) {
	w := &world{t: t, dir: t.TempDir()}
	// The worker has a backend: it checks its backends before it dials.
	cfg := filepath.Join(w.dir, "config", "jlgcli")
	must(t, os.MkdirAll(cfg, 0o755))
	must(t, os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[backends.other]\ncommand = [\"true\"]\n"), 0o644))
	w.env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(w.dir, "config"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"task", "--temporal", addr, "--repo", "file:///nowhere.git", "-b", "claude", "--check", "true", "Fix it"},
		{"worker", "--temporal", addr},
	} {
		began := time.Now()
		_, stderr, code := w.run(args...)
		if code != exit.Unreachable || !strings.Contains(stderr, "no Temporal server at "+addr) {
			t.Errorf("%s: exit %d, want %d naming %s:\n%s", args[0], code, exit.Unreachable, addr, stderr)
		}
		if d := time.Since(began); d > 30*time.Second {
			t.Errorf("%s: took %s", args[0], d)
		}
	}
}

// batchAgent writes the file its task names (task-N.txt) after a pause,
// so that the tasks of a batch overlap.
const batchAgent = `#!/bin/sh
n=$(grep -o 'task-[0-9]*' | head -1)
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
sleep 2
echo done > "$n.txt"
echo "wrote $n.txt"
`

// TestBatchOnTwoWorkers: a batch of four independent sheets runs on both
// workers at once; every task lands on the batch's branch, which holds
// the four files, and the base branch is not touched.
func TestBatchOnTwoWorkers(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	w.worker("w2")
	four := map[string]string{}
	for i := range 4 {
		four[fmt.Sprintf("task-%d", i)] = fmt.Sprintf("# Write task-%d\n", i)
	}
	stdout, stderr, code := w.run(w.batch(w.sheets(batchAgent, four), "--check", "true", "-j", "4", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout), &sum))
	if sum.Status != "done" || len(sum.Tasks) != 4 {
		t.Fatalf("batch %s with %d tasks:\n%s", sum.Status, len(sum.Tasks), stdout)
	}
	for _, tk := range sum.Tasks {
		if tk.Status != "done" || tk.Commit == nil {
			t.Errorf("task %s: %s, commit %v", tk.ID, tk.Status, tk.Commit)
		}
	}
	branch := "jlgcli/batch-" + sum.RunID
	files := w.git("", "--git-dir", w.remote, "ls-tree", "--name-only", branch)
	for i := range 4 {
		if !strings.Contains(files, fmt.Sprintf("task-%d.txt", i)) {
			t.Errorf("the batch's branch lacks task-%d.txt: %s", i, files)
		}
	}
	if got := w.git("", "--git-dir", w.remote, "ls-tree", "--name-only", "main"); got != "answer.txt" {
		t.Errorf("the base branch was changed: %s", got)
	}
	calls := w.callsMade()
	byWorker := map[string]int{}
	for _, c := range calls {
		byWorker[c]++
	}
	if len(calls) != 4 || byWorker["w1"] == 0 || byWorker["w2"] == 0 {
		t.Errorf("agent calls by worker: %v; want 4 over both workers", calls)
	}
}

// conflictAgent writes the id of its sheet (its heading) as the answer and
// keeps each prompt; q's first run is slow, so that p lands first.
const conflictAgent = `#!/bin/sh
p=$(cat)
id=$(printf '%s\n' "$p" | sed -n 's/^# \([a-z]*\)$/\1/p' | head -1)
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
n=$(( $(cat "$JLGCLI_E2E_CALLS.$id" 2>/dev/null || echo 0) + 1 ))
echo $n > "$JLGCLI_E2E_CALLS.$id"
printf '%s' "$p" > "$JLGCLI_E2E_CALLS.$id.$n"
if [ "$id" = q ] && [ "$n" = 1 ]; then sleep 3; fi
echo "$id" > answer.txt
echo "answered $id"
`

// pqSheets are two sheets whose tasks set the same answer.
var pqSheets = map[string]string{"p": "# p\nSet the answer to p.\n", "q": "# q\nSet the answer to q.\n"}

// TestBatchConflictRunsAgain: two sheets that run at once on two workers
// change the same line; p lands first, q's change conflicts with the
// batch's branch as p left it: q gets one more run from that branch, told
// why, and lands from it, as in a local batch.
func TestBatchConflictRunsAgain(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	w.worker("w2")
	sheets := w.sheets(conflictAgent, pqSheets)
	stdout, stderr, code := w.run(w.batch(sheets, "--check", "grep -qx '[a-z]*' answer.txt", "-j", "2", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout), &sum))
	if sum.Status != "done" || len(sum.Tasks) != 2 || sum.Tasks[1].ID != "q" || sum.Tasks[1].Status != "done" {
		t.Fatalf("batch:\n%s", stdout)
	}
	branch := "jlgcli/batch-" + sum.RunID
	if !strings.Contains(sum.Tasks[1].Details, "re-run as "+sum.RunID+"-q-again after a conflict with the work merged since it started, which landed") ||
		!strings.Contains(sum.Tasks[1].Details, "conflicts with it in answer.txt") {
		t.Errorf("q's details: %s", sum.Tasks[1].Details)
	}
	prompt, err := os.ReadFile(w.calls + ".q.2")
	must(t, err)
	if !strings.Contains(string(prompt), "## An earlier run of this task") ||
		!strings.Contains(string(prompt), "could not be merged after a conflict with the work merged since it started: "+branch+" has moved") {
		t.Errorf("q's second prompt does not say why:\n%s", prompt)
	}
	if got := w.git("", "--git-dir", w.remote, "show", branch+":answer.txt"); got != "q" {
		t.Errorf("the batch's branch has answer.txt %q, want q", got)
	}
	if got := w.git("", "--git-dir", w.remote, "log", "--format=%s", "main.."+branch); got != "feat: q\nfeat: p" {
		t.Errorf("the batch's branch has the commits:\n%s", got)
	}
	if *update {
		recordHistory(t, w, sum.RunID, filepath.Join("..", "..", "internal", "temporal", "testdata", "batch-history.json"))
	}
}

// resumeAgent writes <id>.txt for the sheet whose heading is # <id>; the
// sheet fix is written wrong until the file $JLGCLI_E2E_FIX exists.
const resumeAgent = `#!/bin/sh
p=$(cat)
id=$(printf '%s\n' "$p" | sed -n 's/^# \([a-z]*\)$/\1/p' | head -1)
echo "$JLGCLI_E2E_WORKER-$id" >> "$JLGCLI_E2E_CALLS"
if [ "$id" = fix ] && [ ! -e "$JLGCLI_E2E_FIX" ]; then echo wrong > fix.txt; else echo right > "$id.txt"; fi
echo "wrote $id.txt"
`

// TestResumeABatch: a batch on Temporal that ended incomplete (a task
// stopped by its attempts, its dependent blocked) is resumed as a local
// batch is: the done task is kept (not run again), the stopped one goes on
// from its history with a new turn of its tier, the blocked one starts.
func TestResumeABatch(t *testing.T) {
	// The file that says "fixed" is in the world's directory, which the
	// confined agent sees (not in the host's /tmp, which it does not).
	w := newWorld(t)
	fix := filepath.Join(w.dir, "fixed")
	w.env = append(w.env, "JLGCLI_E2E_FIX="+fix)
	w.worker("w1")
	sheets := w.sheets(resumeAgent, map[string]string{"good": "# good\n", "fix": "# fix\n", "after": "---\ndepends: [fix]\n---\n# after\n"})

	stdout, stderr, code := w.run(w.batch(sheets, "--attempts", "1", "--check", "test ! -e fix.txt || grep -qx right fix.txt", "--json")...)
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout), &sum))
	status := func(s batchResult) map[string]string {
		m := map[string]string{}
		for _, tk := range s.Tasks {
			m[tk.ID] = tk.Status
		}
		return m
	}
	if code != 3 || sum.Status != "incomplete" || status(sum)["good"] != "done" || status(sum)["fix"] != "max-iterations" || status(sum)["after"] != "blocked" {
		t.Fatalf("exit %d, want 3 with good done, fix stopped, after blocked:\n%s\n%s", code, stdout, stderr)
	}
	must(t, os.WriteFile(fix, nil, 0o644))
	stdout, stderr, code = w.run("resume", "--json", sum.RunID)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var again batchResult
	must(t, json.Unmarshal([]byte(stdout), &again))
	if got := status(again); again.Status != "done" || !maps.Equal(got, map[string]string{"good": "done", "fix": "done", "after": "done"}) {
		t.Errorf("after resume: %s, tasks %v; want every task done", again.Status, got)
	}
	for _, tk := range again.Tasks {
		want := 1
		if tk.ID == "fix" {
			want = 2 // its stopped attempt, then one more from its history
		}
		if tk.Attempts != want || tk.Branch == "" || tk.Commit == nil {
			t.Errorf("task %s: %d attempts on branch %q, commit %v; want %d attempts, a branch and a commit", tk.ID, tk.Attempts, tk.Branch, tk.Commit, want)
		}
	}
	calls := map[string]int{}
	for _, c := range w.callsMade() {
		calls[strings.TrimPrefix(c, "w1-")]++
	}
	if !maps.Equal(calls, map[string]int{"good": 1, "fix": 2, "after": 1}) {
		t.Errorf("agent calls by task: %v; want good 1, fix 2, after 1", calls)
	}
	branch := "jlgcli/batch-" + sum.RunID
	for _, f := range []string{"good.txt", "fix.txt", "after.txt"} {
		if got := w.git("", "--git-dir", w.remote, "show", branch+":"+f); got != "right" {
			t.Errorf("the batch's branch has %s %q", f, got)
		}
	}
	stderr2 := stderr
	if !strings.Contains(stderr2, "resuming batch "+sum.RunID) || !strings.Contains(stderr2, "1 of 3 tasks done, 1 resumed from their history") {
		t.Errorf("resume said:\n%s", stderr2)
	}
	// Each task's run, the resumed one included, is kept under the batch.
	for _, tk := range again.Tasks {
		out, stderr, code := w.run("show", "--json", *tk.RunID)
		var shown taskengine.Result
		if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.Status != engine.StatusDone || len(shown.Attempts) != tk.Attempts {
			t.Errorf("show %s after the resume: exit %d\n%s\n%s", *tk.RunID, code, out, stderr)
		}
	}
}

// TestResumeABatchAfterAConflict: q's change conflicts with p's on the
// batch's branch, and its run from there breaks the check: q ends conflict.
// Resumed, q starts anew as a run of its own (not the earlier run, whose
// attempts are recorded on the remote) from the branch as it is, and lands.
func TestResumeABatchAfterAConflict(t *testing.T) {
	w := newWorld(t)
	agent := strings.Replace(conflictAgent, `echo "$id" > answer.txt`,
		`if [ "$id" = q ] && [ "$n" = 2 ]; then echo "not one word" > answer.txt; else echo "$id" > answer.txt; fi`, 1)
	w.worker("w1")
	w.worker("w2")
	sheets := w.sheets(agent, pqSheets)
	stdout, stderr, code := w.run(w.batch(sheets, "--attempts", "1", "--check", "grep -qx '[a-z]*' answer.txt", "-j", "2", "--json")...)
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout), &sum))
	if code != 3 || len(sum.Tasks) != 2 || sum.Tasks[1].Status != "conflict" {
		t.Fatalf("exit %d, want 3 with q in conflict:\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = w.run("resume", "--json", sum.RunID)
	var again batchResult
	must(t, json.Unmarshal([]byte(stdout), &again))
	if code != 0 || again.Status != "done" || again.Tasks[1].Status != "done" || again.Tasks[1].RunID == nil || *again.Tasks[1].RunID != sum.RunID+"-q-r2" {
		t.Fatalf("resume: exit %d, want q done in run %s-q-r2:\n%s\n%s", code, sum.RunID, stdout, stderr)
	}
	if n, err := os.ReadFile(w.calls + ".q"); err != nil || strings.TrimSpace(string(n)) != "3" {
		t.Errorf("q's agent was called %q times (%v), want 3: its first run, the one from the moved branch, the new run", n, err)
	}
	if got := w.git("", "--git-dir", w.remote, "show", "jlgcli/batch-"+sum.RunID+":answer.txt"); got != "q" {
		t.Errorf("the batch's branch has answer.txt %q, want q", got)
	}
}

// TestPullRequestAndMergePush: --pr opens the pull request of the ready
// branch with the worker's gh; --merge push fast-forwards the base branch
// on the remote to the squash commit.
func TestPullRequestAndMergePush(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	must(t, os.MkdirAll(bin, 0o755))
	ghArgs := filepath.Join(bin, "gh-args")
	must(t, os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\necho \"$@\" > "+ghArgs+"\necho https://example.com/pr/7\n"), 0o755))
	w := newWorld(t, "PATH="+bin+":"+os.Getenv("PATH"))
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--pr", "--merge", "push", "--json", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Git == nil || res.Git.PR != "https://example.com/pr/7" {
		t.Errorf("git: %+v", res.Git)
	}
	args, err := os.ReadFile(ghArgs)
	must(t, err)
	for _, want := range []string{"pr create", "--head " + res.Git.Branch + "-ready", "--title feat: Fix the answer", "--base main"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("gh %s: no %q", args, want)
		}
	}
	if res.Git.Merge == nil || res.Git.Merge.Status != "fast-forwarded" {
		t.Errorf("merge: %+v", res.Git.Merge)
	}
	if got := w.git("", "--git-dir", w.remote, "show", "main:answer.txt"); got != "right" {
		t.Errorf("the base branch has answer.txt %q after --merge push", got)
	}
}

// TestWorkerStoppedDuringAttempt: SIGTERM stops a worker in the middle of
// an attempt: the attempt is handed back at once (no heartbeat timeout to
// wait for) and made by the other worker; the stopped worker exits 0.
func TestWorkerStoppedDuringAttempt(t *testing.T) {
	w := newWorld(t, "JLGCLI_E2E_SLOW=120")
	runID, workers := w.slowTaskOnTwo("5m")
	first := w.firstCall()
	stopped := time.Now()
	must(t, workers[first].Process.Signal(syscall.SIGTERM))
	if err := workers[first].Wait(); err != nil {
		t.Errorf("the stopped worker: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res taskengine.Result
	must(t, w.ts.GetDefaultClient().GetWorkflow(ctx, runID, "").Get(ctx, &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 1 {
		t.Fatalf("status %s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	if d := time.Since(stopped); d > time.Minute {
		t.Errorf("the attempt came back after %s: it waited for a heartbeat timeout", d)
	}
	if calls := w.callsMade(); len(calls) != 2 || calls[1] == first {
		t.Errorf("agent calls by worker: %v", calls)
	}
}

// TestPlanOnWorkers: --plan asks the planner on a worker first; each step
// is developed and passes in turn.
func TestPlanOnWorkers(t *testing.T) {
	w := newWorld(t)
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--plan", "--json", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if diff := strings.Join(res.Plan, "|"); diff != "write right into answer.txt|say so" {
		t.Errorf("plan %q", res.Plan)
	}
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 || res.Attempts[1].Step != 2 {
		t.Errorf("%s with %d attempts", res.Status, len(res.Attempts))
	}
}

// TestReviewOnWorkers: with --review the worker that made an attempt has it
// reviewed; the changes asked are the next attempt's feedback and the
// workflow decides on the reviewer's verdict: the first attempt, whose
// checks passed, is refused and not committed; the second is approved and
// lands.
func TestReviewOnWorkers(t *testing.T) {
	w := newWorld(t)
	w.env = append(w.env, "JLGCLI_E2E_REVIEWED="+filepath.Join(w.dir, "reviewed"))
	w.worker("w1")
	stdout, stderr, code := w.run(w.submit("--review", "fake", "--json", "Fix the answer")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone || len(res.Attempts) != 2 {
		t.Fatalf("%s with %d attempts: %s", res.Status, len(res.Attempts), res.Details)
	}
	a1, a2 := res.Attempts[0], res.Attempts[1]
	if a1.Review == nil || a1.Review.Verdict != taskengine.ReviewChanges || a1.Action != taskengine.ActionRetry || a1.Commit != "" {
		t.Errorf("attempt 1: action %s, commit %q, review %+v", a1.Action, a1.Commit, a1.Review)
	}
	if a2.Review == nil || !a2.Review.Approved() || a2.Action != taskengine.ActionPass {
		t.Errorf("attempt 2: action %s, review %+v", a2.Action, a2.Review)
	}
	if res.Review == nil || res.Review.Attempts != 2 || res.Review.Passed != 1 {
		t.Errorf("review summary %+v", res.Review)
	}
	if got := w.callsMade(); strings.Join(got, " ") != "w1 review@w1 w1 review@w1" {
		t.Errorf("calls %v", got)
	}
	if res.Git == nil || res.Git.Branch == "" {
		t.Fatalf("no branch: %+v", res.Git)
	}
	if got := w.git("", "--git-dir", w.remote, "show", res.Git.Branch+":answer.txt"); got != "right\nright" {
		t.Errorf("the branch's answer.txt is %q, want the approved change", got)
	}
}
