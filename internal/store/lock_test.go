package store

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startLocker starts a child process that holds the lock of run id; it
// returns once the lock is held.
func startLocker(t *testing.T, root, id string) (kill func(), release func()) {
	t.Helper()
	cmd := child(t, "lock", "STORE_ROOT="+root, "STORE_ID="+id)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	kill = func() {
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		cmd.Wait()
	}
	release = func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	return kill, release
}

func TestLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	if err := r.Append(event(1, `{}`)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r.Live() {
		t.Fatal("a closed run is live")
	}

	for _, how := range []string{"SIGKILL", "release"} {
		kill, release := startLocker(t, root, "r1")
		o, err := Open(root, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Live() {
			t.Errorf("%s: a run locked by another process is not live", how)
		}
		_, err = o.Lock()
		if !errors.Is(err, ErrLive) || !strings.Contains(err.Error(), "(pid ") {
			t.Errorf("%s: Lock of a live run: %v", how, err)
		}
		if evs, _, err := o.Events(); err != nil || len(evs) != 1 {
			t.Errorf("%s: Events of a live run: %d, %v", how, len(evs), err)
		}
		if how == "SIGKILL" {
			kill()
		} else {
			release()
		}
		if o.Live() {
			t.Errorf("%s: the run is still live", how)
		}
		unlock, err := o.Lock()
		if err != nil {
			t.Fatalf("%s: Lock after the holder is gone: %v", how, err)
		}
		unlock()
	}
}

func TestLockInOneProcess(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	o, err := Open(root, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Lock(); !errors.Is(err, ErrLive) {
		t.Errorf("second handle: %v", err)
	}
	if !o.Live() {
		t.Error("not live while another handle holds the lock")
	}
	r.Close()
	unlock, err := o.Lock()
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// A `jlgcli runs` probing liveness must not make a resume fail.
func TestLiveProbeDoesNotRefuseLock(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	r.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			r.Live()
		}
	})
	o, _ := Open(root, "r1")
	for range 200 {
		unlock, err := o.Lock()
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	stop.Store(true)
	wg.Wait()
}

// A run killed with SIGKILL at any moment resumes with no iteration lost or
// counted twice: the events are 1..k, each once, the checkpoint says k or
// k-1 (killed between the event and the checkpoint), or, when the process
// was killed before its first checkpoint, what it said before that process
// (which can be k-2: a kill between an event and its checkpoint, then one
// after the next event), and the next process goes on at k+1. Large events
// make a kill in the middle of a write likely.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	root, r := newRun(t, "r1")
	r.Close()
	rounds, repaired := 6, 0
	if testing.Short() {
		rounds = 3
	}
	last, checkpointed := 0, 0
	for round := range rounds {
		cmd := child(t, "append", "STORE_ROOT="+root, "STORE_ID=r1", fmt.Sprint("STORE_SIZE=", 32<<10+rand.IntN(192<<10)))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if want := fmt.Sprintf("ready %d\n", last); line != want {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: child says %q (%v), want %q", round, line, err, want)
		}
		time.Sleep(time.Duration(20+rand.IntN(200)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()

		o, err := Open(root, "r1")
		if err != nil {
			t.Fatal(err)
		}
		evs, rep, err := o.Events()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if rep != nil {
			repaired++
			t.Logf("round %d: %s", round, rep)
		}
		for i, ev := range evs {
			if ev.Iteration != i+1 {
				t.Fatalf("round %d: event %d is iteration %d", round, i+1, ev.Iteration)
			}
		}
		if len(evs) < last {
			t.Fatalf("round %d: %d events, fewer than the %d before", round, len(evs), last)
		}
		last = len(evs)
		var p Progress
		if err := o.ReadCheckpoint(&p); err == nil {
			if p.Iterations != last && p.Iterations != last-1 && p.Iterations != checkpointed {
				t.Fatalf("round %d: checkpoint at %d, events at %d (the checkpoint was at %d before)", round, p.Iterations, last, checkpointed)
			}
			checkpointed = p.Iterations
		} else if !errors.Is(err, os.ErrNotExist) || checkpointed > 0 {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	t.Logf("%d rounds, %d iterations, %d torn lines repaired", rounds, last, repaired)
}
