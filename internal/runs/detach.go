package runs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// Detached is a `jlgcli resume` started in a process of its own.
type Detached struct {
	// ID is the run resumed (its whole id), PID the process, Log the file
	// its output goes to (resume.log in the run's directory).
	ID  string
	PID int
	Log string
	// Exited gets the process's end (nil: it exited 0) when it ends.
	Exited <-chan error
}

// ResumeDetached starts `exe resume --quiet --state-dir root ID` for run id
// under root in a process of its own (a session of its own: it goes on when
// the front end that started it ends, and a Ctrl-C there does not reach it),
// in the directory the run was started in (root when it is gone), with env
// (nil: this process's), its output appended to the run's resume.log. It
// returns once the process has started; the caller does not run the engine.
// A run that a process runs now, or that is done, is a exit.UsageError.
func ResumeDetached(root, id, exe string, env []string) (Detached, error) {
	run, err := Open(root, id)
	if err != nil {
		return Detached{}, err
	}
	dir, cwd, live := run.Dir, run.Meta.Cwd, run.Live()
	row, rowErr := run.Row()
	run.Close()
	switch {
	case live:
		return Detached{}, &exit.UsageError{Err: fmt.Errorf("run %s is running: nothing to resume", run.ID)}
	case rowErr == nil && row.Status == "done":
		return Detached{}, &exit.UsageError{Err: fmt.Errorf("run %s is done: nothing to resume", run.ID)}
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return Detached{}, err
		}
	}
	path := filepath.Join(dir, "resume.log")
	log, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Detached{}, err
	}
	defer log.Close()
	cmd := exec.Command(exe, "resume", "--quiet", "--state-dir", root, run.ID)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = cwd, env, log, log
	if fi, err := os.Stat(cmd.Dir); err != nil || !fi.IsDir() {
		cmd.Dir = root
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Detached{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaped when it ends, whether or not the caller waits
	return Detached{ID: run.ID, PID: cmd.Process.Pid, Log: path, Exited: exited}, nil
}
