package giteatest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
)

// world is the server of this package's tests but TestStartStop's,
// started by the first that needs it and stopped by TestMain.
var world Shared

func TestMain(m *testing.M) {
	code := m.Run()
	world.Stop()
	os.Exit(code)
}

// A started server answers each user with its own name, gives a test a
// repository that its collaborators can write, and leaves neither a
// process nor its directory once stopped.
func TestStartStop(t *testing.T) {
	var shared Shared
	srv := shared.Get(t)
	t.Logf("gitea started in %s", srv.Started)
	for _, u := range []User{srv.Admin, srv.CI, srv.Reviewer} {
		c, err := srv.Client(u)
		if err != nil {
			t.Fatal(err)
		}
		me, _, err := c.GetMyUserInfo()
		if err != nil || me.UserName != u.Name {
			t.Errorf("as %s: %+v, %v", u.Name, me, err)
		}
	}
	r := srv.NewRepo(t)
	c, _ := srv.Client(srv.Reviewer)
	perm, _, err := c.CollaboratorPermission(r.Owner, r.Name, ReviewerName)
	if err != nil || perm.Permission != "write" {
		t.Errorf("reviewer on %s: %+v, %v", r.Name, perm, err)
	}
	if r.DefaultBranch != "main" {
		t.Errorf("default branch %q", r.DefaultBranch)
	}
	pid := srv.cmd.Process.Pid
	shared.Stop()
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Errorf("process group %d still there", pid)
	}
	if _, err := os.Stat(srv.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", srv.Dir, err)
	}
}

// BenchmarkStart measures a server's start from nothing to an API that
// answers: options copied, migrated, three users with tokens, gitea web
// (go test -run '^$' -bench Start -benchtime=3x ./internal/forge/giteatest).
func BenchmarkStart(b *testing.B) {
	bin := Binary()
	if bin == "" {
		b.Skip("no Gitea binary: run make gitea")
	}
	for b.Loop() {
		srv, err := Start(context.Background(), bin)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(srv.Started.Seconds(), "s/start")
		if err := srv.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// eventually polls cond every 100ms until it holds, fails, or timeout
// passes (then the test fails, saying what it waited for).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func apiClient(t *testing.T, srv *Server, u User) *gitea.Client {
	t.Helper()
	c, err := srv.Client(u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A clone over HTTP authenticates by GitEnv: its origin and its files
// hold no token, a push as a user is that user's commit on the server,
// and the same push without GitEnv is refused.
func TestGitOverHTTP(t *testing.T) {
	srv := world.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "co")
	if err := r.Clone(ctx, srv.CI, dir); err != nil {
		t.Fatal(err)
	}
	if origin, err := srv.Git(ctx, srv.CI, dir, "remote", "get-url", "origin"); err != nil || origin != r.URL {
		t.Errorf("origin %q, %v; want %q", origin, err, r.URL)
	}
	if err := filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(srv.CI.Token)) {
			t.Errorf("%s holds the token", p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ci.txt"), []byte("built\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"checkout", "-q", "-b", "from-ci"}, {"add", "ci.txt"}, {"commit", "-q", "-m", "ci was here"}} {
		if _, err := srv.Git(ctx, srv.CI, dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := srv.Git(ctx, srv.CI, dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	bare := exec.Command("git", "push", "-q", "origin", "from-ci")
	bare.Dir, bare.Env = dir, append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	if out, err := bare.CombinedOutput(); err == nil {
		t.Errorf("a push without GitEnv was accepted: %s", out)
	}
	if _, err := srv.Git(ctx, srv.CI, dir, "push", "-q", "origin", "from-ci"); err != nil {
		t.Fatal(err)
	}
	b, _, err := apiClient(t, srv, srv.Admin).GetRepoBranch(r.Owner, r.Name, "from-ci")
	if err != nil || b.Commit == nil || b.Commit.ID != sha || b.Commit.Author == nil || b.Commit.Author.UserName != CIName {
		t.Errorf("branch on the server: %+v, %v", b, err)
	}
}
