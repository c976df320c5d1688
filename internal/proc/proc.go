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
	cmd := &exec.Cmd{Path: path, Args: c.Argv, Dir: c.Dir, Env: c.Env}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	var lastOutput atomic.Int64 // UnixNano of the last output, for the stall watchdog
	lastOutput.Store(time.Now().UnixNano())
	var (
		copies  sync.WaitGroup
		closers []*os.File // read ends, closed when the drain delay is over
	)
	outFiles := make([]*os.File, 0, 3) // child ends, closed after Start
	pipeOut := func(w io.Writer) (*os.File, error) {
		if w == nil {
			w = io.Discard
		}
		r, wr, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outFiles = append(outFiles, wr)
		closers = append(closers, r)
		copies.Add(1)
		go func() {
			defer copies.Done()
			_, _ = io.Copy(activity{w, &lastOutput}, r)
		}()
		return wr, nil
	}
	closeAll := func() {
		for _, f := range outFiles {
			f.Close()
		}
		for _, f := range closers {
			f.Close()
		}
	}
	if cmd.Stdout, err = pipeOut(c.Stdout); err != nil {
		closeAll()
		return Result{}, err
	}
	if cmd.Stderr, err = pipeOut(c.Stderr); err != nil {
		closeAll()
		return Result{}, err
	}
	var stdinW *os.File
	if c.Stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return Result{}, err
		}
		cmd.Stdin = r
		outFiles = append(outFiles, r)
		stdinW = w
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		closeAll()
		if stdinW != nil {
			stdinW.Close()
		}
		return Result{}, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	// The child holds its own copies now; ours would keep the pipes open.
	for _, f := range outFiles {
		f.Close()
	}
	pgid := cmd.Process.Pid
	live.Store(pgid, struct{}{})
	defer live.Delete(pgid)

	if stdinW != nil {
		go func() {
			_, _ = io.Copy(stdinW, c.Stdin)
			stdinW.Close()
		}()
	}

	// Watch the context and the output: TERM the group, then KILL it after
	// the grace.
	exited := make(chan struct{})
	var stopped, stalled bool
	var stopMu sync.Mutex
	go func() {
		var tick <-chan time.Time
		if c.StallTimeout > 0 {
			t := time.NewTicker(min(c.StallTimeout/4, time.Second))
			defer t.Stop()
			tick = t.C
		}
	watch:
		for {
			select {
			case <-exited:
				return
			case <-ctx.Done():
				stopMu.Lock()
				stopped = true
				stopMu.Unlock()
				break watch
			case now := <-tick:
				if now.Sub(time.Unix(0, lastOutput.Load())) >= c.StallTimeout {
					stopMu.Lock()
					stalled = true
					stopMu.Unlock()
					break watch
				}
			}
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()

	waitErr := cmd.Wait()
	close(exited)
	// The leader is gone; nothing of its group may outlive it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if stdinW != nil {
		stdinW.Close() // unblocks a writer stuck on a full pipe
	}

	// Read what is left; a process that escaped the group and holds a pipe
	// gets drainDelay, then the pipe is closed under it.
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainDelay):
		for _, f := range closers {
			_ = f.SetReadDeadline(time.Now())
		}
		<-drained
	}
	for _, f := range closers {
		f.Close()
	}

	res := Result{Duration: time.Since(start)}
	stopMu.Lock()
	res.Stopped, res.Stalled = stopped, stalled
	stopMu.Unlock()
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
	return res, nil
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

func lookPath(name string, env []string) (string, error) {
	path, custom := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, custom = v, true
		}
	}
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
