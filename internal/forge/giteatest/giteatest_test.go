package giteatest

import (
	"context"
	"os"
	"syscall"
	"testing"
)

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
