package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// The limits of a call (sandbox.maxProcesses, maxMemory, maxTmp) are
// enforced by the kernel, by the best means this machine has:
//
//   - cgroup v1 (the pids and memory controllers, writable to jlgcli): each
//     call gets a cgroup of each under jlgcli's own, named
//     jlgcli/<jlgcli's pid>-<n>, with pids.max and memory.limit_in_bytes
//     (and memory.memsw.limit_in_bytes: no swap beyond it). The cgroup is
//     removed after the call; one left by a jlgcli killed with SIGKILL is
//     removed by the next call.
//   - otherwise rlimits: RLIMIT_NPROC, which the kernel (5.14 and later)
//     counts within the sandbox's own user namespace, so per call, but
//     never enforces for root; RLIMIT_DATA (memory, per process, not per
//     call).
//   - the call's temporary directories are tmpfs of maxTmp bytes
//     (bubblewrap --size, 0.7.0 and later) wherever it runs.
//
// No process of the call runs outside its limits: bubblewrap tells the
// sandbox's pid as soon as it made it (--info-fd) and runs the call's
// command only once jlgcli lets it (--block-fd); in between, jlgcli moves
// bubblewrap's two processes (it forks nothing else before) into the
// call's cgroups and sets the rlimits of the sandbox's first process,
// whose every descendant inherits them. An rlimit set there, once the
// sandbox's user namespace exists, is counted by the kernel within it;
// set before (by a wrapper that would exec bubblewrap), RLIMIT_NPROC would
// count all of the user's processes, and bubblewrap itself could fail.
//
// jlgcli reads why a call ended from the kernel, never from the call:
// pids.events (a fork refused at the limit), memory.oom_control
// (oom_kill), and the tmpfs itself, opened from outside through
// /proc/<pid>/root before the command starts and held, so that its usage
// can be read as the call goes and once it ended.

// How often a running call's counters are read, and how long its process
// limit must be hit again and again before jlgcli ends it: a fork bomb
// would otherwise keep the machine busy until the call's timeout, while a
// build that touches the limit once goes on.
var (
	limitTick        = 100 * time.Millisecond
	tmpFastTick      = 2 * time.Millisecond
	limitHitWindow   = 250 * time.Millisecond
	limitHitWindows  = 4 // consecutive windows with a refused fork
	limitSetupWait   = 10 * time.Second
	tmpFullBelow     = int64(1 << 20) // a tmpfs with less free is full
	cgroupRemoveWait = 2 * time.Second
)

// LimitError is a call that reached one of its limits, the reason it
// failed.
type LimitError struct {
	// Resource is "processes", "memory" or "temporary space".
	Resource string
	// Key is the configuration key of the limit (sandbox.maxProcesses).
	Key string
	// Limit is the limit: a number of processes, or bytes.
	Limit int64
	// Ended is true when jlgcli ended the call, its limit of processes
	// hit again and again (a fork bomb).
	Ended bool
	// Killed is true when the kernel killed a process of the call (out
	// of memory).
	Killed bool
}

func (e *LimitError) Error() string {
	var s string
	switch e.Resource {
	case "processes":
		s = fmt.Sprintf("the call reached its limit of %d processes (%s)", e.Limit, e.Key)
	default:
		s = fmt.Sprintf("the call reached its limit of %s (%s, %s)", e.Resource, e.Key, Bytes(e.Limit))
	}
	switch {
	case e.Ended:
		s += ": jlgcli ended it (it kept trying to start more)"
	case e.Killed:
		s += ": the kernel killed it"
	case e.Resource == "temporary space":
		s += ": its /tmp was full"
	}
	return s
}

// Hint says how to give calls more.
func (e *LimitError) Hint() string {
	return fmt.Sprintf("if the call needs more, raise %s in your user file (~/.config/jlgcli/config.toml) or the environment", e.Key)
}

// Bytes is n in the unit that reads best: "8 GiB", "256 MiB", "1000 B".
func Bytes(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift {
			v := float64(n) / float64(int64(1)<<u.shift)
			if n%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d %s", n>>u.shift, u.name)
			}
			return strconv.FormatFloat(v, 'f', 1, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", n)
}

// limits are a Box's limits, resolved: 0 means none.
type limits struct {
	processes      int64
	memory, tmp    int64
	procsV1, memV1 string // the cgroup v1 directories calls get theirs in, "" when not used
}

func (b *Box) limits() limits {
	m := mechanism()
	l := limits{
		processes: pick(int64(b.cfg.MaxProcesses), int64(DefaultLimits.Processes)),
		memory:    pick(b.cfg.MaxMemory, DefaultLimits.Memory),
		tmp:       pick(b.cfg.MaxTmp, DefaultLimits.Tmp),
	}
	if l.processes > 0 {
		l.procsV1 = m.pids
	}
	if l.memory > 0 {
		l.memV1 = m.memory
	}
	return l
}

// pick is v, def when v is 0, none (0) when v is negative.
func pick(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// tmpSize is the size in bytes of a call's private temporary directories
// (its /tmp and /dev/shm, bubblewrap's --size before --tmpfs): maxTmp or
// its default; 0 when they are not to be sized (the limit is off, or this
// bubblewrap has no --size), and bubblewrap then gets no --size.
func (b *Box) tmpSize() int64 {
	if !mechanism().tmpSized {
		return 0
	}
	return b.limits().tmp
}

// limitsRecord is the limits of b's calls in one line, for the run's
// record: "512 processes, 8 GiB of memory, 2 GiB of /tmp (cgroup v1)".
func (b *Box) limitsRecord() string {
	l := b.limits()
	m := mechanism()
	var parts []string
	switch {
	case l.processes == 0:
		parts = append(parts, "processes unlimited")
	case l.procsV1 != "":
		parts = append(parts, fmt.Sprintf("%d processes", l.processes))
	case os.Geteuid() == 0:
		parts = append(parts, "processes not limited (root, no pids cgroup)")
	case m.nprocPerNS:
		parts = append(parts, fmt.Sprintf("%d processes (RLIMIT_NPROC)", l.processes))
	default:
		parts = append(parts, fmt.Sprintf("%d more processes of the user (RLIMIT_NPROC)", l.processes))
	}
	switch {
	case l.memory == 0:
		parts = append(parts, "memory unlimited")
	case l.memV1 != "":
		parts = append(parts, Bytes(l.memory)+" of memory")
	default:
		parts = append(parts, Bytes(l.memory)+" of memory per process (RLIMIT_DATA)")
	}
	switch {
	case l.tmp == 0:
		parts = append(parts, "/tmp unlimited")
	case m.tmpSized:
		parts = append(parts, Bytes(l.tmp)+" of /tmp")
	default:
		parts = append(parts, "/tmp not limited (bubblewrap without --size)")
	}
	how := "rlimits"
	if l.procsV1 != "" || l.memV1 != "" {
		how = "cgroup v1"
	}
	return strings.Join(parts, ", ") + " (" + how + ")"
}

// Unlimited is what the record of an unconfined run says of its limits.
const Unlimited = "none (unconfined)"

// LimitsAvailable tells which mechanism limits a confined call on this
// machine ("cgroup v1 (pids, memory)", "rlimits only", ...) and, in notes,
// what it enforces and what it does not.
func LimitsAvailable() (how string, notes []string) {
	m := mechanism()
	switch {
	case m.pids != "" && m.memory != "":
		how = "cgroup v1 (pids, memory)"
	case m.pids != "":
		how = "cgroup v1 (pids) and rlimits"
	case m.memory != "":
		how = "cgroup v1 (memory) and rlimits"
	default:
		how = "rlimits only"
	}
	if m.pids != "" {
		notes = append(notes, "processes: at most sandbox.maxProcesses per call, threads and the sandbox's own helpers included (pids controller, "+m.pids+"); a call that keeps hitting it is ended")
	} else if os.Geteuid() == 0 {
		notes = append(notes, "processes: NOT enforced: no writable pids controller, and the kernel ignores RLIMIT_NPROC for root")
	} else if m.nprocPerNS {
		notes = append(notes, "processes: RLIMIT_NPROC, which this kernel counts within the call's sandbox: at most sandbox.maxProcesses per call; the reason is not told (no pids controller to count refusals)")
	} else {
		notes = append(notes, "processes: RLIMIT_NPROC, which this kernel (before 5.14) counts over all of your processes: a call may start sandbox.maxProcesses more than you had when it started; the reason is not told")
	}
	if m.memory != "" {
		notes = append(notes, "memory: at most sandbox.maxMemory per call, the content of its /tmp included (memory controller, "+m.memory+"); past it the kernel kills a process of the call")
	} else {
		notes = append(notes, "memory: RLIMIT_DATA only: sandbox.maxMemory per process, not per call (no writable memory controller); the reason is not told")
	}
	if m.tmpSized {
		notes = append(notes, "temporary space: the call's /tmp and /dev/shm are tmpfs of sandbox.maxTmp each (bubblewrap --size); its working directory and caches are on disk, not limited")
	} else {
		notes = append(notes, "temporary space: NOT enforced: "+m.tool+" has no --size (bubblewrap 0.7.0 has it)")
	}
	if m.v2 {
		notes = append(notes, "cgroup v2 (systemd's delegation, systemd-run --user --scope) is not used: untested here; the rlimits above apply")
	}
	notes = append(notes, "unconfined runs (--sandbox off, no bubblewrap) have no limits")
	return how, notes
}

// Limits are the lines sandbox check shows of the limits of each call with
// c's values on this machine: the limits and how they are enforced, then
// what is enforced and what is not (LimitsAvailable's notes).
func Limits(c Config) []string {
	_, notes := LimitsAvailable()
	return append([]string{(&Box{cfg: c}).limitsRecord()}, notes...)
}

// mech is what this machine offers to limit calls.
type mech struct {
	pids, memory string // the directories calls' cgroups go in ("" when unusable)
	v2           bool   // a cgroup v2 hierarchy holds jlgcli's processes
	tmpSized     bool   // bubblewrap has --size
	nprocPerNS   bool   // the kernel counts RLIMIT_NPROC per user namespace (5.14)
	tool         string
}

var (
	mechOnce sync.Once
	mechVal  mech
)

func mechanism() mech {
	mechOnce.Do(func() { mechVal = findMechanism() })
	return mechVal
}

func findMechanism() mech {
	var m mech
	tool, _, _ := probe()
	m.tool = tool
	m.tmpSized = bwrapAtLeast(tool, 0, 7)
	m.nprocPerNS = kernelAtLeast(5, 14)
	mounts := cgroupMounts()
	own := ownCgroups()
	if _, ok := own[""]; ok && len(own) == 1 {
		m.v2 = true
	}
	for _, c := range []struct {
		name string
		dst  *string
	}{{"pids", &m.pids}, {"memory", &m.memory}} {
		mnt, ok := mounts[c.name]
		path, ok2 := own[c.name]
		if !ok || !ok2 {
			continue
		}
		dir := filepath.Join(mnt, path, "jlgcli")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		if syscall.Access(filepath.Join(dir, "cgroup.procs"), 2 /* W_OK */) != nil {
			continue
		}
		*c.dst = dir
	}
	return m
}

// bwrapAtLeast tells whether tool ("bubblewrap 0.8.0") is at least
// major.minor.
func bwrapAtLeast(tool string, major, minor int) bool {
	f := strings.Fields(tool)
	return len(f) == 2 && versionAtLeast(f[1], major, minor)
}

// cgroupMounts maps each cgroup v1 controller to where its hierarchy is
// mounted (/proc/self/mountinfo).
func cgroupMounts() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		for _, o := range strings.Split(qf[2], ",") {
			if _, seen := out[o]; !seen && (o == "pids" || o == "memory") {
				out[o] = unescapeMount(pf[4])
			}
		}
	}
	return out
}

// ownCgroups maps each controller of jlgcli's cgroups (/proc/self/cgroup)
// to its path in the controller's hierarchy; "" is cgroup v2's.
func ownCgroups() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			out[c] = f[2]
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// calls numbers the cgroups of this process's calls; live holds those in
// use, which no cleanup touches.
var (
	calls atomic.Int64
	live  sync.Map
)

// limit puts the confined call c (bubblewrap's command line) in its
// limits: bubblewrap waits, before it runs the call's command, until the
// call's cgroups hold its processes, its rlimits are set and its sized
// tmpfs are held open from outside (watch.run); c.Limit tells why the
// call ended when a limit is the reason. The returned release undoes it,
// then calls release.
func (b *Box) limit(c proc.Cmd, release func()) (proc.Cmd, func(), error) {
	l := b.limits()
	m := mechanism()
	w := &watch{
		tmp:    sizedTmpfs(c.Argv),
		limits: l,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	name := fmt.Sprintf("%d-%d", os.Getpid(), calls.Add(1))
	undo := func() {
		for _, d := range []string{w.pidsDir, w.memDir} {
			if d != "" {
				removeCgroup(d)
				live.Delete(d)
			}
		}
	}
	fail := func(err error) (proc.Cmd, func(), error) {
		undo()
		release()
		return c, nil, fmt.Errorf("sandbox: limits of the call: %w", err)
	}
	if l.procsV1 != "" {
		cleanCgroups(l.procsV1)
		w.pidsDir = filepath.Join(l.procsV1, name)
		live.Store(w.pidsDir, true)
		if err := makeCgroup(w.pidsDir, [][2]string{{"pids.max", strconv.FormatInt(l.processes, 10)}}); err != nil {
			return fail(err)
		}
	} else if l.processes > 0 && os.Geteuid() != 0 {
		n := l.processes
		if !m.nprocPerNS {
			n += userTasks(os.Getuid()) // the kernel counts them all
		}
		w.rlimits = append(w.rlimits, rlimit{rlimitNproc, n})
	}
	if l.memV1 != "" {
		cleanCgroups(l.memV1)
		w.memDir = filepath.Join(l.memV1, name)
		live.Store(w.memDir, true)
		v := strconv.FormatInt(l.memory, 10)
		// memsw (memory and swap) only where the kernel accounts swap.
		if err := makeCgroup(w.memDir, [][2]string{{"memory.limit_in_bytes", v}, {"memory.memsw.limit_in_bytes?", v}}); err != nil {
			return fail(err)
		}
		w.oomBefore = readCounter(filepath.Join(w.memDir, "memory.oom_control"), "oom_kill")
	} else if l.memory > 0 {
		w.rlimits = append(w.rlimits, rlimit{syscall.RLIMIT_DATA, l.memory})
	}
	if w.pidsDir == "" && w.memDir == "" && len(w.rlimits) == 0 && len(w.tmp) == 0 {
		return c, release, nil // no limits
	}

	// bubblewrap tells the sandbox's pid on info and waits for a byte on
	// block before it runs the command. The sandbox holds a writing end of
	// block too (keep; the command inherits it, a pipe to nobody): should
	// jlgcli die before it wrote, the sandbox waits for good (the next
	// call's cleanup kills it, in the call's cgroup) rather than read the
	// end of the pipe and run the command, orphaned and unlimited.
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoR.Close()
		infoW.Close()
		return fail(err)
	}
	keep, err := dupFile(blockW)
	if err != nil {
		infoR.Close()
		infoW.Close()
		blockR.Close()
		blockW.Close()
		return fail(err)
	}
	w.info, w.block = infoR, blockW
	fd := 3 + len(c.ExtraFiles)
	argv := []string{c.Argv[0], "--info-fd", strconv.Itoa(fd), "--block-fd", strconv.Itoa(fd + 1)}
	c.Argv = append(argv, c.Argv[1:]...)
	c.ExtraFiles = append(slices.Clip(c.ExtraFiles), infoW, blockR, keep)
	c.Limit = w.verdict
	go w.run()

	var once sync.Once
	return c, func() {
		once.Do(func() {
			w.end()
			for _, f := range []*os.File{infoW, blockR, keep} {
				f.Close() // proc.Run closed them, unless the call never started
			}
			undo()
			release()
		})
	}, nil
}

// dupFile is a copy of f's descriptor: proc.Run closes the process's
// extra files once it started, and jlgcli keeps f.
func dupFile(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// sizedTmpfs are the tmpfs of a bubblewrap command line given a size
// (--size N --tmpfs DEST), by their path inside.
func sizedTmpfs(argv []string) []sized {
	var out []sized
	for i := 1; i+3 < len(argv) && argv[i] != "--"; i++ {
		if argv[i] == "--size" && argv[i+2] == "--tmpfs" {
			if n, err := strconv.ParseInt(argv[i+1], 10, 64); err == nil {
				out = append(out, sized{dest: argv[i+3], size: n})
			}
			i += 3
		}
	}
	return out
}

type sized struct {
	dest string
	size int64
	f    *os.File // held open from outside, once found
	full bool     // seen with less than tmpFullBelow free
}

// watch follows one call's limits from jlgcli's side.
type watch struct {
	limits          limits
	pidsDir, memDir string   // the call's cgroups, "" when none
	rlimits         []rlimit // set on the sandbox's first process
	tmp             []sized
	info, block     *os.File

	stop, done chan struct{}
	endOnce    sync.Once

	mu        sync.Mutex
	sandbox   *os.Process // the sandbox's first process (its pid 1)
	ended     bool        // jlgcli ended the call: its process limit kept being hit
	failed    error       // the limits could not be set: jlgcli killed the sandbox
	oomBefore int64
}

// run reads the sandbox's pid, puts its processes in their limits, holds
// its sized tmpfs open, lets its command start, then reads the counters
// until the call ends. When the limits cannot be set, it kills the sandbox
// before the command starts.
func (w *watch) run() {
	defer close(w.done)
	var info struct {
		Pid int `json:"child-pid"`
	}
	err := json.NewDecoder(w.info).Decode(&info)
	if err != nil || info.Pid <= 0 {
		w.block.Close()
		return
	}
	p, err := os.FindProcess(info.Pid) // a pidfd: never another process
	if err == nil {
		w.mu.Lock()
		w.sandbox = p
		w.mu.Unlock()
	}
	if err := w.confine(info.Pid); err != nil {
		w.block.Close()
		if errors.Is(err, syscall.ESRCH) {
			return // bubblewrap failed already, and says why
		}
		w.mu.Lock()
		w.failed = err
		w.mu.Unlock()
		if p != nil {
			_ = p.Signal(syscall.SIGKILL)
		}
		return
	}
	w.holdTmpfs(info.Pid)
	_, _ = w.block.Write([]byte{1})
	w.block.Close()

	t := time.NewTimer(0)
	defer t.Stop()
	var lastMax int64
	var lastPids time.Time
	windowStart, hit, streak := time.Now(), false, 0
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		// A tmpfs over half full is read often: a call that fills it,
		// fails and removes its files at once is seen full all the same.
		next := limitTick
		if w.sampleTmpfs() {
			next = tmpFastTick
		}
		t.Reset(next)
		now := time.Now()
		if w.pidsDir == "" || now.Sub(lastPids) < limitTick {
			continue
		}
		lastPids = now
		if n := readCounter(filepath.Join(w.pidsDir, "pids.events"), "max"); n > lastMax {
			lastMax, hit = n, true
		}
		if now.Sub(windowStart) < limitHitWindow {
			continue
		}
		if hit {
			streak++
		} else {
			streak = 0
		}
		windowStart, hit = now, false
		if streak >= limitHitWindows {
			w.endCall()
			streak = 0
		}
	}
}

// holdTmpfs opens each sized tmpfs of the sandbox whose first process is
// pid from outside (/proc/pid/root/DEST), once bubblewrap has mounted it:
// the call's command has not started yet, bubblewrap waits on block.
func (w *watch) holdTmpfs(pid int) {
	if len(w.tmp) == 0 {
		return
	}
	deadline := time.Now().Add(limitSetupWait)
	pause := 100 * time.Microsecond
	for {
		missing := 0
		for i := range w.tmp {
			w.mu.Lock()
			s := &w.tmp[i]
			if s.f == nil {
				s.f = openTmpfs(fmt.Sprintf("/proc/%d/root%s", pid, s.dest), s.dest, s.size)
			}
			if s.f == nil {
				missing++
			}
			w.mu.Unlock()
		}
		if missing == 0 || time.Now().After(deadline) {
			return
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
		select {
		case <-w.stop:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Millisecond)
	}
}

const tmpfsMagic = 0x01021994

// openTmpfs opens path when it is a tmpfs of size bytes, not host (the
// same path outside the sandbox, before bubblewrap mounted it).
func openTmpfs(path, host string, size int64) *os.File {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	var st syscall.Statfs_t
	var fi, hi syscall.Stat_t
	if syscall.Fstatfs(int(f.Fd()), &st) != nil || st.Type != tmpfsMagic || st.Bsize <= 0 ||
		st.Blocks*uint64(st.Bsize) != uint64((size+st.Bsize-1)/st.Bsize*st.Bsize) ||
		syscall.Fstat(int(f.Fd()), &fi) != nil ||
		(syscall.Stat(host, &hi) == nil && hi.Dev == fi.Dev) {
		f.Close()
		return nil
	}
	return f
}

// sampleTmpfs notes the sized tmpfs that are full, and tells whether one
// is over half full.
func (w *watch) sampleTmpfs() (half bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.tmp {
		s := &w.tmp[i]
		if s.f == nil {
			continue
		}
		var st syscall.Statfs_t
		if syscall.Fstatfs(int(s.f.Fd()), &st) != nil {
			continue
		}
		free := int64(st.Bavail) * st.Bsize
		if free < tmpFullBelow {
			s.full = true
		}
		if free < s.size/2 {
			half = true
		}
	}
	return half
}

// endCall kills the sandbox (its first process: the kernel kills the rest
// of its PID namespace with it), and every process left in its cgroup.
func (w *watch) endCall() {
	w.mu.Lock()
	w.ended = true
	p := w.sandbox
	w.mu.Unlock()
	if p != nil {
		_ = p.Signal(syscall.SIGKILL)
	}
	killCgroup(w.pidsDir)
}

// end stops the watch, once.
func (w *watch) end() {
	w.endOnce.Do(func() {
		close(w.stop)
		w.info.Close() // unblocks a read of a sandbox that never started
		<-w.done
		w.mu.Lock()
		if w.sandbox != nil {
			_ = w.sandbox.Release()
		}
		w.mu.Unlock()
		for i := range w.tmp {
			if w.tmp[i].f != nil {
				w.tmp[i].f.Close()
			}
		}
	})
}

// verdict is proc.Cmd.Limit: which limit the call reached, when that is
// why it failed. It ends the watch.
func (w *watch) verdict(r proc.Result) error {
	w.sampleTmpfs() // the tmpfs are still held: their last state
	w.end()
	w.mu.Lock()
	ended, failed := w.ended, w.failed
	w.mu.Unlock()
	if failed != nil {
		return fmt.Errorf("jlgcli could not put the call in its limits, and stopped it: %w", failed)
	}
	l := w.limits
	procs := &LimitError{Resource: "processes", Key: "sandbox.maxProcesses", Limit: l.processes}
	switch {
	case ended:
		procs.Ended = true
		return procs
	case r.ExitCode == 0 || r.Stopped:
		// It succeeded, or jlgcli stopped it (a timeout, the user).
		return nil
	case w.memDir != "" && readCounter(filepath.Join(w.memDir, "memory.oom_control"), "oom_kill") > w.oomBefore:
		return &LimitError{Resource: "memory", Key: "sandbox.maxMemory", Limit: l.memory, Killed: true}
	case w.pidsDir != "" && readCounter(filepath.Join(w.pidsDir, "pids.events"), "max") > 0:
		return procs
	}
	for _, s := range w.tmp {
		if s.full {
			return &LimitError{Resource: "temporary space", Key: "sandbox.maxTmp", Limit: s.size}
		}
	}
	return nil
}

// makeCgroup makes the cgroup dir and writes its settings (a file whose
// name ends in "?" only where it exists).
func makeCgroup(dir string, settings [][2]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, s := range settings {
		name, optional := strings.CutSuffix(s[0], "?")
		p := filepath.Join(dir, name)
		if optional {
			if _, err := os.Stat(p); err != nil {
				continue
			}
		}
		if err := os.WriteFile(p, []byte(s[1]), 0); err != nil {
			if !optional {
				return err
			}
		}
	}
	return nil
}

// removeCgroup removes a call's cgroup once its processes are gone (they
// die with the sandbox, in a moment), killing any that remain.
func removeCgroup(dir string) {
	deadline := time.Now().Add(cgroupRemoveWait)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) || time.Now().After(deadline) {
			return
		}
		killCgroup(dir)
		time.Sleep(time.Millisecond)
	}
}

// killCgroup sends SIGKILL to every process of the cgroup dir.
func killCgroup(dir string) {
	if dir == "" {
		return
	}
	data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanCgroups removes the cgroups under parent left by a jlgcli that is
// no more (killed with SIGKILL: nothing removed them), and those of this
// one no call uses. What they still hold (a sandbox that jlgcli died
// before letting start, waiting for it) is killed first.
func cleanCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		owner, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(owner)
		if !ok || err != nil {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if pid == self {
			if _, inUse := live.Load(dir); inUse {
				continue
			}
		} else if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue
		}
		if syscall.Rmdir(dir) != nil {
			killCgroup(dir)
			_ = syscall.Rmdir(dir) // or at the next call, once they are gone
		}
	}
}

// readCounter is the value of key in a cgroup file of "key value" lines
// (pids.events, memory.oom_control), 0 when absent.
func readCounter(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// userTasks counts the tasks (threads included) of uid, as RLIMIT_NPROC
// counts them.
func userTasks(uid int) int64 {
	dirs, _ := os.ReadDir("/proc")
	var n int64
	want := []byte(strconv.Itoa(uid))
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		var mine bool
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Bytes()
			if rest, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
				// real uid first
				mine = bytes.Equal(bytes.Fields(rest)[0], want)
				if !mine {
					break
				}
			}
			if rest, ok := bytes.CutPrefix(line, []byte("Threads:")); ok && mine {
				t, _ := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
				n += t
				break
			}
		}
		f.Close()
	}
	return n
}

// confine moves bubblewrap's processes (the sandbox's first, pid, and its
// parent, bubblewrap's monitor) into the call's cgroups, and sets the
// call's rlimits on the sandbox's first process, whose descendants inherit
// them. Neither has forked yet.
func (w *watch) confine(pid int) error {
	pids := []int{pid}
	if pp := parentOf(pid); pp > 1 {
		pids = append(pids, pp)
	}
	for _, d := range []string{w.pidsDir, w.memDir} {
		if d == "" {
			continue
		}
		for _, p := range pids {
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(p)), 0); err != nil {
				return fmt.Errorf("cannot put the call in its cgroup: %w", err)
			}
		}
	}
	for _, r := range w.rlimits {
		if err := prlimit(pid, r.resource, uint64(r.value)); err != nil {
			return fmt.Errorf("cannot set the call's rlimit %d: %w", r.resource, err)
		}
	}
	return nil
}

// parentOf is the parent of pid (/proc/pid/stat), 0 when unknown.
func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

type rlimit struct {
	resource int
	value    int64
}

// rlimitNproc is RLIMIT_NPROC (the syscall package does not name it).
const rlimitNproc = 6

// prlimit lowers the soft and hard limits of resource of process pid to n
// (the hard one too: the call could raise its soft limit up to it).
func prlimit(pid, resource int, n uint64) error {
	var old syscall.Rlimit
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource), 0, uintptr(unsafe.Pointer(&old)), 0, 0); e != 0 {
		return e
	}
	lim := syscall.Rlimit{Cur: min(n, old.Max), Max: min(n, old.Max)}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// kernelAtLeast tells whether the running kernel is at least major.minor.
func kernelAtLeast(major, minor int) bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return versionAtLeast(b.String(), major, minor)
}

// versionAtLeast tells whether v ("6.18.44-fc", "0.8.0") is at least
// major.minor.
func versionAtLeast(v string, major, minor int) bool {
	f := strings.SplitN(v, ".", 3)
	if len(f) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(strings.TrimRightFunc(f[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}
