package runs_test

// Stop is tested for real: jlgcli (this test binary, which runs cli.Run
// when RUNS_TEST_JLGCLI=1) runs a loop or a batch with a shell script for
// agent, and the test stops it from outside through runs.Stop, as another
// process would.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/cli"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/runs"
	"github.com/jlgcli/jlgcli/internal/store"
)

func TestMain(m *testing.M) {
	if os.Getenv("RUNS_TEST_JLGCLI") == "1" {
		os.Exit(cli.Run())
	}
	os.Exit(m.Run())
}

// hangGuard bounds every wait: it stops a stuck test, it does not measure
// speed.
const hangGuard = 60 * time.Second

// jlgcli is a jlgcli command in dir, with an environment of its own under
// work: its output in stdout and stderr.
type jlgcli struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func command(t *testing.T, work, dir string, args ...string) *jlgcli {
	t.Helper()
	j := &jlgcli{cmd: exec.Command(os.Args[0], args...)}
	j.cmd.Dir = dir
	j.cmd.Env = []string{"RUNS_TEST_JLGCLI=1", "PATH=/usr/bin:/bin", "WORK=" + work,
		"HOME=" + filepath.Join(work, "home"), "XDG_CONFIG_HOME=" + filepath.Join(work, "xdg"),
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GORACE=atexit_sleep_ms=0",
		// The scripts' marks are in work, outside the agents' working
		// directory: writable to them when they run confined.
		"JLGCLI_SANDBOX_ALLOW_WRITE=" + work,
		// and $WORK is how the agents find them: a confined agent gets it
		// as a user names a variable of theirs.
		"JLGCLI_SANDBOX_PASS_ENV=WORK"}
	j.cmd.Stdout, j.cmd.Stderr = &j.stdout, &j.stderr
	return j
}

func (j *jlgcli) start(t *testing.T) {
	t.Helper()
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if j.cmd.ProcessState == nil {
			_ = j.cmd.Process.Kill()
			_ = j.cmd.Wait()
		}
	})
}

// wait waits for the command and returns its exit status.
func (j *jlgcli) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- j.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		_ = j.cmd.Process.Kill()
		<-done
		t.Fatalf("jlgcli %s hangs\nstderr: %s", strings.Join(j.cmd.Args[1:], " "), j.stderr.String())
	}
	return j.cmd.ProcessState.ExitCode()
}

// run runs the command to its end and returns its exit status.
func (j *jlgcli) run(t *testing.T) int {
	t.Helper()
	j.start(t)
	return j.wait(t)
}

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup makes the directories of a jlgcli environment under a new work
// directory, with a jlgcli.toml in dir whose backend "fake" runs the
// shell script agent (found in $WORK/agent.sh), and returns work.
func setup(t *testing.T, dir, agent string) string {
	t.Helper()
	work := t.TempDir()
	for _, d := range []string{"home", "xdg"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(work, dir, "jlgcli.toml"), "backend = \"fake\"\n[backends.fake]\ncommand = [\"sh\", \"-c\", \"exec sh \\\"$WORK/agent.sh\\\"\"]\n")
	write(t, filepath.Join(work, "agent.sh"), agent)
	return work
}

// loopAgent replies "Step 1", then works (until it is stopped) in its
// second call, having noted it in $WORK/started-2, then says DONE.
const loopAgent = `n=$(( $(cat "$WORK/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$WORK/count"
cat > /dev/null
case $n in
1) echo "Step 1" ;;
2) echo "working on step 2"; echo $$ > "$WORK/pid-2"; : > "$WORK/started-2"; sleep 60 ;;
*) echo DONE ;;
esac
`

// A loop stopped from another process ends as on Ctrl-C: exit 130, a stop
// event that says interrupted, its checkpoint interrupted, the stop
// request gone; Follow saw it all and ended with it; resume goes on to
// done, the cut iteration made again.
func TestStopLoop(t *testing.T) {
	t.Parallel()
	work := setup(t, "", loopAgent)
	state := filepath.Join(work, "state")
	loop := command(t, work, work, "loop", "--json", "--state-dir", state, "Do the task")
	loop.start(t)
	waitFile(t, filepath.Join(work, "started-2"))

	list, err := runs.List(state, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].Live || list[0].Status != store.Running || list[0].Command != "loop" {
		t.Fatalf("List while it runs: %+v", list)
	}
	r := list[0]
	if r.Current == nil || r.Current.Iteration != 2 {
		t.Errorf("List: current %+v, want iteration 2", r.Current)
	}

	// Follow from the start, in the background, as a web page would.
	var (
		mu       sync.Mutex
		followed []runs.Event
	)
	followErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		followErr <- runs.Follow(ctx, state, r.ID, runs.FollowOptions{}, func(e runs.Event) error {
			mu.Lock()
			followed = append(followed, e)
			mu.Unlock()
			return nil
		})
	}()
	// The output of the call under way reaches Follow before the stop.
	deadline := time.Now().Add(hangGuard)
	for !sawOutput(&mu, &followed, 2, "working on step 2") {
		if time.Now().After(deadline) {
			t.Fatal("Follow never handed out the output of the call under way")
		}
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	stopped, err := runs.Stop(ctx, state, r.ID[:20], nil) // a prefix names it too
	if err != nil {
		t.Fatal(err)
	}
	if stopped.ID != r.ID || stopped.Live || stopped.Status != string(engine.StatusInterrupted) || stopped.Current != nil {
		t.Errorf("Stop returned %+v", stopped)
	}
	if code := loop.wait(t); code != exit.Interrupted {
		t.Fatalf("the stopped loop exited %d, want %d\nstderr: %s", code, exit.Interrupted, loop.stderr.String())
	}
	// The agent (the shell and its sleep: its process group) was stopped.
	pid, err := os.ReadFile(filepath.Join(work, "pid-2"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
	if n <= 0 {
		t.Fatalf("pid-2: %q", pid)
	}
	// A SIGKILL takes effect asynchronously.
	eventually(t, "the agent's process group gone", func() bool { return syscall.Kill(-n, 0) != nil })
	var res engine.Result
	if err := json.Unmarshal(loop.stdout.Bytes(), &res); err != nil {
		t.Fatalf("loop --json: %v\n%s", err, loop.stdout.String())
	}
	if res.Status != engine.StatusInterrupted || res.ExitCode != 130 || res.Iterations != 1 || res.Details != "interrupted during iteration 2" {
		t.Errorf("loop --json: status %s, exit code %d, %d iterations, details %q", res.Status, res.ExitCode, res.Iterations, res.Details)
	}
	if want := "jlgcli: run " + r.ID + " stopped (interrupted); continue it with: jlgcli resume " + r.ID; !strings.Contains(loop.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, loop.stderr.String())
	}

	run, err := store.Open(state, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	events, _, err := run.Events()
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	var stop engine.StopData
	if err := json.Unmarshal(last.Data, &stop); err != nil || last.Type != engine.EventStop || stop.Status != engine.StatusInterrupted || stop.ExitCode != 130 {
		t.Errorf("the journal ends with %s %s (%v)", last.Type, last.Data, err)
	}
	var cp engine.Checkpoint
	if err := run.ReadCheckpoint(&cp); err != nil || cp.Status != string(engine.StatusInterrupted) || cp.State.Iterations != 1 {
		t.Errorf("checkpoint: status %q, %d iterations (%v)", cp.Status, cp.State.Iterations, err)
	}
	if _, err := os.Stat(filepath.Join(run.Dir, "stop")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stop request is left: %v", err)
	}

	// Follow ended with the run, having handed out every line once, in
	// order, the stop last.
	if err := <-followErr; err != nil {
		t.Fatalf("Follow: %v", err)
	}
	var types []string
	var next int64
	for _, e := range followed {
		if e.Kind != runs.KindJournal {
			continue
		}
		if e.Offset != next {
			t.Errorf("event %s at offset %d, want %d", e.Event.Type, e.Offset, next)
		}
		next = e.Next
		types = append(types, e.Event.Type)
	}
	if got := strings.Join(types, " "); got != "start iteration stop" {
		t.Errorf("Follow handed out %q, want %q", got, "start iteration stop")
	}

	// A stopped run cannot be stopped again: it is not live.
	if _, err := runs.Stop(ctx, state, r.ID, nil); !exit.IsUsage(err) || cli.ExitCode(err) != exit.Usage || !strings.Contains(err.Error(), "not live") {
		t.Errorf("Stop of a stopped run: %v (exit %d)", err, cli.ExitCode(err))
	}

	// Resume goes on: the cut call is made again and says DONE.
	resume := command(t, work, work, "resume", "--json", "--state-dir", state, r.ID)
	if code := resume.run(t); code != 0 {
		t.Fatalf("resume exited %d\nstderr: %s", code, resume.stderr.String())
	}
	if err := json.Unmarshal(resume.stdout.Bytes(), &res); err != nil || res.Status != engine.StatusDone || res.Iterations != 2 {
		t.Errorf("resume --json: status %s, %d iterations (%v)", res.Status, res.Iterations, err)
	}
}

// sawOutput tells whether followed holds output of call n that says text.
func sawOutput(mu *sync.Mutex, followed *[]runs.Event, n int, text string) bool {
	mu.Lock()
	defer mu.Unlock()
	var b strings.Builder
	for _, e := range *followed {
		if e.Kind == runs.KindOutput && e.N == n {
			b.Write(e.Output)
		}
	}
	return strings.Contains(b.String(), text)
}

// batchAgent finds its task's id in the heading of the sheet ("# a"),
// notes its call in $WORK/start-<id>-<n>, waits while $WORK/hold-<id>
// exists, and writes <id>.txt.
const batchAgent = `p=$(cat)
id=$(printf '%s\n' "$p" | sed -n 's/^# \([A-Za-z0-9_-]*\)$/\1/p' | head -1)
n=$(( $(cat "$WORK/calls-$id" 2>/dev/null || echo 0) + 1 ))
echo $n > "$WORK/calls-$id"
: > "$WORK/start-$id-$n"
while [ -f "$WORK/hold-$id" ]; do sleep 0.05; done
echo "$id" > "$id.txt"
echo "wrote $id.txt"
`

// A task stopped inside a running batch stops alone: the other task goes
// on and is done, the batch ends incomplete with the stopped task
// interrupted, and resuming the batch resumes the task to done.
func TestStopBatchTask(t *testing.T) {
	t.Parallel()
	work := setup(t, "repo", batchAgent)
	repo := filepath.Join(work, "repo")
	write(t, filepath.Join(repo, "sheets", "a.md"), "# a\nWrite a.txt.\n")
	write(t, filepath.Join(repo, "sheets", "b.md"), "# b\nWrite b.txt.\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"}} {
		git := exec.Command("git", args...)
		git.Dir = repo
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	state := filepath.Join(repo, store.DirName)
	write(t, filepath.Join(work, "hold-a"), "")
	write(t, filepath.Join(work, "hold-b"), "")
	b := command(t, work, repo, "batch", "--json", "--jobs", "2", "--check", "true", "sheets")
	b.start(t)
	waitFile(t, filepath.Join(work, "start-a-1"))
	waitFile(t, filepath.Join(work, "start-b-1"))

	list, err := runs.List(state, store.Filter{Status: store.Running})
	if err != nil {
		t.Fatal(err)
	}
	var batchID, taskA string
	for _, r := range list {
		switch {
		case r.Command == "batch":
			batchID = r.ID
			if r.Current == nil || len(r.Current.Tasks) != 2 {
				t.Errorf("the batch's running tasks: %+v", r.Current)
			}
		case r.Sheet == "a":
			taskA = r.ID
			if !r.Live || r.Parent == "" || r.Current == nil || r.Current.Attempt != 1 {
				t.Errorf("task a: %+v", r)
			}
		}
	}
	if batchID == "" || taskA == "" {
		t.Fatalf("List while the batch runs: %+v", list)
	}

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	stopped, err := runs.Stop(ctx, state, taskA, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != string(engine.StatusInterrupted) || stopped.Live {
		t.Errorf("Stop returned %+v", stopped)
	}
	// a's agent was stopped, b's goes on and ends.
	if err := b.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the batch ended with its task: %v", err)
	}
	if err := os.Remove(filepath.Join(work, "hold-b")); err != nil {
		t.Fatal(err)
	}
	if code := b.wait(t); code != 3 {
		t.Fatalf("the batch exited %d, want 3 (incomplete)\nstderr: %s", code, b.stderr.String())
	}
	var sum struct {
		RunID  string
		Status string
		Tasks  []struct {
			ID, Status string
			RunID      *string
		}
	}
	if err := json.Unmarshal(b.stdout.Bytes(), &sum); err != nil {
		t.Fatalf("batch --json: %v\n%s", err, b.stdout.String())
	}
	status := map[string]string{}
	for _, ts := range sum.Tasks {
		status[ts.ID] = ts.Status
	}
	if sum.RunID != batchID || sum.Status != "incomplete" || status["a"] != "interrupted" || status["b"] != "done" {
		t.Errorf("batch --json: %s", b.stdout.String())
	}
	if _, err := os.Stat(filepath.Join(repo, "b.txt")); err != nil {
		t.Errorf("b was not merged: %v", err)
	}

	// Resuming the batch resumes a's run, to done.
	if err := os.Remove(filepath.Join(work, "hold-a")); err != nil {
		t.Fatal(err)
	}
	resume := command(t, work, repo, "resume", "--json", batchID)
	if code := resume.run(t); code != 0 {
		t.Fatalf("resume exited %d\nstderr: %s", code, resume.stderr.String())
	}
	if err := json.Unmarshal(resume.stdout.Bytes(), &sum); err != nil || sum.Status != "done" {
		t.Fatalf("resume --json: %v\n%s", err, resume.stdout.String())
	}
	for _, ts := range sum.Tasks {
		if ts.ID == "a" && (ts.Status != "done" || ts.RunID == nil || *ts.RunID != taskA) {
			t.Errorf("a after resume: %s, run %v, want done in run %s", ts.Status, ts.RunID, taskA)
		}
	}
}

// Stopping a batch stops it as Ctrl-C does: its tasks interrupted, exit
// 130.
func TestStopBatch(t *testing.T) {
	t.Parallel()
	work := setup(t, "repo", batchAgent)
	repo := filepath.Join(work, "repo")
	write(t, filepath.Join(repo, "sheets", "c.md"), "# c\nWrite c.txt.\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"}} {
		git := exec.Command("git", args...)
		git.Dir = repo
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write(t, filepath.Join(work, "hold-c"), "")
	b := command(t, work, repo, "batch", "--json", "--check", "true", "sheets")
	b.start(t)
	waitFile(t, filepath.Join(work, "start-c-1"))
	list, err := runs.List(filepath.Join(repo, store.DirName), store.Filter{Command: "batch"})
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	stopped, err := runs.Stop(ctx, filepath.Join(repo, store.DirName), list[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != "interrupted" {
		t.Errorf("Stop returned %+v", stopped)
	}
	if code := b.wait(t); code != exit.Interrupted {
		t.Fatalf("the stopped batch exited %d, want %d\nstderr: %s", code, exit.Interrupted, b.stderr.String())
	}
	if !strings.Contains(b.stdout.String(), `"status": "interrupted"`) || !strings.Contains(b.stderr.String(), "continue it with: jlgcli resume "+list[0].ID) {
		t.Errorf("batch --json: %s\nstderr: %s", b.stdout.String(), b.stderr.String())
	}
}
