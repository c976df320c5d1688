package temporal

import (
	"context"
	"encoding/json"
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
	ci := repo.CI(func(giteatest.Head) giteatest.Verdict {
		return giteatest.Verdict{"ci/test": {State: gitea.StatusSuccess, Description: "all tests pass", After: time.Second}}
	})
	ci.Interval = 100 * time.Millisecond
	ci.Start(ctx)
	t.Cleanup(func() { _ = ci.Stop() })
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
	c, err := srv.Client(srv.Admin)
	must(t, err)
	prs, _, err := c.ListRepoPullRequests(repo.Owner, repo.Name, gitea.ListPullRequestsOptions{State: gitea.StateAll})
	must(t, err)
	merged := 0
	for _, pr := range prs {
		if pr.HasMerged {
			merged++
		}
	}
	if len(prs) != 2 || merged != 2 {
		t.Errorf("%d pull requests, %d merged; want 2, both merged", len(prs), merged)
	}
}
