package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// issuesAgent writes the letter of its issue's title ("# Write x") into
// x.txt; the issue titled "Write s slowly" makes it wait a minute first.
const issuesAgent = `#!/bin/sh
p=$(cat)
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
l=$(printf '%s\n' "$p" | sed -n 's/^# Write \([a-z]\).*$/\1/p' | head -1)
case "$p" in *"# Write s slowly"*) sleep 60;; esac
echo "$l" > "$l.txt"
echo "wrote $l"
`

// tokenVar names the variable of the Gitea token of the forge tests.
const tokenVar = "JLGCLI_E2E_GITEA_TOKEN"

// forgeWorld is a world whose git authenticates to a repository of the
// shared Gitea as its admin, the agent script agent, and a checkout of the
// repository (co) to run jlgcli in.
func forgeWorld(ctx context.Context, t *testing.T, agent string) (w *world, srv *giteatest.Server, repo giteatest.Repo, co string) {
	t.Helper()
	srv = giteaSrv.Get(t)
	w = newWorld(t)
	repo = srv.NewRepo(t)
	w.env = append(w.env, srv.GitEnv(srv.Admin)...)
	must(t, os.WriteFile(filepath.Join(w.dir, "agent.sh"), []byte(agent), 0o755))
	co = filepath.Join(w.dir, "co")
	must(t, repo.Clone(ctx, srv.Admin, co))
	return w, srv, repo, co
}

// TestIssuesOnWorkers: batch --issues --temporal runs a real Gitea's
// labelled issues on the workers, which claim them, tell them and label
// them with their own token: issue a ends done (labelled, one comment);
// issue s, closed by someone while its task runs, stops that task (the
// workflow reads the issue on a durable timer and cancels the task's
// workflow), keeps its claim and says why; the batch ends incomplete.
func TestIssuesOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, srv, repo, co := forgeWorld(ctx, t, issuesAgent)
	a, err := repo.NewIssue(ctx, srv.Reviewer, "Write a", "Create a.txt holding a.", "agent")
	must(t, err)
	s, err := repo.NewIssue(ctx, srv.Reviewer, "Write s slowly", "Create s.txt holding s.", "agent")
	must(t, err)

	w.env = append(w.env, tokenVar+"="+srv.Admin.Token) // the submitter reads the issues; the workers claim them
	w.worker("w1")
	w.worker("w2")
	f := follow(ctx, t, w.env, co, "batch", "--issues", "label:agent", "--json", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "-j", "2", "--poll", "1s",
		"--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar)

	// Once s's task works (claimed, its comment says so), s is closed.
	f.until(fmt.Sprintf("issue #%d was worked on", s), func() bool {
		v, err := repo.IssueView(ctx, s)
		return err == nil && slices.Contains(v.Labels, intake.LabelClaimed) && len(v.Comments) > 0 &&
			strings.Contains(v.Comments[0].Body, "working on it")
	})
	must(t, repo.CloseIssue(ctx, srv.Reviewer, s))
	code := f.exit()
	var sum batchResult
	must(t, json.Unmarshal([]byte(f.stdout.String()), &sum))
	if code != 3 || sum.Status != "incomplete" || len(sum.Tasks) != 2 {
		t.Fatalf("exit %d, batch %s with %d tasks:\n%s\n%s", code, sum.Status, len(sum.Tasks), f.stdout.String(), f.stderr.String())
	}
	for _, tk := range sum.Tasks {
		switch tk.ID {
		case intake.IDOf(a):
			if tk.Status != "done" {
				t.Errorf("task %s: %s (%s)", tk.ID, tk.Status, tk.Details)
			}
		case intake.IDOf(s):
			if tk.Status != "interrupted" || !strings.Contains(tk.Details, "was closed") {
				t.Errorf("task %s: %s (%s), want interrupted: issue closed", tk.ID, tk.Status, tk.Details)
			}
		}
	}
	va, err := repo.IssueView(ctx, a)
	must(t, err)
	if !slices.Equal(va.Labels, []string{"agent", intake.LabelDone}) || len(va.Comments) != 1 ||
		!strings.Contains(va.Comments[0].Body, "**jlgcli: done**") || !strings.Contains(va.Comments[0].Body, " ended -->") {
		t.Errorf("issue a: labels %v, comments %+v", va.Labels, va.Comments)
	}
	vs, err := repo.IssueView(ctx, s)
	must(t, err)
	if !slices.Equal(vs.Labels, []string{"agent", intake.LabelClaimed}) || len(vs.Comments) != 1 ||
		!strings.Contains(vs.Comments[0].Body, "stopped (resumable)") || !strings.Contains(vs.Comments[0].Body, "was closed") {
		t.Errorf("issue s: labels %v, comments %+v", vs.Labels, vs.Comments)
	}
}

// TestIssueWatchOnWorkers: batch --issues --watch --temporal starts the
// watch as a workflow of its own, which the workers run with their own
// token (the submitter has none): a look takes the labelled issue a and
// runs it as a batch; the worker is killed during the wait that follows
// and another goes on, whose later look takes issue b, labelled after the
// first batch; jlgcli stop ends the watch, and the jlgcli that follows it
// exits 130 with both tasks done in its summary. jlgcli resume starts it
// again from where it stood: issue c, opened meanwhile, is its third
// batch; stopped again, it ends with the three.
func TestIssueWatchOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w, srv, repo, co := forgeWorld(ctx, t, issuesAgent)
	a, err := repo.NewIssue(ctx, srv.Reviewer, "Write a", "Create a.txt holding a.", "agent")
	must(t, err)
	submitterEnv := slices.Clone(w.env)
	w.env = append(w.env, tokenVar+"="+srv.Admin.Token) // the workers' token only
	w1 := w.worker("w1")

	f := follow(ctx, t, submitterEnv, co, "batch", "--issues", "label:agent", "--watch", "--json", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "--poll", "1s", "--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar)
	labelled := func(f *follower, n int) {
		t.Helper()
		f.until(fmt.Sprintf("issue #%d got %s", n, intake.LabelDone), func() bool {
			v, err := repo.IssueView(ctx, n)
			return err == nil && slices.Contains(v.Labels, intake.LabelDone)
		})
	}
	labelled(f, a)

	// The batch of a ended; the watch waits on a timer. Its worker dies,
	// another comes, and b is labelled after the first look.
	must(t, w1.Process.Kill())
	_ = w1.Wait()
	w.worker("w2")
	b, err := repo.NewIssue(ctx, srv.Reviewer, "Write b", "Create b.txt holding b.", "agent")
	must(t, err)
	labelled(f, b)
	calls, err := os.ReadFile(w.calls)
	must(t, err)
	if got := strings.Fields(string(calls)); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Errorf("agent calls on %v, want a on w1 and b on w2", got)
	}

	// The watch is a batch run here; stop ends it.
	out, _, _ := w.runIn(co, "runs", "--json")
	var rows []struct{ ID, Command, Status, Parent string }
	must(t, json.Unmarshal([]byte(out), &rows))
	id := ""
	for _, r := range rows {
		// The watch's record is the batch run that is no task's batch (a
		// run id's random part may itself start with "-b").
		if r.Command == "batch" && r.Parent == "" {
			id = r.ID
		}
	}
	if id == "" {
		t.Fatalf("the watch is not listed:\n%s", out)
	}
	if sout, serr, code := w.runIn(co, "stop", id); code != 0 {
		t.Fatalf("stop %s: exit %d\n%s\n%s", id, code, sout, serr)
	}
	code := f.exit()
	var sum batchResult
	must(t, json.Unmarshal([]byte(f.stdout.String()), &sum))
	if code != 130 || sum.RunID != id || sum.Status != "interrupted" || len(sum.Tasks) != 2 {
		t.Fatalf("exit %d, watch %s %s with %d tasks:\n%s\n%s", code, sum.RunID, sum.Status, len(sum.Tasks), f.stdout.String(), f.stderr.String())
	}
	for i, n := range []int{a, b} {
		tk := sum.Tasks[i]
		if tk.ID != intake.IDOf(n) || tk.Status != "done" || tk.RunID == nil || !strings.HasPrefix(*tk.RunID, fmt.Sprintf("%s-b%d-", id, i+1)) {
			t.Errorf("task %d: %s %s (run %v), want issue #%d done in batch %d", i, tk.ID, tk.Status, tk.RunID, n, i+1)
		}
	}
	if ref := "refs/heads/" + fmt.Sprintf("jlgcli/batch-%s-b2", id); !strings.Contains(w.git(co, "ls-remote", "origin", ref), ref) {
		t.Errorf("the second batch's branch %s is not on the remote", ref)
	}
	shown, _, _ := w.runIn(co, "show", id, "--json")
	if !strings.Contains(shown, `"status":"interrupted"`) && !strings.Contains(shown, `"status": "interrupted"`) {
		t.Errorf("show %s:\n%s", id, shown)
	}
	// Each batch's input is read back from its history once it has ended
	// (what the follower does for a task that ended between two looks),
	// and each task has its record here.
	for i, n := range []int{a, b} {
		in, err := temporal.StartedBatchInput(ctx, w.ts.GetDefaultClient(), temporal.WatchBatchID(id, i+1))
		if err != nil || len(in.Spec.Tasks) != 1 || in.Spec.Tasks[0].ID != intake.IDOf(n) {
			t.Errorf("batch %d's input: %v %+v", i+1, err, in.Spec.Tasks)
		}
		if tk := sum.Tasks[i]; tk.RunID != nil {
			if out, serr, code := w.runIn(co, "show", *tk.RunID); code != 0 {
				t.Errorf("show %s: exit %d\n%s\n%s", *tk.RunID, code, out, serr)
			}
		}
	}
	if *update {
		recordHistory(t, w, id, filepath.Join("..", "..", "internal", "temporal", "testdata", "watch-history.json"))
	}

	// Resumed, the watch goes on from where it stood, on the server: a
	// third issue is taken by a later look as a third batch; stopped again,
	// it ends interrupted with the tasks of its three batches.
	c, err := repo.NewIssue(ctx, srv.Reviewer, "Write c", "Create c.txt holding c.", "agent")
	must(t, err)
	r := follow(ctx, t, w.env, co, "resume", "--json", id)
	labelled(r, c)
	if sout, serr, code := w.runIn(co, "stop", id); code != 0 {
		t.Fatalf("stop %s after its resume: exit %d\n%s\n%s", id, code, sout, serr)
	}
	code = r.exit()
	var again batchResult
	must(t, json.Unmarshal([]byte(r.stdout.String()), &again))
	if code != 130 || again.RunID != id || again.Status != "interrupted" || len(again.Tasks) != 3 {
		t.Fatalf("resumed: exit %d, watch %s %s with %d tasks:\n%s\n%s", code, again.RunID, again.Status, len(again.Tasks), r.stdout.String(), r.stderr.String())
	}
	if tk := again.Tasks[2]; tk.ID != intake.IDOf(c) || tk.Status != "done" || tk.RunID == nil || !strings.HasPrefix(*tk.RunID, id+"-b3-") {
		t.Errorf("the resumed watch's task: %s %s (run %v), want issue #%d done in batch 3", tk.ID, tk.Status, tk.RunID, c)
	}
}

// follower is a jlgcli that follows a run in the background (batch
// --watch, resume), its output kept.
type follower struct {
	ctx            context.Context
	t              *testing.T
	cmd            *exec.Cmd
	ended          chan error
	stdout, stderr syncBuffer
}

// follow starts jlgcli args in dir with env; the test's end kills it if
// it still runs.
func follow(ctx context.Context, t *testing.T, env []string, dir string, args ...string) *follower {
	t.Helper()
	f := &follower{ctx: ctx, t: t, cmd: exec.Command(jlgcli, args...), ended: make(chan error, 1)}
	f.cmd.Env, f.cmd.Dir, f.cmd.Stdout, f.cmd.Stderr = env, dir, &f.stdout, &f.stderr
	must(t, f.cmd.Start())
	go func() { f.ended <- f.cmd.Wait() }()
	t.Cleanup(func() {
		if f.cmd.ProcessState == nil {
			_ = f.cmd.Process.Kill()
			<-f.ended
		}
	})
	return f
}

// until waits for done (what, when it never comes) while the follower
// runs: its end first fails the test.
func (f *follower) until(what string, done func() bool) {
	f.t.Helper()
	for !done() {
		select {
		case <-f.ctx.Done():
			f.t.Fatalf("never: %s\n%s", what, f.stderr.String())
		case err := <-f.ended:
			f.t.Fatalf("jlgcli %s ended (%v) before %s\n%s\n%s", f.cmd.Args[1], err, what, f.stdout.String(), f.stderr.String())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// exit waits for the follower's end (the test's time at most) and is its
// exit code.
func (f *follower) exit() int {
	f.t.Helper()
	select {
	case err := <-f.ended:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		must(f.t, err)
		return 0
	case <-f.ctx.Done():
		f.t.Fatalf("jlgcli %s did not end\n%s", f.cmd.Args[1], f.stderr.String())
		return -1
	}
}
