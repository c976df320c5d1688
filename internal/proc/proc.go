// Package proc runs one supervised subprocess: in its own process group, never
// through a shell, stopped with SIGTERM then SIGKILL to the whole group, and
// with its output pipes owned by jlgcli so that a grandchild holding them open
// can never make the caller hang.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is the time between SIGTERM and SIGKILL to the group.
const DefaultGrace = 3 * time.Second

// drainDelay bounds how long output is still read after the group was killed,
// for a process that left the group (setsid) but kept a pipe open.
const drainDelay = 2 * time.Second

// Cmd describes one subprocess.
type Cmd struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH
	// (of Env when it sets PATH) if it has no slash. A relative Argv[0] (or
	// PATH entry) is relative to the current directory, not to Dir.
	Argv []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env is the complete environment; nil means the current one.
	Env []string
	// Stdin, when not nil, is copied to the process's standard input; nil
	// gives it /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the output as it comes; nil discards it.
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL; zero means DefaultGrace.
	Grace time.Duration
	// StallTimeout, when positive, stops the group when the process has
	// printed nothing (on stdout or stderr) for that long.
	StallTimeout time.Duration
	// Stop, when set, asks the process to stop in place of the SIGTERM to
	// its group, given the leader's pid: for a sandboxed command, whose
	// processes live in a session of their own. SIGKILL to the group after
	// the grace is unchanged.
	Stop func(pid int)
	// ExtraFiles are given to the process as file descriptors 3, 4, ...
	// (exec.Cmd.ExtraFiles); Run closes them once the process has started
	// (or could not be), for the process holds its own copies.
	ExtraFiles []*os.File
	// Limit, when set, is asked once the process has ended (its group
	// killed, its output drained) whether the process reached a limit of
	// its sandbox: processes, memory, temporary space. Its answer is
	// Result.Limit.
	Limit func(Result) error
}

// Result is how a process ended.
type Result struct {
	// ExitCode is the process's exit status, or 128+signal when a signal
	// ended it.
	ExitCode int
	// Signal is the signal that ended the process, if one did.
	Signal syscall.Signal
	// Stopped is true when the context ended before the process did and
	// jlgcli stopped the group.
	Stopped bool
	// Stalled is true when the process printed nothing for StallTimeout
	// and jlgcli stopped the group for it.
	Stalled bool
	// Duration is the wall time from start to the end of the group.
	Duration time.Duration
	// Limit says which limit of its sandbox the process reached, when
	// that is why it failed (Cmd.Limit); nil otherwise.
	Limit error
}

// ErrNotFound is returned (wrapped) when the executable does not exist.
var ErrNotFound = errors.New("executable not found")

// live holds the process group ids of the processes Run is supervising.
var live sync.Map

// KillAll sends SIGKILL to the process group of every process that Run is
// supervising: for a second Ctrl-C, when jlgcli must exit at once without
// leaving an agent behind.
func KillAll() {
	live.Range(func(k, _ any) bool {
		_ = syscall.Kill(-k.(int), syscall.SIGKILL)
		return true
	})
}

// Run starts c, waits for it and for every process of its group to end, and
// returns how it ended. When ctx ends first, the group gets SIGTERM, then
// SIGKILL after the grace period; the result then has Stopped set. An error is
// returned only when the process could not be started.
func Run(ctx context.Context, c Cmd) (Result, error) {
	// The process holds its own copies of the extra files once started;
	// ours would keep a pipe open after it ended.
	defer closeFiles(c.ExtraFiles)
	if len(c.Argv) == 0 {
		return Result{}, errors.New("proc: empty command")
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	path, err := lookPath(c.Argv[0], c.Env)
	if err != nil {
		return Result{}, err
	}
	cmd := &exec.Cmd{Path: path, Args: c.Argv, Dir: c.Dir, Env: c.Env, ExtraFiles: c.ExtraFiles}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &pipes{}
	p.lastOutput.Store(time.Now().UnixNano())
	if err := p.connect(cmd, c); err != nil {
		p.closeAll()
		return Result{}, err
	}

	start := time.Now()
	err = cmd.Start()
	closeFiles(c.ExtraFiles)
	if err != nil {
		p.closeAll()
		return Result{}, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	p.started()
	pgid := cmd.Process.Pid
	live.Store(pgid, struct{}{})
	defer live.Delete(pgid)
	p.feed(c.Stdin)

	w := &watchdog{pgid: pgid, grace: grace, stop: c.Stop, stall: c.StallTimeout, lastOutput: &p.lastOutput, exited: make(chan struct{})}
	go w.watch(ctx)

	waitErr := cmd.Wait()
	close(w.exited)
	// The leader is gone; nothing of its group may outlive it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.drain()

	res := Result{Duration: time.Since(start)}
	res.Stopped, res.Stalled = w.outcome()
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
	default:
		return res, fmt.Errorf("wait %s: %w", c.Argv[0], waitErr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
		res.ExitCode = 128 + int(ws.Signal())
	} else {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if c.Limit != nil {
		res.Limit = c.Limit(res)
	}
	return res, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// pipes are a child's standard streams, owned by jlgcli: the child gets
// the write ends of stdout and stderr (and the read end of stdin), and
// jlgcli copies what comes out, noting when, so that a grandchild holding a
// pipe cannot hang it.
type pipes struct {
	lastOutput atomic.Int64 // UnixNano of the last output, for the stall watchdog
	copies     sync.WaitGroup
	readers    []*os.File // our read ends, closed when the drain delay is over
	childEnds  []*os.File // closed once the child has started
	stdin      *os.File   // our write end of the child's stdin, or nil
}

// connect sets the streams of cmd from c.
func (p *pipes) connect(cmd *exec.Cmd, c Cmd) error {
	var err error
	if cmd.Stdout, err = p.output(c.Stdout); err != nil {
		return err
	}
	if cmd.Stderr, err = p.output(c.Stderr); err != nil {
		return err
	}
	if c.Stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		cmd.Stdin = r
		p.childEnds = append(p.childEnds, r)
		p.stdin = w
	}
	return nil
}

// output is a pipe whose output is copied to w (nil: discarded).
func (p *pipes) output(w io.Writer) (*os.File, error) {
	if w == nil {
		w = io.Discard
	}
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.childEnds = append(p.childEnds, wr)
	p.readers = append(p.readers, r)
	p.copies.Add(1)
	go func() {
		defer p.copies.Done()
		_, _ = io.Copy(activity{w, &p.lastOutput}, r)
	}()
	return wr, nil
}

// started closes the child's ends: it holds its own copies now, and ours
// would keep the pipes open.
func (p *pipes) started() {
	for _, f := range p.childEnds {
		f.Close()
	}
}

// feed copies in to the child's stdin, then closes it.
func (p *pipes) feed(in io.Reader) {
	if p.stdin == nil {
		return
	}
	go func() {
		_, _ = io.Copy(p.stdin, in)
		p.stdin.Close()
	}()
}

// drain reads what is left once the child is gone; a process that escaped
// the group and holds a pipe gets drainDelay, then the pipe is closed under
// it.
func (p *pipes) drain() {
	if p.stdin != nil {
		p.stdin.Close() // unblocks a writer stuck on a full pipe
	}
	drained := make(chan struct{})
	go func() { p.copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainDelay):
		for _, f := range p.readers {
			_ = f.SetReadDeadline(time.Now())
		}
		<-drained
	}
	for _, f := range p.readers {
		f.Close()
	}
}

// closeAll closes every end, when the child could not be started.
func (p *pipes) closeAll() {
	for _, f := range p.childEnds {
		f.Close()
	}
	for _, f := range p.readers {
		f.Close()
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
}

// watchdog stops a process group when the context ends or its output
// stalls: SIGTERM to the group, then SIGKILL after the grace.
type watchdog struct {
	pgid       int
	grace      time.Duration
	stall      time.Duration // 0: no stall watch
	lastOutput *atomic.Int64
	exited     chan struct{} // closed when the leader has exited
	stop       func(pid int) // Cmd.Stop

	mu               sync.Mutex
	stopped, stalled bool
}

func (w *watchdog) watch(ctx context.Context) {
	var tick <-chan time.Time
	if w.stall > 0 {
		t := time.NewTicker(min(w.stall/4, time.Second))
		defer t.Stop()
		tick = t.C
	}
	for stop := false; !stop; {
		select {
		case <-w.exited:
			return
		case <-ctx.Done():
			w.mu.Lock()
			w.stopped, stop = true, true
			w.mu.Unlock()
		case now := <-tick:
			if now.Sub(time.Unix(0, w.lastOutput.Load())) >= w.stall {
				w.mu.Lock()
				w.stalled, stop = true, true
				w.mu.Unlock()
			}
		}
	}
	if w.stop != nil {
		w.stop(w.pgid)
	} else {
		_ = syscall.Kill(-w.pgid, syscall.SIGTERM)
	}
	t := time.NewTimer(w.grace)
	defer t.Stop()
	select {
	case <-w.exited:
	case <-t.C:
		_ = syscall.Kill(-w.pgid, syscall.SIGKILL)
	}
}

// outcome says whether the watchdog stopped the group, and why.
func (w *watchdog) outcome() (stopped, stalled bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped, w.stalled
}

// activity is a writer that notes the time of each write.
type activity struct {
	w    io.Writer
	last *atomic.Int64
}

func (a activity) Write(p []byte) (int, error) {
	a.last.Store(time.Now().UnixNano())
	return a.w.Write(p)
}

// LookPath reports where name would be found with the environment env (nil:
// the current one's PATH), or an error wrapping ErrNotFound. The path is
// absolute: a relative name or PATH entry is relative to the current
// directory, and Run runs the program found there whatever Cmd.Dir is.
func LookPath(name string, env []string) (string, error) { return lookPath(name, env) }

// LookupEnv is the value of k in the environment env (KEY=VALUE entries),
// and whether it is set; of several entries of k, the last counts, as it
// does for the process that gets env.
func LookupEnv(env []string, k string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Trusted is env with each variable of untrusted (the names a project's
// file set) given back jlgcli's own value, or none: what decides where a
// program is found, what a sandbox lets a call write, read and reach, reads
// it, never a value a repository chose.
func Trusted(env, untrusted []string) []string {
	if len(untrusted) == 0 {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(untrusted, name) {
			out = append(out, kv)
		}
	}
	for _, name := range untrusted {
		if v, ok := os.LookupEnv(name); ok {
			out = append(out, name+"="+v)
		}
	}
	return out
}

func lookPath(name string, env []string) (string, error) {
	path, custom := LookupEnv(env, "PATH")
	if !custom || strings.ContainsRune(name, '/') {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		return absPath(p)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return absPath(p)
		}
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotFound)
}

// absPath makes a path found from the current directory absolute: a relative
// exec.Cmd.Path is taken relative to Cmd.Dir, which would run another program
// than the one found (or none).
func absPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return abs, nil
}

// KillTagged sends SIGKILL to the process group of every process whose
// environment holds the entry tag (e.g. "JLGCLI_RUN_ID=..."), and returns how
// many groups it killed. It is for agents orphaned when jlgcli itself was
// killed: they run in their own group, which nothing else stops. It reads
// /proc and finds nothing where there is none.
func KillTagged(tag string) int {
	dirs, _ := os.ReadDir("/proc")
	self := os.Getpid()
	killed := map[int]bool{}
	want := []byte(tag)
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !containsEntry(env, want) {
			continue
		}
		pgid, err := syscall.Getpgid(pid)
		if err != nil || killed[pgid] || pgid == syscall.Getpgrp() {
			continue
		}
		if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
			killed[pgid] = true
		}
	}
	return len(killed)
}

// containsEntry reports whether the NUL-separated environment env holds
// entry exactly.
func containsEntry(env, entry []byte) bool {
	for _, e := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}
