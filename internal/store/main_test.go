package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary is also the child process of the tests that need a second
// process: STORE_HELPER names what the child does.
func TestMain(m *testing.M) {
	if mode := os.Getenv("STORE_HELPER"); mode != "" {
		if err := helper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(mode string) error {
	root, id := os.Getenv("STORE_ROOT"), os.Getenv("STORE_ID")
	switch mode {
	case "lock":
		// Hold the run's lock until stdin closes (or the process is killed).
		r, err := Open(root, id)
		if err != nil {
			return err
		}
		if _, err := r.Lock(); err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return r.Close()
	case "append":
		// Resume the run and append iterations, each followed by a
		// checkpoint, until killed.
		size, _ := strconv.Atoi(os.Getenv("STORE_SIZE"))
		r, err := Open(root, id)
		if err != nil {
			return err
		}
		if _, err := r.Lock(); err != nil {
			return err
		}
		evs, _, err := r.Events()
		if err != nil {
			return err
		}
		fmt.Println("ready", len(evs))
		pad := strings.Repeat("x", size)
		for i := len(evs) + 1; i < len(evs)+10000; i++ {
			data, _ := json.Marshal(map[string]any{"i": i, "pad": pad})
			if err := r.Append(Event{Type: "iteration", Iteration: i, Data: data}); err != nil {
				return err
			}
			if err := r.WriteCheckpoint(Progress{Status: Running, Iterations: i, Heartbeat: time.Now()}); err != nil {
				return err
			}
		}
		return nil
	case "index":
		// Upsert STORE_N rows named STORE_ID-<i>, listing now and then.
		n, _ := strconv.Atoi(os.Getenv("STORE_N"))
		x, err := OpenIndex(root)
		if err != nil {
			return err
		}
		defer x.Close()
		return upsertMany(x, id, n)
	}
	return fmt.Errorf("unknown helper %q", mode)
}

// upsertMany creates n runs named prefix-<i> and upserts their rows, and
// lists the index every tenth.
func upsertMany(x *Index, prefix string, n int) error {
	start := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	for i := range n {
		row := RunRow{ID: fmt.Sprintf("%s-%04d", prefix, i), Command: "loop", Status: "done", Backend: "claude",
			Iterations: i, CostUSD: float64(i) / 100, StartedAt: start.Add(time.Duration(i) * time.Second)}
		r, err := Create(x.root, row.ID, Meta{Command: row.Command, Backend: row.Backend, StartedAt: row.StartedAt})
		if err != nil {
			return err
		}
		r.Close()
		if err := x.Upsert(row); err != nil {
			return err
		}
		if i%10 == 0 {
			if _, err := x.List(Filter{Limit: 5}); err != nil {
				return err
			}
		}
	}
	return nil
}

// child starts the test binary as a helper.
func child(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"STORE_HELPER=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}
