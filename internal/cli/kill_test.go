package cli_test

// The crash test of persistent execution: a loop is killed with SIGKILL at
// random moments and resumed each time; its journal must end up holding every
// iteration exactly once, with the right prompts and replies.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Parameters of TestSIGKILLAndResume.
const (
	killSteps    = 8                      // iterations of the scripted task
	killTarget   = 20                     // SIGKILLs that must land on a live jlgcli
	killAttempts = 100                    // bound on the starts of jlgcli
	killMaxDelay = 150 * time.Millisecond // kill delays: uniform in [0, killMaxDelay)
)

// killEnv is a world for jlgcli started by the test: a repository in work,
// the registered programs on PATH, no real agent CLI.
func killEnv(t *testing.T, work string) []string {
	t.Helper()
	fake, err := exec.LookPath("fakeagent")
	if err != nil {
		t.Fatalf("fakeagent is not on PATH: %v", err)
	}
	return []string{
		"PATH=" + filepath.Dir(fake) + ":/usr/bin:/bin",
		"HOME=" + filepath.Join(work, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(work, "xdg"),
		"FAKEAGENT_SCRIPT=" + filepath.Join(work, "agent.script"),
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
		"TMPDIR=" + os.TempDir(),
		// The fake agent's records are in work, outside its working
		// directory (as setupScript says).
		"JLGCLI_SANDBOX_ALLOW_WRITE=" + work,
		// and reads where its script is from the environment, which a
		// confined agent gets when the user names it.
		"JLGCLI_SANDBOX_PASS_ENV=FAKEAGENT_*",
	}
}

// jlgcliRun is one start of jlgcli.
type jlgcliRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

func startJlgcli(t *testing.T, work string, env []string, args ...string) *jlgcliRun {
	t.Helper()
	path, err := exec.LookPath("jlgcli")
	if err != nil {
		t.Fatalf("jlgcli is not on PATH: %v", err)
	}
	r := &jlgcliRun{cmd: exec.Command(path, args...), done: make(chan struct{})}
	r.cmd.Args[0] = "jlgcli"
	r.cmd.Dir, r.cmd.Env = work, env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.done) }()
	return r
}

// wait waits for jlgcli to end, up to the hang guard, and returns its exit
// status (-1 when SIGKILL ended it).
func (r *jlgcliRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(hangGuard):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("jlgcli %s hangs\nstderr:\n%s", strings.Join(r.cmd.Args[1:], " "), r.stderr.String())
	}
	var ee *exec.ExitError
	switch {
	case r.err == nil:
		return 0
	case errors.As(r.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("jlgcli: %v", r.err)
	return 0
}

// runJlgcli runs jlgcli to its end and returns its exit status and output.
func runJlgcli(t *testing.T, work string, env []string, args ...string) (int, string, string) {
	t.Helper()
	r := startJlgcli(t, work, env, args...)
	code := r.wait(t)
	return code, r.stdout.String(), r.stderr.String()
}

// shownRun is what the test reads of `show --json`.
type shownRun struct {
	RunID      string `json:"runId"`
	Status     string `json:"status"`
	ExitCode   int    `json:"exitCode"`
	Iterations int    `json:"iterations"`
	Summary    string `json:"summary"`
	Text       string `json:"text"`
	Transcript []struct {
		Iteration int    `json:"iteration"`
		Prompt    string `json:"prompt"`
		Response  string `json:"response"`
		ExitCode  int    `json:"exitCode"`
		Failure   *struct {
			Kind string `json:"kind"`
		} `json:"failure"`
	} `json:"transcript"`
}

// stepReply is what the fake agent's step-reply replies to step k.
func stepReply(k int) string {
	if k >= killSteps {
		return fmt.Sprintf("did step %d\n{\"status\":\"done\",\"summary\":\"all %d steps done\"}", k, killSteps)
	}
	return fmt.Sprintf("did step %d\n{\"status\":\"continue\",\"next\":\"step %d\"}", k, k+1)
}

// runIDs are the runs with a meta.json under the repository's state
// directory.
func runIDs(t *testing.T, work string) []string {
	t.Helper()
	metas, err := filepath.Glob(filepath.Join(work, ".jlgcli", "runs", "*", "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range metas {
		ids = append(ids, filepath.Base(filepath.Dir(m)))
	}
	return ids
}

// TestSIGKILLAndResume kills jlgcli with SIGKILL at random moments of a loop
// (start, agent calls, journal writes, the end), resumes the run each time,
// and checks after every kill that the run reads back as a clean prefix of
// what it was before (no iteration lost once recorded, none rewritten), and
// at the end that it is done with every iteration exactly once, each with
// the right prompt and reply, and that no agent process is left.
//
// A SIGKILLed jlgcli cannot stop its agent, which runs in its own process
// group: the agent is orphaned and goes on until it writes to its dead
// stdout (SIGPIPE) or the resume kills it (resume kills every process
// tagged with the run's id). The fake agent logs the start and the end of
// each call, so the test checks that the orphans' calls never make it into
// the transcript.
//
// The kill moments come from a seeded math/rand: JLGCLI_KILL_SEED=N
// reproduces the delays of a failing run (the timing of the machine varies).
func TestSIGKILLAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and resumes jlgcli dozens of times")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("JLGCLI_KILL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("JLGCLI_KILL_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun with JLGCLI_KILL_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6a6c67636c69))

	work := t.TempDir()
	for _, d := range []string{".git", "home", "xdg"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(work, "calls.log")
	files := map[string]string{
		".git/HEAD": "ref: refs/heads/main\n",
		"jlgcli.toml": fmt.Sprintf(`backend = "fake"
completionMode = "json"
maxIterations = %d

[backends.fake]
command = ["fakeagent"]
`, killSteps),
		// A call takes more than 160ms (more than killMaxDelay); it logs
		// its start, and its end once its reply was written to jlgcli.
		"agent.script": fmt.Sprintf("step-log %[1]s start ;; sleep 80ms ;; step-reply %[2]d ;; sleep 80ms ;; step-log %[1]s end\n", log, killSteps),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := killEnv(t, work)
	t.Cleanup(func() { killLeftovers(t, work) })

	// Which kills are late: one per iteration, the last kill among them, so
	// that the run cannot end before it.
	lates := make([]bool, killTarget)
	lates[killTarget-1] = true
	for _, i := range rng.Perm(killTarget - 1)[:killSteps-1] {
		lates[i] = true
	}
	var (
		done     bool
		id       string
		kills    int
		repaired int
		orphans  int
		prev     *shownRun // the run as read after the previous kill
		started  = time.Now()
	)
	for attempt := 0; ; attempt++ {
		if attempt == killAttempts {
			t.Fatalf("the run did not end after %d starts of jlgcli", killAttempts)
		}
		final := kills >= killTarget
		args := []string{"loop", "--json", "--no-progress-limit", "0", "Work through the steps, one per call."}
		if id != "" {
			args = []string{"resume", "--json", id}
		}
		r := startJlgcli(t, work, env, args...)
		what := "ran to its end"
		if !final {
			// A kill lands at a random moment after the start ("early":
			// jlgcli starting, opening the run, starting the agent, the
			// agent's call), or after the end of the next agent call
			// ("late": jlgcli recording the iteration, checkpointing,
			// indexing, starting the next call, or ending the run). A call
			// is longer than killMaxDelay, so an early kill never lets an
			// iteration through, and a late one at most one.
			late := lates[kills]
			d := time.Duration(rng.Int64N(int64(killMaxDelay)))
			if done {
				// Only the resume of a done run is left to kill.
				late, d = false, time.Duration(rng.Int64N(int64(20*time.Millisecond)))
			}
			what = "early"
			if late {
				what = "late"
				if !waitCallEnd(r, log, countEnds(t, log)) {
					what = "late (no call ended)"
				}
			}
			select {
			case <-r.done:
				what += fmt.Sprintf(", ended before its kill at +%s", d)
			case <-time.After(d):
				if err := r.cmd.Process.Signal(syscall.SIGKILL); err == nil {
					what += fmt.Sprintf(", SIGKILL at +%s", d)
				}
			}
		}
		code := r.wait(t)
		stderr := r.stderr.String()
		if strings.Contains(stderr, "cut a torn last line") {
			repaired++
		}
		if strings.Contains(stderr, "orphaned agent process group") {
			orphans++
		}
		killed := code == -int(syscall.SIGKILL)
		if killed {
			kills++
		}
		if id == "" {
			switch ids := runIDs(t, work); len(ids) {
			case 0: // killed before the run existed: start it again
			case 1:
				id = ids[0]
			default:
				t.Fatalf("several runs: %v", ids)
			}
		}
		if !killed {
			done = true
			if code != 0 {
				t.Fatalf("jlgcli %s exited with %d, want 0 (done)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, r.stdout.String(), stderr)
			}
			if final {
				t.Logf("start %2d (%s): %s, exit %d", attempt, args[0], what, code)
				break
			}
		}
		if id == "" {
			t.Logf("start %2d (%s): %s: no run yet", attempt, args[0], what)
			continue
		}
		// The state a kill left must read back cleanly, as a prefix of
		// what comes later.
		cur := showRun(t, work, env, id)
		if prev != nil {
			if cur.Iterations < prev.Iterations {
				t.Fatalf("after start %d the run has %d iterations, %d before: a recorded iteration was lost", attempt, cur.Iterations, prev.Iterations)
			}
			for i := range prev.Transcript {
				if !reflectEqualJSON(prev.Transcript[i], cur.Transcript[i]) {
					t.Fatalf("after start %d iteration %d changed:\nbefore %+v\nafter  %+v", attempt, i+1, prev.Transcript[i], cur.Transcript[i])
				}
			}
		}
		checkTranscript(t, cur, false)
		t.Logf("start %2d (%s): %s: %d iterations, %s", attempt, args[0], what, cur.Iterations, cur.Status)
		checkIndexAfterKill(t, work, env, id)
		prev = cur
		done = done || cur.Status == "done"
	}
	t.Logf("%d SIGKILLs, %d torn lines repaired, %d resumes found orphaned agents, in %s", kills, repaired, orphans, time.Since(started).Round(time.Millisecond))
	if kills < killTarget {
		t.Errorf("only %d SIGKILLs landed on a live jlgcli, want %d", kills, killTarget)
	}

	res := showRun(t, work, env, id)
	checkTranscript(t, res, true)
	if res.Status != "done" || res.ExitCode != 0 || res.Iterations != killSteps || res.Summary != fmt.Sprintf("all %d steps done", killSteps) {
		t.Errorf("final result: status %s, exit %d, %d iterations, summary %q; want done, 0, %d, %q",
			res.Status, res.ExitCode, res.Iterations, res.Summary, killSteps, fmt.Sprintf("all %d steps done", killSteps))
	}

	// The index agrees.
	code, out, errOut := runJlgcli(t, work, env, "runs", "--json")
	if code != 0 {
		t.Fatalf("runs --json: exit %d\n%s", code, errOut)
	}
	var rows []struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		Iterations int    `json:"iterations"`
		Live       bool   `json:"live"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].ID != id || rows[0].Status != "done" || rows[0].Iterations != killSteps || rows[0].Live {
		t.Errorf("runs --json: %+v, want one row %s done with %d iterations, not live", rows, id, killSteps)
	}

	// What really ran: every recorded iteration is a call that ran to its
	// end; the calls that never ended are the ones a kill cut short.
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]int{}
	starts := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("calls.log: bad line %q", line)
		}
		k, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "start":
			starts++
		case "end":
			ends[k]++
		}
	}
	for k := 1; k <= killSteps; k++ {
		if ends[k] == 0 {
			t.Errorf("iteration %d is recorded, but no call for step %d ran to its end", k, k)
		}
	}
	t.Logf("%d agent calls started for %d iterations", starts, killSteps)

	// No agent is left: the resumes killed the orphans, and the last run
	// ended normally.
	if left := waitNoProcesses("FAKEAGENT_SCRIPT=" + filepath.Join(work, "agent.script")); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// checkIndexAfterKill checks that `runs --json` lists the killed run, not
// live.
func checkIndexAfterKill(t *testing.T, work string, env []string, id string) {
	t.Helper()
	code, out, errOut := runJlgcli(t, work, env, "runs", "--json")
	if code != 0 {
		t.Fatalf("runs --json after a kill: exit %d\n%s", code, errOut)
	}
	var rows []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Live   bool   `json:"live"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("runs --json after a kill: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].ID != id || rows[0].Live || (rows[0].Status != "running" && rows[0].Status != "done") {
		t.Fatalf("runs --json after a kill: %+v, want %s, running or done, not live", rows, id)
	}
}

// countEnds is the number of calls of the fake agent that ended.
func countEnds(t *testing.T, log string) int {
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "end ")
}

// waitCallEnd waits for a call of the fake agent to end after the n that
// had ended; false when jlgcli ended first.
func waitCallEnd(r *jlgcliRun, log string, n int) bool {
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(log)
		if strings.Count(string(data), "end ") > n {
			return true
		}
		select {
		case <-r.done:
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
	return false
}

// showRun is `jlgcli show --json id`.
func showRun(t *testing.T, work string, env []string, id string) *shownRun {
	t.Helper()
	code, out, errOut := runJlgcli(t, work, env, "show", "--json", id)
	if code != 0 {
		t.Fatalf("show %s: exit %d\n%s", id, code, errOut)
	}
	var res shownRun
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("show %s: %v\n%s", id, err, out)
	}
	return &res
}

// checkTranscript checks that the transcript holds iterations 1..n in order,
// each once, each with the prompt of its step and the reply to it.
func checkTranscript(t *testing.T, res *shownRun, final bool) {
	t.Helper()
	if len(res.Transcript) != res.Iterations {
		t.Fatalf("%d iterations but %d transcript entries", res.Iterations, len(res.Transcript))
	}
	for i, e := range res.Transcript {
		k := i + 1
		if e.Iteration != k {
			t.Fatalf("transcript entry %d is iteration %d", i, e.Iteration)
		}
		if e.Failure != nil || e.ExitCode != 0 {
			t.Errorf("iteration %d failed (%+v, exit %d): a killed call was recorded", k, e.Failure, e.ExitCode)
		}
		// Each call sends exactly the prompt: the task, then the next of
		// the reply before.
		if k == 1 {
			if e.Prompt != "Work through the steps, one per call." {
				t.Errorf("iteration 1: prompt %q", e.Prompt)
			}
		} else if e.Prompt != "step "+strconv.Itoa(k) {
			t.Errorf("iteration %d: its prompt does not ask for step %d:\n%s", k, k, e.Prompt)
		}
		if e.Response != stepReply(k) {
			t.Errorf("iteration %d: response %q, want %q", k, e.Response, stepReply(k))
		}
	}
	if !final && res.Status != "running" && res.Status != "done" {
		t.Errorf("a killed run has status %q, want running (or done)", res.Status)
	}
}

func reflectEqualJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// waitNoProcesses waits (up to the hang guard) for the processes whose
// environment holds kv to be gone, and returns those that are not.
func waitNoProcesses(kv string) map[int]string {
	deadline := time.Now().Add(hangGuard)
	for {
		left := processesWithEnv(kv)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killLeftovers kills what a failed test left running.
func killLeftovers(t *testing.T, work string) {
	left := processesWithEnv("FAKEAGENT_SCRIPT=" + filepath.Join(work, "agent.script"))
	pids := make([]int, 0, len(left))
	for pid := range left {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
