package forge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v75/github"
)

// The live test against github.com runs only when given a token
// (JLGCLI_GITHUB_TEST_TOKEN, with the repo scope or contents, pull
// requests and checks permissions) and a repository it may push branches
// to (JLGCLI_GITHUB_TEST_REPO, OWNER/NAME); otherwise it skips.
const (
	envLiveToken = "JLGCLI_GITHUB_TEST_TOKEN"
	envLiveRepo  = "JLGCLI_GITHUB_TEST_REPO"
)

// On the real GitHub: a branch pushed, its pull request opened and found
// again, read, its checks, reviews and threads read, a comment posted and
// edited; the pull request is closed and the branch deleted at the end.
func TestGitHubLive(t *testing.T) {
	token, repo := os.Getenv(envLiveToken), os.Getenv(envLiveRepo)
	if token == "" || repo == "" {
		t.Skipf("live GitHub test: set %s and %s (OWNER/NAME) to run it", envLiveToken, envLiveRepo)
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok {
		t.Fatalf("%s=%q: want OWNER/NAME", envLiveRepo, repo)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fg, err := Open(ctx, "https://github.com/"+repo+".git", Settings{TokenEnv: envLiveToken}, Options{Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	branch := fmt.Sprintf("jlgcli-live-test-%d", time.Now().UnixNano())
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=jlgcli test", "-c", "user.email=jlgcli@example.com"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, strings.ReplaceAll(string(out), token, "***"))
		}
		return strings.TrimSpace(string(out))
	}
	remote := "https://x-access-token:" + token + "@github.com/" + repo + ".git"
	git("clone", "-q", "--depth", "1", remote, ".")
	base := git("rev-parse", "--abbrev-ref", "HEAD")
	git("checkout", "-q", "-b", branch)
	if err := os.WriteFile(filepath.Join(dir, branch+".txt"), []byte("made by jlgcli's live test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "test: jlgcli live test")
	head := git("rev-parse", "HEAD")
	git("push", "-q", "origin", branch)
	rest := github.NewClient(nil).WithAuthToken(token)
	t.Cleanup(func() {
		_, _ = rest.Git.DeleteRef(context.Background(), owner, name, "heads/"+branch)
	})

	pr, created, err := fg.OpenPR(ctx, NewPR{Head: branch, Base: base, Title: "jlgcli live test", Body: "Closed by the test."})
	if err != nil || !created {
		t.Fatalf("OpenPR: %+v created %v, %v", pr, created, err)
	}
	t.Cleanup(func() {
		_, _, _ = rest.PullRequests.Edit(context.Background(), owner, name, pr.Number, &github.PullRequest{State: github.Ptr("closed")})
	})
	if found, err := fg.FindPR(ctx, branch); err != nil || found == nil || found.Number != pr.Number {
		t.Errorf("FindPR: %+v, %v", found, err)
	}
	got, err := fg.PR(ctx, pr.Number)
	if err != nil || got.HeadSHA != head || got.Base != base || got.State != StateOpen {
		t.Errorf("PR: %+v, %v", got, err)
	}
	if _, err := fg.Checks(ctx, head, base); err != nil {
		t.Errorf("Checks: %v", err)
	}
	if rv, err := fg.Reviews(ctx, pr.Number); err != nil || len(rv.Reviews) != 0 {
		t.Errorf("Reviews: %+v, %v", rv, err)
	}
	if th, err := fg.Threads(ctx, pr.Number); err != nil || len(th) != 0 {
		t.Errorf("Threads: %+v, %v", th, err)
	}
	c, err := fg.Comment(ctx, pr.Number, "jlgcli live test: a comment")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := fg.EditComment(ctx, c.ID, "jlgcli live test: edited"); err != nil || e.Body != "jlgcli live test: edited" {
		t.Errorf("EditComment: %+v, %v", e, err)
	}
}
