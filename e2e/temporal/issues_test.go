package temporal

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/intake"
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
	cmd := exec.Command(jlgcli, "batch", "--issues", "label:agent", "--json", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "-j", "2", "--poll", "1s",
		"--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar)
	var stdout, stderr syncBuffer
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = w.env, co, &stdout, &stderr
	must(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-ended
		}
	})

	// Once s's task works (claimed, its comment says so), s is closed.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("issue #%d was never worked on\n%s", s, stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
		v, err := repo.IssueView(ctx, s)
		if err != nil || !slices.Contains(v.Labels, intake.LabelClaimed) || len(v.Comments) == 0 ||
			!strings.Contains(v.Comments[0].Body, "working on it") {
			continue
		}
		must(t, repo.CloseIssue(ctx, srv.Reviewer, s))
		break
	}
	var code int
	select {
	case err := <-ended:
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatalf("the batch did not end\n%s", stderr.String())
	}
	var sum batchResult
	must(t, json.Unmarshal([]byte(stdout.String()), &sum))
	if code != 3 || sum.Status != "incomplete" || len(sum.Tasks) != 2 {
		t.Fatalf("exit %d, batch %s with %d tasks:\n%s\n%s", code, sum.Status, len(sum.Tasks), stdout.String(), stderr.String())
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
