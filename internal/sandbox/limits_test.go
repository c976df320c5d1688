package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// called is how one command ended, confined or not.
type called struct {
	res    proc.Result
	out    string
	limit  *LimitError
	within time.Duration
}

// runLimited runs sh -c script in box (nil: unconfined) and returns how
// it ended; TMPDIR is a directory of the test's unconfined. It confines
// as Agent does, for a command backend.
func runLimited(t *testing.T, box *Box, script string) called {
	t.Helper()
	var out, errs bytes.Buffer
	c := proc.Cmd{Argv: []string{"sh", "-c", script}, Dir: t.TempDir(), Stdout: &out, Stderr: &errs, Grace: time.Second,
		Env: append(os.Environ(), "TMPDIR="+t.TempDir())}
	release := func() {}
	if box != nil {
		var err error
		if c, release, err = box.wrap(c, Needs{}, false); err != nil {
			t.Fatal(err)
		}
	}
	// The calls end in seconds; a minute means the limit did not stop one.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	res, err := proc.Run(ctx, c)
	release()
	if err != nil {
		t.Fatal(err)
	}
	k := called{res: res, out: out.String() + errs.String(), within: time.Since(start)}
	if res.Limit != nil && !errors.As(res.Limit, &k.limit) {
		t.Fatalf("Result.Limit is %T, want a *LimitError", res.Limit)
	}
	if res.Stopped {
		t.Fatalf("the call ran a minute: no limit stopped it (%s)", k.out)
	}
	return k
}

func limitedBox(t *testing.T, cfg Config) *Box {
	t.Helper()
	needBwrap(t)
	cfg.Mode = On
	b, rec, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("limits: %s", rec.Limits)
	return b
}

func needCgroup(t *testing.T, controller string) {
	t.Helper()
	m := mechanism()
	if controller == "pids" && m.pids == "" || controller == "memory" && m.memory == "" {
		how, notes := LimitsAvailable()
		t.Skipf("no writable %s cgroup here: %s, %s", controller, how, strings.Join(notes, "; "))
	}
}

// sleepers forks 1000 sleeping processes, then says how many it forked.
const sleepers = `i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); done; echo forked $i`

// TestLimitProcesses: a confined shell that forks 1000 sleeping processes
// is stopped at maxProcesses (the fork is refused; the shell gives up),
// and the call says why; the same shell unconfined, or confined with no
// process limit, forks them all.
func TestLimitProcesses(t *testing.T) {
	needBwrap(t)
	needCgroup(t, "pids")
	k := runLimited(t, limitedBox(t, Config{MaxProcesses: 64}), sleepers)
	if k.res.ExitCode == 0 || strings.Contains(k.out, "forked 1000") {
		t.Fatalf("confined: %+v %q; want the shell stopped at the limit", k.res, k.out)
	}
	if k.limit == nil || k.limit.Resource != "processes" || k.limit.Limit != 64 ||
		k.res.Limit.Error() != "the call reached its limit of 64 processes (sandbox.maxProcesses)" {
		t.Fatalf("confined: limit %v; want the limit of 64 processes", k.res.Limit)
	}
	for _, box := range []*Box{nil, limitedBox(t, Config{MaxProcesses: -1})} {
		if k := runLimited(t, box, sleepers); k.res.ExitCode != 0 || !strings.Contains(k.out, "forked 1000") || k.res.Limit != nil {
			t.Errorf("confined %v, no limit: %+v %q; want 1000 processes forked", box != nil, k.res, k.out)
		}
	}
	checkNoCgroupLeft(t)
}

// TestLimitForkBomb: a call that keeps forking at its limit (it ignores
// the refusals) is ended by jlgcli within seconds, not at its timeout.
func TestLimitForkBomb(t *testing.T) {
	needBwrap(t)
	needCgroup(t, "pids")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	bomb := `exec python3 -c '
import os, time
while True:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    except OSError:
        time.sleep(0.005)
'`
	k := runLimited(t, limitedBox(t, Config{MaxProcesses: 32}), bomb)
	if k.limit == nil || !k.limit.Ended || !strings.Contains(k.res.Limit.Error(), "limit of 32 processes (sandbox.maxProcesses): jlgcli ended it") {
		t.Fatalf("limit %v after %s; want jlgcli to end the call at its limit of 32 processes", k.res.Limit, k.within)
	}
	t.Logf("ended after %s", k.within)
	checkNoCgroupLeft(t)
}

// hog allocates (and touches) 400 MiB.
const hog = `exec python3 -c 'x = b"x" * (400 << 20); print("allocated", len(x) >> 20)'`

// TestLimitMemory: a confined call that allocates beyond maxMemory is
// killed by the kernel, and says why; unconfined, or confined with no
// memory limit, it allocates.
func TestLimitMemory(t *testing.T) {
	needBwrap(t)
	needCgroup(t, "memory")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	k := runLimited(t, limitedBox(t, Config{MaxMemory: 256 << 20}), hog)
	if k.res.ExitCode == 0 || strings.Contains(k.out, "allocated") {
		t.Fatalf("confined: %+v %q; want it killed", k.res, k.out)
	}
	if k.limit == nil || k.limit.Resource != "memory" || !k.limit.Killed ||
		k.res.Limit.Error() != "the call reached its limit of memory (sandbox.maxMemory, 256 MiB): the kernel killed it" {
		t.Fatalf("confined: limit %v; want the memory limit", k.res.Limit)
	}
	for _, box := range []*Box{nil, limitedBox(t, Config{MaxMemory: -1})} {
		if k := runLimited(t, box, hog); k.res.ExitCode != 0 || !strings.Contains(k.out, "allocated 400") || k.res.Limit != nil {
			t.Errorf("confined %v, no limit: %+v %q; want 400 MiB allocated", box != nil, k.res, k.out)
		}
	}
	checkNoCgroupLeft(t)
}

// TestLimitTmp: a confined call that writes 3 GB to $TMPDIR gets ENOSPC at
// maxTmp (64 MiB here: the write stops there) and says why, also when it
// removes what it wrote before it exits (a moment after: jlgcli reads the
// tmpfs as the call goes, every 2 ms once it is half full, and a loaded
// machine or the race detector can delay a read by more); unconfined, or
// confined with no limit, 200 MB fit (not 3 GB: a test does not fill a
// disk or 3 GB of memory).
func TestLimitTmp(t *testing.T) {
	needBwrap(t)
	if !mechanism().tmpSized {
		t.Skipf("%s has no --size", mechanism().tool)
	}
	box := limitedBox(t, Config{MaxTmp: 64 << 20})
	for _, script := range []string{
		`head -c 3G /dev/zero > "$TMPDIR/big"`,
		`head -c 3G /dev/zero > "$TMPDIR/big"; sleep 0.3; rm -f "$TMPDIR/big"; exit 3`,
	} {
		k := runLimited(t, box, script)
		if k.res.ExitCode == 0 || !strings.Contains(k.out, "No space left on device") {
			t.Fatalf("%s: %+v %q; want ENOSPC", script, k.res, k.out)
		}
		if k.limit == nil || k.limit.Resource != "temporary space" ||
			k.res.Limit.Error() != "the call reached its limit of temporary space (sandbox.maxTmp, 64 MiB): its /tmp was full" {
			t.Fatalf("%s: limit %v; want the limit of temporary space", script, k.res.Limit)
		}
	}
	write := `head -c 200M /dev/zero > "$TMPDIR/big" && ls -s "$TMPDIR/big"`
	for _, box := range []*Box{nil, limitedBox(t, Config{MaxTmp: -1})} {
		if k := runLimited(t, box, write); k.res.ExitCode != 0 || k.res.Limit != nil {
			t.Errorf("confined %v, no limit: %+v %q; want 200 MB written", box != nil, k.res, k.out)
		}
	}
}

// TestLimitWithin: a call within its limits ends as it would, with no
// reason given; a call that fails on its own is not blamed on a limit.
func TestLimitWithin(t *testing.T) {
	box := limitedBox(t, Config{MaxProcesses: 64, MaxMemory: 256 << 20, MaxTmp: 64 << 20})
	if k := runLimited(t, box, `for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; wait; head -c 10M /dev/zero > "$TMPDIR/f"; echo ok`); k.res.ExitCode != 0 || k.res.Limit != nil || !strings.Contains(k.out, "ok") {
		t.Errorf("within: %+v %q", k.res, k.out)
	}
	if k := runLimited(t, box, `exit 7`); k.res.ExitCode != 7 || k.res.Limit != nil {
		t.Errorf("exit 7: %+v", k.res)
	}
	checkNoCgroupLeft(t)
}

// forceMechanism makes the test's calls limited as on a machine that has
// only what set leaves of this one's.
func forceMechanism(t *testing.T, set func(*mech)) {
	t.Helper()
	saved := mechanism()
	m := saved
	set(&m)
	mechVal = m
	t.Cleanup(func() { mechVal = saved })
}

// TestLimitRlimitMemory: where there is no memory cgroup, RLIMIT_DATA holds
// each process of the call: the allocation fails (the reason is not told:
// nothing counts it); with no limit it succeeds.
func TestLimitRlimitMemory(t *testing.T) {
	needBwrap(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	if raceEnabled {
		t.Skip("the helper inside is this race-enabled test binary, whose shadow memory RLIMIT_DATA counts")
	}
	forceMechanism(t, func(m *mech) { m.memory = "" })
	k := runLimited(t, limitedBox(t, Config{MaxMemory: 256 << 20}), hog)
	if k.res.ExitCode == 0 || !strings.Contains(k.out, "MemoryError") {
		t.Errorf("RLIMIT_DATA of 256 MiB: %+v %q; want a MemoryError", k.res, k.out)
	}
	if k := runLimited(t, limitedBox(t, Config{MaxMemory: -1}), hog); k.res.ExitCode != 0 || !strings.Contains(k.out, "allocated 400") {
		t.Errorf("no limit: %+v %q; want 400 MiB allocated", k.res, k.out)
	}
}

// TestLimitRlimitProcesses: a user that is not root, with no pids cgroup
// (nobody, here), gets RLIMIT_NPROC on the sandbox, which the kernel
// counts within the sandbox's user namespace: the shell is stopped at 32
// processes although nobody has more than 32 outside it; unconfined, it
// forks its 1000. The test runs itself again as nobody.
func TestLimitRlimitProcesses(t *testing.T) {
	if os.Getenv("JLGCLI_LIMITS_AS_USER") == "1" {
		rlimitProcessesAsUser(t)
		return
	}
	needBwrap(t)
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and setpriv, to run as nobody")
	}
	if !mechanism().nprocPerNS {
		t.Skip("a kernel before 5.14 counts RLIMIT_NPROC over all of the user's processes")
	}
	// A directory nobody can reach (t.TempDir's parent is root's only).
	dir, err := os.MkdirTemp("", "jlgcli-limits-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	// nobody's own processes, outside any sandbox: more than the limit.
	var outside []*exec.Cmd
	for range 40 {
		c := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		outside = append(outside, c)
	}
	defer func() {
		for _, c := range outside {
			c.Process.Kill()
			c.Wait()
		}
	}()
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestLimitRlimitProcesses$", "-test.v")
	cmd.Env = append(os.Environ(), "JLGCLI_LIMITS_AS_USER=1", "HOME="+dir, "TMPDIR="+dir, "XDG_RUNTIME_DIR=")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v", err)
	}
}

func rlimitProcessesAsUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Fatal("JLGCLI_LIMITS_AS_USER=1 as root")
	}
	needBwrap(t)
	if m := mechanism(); m.pids != "" || !m.nprocPerNS {
		t.Fatalf("as uid %d: %+v; want no pids cgroup and RLIMIT_NPROC per namespace", os.Geteuid(), m)
	}
	k := runLimited(t, limitedBox(t, Config{MaxProcesses: 32}), sleepers)
	if k.res.ExitCode == 0 || strings.Contains(k.out, "forked 1000") {
		t.Errorf("RLIMIT_NPROC of 32: %+v %q; want the shell stopped", k.res, k.out)
	}
	if k := runLimited(t, nil, sleepers); k.res.ExitCode != 0 || !strings.Contains(k.out, "forked 1000") {
		t.Errorf("unconfined: %+v %q; want 1000 processes forked", k.res, k.out)
	}
}

// TestLimitCgroupLeftover: a cgroup left by a jlgcli killed with SIGKILL
// (its pid gone) is removed by the next call, what it still holds killed;
// one of a live process is not touched.
func TestLimitCgroupLeftover(t *testing.T) {
	needBwrap(t)
	needCgroup(t, "pids")
	parent := mechanism().pids
	// Above the kernel's highest pid (PID_MAX_LIMIT, 2^22): never alive.
	// (A pid free now may be taken by the time of the call.)
	dead := 1<<22 + 1
	gone := filepath.Join(parent, fmt.Sprintf("%d-7", dead))
	alive := filepath.Join(parent, fmt.Sprintf("%d-7", os.Getppid()))
	for _, d := range []string{gone, alive} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(alive)
	defer os.Remove(gone)
	left := exec.Command("sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer left.Process.Kill()
	if err := os.WriteFile(filepath.Join(gone, "cgroup.procs"), []byte(fmt.Sprint(left.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	box := limitedBox(t, Config{MaxProcesses: 64})
	runLimited(t, box, "true")
	if err := left.Wait(); err == nil {
		t.Errorf("the process left in %s was not killed", gone)
	}
	runLimited(t, box, "true") // the first may have found it dying still
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("%s, of a process that is no more, is still there", gone)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("%s, of a live process, was removed", alive)
	}
}

// checkNoCgroupLeft fails when a cgroup of this process's calls is left.
func checkNoCgroupLeft(t *testing.T) {
	t.Helper()
	m := mechanism()
	for _, parent := range []string{m.pids, m.memory} {
		if parent == "" {
			continue
		}
		left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("%d-*", os.Getpid())))
		if len(left) > 0 {
			t.Errorf("cgroups left after the calls: %v", left)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{8 << 30: "8 GiB", 256 << 20: "256 MiB", 1536 << 20: "1.5 GiB", 1000: "1000 B", 2 << 10: "2 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSizedTmpfs(t *testing.T) {
	argv := []string{"bwrap", "--ro-bind", "/", "/", "--size", "1024", "--tmpfs", "/dev/shm", "--size", "2048", "--tmpfs", "/tmp",
		"--chdir", "/w", "--", "sh", "--size", "9", "--tmpfs", "/x"}
	got := sizedTmpfs(argv)
	if len(got) != 2 || got[0].dest != "/dev/shm" || got[0].size != 1024 || got[1].dest != "/tmp" || got[1].size != 2048 {
		t.Errorf("sizedTmpfs = %+v", got)
	}
}

// BenchmarkLimitedCall measures what the limits add to a confined call:
// the same short command confined with no limits (negative: none) and
// with the default limits (a cgroup of each controller made and removed,
// bubblewrap's processes moved into them while it holds the command back,
// the sized tmpfs held from outside before the command starts).
func BenchmarkLimitedCall(b *testing.B) {
	if _, why := Available(); why != "" {
		b.Skip(why)
	}
	dir := b.TempDir()
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"confined, no limits", Config{Mode: On, MaxProcesses: -1, MaxMemory: -1, MaxTmp: -1}},
		{"confined, limits", Config{Mode: On}},
	} {
		box, _, err := New(bc.cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				var errs bytes.Buffer
				c, release, err := box.wrap(proc.Cmd{Argv: []string{"true"}, Dir: dir, Stderr: &errs}, Needs{Hosts: []string{"http://127.0.0.1:18080"}}, false)
				if err != nil {
					b.Fatal(err)
				}
				res, err := proc.Run(context.Background(), c)
				release()
				if err != nil || res.ExitCode != 0 {
					b.Fatal(res, err, errs.String())
				}
			}
		})
	}
}

// TestLimitCannotSet: a call whose limits cannot be set does not run.
func TestLimitCannotSet(t *testing.T) {
	needBwrap(t)
	forceMechanism(t, func(m *mech) { m.pids = filepath.Join(t.TempDir(), "not-a-cgroup") })
	_, _, err := limitedBox(t, Config{}).wrap(proc.Cmd{Argv: []string{"true"}, Dir: t.TempDir()}, Needs{}, false)
	if err == nil || !strings.Contains(err.Error(), "sandbox: limits of the call") {
		t.Errorf("Agent = %v; want the limits' error", err)
	}
}

// TestLimitsAvailable: what sandbox check shows of the limits here, and on
// a machine with no writable cgroup.
func TestLimitsAvailable(t *testing.T) {
	how, notes := LimitsAvailable()
	t.Logf("here: %s\n%s", how, strings.Join(notes, "\n"))
	if m := mechanism(); m.pids != "" && m.memory != "" && how != "cgroup v1 (pids, memory)" {
		t.Errorf("how = %q with both controllers", how)
	}
	if l := Limits(Config{MaxProcesses: 64}); len(l) != len(notes)+1 || !strings.HasPrefix(l[0], "64 processes") {
		t.Errorf("Limits = %q", l)
	}
	forceMechanism(t, func(m *mech) { m.pids, m.memory, m.v2 = "", "", true })
	how, notes = LimitsAvailable()
	t.Logf("without cgroups: %s\n%s", how, strings.Join(notes, "\n"))
	all := strings.Join(notes, "\n")
	if how != "rlimits only" || !strings.Contains(all, "RLIMIT_DATA") || !strings.Contains(all, "unconfined runs") || !strings.Contains(all, "systemd") {
		t.Errorf("without cgroups: %q %q", how, notes)
	}
	if os.Geteuid() == 0 && !strings.Contains(all, "processes: NOT enforced") {
		t.Errorf("as root without a pids cgroup, processes must say NOT enforced: %q", notes)
	}
}

// TestLimitKilledJlgcli: a jlgcli killed with SIGKILL during a call leaves
// its call's cgroups behind; the next call (here, of another process)
// removes them. The test runs itself again as that jlgcli.
func TestLimitKilledJlgcli(t *testing.T) {
	if dir := os.Getenv("JLGCLI_LIMITS_KILLED"); dir != "" {
		box, _, err := New(Config{Mode: On})
		if err != nil {
			t.Fatal(err)
		}
		c, release, err := box.wrap(proc.Cmd{Argv: []string{"sh", "-c", "touch started; sleep 60"}, Dir: dir}, Needs{}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		proc.Run(context.Background(), c)
		return
	}
	needBwrap(t)
	needCgroup(t, "pids")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLimitKilledJlgcli$")
	cmd.Env = append(os.Environ(), "JLGCLI_LIMITS_KILLED="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the call did not start")
		}
	}
	left := filepath.Join(mechanism().pids, fmt.Sprintf("%d-*", cmd.Process.Pid))
	if m, _ := filepath.Glob(left); len(m) != 1 {
		t.Fatalf("the running call's cgroups: %v", m)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if m, _ := filepath.Glob(left); len(m) != 1 {
		t.Fatalf("the killed jlgcli's cgroup is gone before any call (%v): the test would show nothing", m)
	}
	box := limitedBox(t, Config{})
	for deadline := time.Now().Add(10 * time.Second); ; {
		runLimited(t, box, "true")
		m, _ := filepath.Glob(left)
		if len(m) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left by the killed jlgcli after the next calls: %v", m)
		}
	}
}
