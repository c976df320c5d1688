package proc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangGuard is how long a test waits for something that must happen before
// it declares a hang. It is a guard against a stuck test, not a measure of
// speed: every operation it bounds takes well under a second.
const hangGuard = 60 * time.Second

// syncBuffer is an io.Writer that tests can read while Run writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// seen is closed when the text waitFor is set to first appears.
	waitFor string
	seen    chan struct{}
}

func newSyncBuffer(waitFor string) *syncBuffer {
	return &syncBuffer{waitFor: waitFor, seen: make(chan struct{})}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.waitFor != "" && strings.Contains(b.buf.String(), b.waitFor) {
		b.waitFor = ""
		close(b.seen)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runAsync runs c in the background and returns a function that waits for
// its result, failing the test if Run does not return before the hang guard.
func runAsync(t *testing.T, ctx context.Context, c Cmd) func() (Result, error) {
	t.Helper()
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run(ctx, c)
		done <- out{res, err}
	}()
	return func() (Result, error) {
		t.Helper()
		select {
		case o := <-done:
			return o.res, o.err
		case <-time.After(hangGuard):
			t.Fatalf("Run(%q) did not return: it hangs", c.Argv)
			return Result{}, nil
		}
	}
}

// mustRun runs c to its end under the hang guard.
func mustRun(t *testing.T, ctx context.Context, c Cmd) Result {
	t.Helper()
	res, err := runAsync(t, ctx, c)()
	if err != nil {
		t.Fatalf("Run(%q): %v", c.Argv, err)
	}
	return res
}

// waitSeen waits for b to see its text, under the hang guard.
func waitSeen(t *testing.T, b *syncBuffer) {
	t.Helper()
	select {
	case <-b.seen:
	case <-time.After(hangGuard):
		t.Fatalf("the process never printed %q; output so far: %q", b.waitFor, b.String())
	}
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// assertDead checks that every pid is dead. A SIGKILL is delivered
// asynchronously, so a process may take a moment to go; the wait is bounded
// by the hang guard only.
func assertDead(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still alive after Run returned", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL) // ours: do not leak it
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// pidsIn reads the integers printed on lines "pid N" of out.
func pidsIn(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "pid "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("bad pid line %q", line)
			}
			pids = append(pids, n)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no pid in the output %q", out)
	}
	return pids
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestExitCodePassesThrough(t *testing.T) {
	for _, code := range []int{0, 1, 3, 42, 127, 255} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			res := mustRun(t, context.Background(), Cmd{Argv: sh(fmt.Sprintf("exit %d", code))})
			if res.ExitCode != code || res.Signal != 0 || res.Stopped {
				t.Errorf("got %+v, want exit code %d, no signal, not stopped", res, code)
			}
		})
	}
}

func TestKilledBySignalGives128PlusSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGSEGV} {
		t.Run(sig.String(), func(t *testing.T) {
			res := mustRun(t, context.Background(), Cmd{Argv: sh(fmt.Sprintf("kill -%d $$", int(sig)))})
			if res.ExitCode != 128+int(sig) || res.Signal != sig || res.Stopped {
				t.Errorf("got %+v, want exit code %d, signal %v, not stopped", res, 128+int(sig), sig)
			}
		})
	}
}

func TestOutputReachesTheWriters(t *testing.T) {
	var out, errOut bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{
		Argv:   sh("echo to-stdout; echo to-stderr >&2; printf 'no newline'"),
		Stdout: &out, Stderr: &errOut,
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	if got, want := out.String(), "to-stdout\nno newline"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := errOut.String(), "to-stderr\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

func TestNilWritersDiscardOutput(t *testing.T) {
	// 4 MiB on each stream with nobody listening: the pipes are still
	// drained, so the process cannot block on a full pipe.
	res := mustRun(t, context.Background(), Cmd{
		Argv: sh("head -c 4194304 /dev/zero; head -c 4194304 /dev/zero >&2"),
	})
	if res.ExitCode != 0 {
		t.Errorf("exit code %d, want 0", res.ExitCode)
	}
}

func TestDirAndEnv(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	t.Setenv("PROC_TEST_PARENT_ONLY", "leaked")
	res := mustRun(t, context.Background(), Cmd{
		Argv:   sh(`pwd; echo "foo=$FOO"; echo "parent=$PROC_TEST_PARENT_ONLY"`),
		Dir:    dir,
		Env:    []string{"FOO=bar", "PATH=/usr/bin:/bin"},
		Stdout: &out,
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	real, _ := filepath.EvalSymlinks(dir)
	want := real + "\nfoo=bar\nparent=\n"
	if got := out.String(); got != want {
		t.Errorf("output %q, want %q (Env is the whole environment)", got, want)
	}
}

func TestCancelStopsTheProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer("ready")
	wait := runAsync(t, ctx, Cmd{Argv: sh("echo ready; exec sleep 300"), Stdout: out})
	waitSeen(t, out)
	cancel()
	res, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped {
		t.Errorf("Stopped is false after the context was cancelled: %+v", res)
	}
	if res.Signal != syscall.SIGTERM || res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("got %+v, want the process ended by SIGTERM (exit code 143)", res)
	}
}

func TestCancelSendsTermThenKillToAProcessIgnoringTerm(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer("ready")
	// The shell notes the TERM and goes on; only SIGKILL ends it.
	script := `trap 'echo got-term' TERM; echo ready; while :; do sleep 0.05; done`
	wait := runAsync(t, ctx, Cmd{Argv: sh(script), Stdout: out, Grace: 2 * time.Second})
	waitSeen(t, out)
	cancel()
	res, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped {
		t.Errorf("Stopped is false: %+v", res)
	}
	if res.Signal != syscall.SIGKILL || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("got %+v, want the process ended by SIGKILL (exit code 137)", res)
	}
	if !strings.Contains(out.String(), "got-term") {
		t.Errorf("the process never saw SIGTERM before SIGKILL; output %q", out.String())
	}
}

func TestCancelIgnoringTermEntirely(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer("ready")
	// trap '' TERM: ignored by the shell and by the sleeps it starts.
	wait := runAsync(t, ctx, Cmd{Argv: sh(`trap '' TERM; echo ready; sleep 300`), Stdout: out, Grace: 200 * time.Millisecond})
	waitSeen(t, out)
	cancel()
	res, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Signal != syscall.SIGKILL {
		t.Errorf("got %+v, want stopped by SIGKILL", res)
	}
}

func TestNoProcessOfTheGroupSurvivesACancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer("ready")
	// Children and a grandchild, some ignoring TERM, all holding stdout.
	script := `
trap '' TERM
sleep 300 & echo "pid $!"
sh -c 'sleep 300 & echo "pid $!"; sleep 300' & echo "pid $!"
(trap - TERM; sleep 300) & echo "pid $!"
echo "pid $$"
echo ready
wait`
	wait := runAsync(t, ctx, Cmd{Argv: sh(script), Stdout: out, Grace: 200 * time.Millisecond})
	waitSeen(t, out)
	// The nested shell prints its child's pid on its own: wait for all 5.
	deadline := time.Now().Add(hangGuard)
	for strings.Count(out.String(), "pid ") < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	pids := pidsIn(t, out.String())
	cancel()
	res, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped {
		t.Errorf("Stopped is false: %+v", res)
	}
	assertDead(t, pids...)
}

func TestGrandchildHoldingStdoutDoesNotHang(t *testing.T) {
	var out bytes.Buffer
	// sh exits at once; its background sleep keeps the stdout pipe open.
	res := mustRun(t, context.Background(), Cmd{Argv: sh(`sleep 300 & echo "pid $!"; echo hi`), Stdout: &out})
	if res.ExitCode != 0 || res.Stopped {
		t.Errorf("got %+v, want exit code 0, not stopped", res)
	}
	if !strings.Contains(out.String(), "hi\n") {
		t.Errorf("stdout %q lacks the reply", out.String())
	}
	assertDead(t, pidsIn(t, out.String())...)
}

func TestGrandchildHoldingStderrDoesNotHang(t *testing.T) {
	var out, errOut bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{Argv: sh(`sleep 300 >/dev/null & echo "pid $!"; echo bye >&2`), Stdout: &out, Stderr: &errOut})
	if res.ExitCode != 0 || errOut.String() != "bye\n" {
		t.Errorf("got %+v, stderr %q", res, errOut.String())
	}
	assertDead(t, pidsIn(t, out.String())...)
}

func TestEscapedProcessHoldingStdoutDoesNotHang(t *testing.T) {
	// setsid leaves the group, so the group kill cannot reach it: Run must
	// still return once the drain delay is over.
	if _, err := LookPath("setsid", nil); err != nil {
		t.Skip("no setsid")
	}
	var out bytes.Buffer
	done := runAsync(t, context.Background(), Cmd{Argv: sh(`setsid sleep 300 & echo "pid $!"; echo hi`), Stdout: &out})
	res, err := done()
	if err != nil {
		t.Fatal(err)
	}
	pids := pidsIn(t, out.String())
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL) // the escaped sleep is ours to end
	}
	if res.ExitCode != 0 || !strings.Contains(out.String(), "hi\n") {
		t.Errorf("got %+v, stdout %q", res, out.String())
	}
}

func TestLargeStdinIsDelivered(t *testing.T) {
	in := make([]byte, 3<<20+17) // over 1 MiB, not a round size
	for i := range in {
		in[i] = byte('a' + i%26)
		if i%81 == 80 {
			in[i] = '\n'
		}
	}
	var out bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{Argv: []string{"cat"}, Stdin: bytes.NewReader(in), Stdout: &out})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	if out.Len() != len(in) || sha256.Sum256(out.Bytes()) != sha256.Sum256(in) {
		t.Errorf("cat gave back %d bytes, not the %d bytes sent", out.Len(), len(in))
	}
}

func TestUnreadLargeStdinDoesNotHang(t *testing.T) {
	in := bytes.Repeat([]byte("x"), 16<<20)
	res := mustRun(t, context.Background(), Cmd{Argv: sh("echo done"), Stdin: bytes.NewReader(in)})
	if res.ExitCode != 0 {
		t.Errorf("exit code %d, want 0", res.ExitCode)
	}
}

func TestEndlessStdinDoesNotHang(t *testing.T) {
	// A reader that never ends: the process exits without reading it all.
	r, w := io.Pipe()
	defer w.Close()
	go func() { _, _ = w.Write([]byte("some input\n")) }()
	var out bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{Argv: sh("read line; echo \"got $line\""), Stdin: r, Stdout: &out})
	if res.ExitCode != 0 || out.String() != "got some input\n" {
		t.Errorf("got %+v, stdout %q", res, out.String())
	}
}

func TestNilStdinIsEmpty(t *testing.T) {
	var out bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{Argv: []string{"wc", "-c"}, Stdout: &out})
	if res.ExitCode != 0 || strings.TrimSpace(out.String()) != "0" {
		t.Errorf("got %+v, stdout %q, want 0 bytes read", res, out.String())
	}
}

func TestCancelWhileStdinIsBeingWritten(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newSyncBuffer("ready")
	in := bytes.Repeat([]byte("y"), 32<<20)
	wait := runAsync(t, ctx, Cmd{Argv: sh("echo ready; exec sleep 300"), Stdin: bytes.NewReader(in), Stdout: out})
	waitSeen(t, out)
	cancel()
	res, err := wait()
	if err != nil || !res.Stopped {
		t.Errorf("got %+v, %v; want stopped", res, err)
	}
}

func TestMissingProgramIsErrNotFound(t *testing.T) {
	for _, name := range []string{"jlgcli-no-such-program-zz", "/nonexistent/dir/prog", "./jlgcli-no-such-program-zz"} {
		t.Run(name, func(t *testing.T) {
			_, err := Run(context.Background(), Cmd{Argv: []string{name}})
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Run: %v, want ErrNotFound", err)
			}
			if _, err := LookPath(name, nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("LookPath: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestEmptyArgvIsAnError(t *testing.T) {
	if _, err := Run(context.Background(), Cmd{}); err == nil {
		t.Error("Run with no argv succeeded")
	}
}

func TestStartFailureIsAnError(t *testing.T) {
	_, err := Run(context.Background(), Cmd{Argv: []string{"/bin/sh", "-c", "true"}, Dir: "/nonexistent/dir"})
	if err == nil {
		t.Fatal("Run in a missing directory succeeded")
	}
	if errors.Is(err, ErrNotFound) {
		t.Errorf("a missing directory is reported as a missing program: %v", err)
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLookupUsesThePATHOfEnv(t *testing.T) {
	dir := t.TempDir()
	want := writeScript(t, dir, "jlgcli-test-prog", "echo from-env-path")
	// A file without the executable bit is not a program.
	if err := os.WriteFile(filepath.Join(dir, "jlgcli-not-exec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/nonexistent:" + dir + ":/usr/bin:/bin"}

	got, err := LookPath("jlgcli-test-prog", env)
	if err != nil || got != want {
		t.Errorf("LookPath with Env = %q, %v; want %q", got, err, want)
	}
	if _, err := LookPath("jlgcli-test-prog", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookPath without Env found a program only on Env's PATH: %v", err)
	}
	if _, err := LookPath("jlgcli-not-exec", env); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookPath found a file that is not executable: %v", err)
	}
	// The last PATH wins, as in the process's own environment.
	if got, err := LookPath("jlgcli-test-prog", []string{"PATH=/usr/bin", "PATH=" + dir}); err != nil || got != want {
		t.Errorf("LookPath with two PATHs = %q, %v; want %q", got, err, want)
	}
	if _, err := LookPath("sh", []string{"PATH=" + dir}); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookPath fell back to the process PATH: %v", err)
	}

	var out bytes.Buffer
	res := mustRun(t, context.Background(), Cmd{Argv: []string{"jlgcli-test-prog"}, Env: env, Stdout: &out})
	if res.ExitCode != 0 || out.String() != "from-env-path\n" {
		t.Errorf("got %+v, stdout %q", res, out.String())
	}
	if _, err := Run(context.Background(), Cmd{Argv: []string{"jlgcli-test-prog"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run without Env: %v, want ErrNotFound", err)
	}
}

func TestDurationIsMeasured(t *testing.T) {
	res := mustRun(t, context.Background(), Cmd{Argv: sh("sleep 0.05")})
	if res.Duration <= 0 {
		t.Errorf("Duration %v, want > 0", res.Duration)
	}
}

// TestRelativeProgramIsTheOneFound: a program named by a relative path is
// looked up from the current directory (LookPath has no Dir); Run must then
// run that same program whatever Dir is, not another one of the same name
// under Dir, nor fail to start when Dir has none.
func TestRelativeProgramIsTheOneFound(t *testing.T) {
	here, other, empty := t.TempDir(), t.TempDir(), t.TempDir()
	writeScript(t, here, "prog", "echo the-one-found")
	writeScript(t, other, "prog", "echo another-one")
	t.Chdir(here)

	found, err := LookPath("./prog", nil)
	if err != nil {
		t.Fatalf("LookPath: %v", err)
	}
	if !filepath.IsAbs(found) {
		t.Errorf("LookPath(./prog) = %q, not an absolute path: it means another program once Dir is set", found)
	}
	for _, dir := range []string{other, empty} {
		var out bytes.Buffer
		res, err := Run(context.Background(), Cmd{Argv: []string{"./prog"}, Dir: dir, Stdout: &out})
		if err != nil || res.ExitCode != 0 || out.String() != "the-one-found\n" {
			t.Errorf("Run(./prog) in %s: %+v, %v, stdout %q; want the program LookPath found", dir, res, err, out.String())
		}
	}

	// The same for an empty PATH entry, which means the current directory.
	var out bytes.Buffer
	res, err := Run(context.Background(), Cmd{Argv: []string{"prog"}, Dir: other, Env: []string{"PATH=:/usr/bin:/bin"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "the-one-found\n" {
		t.Errorf("Run(prog) with an empty PATH entry: %+v, %v, stdout %q", res, err, out.String())
	}
}

func TestStallTimeoutStopsASilentGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var out bytes.Buffer
	res, err := Run(ctx, Cmd{
		Argv:         []string{"sh", "-c", "echo started; sleep 300"},
		Stdout:       &out,
		StallTimeout: 300 * time.Millisecond,
		Grace:        100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stalled || res.Stopped || res.Signal == 0 {
		t.Fatalf("result %+v: want stalled and killed by a signal", res)
	}
	if out.String() != "started\n" {
		t.Errorf("output %q", out.String())
	}
}

func TestStallTimeoutSparesAChattyProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	// Prints every 50ms for about a second: never silent for 500ms.
	res, err := Run(ctx, Cmd{
		Argv:         []string{"sh", "-c", "i=0; while [ $i -lt 20 ]; do echo tick >&2; sleep 0.05; i=$((i+1)); done"},
		StallTimeout: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stalled || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestKillTaggedKillsOnlyTheTaggedGroups(t *testing.T) {
	tag := fmt.Sprintf("JLGCLI_TEST_TAG=%d", time.Now().UnixNano())
	start := func(env []string) *exec.Cmd {
		c := exec.Command("sh", "-c", "sleep 300 & sleep 300")
		c.Env = env
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	tagged := start(append(os.Environ(), tag))
	other := start(os.Environ())
	defer other.Process.Kill()
	// Let the shells start their children.
	time.Sleep(200 * time.Millisecond)
	if n := KillTagged(tag); n != 1 {
		t.Fatalf("killed %d groups, want 1", n)
	}
	done := make(chan error, 1)
	go func() { done <- tagged.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatal("the tagged group is still running")
	}
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Errorf("the untagged process was killed: %v", err)
	}
}

// TestExtraFilesAndLimit: an extra file is the process's fd 3, Run's copy
// is closed once the process has started (the reader sees the end of the
// pipe when the process ends), and Limit is asked with the result.
func TestExtraFilesAndLimit(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var asked Result
	why := errors.New("a limit")
	res, err := Run(context.Background(), Cmd{
		Argv:       []string{"sh", "-c", "echo through-fd-3 >&3; exit 3"},
		ExtraFiles: []*os.File{w},
		Limit:      func(r Result) error { asked = r; return why },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(hangGuard))
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "through-fd-3\n" {
		t.Errorf("fd 3 gave %q, %v; want the line and the end of the pipe", got, err)
	}
	if asked.ExitCode != 3 || res.ExitCode != 3 || res.Limit != why {
		t.Errorf("Limit asked with %+v, result %+v", asked, res)
	}
}
