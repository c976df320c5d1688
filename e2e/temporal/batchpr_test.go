package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
)

// prAgent writes the id of its sheet ("# a") into <id>.txt, and what it
// saw of a.txt into seen.txt.
const prAgent = `#!/bin/sh
p=$(cat)
echo "$JLGCLI_E2E_WORKER" >> "$JLGCLI_E2E_CALLS"
id=$(printf '%s\n' "$p" | sed -n 's/^# \([a-z]\)$/\1/p' | head -1)
echo "$id" > "$id.txt"
if [ -f a.txt ]; then echo "saw a" > "seen-$id.txt"; fi
echo "wrote $id"
`

// TestBatchPRsOnWorkers: batch --pr --until merged --temporal on a real
// Gitea whose main needs ci/test: each task's pull request is a workflow
// of its own on the workers (the task, then its pull request opened and
// worked until merged, with the workers' token); b, which depends on a,
// starts from main once a's pull request merged there and sees its work;
// the batch's own branch is not the landing.
func TestBatchPRsOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, srv, repo, co := forgeWorld(ctx, t, prAgent)
	must(t, repo.Protect(ctx, "main", giteatest.ProtectOptions{RequiredContexts: []string{"ci/test"}}))
	greenCI(ctx, t, repo, time.Second)
	sheets := w.sheets("", map[string]string{"a": "# a\nWrite a.\n", "b": "---\ndepends: [a]\n---\n# b\nWrite b.\n"})

	clientEnv := w.env
	w.env = append(w.env, tokenVar+"="+srv.Admin.Token)
	w.worker("w1")
	w.worker("w2")
	w.env = clientEnv
	cmd := exec.Command(jlgcli, "batch", "--pr", "--until", "merged", "--json", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "-j", "2", "--poll", "1s", "--checks-grace", "1m",
		"--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar, sheets)
	cmd.Env, cmd.Dir = clientEnv, co
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	if err != nil {
		t.Fatalf("batch: %v\n%s\n%s", err, out, stderr)
	}
	var sum batchResult
	must(t, json.Unmarshal(out, &sum))
	if sum.Status != "done" || len(sum.Tasks) != 2 {
		t.Fatalf("batch %s with %d tasks:\n%s", sum.Status, len(sum.Tasks), out)
	}
	for _, tk := range sum.Tasks {
		if tk.Status != "done" || !strings.Contains(tk.Details, "pull request #") {
			t.Errorf("task %s: %s (%s)", tk.ID, tk.Status, tk.Details)
		}
	}
	main := filepath.Join(w.dir, "main")
	must(t, repo.Clone(ctx, srv.Admin, main))
	for f, want := range map[string]string{"a.txt": "a", "b.txt": "b", "seen-b.txt": "saw a"} {
		got, err := os.ReadFile(filepath.Join(main, f))
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("main's %s: %q (%v), want %q", f, got, err, want)
		}
	}
	if all, merged := mergedPRs(t, srv, repo); all != 2 || merged != 2 {
		t.Errorf("%d pull requests, %d merged; want 2, both merged", all, merged)
	}
}

// greenCI starts, for the rest of the test, a CI that posts ci/test as
// passing on each new head of repo's pull requests, after.
func greenCI(ctx context.Context, t *testing.T, repo giteatest.Repo, after time.Duration) {
	t.Helper()
	ci := repo.CI(func(giteatest.Head) giteatest.Verdict {
		return giteatest.Verdict{"ci/test": {State: gitea.StatusSuccess, Description: "all tests pass", After: after}}
	})
	ci.Interval = 100 * time.Millisecond
	ci.Start(ctx)
	t.Cleanup(func() { _ = ci.Stop() })
}

// mergedPRs counts the pull requests of repo, and those merged.
func mergedPRs(t *testing.T, srv *giteatest.Server, repo giteatest.Repo) (all, merged int) {
	t.Helper()
	c, err := srv.Client(srv.Admin)
	must(t, err)
	prs, _, err := c.ListRepoPullRequests(repo.Owner, repo.Name, gitea.ListPullRequestsOptions{State: gitea.StateAll})
	must(t, err)
	for _, pr := range prs {
		if pr.HasMerged {
			merged++
		}
	}
	return len(prs), merged
}

// TestResumeABatchOfPRsOnWorkers: a batch of pull requests on the workers,
// stopped (jlgcli stop) while task a's pull request waits for a CI that
// has not started, is resumed: a's pull request goes on from where its
// workflow stood (no agent call, no second pull request), CI then passes
// and the workers merge it; b, which depends on a, runs then.
func TestResumeABatchOfPRsOnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, srv, repo, co := forgeWorld(ctx, t, prAgent)
	must(t, repo.Protect(ctx, "main", giteatest.ProtectOptions{RequiredContexts: []string{"ci/test"}}))
	sheets := w.sheets("", map[string]string{"a": "# a\nWrite a.\n", "b": "---\ndepends: [a]\n---\n# b\nWrite b.\n"})
	c, err := srv.Client(srv.Admin)
	must(t, err)
	prs := func() []*gitea.PullRequest {
		l, _, err := c.ListRepoPullRequests(repo.Owner, repo.Name, gitea.ListPullRequestsOptions{State: gitea.StateAll})
		must(t, err)
		return l
	}

	clientEnv := w.env
	w.env = append(w.env, tokenVar+"="+srv.Admin.Token)
	w.worker("w1")
	w.env = clientEnv
	f := follow(ctx, t, clientEnv, co, "batch", "--pr", "--until", "merged", "--json", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "-j", "1", "--poll", "1s", "--checks-grace", "5m",
		"--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar, sheets)
	f.until("a's pull request is opened", func() bool { return len(prs()) == 1 })
	opened := prs()[0]
	batchID := w.runIDIn(co, "batch")
	if stdout, stderr, code := w.runIn(co, "stop", batchID); code != 0 {
		t.Fatalf("stop: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code := f.exit(); code != 130 {
		t.Fatalf("the batch exited %d, want 130\n%s\n%s", code, f.stdout.String(), f.stderr.String())
	}
	var sum batchResult
	must(t, json.Unmarshal([]byte(f.stdout.String()), &sum))
	if sum.Status != "interrupted" || sum.Tasks[0].Status != "interrupted" {
		t.Fatalf("stopped batch %s, task a %s (%s)", sum.Status, sum.Tasks[0].Status, sum.Tasks[0].Details)
	}
	if n := len(w.callsMade()); n != 1 {
		t.Fatalf("%d agent calls before the resume, want a's one", n)
	}

	greenCI(ctx, t, repo, time.Second)
	stdout, stderr, code := w.runIn(co, "resume", "--json", batchID)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var again batchResult
	must(t, json.Unmarshal([]byte(stdout), &again))
	for _, tk := range again.Tasks {
		if tk.Status != "done" || !strings.Contains(tk.Details, "pull request #") {
			t.Errorf("after resume, task %s: %s (%s)", tk.ID, tk.Status, tk.Details)
		}
	}
	if !strings.Contains(again.Tasks[0].Details, fmt.Sprintf("pull request #%d ", opened.Index)) {
		t.Errorf("task a after resume: %s; want its pull request #%d", again.Tasks[0].Details, opened.Index)
	}
	if all, merged := mergedPRs(t, srv, repo); all != 2 || merged != 2 {
		t.Errorf("%d pull requests, %d merged; want a's and b's, both merged", all, merged)
	}
	if n := len(w.callsMade()); n != 2 {
		t.Errorf("%d agent calls in all, want 2: a's task was not made again", n)
	}
}

// TestDetachedPROnWorkers: task --pr --until green --temporal --detach
// prints the run's id and exits once the loop is submitted; the workers
// make the task, open the pull request and work it to green on their
// own; show reads where it stands from the server, and resume follows it
// to its end.
func TestDetachedPROnWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, srv, repo, co := forgeWorld(ctx, t, prAgent)
	must(t, repo.Protect(ctx, "main", giteatest.ProtectOptions{RequiredContexts: []string{"ci/test"}}))
	greenCI(ctx, t, repo, 3*time.Second)
	clientEnv := w.env
	w.env = append(w.env, tokenVar+"="+srv.Admin.Token)
	w.worker("w1")
	w.env = clientEnv

	stdout, stderr, code := w.runIn(co, "task", "--pr", "--until", "green", "--detach", "--temporal", w.addr, "--temporal-namespace", w.ns,
		"-b", "fake", "--check", "true", "--poll", "1s", "--checks-grace", "1m",
		"--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar, "# a\nWrite a.")
	id := strings.TrimSpace(stdout)
	if code != 0 || strings.Contains(id, "\n") || id == "" {
		t.Fatalf("task --detach: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if n := len(w.callsMade()); n != 0 {
		t.Fatalf("the detached submission waited for %d agent calls", n)
	}
	out, serr, code := w.runIn(co, "show", "--json", id)
	var shown struct {
		RunID, Status, Target string
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.RunID != id || shown.Target != "green" {
		t.Fatalf("show %s while it runs: exit %d\n%s\n%s", id, code, out, serr)
	}
	out, serr, code = w.runIn(co, "resume", "--json", id)
	var res struct {
		Status string
		Number int
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != "done" || res.Number == 0 {
		t.Fatalf("resume %s (it follows the run): exit %d\n%s\n%s", id, code, out, serr)
	}
	if n := len(w.callsMade()); n != 1 {
		t.Errorf("%d agent calls, want the task's one", n)
	}
}
