package runs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/store"
)

const (
	batchID = "20261124T120000Z-0000ba7c"
	taskID  = "20261124T120001Z-0000task"
)

// create makes run id under root with meta and checkpoint cp, and lets its
// lock go (the run is not live).
func create(t *testing.T, root, id string, meta store.Meta, cp any) {
	t.Helper()
	run, err := store.Create(root, id, meta)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.WriteCheckpoint(cp); err != nil {
		t.Fatal(err)
	}
}

// killedBatch is a state root with a batch killed while its task "one" was
// in its third attempt (two made, $0.50 spent), and "two" waited.
func killedBatch(t *testing.T) string {
	root := t.TempDir()
	create(t, root, taskID, store.Meta{Command: "task", Prompt: "Do one", Parent: batchID},
		store.Progress{Status: store.Running, Iterations: 2, CostUSD: 0.5, CostKnown: true})
	create(t, root, batchID, store.Meta{Command: "batch", Prompt: "2 task sheets"}, local.BatchCheckpoint{
		Progress: store.Progress{Status: store.Running, CostUSD: 0.25, CostKnown: true},
		Tasks:    []batch.TaskResult{{ID: "one", Status: batch.StatusRunning, RunID: taskID}, {ID: "two", Status: batch.StatusPending}},
	})
	return root
}

func TestShowBatchWithARunningTask(t *testing.T) {
	root := killedBatch(t)
	st, err := Show(context.Background(), root, batchID[:20], local.Parts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != batchID || st.Status != store.Running || st.Live || st.Batch == nil {
		t.Fatalf("state: id %s, status %q, live %v, batch %v; want %s, running, not live, a batch", st.ID, st.Status, st.Live, st.Batch, batchID)
	}
	if len(st.Running) != 1 {
		t.Fatalf("running tasks: %+v, want one", st.Running)
	}
	want := RunningTask{ID: "one", RunID: taskID, Attempt: 3, CostUSD: 0.5, CostKnown: true}
	if st.Running[0] != want {
		t.Errorf("running task: %+v, want %+v", st.Running[0], want)
	}
	sum := st.Batch
	if len(sum.Tasks) != 2 || sum.Tasks[0].RunID == nil || *sum.Tasks[0].RunID != taskID || sum.Tasks[0].Attempts != 2 {
		t.Fatalf("batch tasks: %+v", sum.Tasks)
	}
	if d := sum.Tasks[0].Details; d != "in attempt 3 (run "+taskID+")" {
		t.Errorf("details of the running task: %q", d)
	}
	if sum.Tasks[1].RunID != nil {
		t.Errorf("the pending task has a run: %s", *sum.Tasks[1].RunID)
	}
	if sum.CostUSD != 0.75 {
		t.Errorf("batch cost: %v, want 0.75 (its own and what the running task spent so far)", sum.CostUSD)
	}
}

func TestShowUnknownRunIsAUsageError(t *testing.T) {
	root := t.TempDir()
	_, err := Show(context.Background(), root, "2026", local.Parts{}, nil)
	var u *exit.UsageError
	if !errors.As(err, &u) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want a usage error of a run not found", err)
	}
	if !strings.Contains(u.Hint, "'jlgcli runs' lists the runs kept in "+root) {
		t.Errorf("hint = %q", u.Hint)
	}
}

func TestResumeRefusesALimitTheKindCannotTake(t *testing.T) {
	root := killedBatch(t)
	timeout := time.Minute
	rp := ResumeParts{Batch: func(int) (local.BatchParts, func()) {
		t.Fatal("the batch was resumed")
		return local.BatchParts{}, nil
	}}
	_, err := Resume(context.Background(), root, batchID, local.Limits{Timeout: &timeout}, rp)
	if !exit.IsUsage(err) || !strings.Contains(err.Error(), "--timeout is a task's or a loop's") {
		t.Fatalf("err = %v, want the usage error of --timeout given to a batch", err)
	}

	budget := 2.0
	_, err = Resume(context.Background(), root, taskID, local.Limits{BudgetUSD: &budget, MaxIterations: new(int)}, ResumeParts{})
	if !exit.IsUsage(err) || !strings.Contains(err.Error(), "--max-iterations is a loop's limit; task "+taskID) {
		t.Fatalf("err = %v, want the usage error of --max-iterations given to a task", err)
	}
}

func TestResumeRefusesARunningRun(t *testing.T) {
	root := killedBatch(t)
	held, err := store.Open(root, batchID)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err = Resume(context.Background(), root, batchID, local.Limits{}, ResumeParts{})
	var u *exit.UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "run "+batchID+" is running in another process") || u.Hint != "wait for it, or stop it with Ctrl-C there" {
		t.Fatalf("err = %v, want the usage error of a run running elsewhere", err)
	}
}

func TestResumeEnvError(t *testing.T) {
	root := t.TempDir()
	create(t, root, taskID, store.Meta{Command: "task", Cwd: "/the/run/dir"}, store.Progress{Status: store.Running})
	boom := errors.New("bad configuration")
	var asked string
	_, err := Resume(context.Background(), root, taskID, local.Limits{}, ResumeParts{Env: func(dir string) (local.EnvValue, error) {
		asked = dir
		return nil, boom
	}})
	if !errors.Is(err, boom) || asked != "/the/run/dir" {
		t.Fatalf("err = %v, env asked for %q; want the Env's error, asked for the run's directory", err, asked)
	}
}

func TestSubmissionRefusals(t *testing.T) {
	ctx := context.Background()
	cfg := &config.Config{Cwd: t.TempDir(), Commit: git.CommitBranch, Temporal: config.Temporal{Address: "127.0.0.1:1"},
		Sources: map[string]string{"commit": "flag"}}
	ok := Submission{Heartbeat: time.Minute}
	cases := []struct {
		name string
		sub  Submission
		cfg  func(*config.Config)
		want string
	}{
		{"include-dirty", Submission{Heartbeat: time.Minute, IncludeDirty: true}, nil, "--include-dirty cannot reach Temporal workers: they clone the remote; commit and push your changes first"},
		{"heartbeat", Submission{Heartbeat: 5 * time.Second}, nil, "--heartbeat-timeout must be at least 10s (workers heartbeat every 5s), not 5s"},
		{"no backend", ok, nil, "a task sent to Temporal names its backend (-b BACKEND, --tier or [[tiers]]): the workers' machines decide which are installed"},
		{"outside a repository", ok, func(c *config.Config) { c.Backend = "fake" }, "--repo URL is needed outside a git repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := *cfg
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			_, res, err := SubmitTask(ctx, &cfg, c.sub, "Do it", local.Parts{})
			if !exit.IsUsage(err) || !strings.Contains(err.Error(), c.want) || res != nil {
				t.Fatalf("err = %v, want the usage error %q", err, c.want)
			}
		})
	}
	t.Run("commit direct", func(t *testing.T) {
		cfg := *cfg
		cfg.Commit = git.CommitDirect
		_, _, err := SubmitTask(ctx, &cfg, ok, "Do it", local.Parts{})
		var cerr *config.Error
		if !errors.As(err, &cerr) || err.Error() != "command line: --commit: direct cannot be done by Temporal workers: they commit on the task branch on the remote" {
			t.Fatalf("err = %v, want the configuration error of --commit direct", err)
		}
	})
}

func TestSameRemote(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"/srv/r.git", "file:///srv/r.git/", true},
		{"/srv/r.git", "/srv/r.git", true},
		{"/srv/r.git", "/srv/other.git", false},
		{"git@example.com:r.git", "https://example.com/r.git", false},
	} {
		if got := sameRemote(c.a, c.b); got != c.same {
			t.Errorf("sameRemote(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// A task or batch run here refuses what only a submission to Temporal
// does, naming its kind; sent to a server, it is not refused here.
func TestCheckLocal(t *testing.T) {
	here := &config.Config{Merge: git.MergeSquash, Sources: map[string]string{"merge": "flag"}}
	push := &config.Config{Merge: git.MergePush, Sources: map[string]string{"merge": "flag"}}
	server := &config.Config{Merge: git.MergePush, Temporal: config.Temporal{Address: "127.0.0.1:1"}}
	for _, kind := range []string{"task", "batch"} {
		for _, sub := range []Submission{{RepoURL: "https://example.com/r.git"}, {Detach: true}} {
			err := CheckLocal(here, kind, sub, false)
			if want := "--repo, --detach and --heartbeat-timeout are for a " + kind + " sent to a Temporal server (--temporal HOST:PORT)"; !exit.IsUsage(err) || err.Error() != want {
				t.Errorf("CheckLocal(%s, %+v) = %v, want the usage error %q", kind, sub, err, want)
			}
		}
		if err := CheckLocal(here, kind, Submission{}, true); !exit.IsUsage(err) {
			t.Errorf("CheckLocal(%s, --heartbeat-timeout) = %v, want a usage error", kind, err)
		}
		err := CheckLocal(push, kind, Submission{}, false)
		var cerr *config.Error
		if want := "command line: --merge: push is for a " + kind + " sent to a Temporal server (--temporal); here: squash or none"; !errors.As(err, &cerr) || err.Error() != want {
			t.Errorf("CheckLocal(%s, --merge push) = %v, want the configuration error %q", kind, err, want)
		}
		if err := CheckLocal(here, kind, Submission{Heartbeat: time.Minute}, false); err != nil {
			t.Errorf("CheckLocal(%s) without a Temporal flag = %v, want none", kind, err)
		}
		if err := CheckLocal(server, kind, Submission{Detach: true}, true); err != nil {
			t.Errorf("CheckLocal(%s) with a server = %v, want none", kind, err)
		}
	}
}

// TestListLiveIsRunning: a run that a process runs is listed running,
// whatever its row last said: a resume writes the row only at its first
// checkpoint. Once the process has let it go, it is what its row says.
func TestListLiveIsRunning(t *testing.T) {
	root := t.TempDir()
	id := "20261128T050000Z-0resumed"
	create(t, root, id, store.Meta{Command: "task", Prompt: "Go on"}, store.Progress{Status: "interrupted", Iterations: 1})
	status := func() string {
		t.Helper()
		rows, err := List(root, store.Filter{})
		if err != nil || len(rows) != 1 {
			t.Fatalf("list: %v %+v", err, rows)
		}
		return rows[0].Status
	}
	if s := status(); s != "interrupted" {
		t.Fatalf("stopped: %s, want interrupted", s)
	}
	run, err := store.Open(root, id)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := run.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if s := status(); s != store.Running {
		t.Errorf("resumed, before its first checkpoint: %s, want running", s)
	}
	if rows, err := List(root, store.Filter{Status: "interrupted"}); err != nil || len(rows) != 0 {
		t.Errorf("listed as interrupted while it runs: %v %+v", err, rows)
	}
	unlock()
	run.Close()
	if s := status(); s != "interrupted" {
		t.Errorf("let go: %s, want interrupted", s)
	}
}

// TestListTemporalRunIsNotKilled: a run sent to Temporal that nobody here
// follows (--detach, or a Ctrl-C that stopped following) runs on the
// workers: it is listed live while its record says running, as show says
// it, not killed (the board's first screen put it under "needs you",
// "killed, resumable", and top said "killed"). Its lock only says that a
// jlgcli here holds its record.
func TestListTemporalRunIsNotKilled(t *testing.T) {
	root := t.TempDir()
	on := &store.Temporal{Address: "temporal.internal:7233", Namespace: "default", Queue: "jlgcli"}
	create(t, root, "20261128T050000Z-0detach0", store.Meta{Command: "pr", Prompt: "Make it so", Temporal: on}, store.Progress{Status: store.Running})
	create(t, root, "20261128T040000Z-0ended00", store.Meta{Command: "task", Prompt: "Done", Temporal: on}, store.Progress{Status: "done"})
	rows, err := List(root, store.Filter{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("list: %v %+v", err, rows)
	}
	live := map[string]bool{}
	for _, r := range rows {
		live[r.ID] = r.Live
	}
	if !live["20261128T050000Z-0detach0"] || live["20261128T040000Z-0ended00"] {
		t.Errorf("live: %v, want the running one live, the ended one not", live)
	}
}
