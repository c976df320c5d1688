package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/forge"
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
	for _, u := range []User{srv.Admin, srv.CI, srv.Reviewer, srv.Outsider} {
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
	if perm, _, err := c.CollaboratorPermission(r.Owner, r.Name, OutsiderName); err == nil && perm.Permission != "read" && perm.Permission != "none" {
		t.Errorf("the outsider on %s: %+v, want no more than read", r.Name, perm)
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

// openPR makes branch from main with files, as the admin, and opens its
// pull request; it returns the PR's number and head.
func openPR(t *testing.T, r Repo, branch string, files map[string]string) (int, string) {
	t.Helper()
	sha, err := r.Commit(context.Background(), r.srv.Admin, Change{Branch: branch, From: "main", Message: "add " + branch, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := apiClient(t, r.srv, r.srv.Admin).CreatePullRequest(r.Owner, r.Name, gitea.CreatePullRequestOption{Head: branch, Base: "main", Title: branch})
	if err != nil {
		t.Fatal(err)
	}
	return int(p.Index), sha
}

// statuses are the latest state of each context at sha, as the API
// combines them.
func statuses(t *testing.T, r Repo, sha string) map[string]gitea.StatusState {
	t.Helper()
	cs, _, err := apiClient(t, r.srv, r.srv.Admin).GetCombinedStatus(r.Owner, r.Name, sha)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]gitea.StatusState{}
	for _, s := range cs.Statuses {
		out[s.Context] = s.State
	}
	return out
}

// greetCI is a CI whose ci/test passes only when greet.txt says hello
// (a check that only the CI runs), and whose ci/lint always passes.
func greetCI(h Head) Verdict {
	v := Verdict{"ci/lint": {State: gitea.StatusSuccess, Description: "clean"}}
	got, err := h.File("greet.txt")
	switch {
	case err != nil:
		v["ci/test"] = Status{State: gitea.StatusError, Description: err.Error()}
	case strings.Contains(got, "hello"):
		v["ci/test"] = Status{State: gitea.StatusSuccess, Description: "1 test passed", TargetURL: "https://ci.example.com/" + h.SHA}
	default:
		v["ci/test"] = Status{State: gitea.StatusFailure, Description: "TestGreet: got " + strings.TrimSpace(got), TargetURL: "https://ci.example.com/" + h.SHA}
	}
	return v
}

// A step of the CI builds each new head once: pending statuses first,
// then the verdict, which reads the head's files; a head pushed by
// someone else is built as the PR's second, at its own commit.
func TestCIStep(t *testing.T) {
	srv := world.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	pr, head := openPR(t, r, "feature", map[string]string{"greet.txt": "helo\n"})
	ci := r.CI(greetCI)
	if err := ci.Step(ctx); err != nil {
		t.Fatal(err)
	}
	hs := ci.Heads()
	if len(hs) != 1 || hs[0].PR != pr || hs[0].SHA != head || hs[0].N != 1 || hs[0].Branch != "feature" {
		t.Fatalf("heads after one step: %+v", hs)
	}
	var got []string
	for _, p := range ci.Posted() {
		if p.SHA != head || p.PR != pr || p.N != 1 {
			t.Errorf("post %+v", p)
		}
		got = append(got, p.Context+" "+string(p.State)+" "+p.Description)
	}
	want := []string{"ci/lint pending running", "ci/test pending running", "ci/lint success clean", "ci/test failure TestGreet: got helo"}
	if !slices.Equal(got, want) {
		t.Errorf("posted %q, want %q", got, want)
	}
	if st := statuses(t, r, head); st["ci/test"] != gitea.StatusFailure || st["ci/lint"] != gitea.StatusSuccess || len(st) != 2 {
		t.Errorf("statuses on the server: %v", st)
	}
	if _, err := hs[0].File("absent.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("File of an absent file: %v", err)
	}
	if err := ci.Step(ctx); err != nil || len(ci.Posted()) != 4 || len(ci.Heads()) != 1 {
		t.Errorf("a second step posted again: %d posts, %v", len(ci.Posted()), err)
	}

	fix, err := r.Commit(ctx, srv.Reviewer, Change{Branch: "feature", Message: "say hello", Files: map[string]string{"greet.txt": "hello\n"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the CI builds the second head", func() (bool, error) {
		err := ci.Step(ctx)
		return len(ci.Heads()) == 2, err
	})
	if h := ci.Heads()[1]; h.SHA != fix || h.N != 2 || h.PR != pr {
		t.Errorf("second head %+v, want %s", h, fix)
	}
	if st := statuses(t, r, fix); st["ci/test"] != gitea.StatusSuccess || st["ci/lint"] != gitea.StatusSuccess {
		t.Errorf("statuses at the fix: %v", st)
	}
	if st := statuses(t, r, head); st["ci/test"] != gitea.StatusFailure {
		t.Errorf("statuses at the first head changed: %v", st)
	}
	c, _, err := apiClient(t, srv, srv.Admin).GetSingleCommit(r.Owner, r.Name, fix)
	if err != nil || c.Author == nil || c.Author.UserName != ReviewerName || len(c.Parents) != 1 || c.Parents[0].SHA != head {
		t.Errorf("the fix: %+v, %v", c, err)
	}
}

// In the background the CI builds a PR opened after it started; a verdict
// held back comes only after its delay, the pending status before it.
func TestCIStartDelayed(t *testing.T) {
	srv := world.Get(t)
	r := srv.NewRepo(t)
	const after = 1500 * time.Millisecond
	ci := r.CI(func(h Head) Verdict {
		return Verdict{"ci/slow": {State: gitea.StatusSuccess, Description: "done", After: after}}
	})
	ci.Interval = 100 * time.Millisecond
	ci.Start(context.Background())
	stopped := false
	defer func() {
		if !stopped {
			_ = ci.Stop()
		}
	}()
	_, head := openPR(t, r, "slow", map[string]string{"a.txt": "a\n"})
	eventually(t, 30*time.Second, "a pending ci/slow", func() (bool, error) {
		return statuses(t, r, head)["ci/slow"] != "", nil
	})
	eventually(t, 30*time.Second, "ci/slow's verdict", func() (bool, error) {
		return statuses(t, r, head)["ci/slow"] == gitea.StatusSuccess, nil
	})
	stopped = true
	if err := ci.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	ps := ci.Posted()
	if len(ps) != 2 || ps[0].State != gitea.StatusPending || ps[1].State != gitea.StatusSuccess {
		t.Fatalf("posted %+v", ps)
	}
	if d := ps[1].At.Sub(ps[0].At); d < after {
		t.Errorf("verdict %s after pending, want at least %s", d, after)
	}
	if ci.Pending() != 0 {
		t.Errorf("%d statuses still to post", ci.Pending())
	}
}

// merge asks the API to merge pr at head as the admin (forcing it past
// the protection when force), and returns the HTTP status and Gitea's
// message (the SDK keeps only the status).
func merge(t *testing.T, r Repo, pr int, head string, force bool) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"Do": "merge", "head_commit_id": head, "force_merge": force})
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/repos/%s/%s/pulls/%d/merge", r.srv.URL, r.Owner, r.Name, pr), bytes.NewReader(body))
	req.Header.Set("Authorization", "token "+r.srv.Admin.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// A protected branch refuses, to the admin too, the merge of a PR whose
// required check failed, and of one whose approval went stale with a new
// head; it merges once the check passes at the head and a writer approved
// it.
func TestProtect(t *testing.T) {
	srv := world.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	admin := apiClient(t, srv, srv.Admin)
	if err := r.Protect(ctx, "main", ProtectOptions{RequiredContexts: []string{"ci/lint"}, RequiredApprovals: 2}); err != nil {
		t.Fatal(err)
	}
	if err := r.Protect(ctx, "main", ProtectOptions{RequiredContexts: []string{"ci/test"}, RequiredApprovals: 1, DismissStaleApprovals: true}); err != nil {
		t.Fatal(err)
	}
	bp, _, err := admin.GetBranchProtection(r.Owner, r.Name, "main")
	if err != nil || !bp.EnableStatusCheck || !slices.Equal(bp.StatusCheckContexts, []string{"ci/test"}) || bp.RequiredApprovals != 1 || !bp.DismissStaleApprovals {
		t.Fatalf("protection after the edit: %+v, %v", bp, err)
	}

	pr, head := openPR(t, r, "feature", map[string]string{"greet.txt": "helo\n"})
	ci := r.CI(greetCI)
	if err := ci.Step(ctx); err != nil {
		t.Fatal(err)
	}
	rv := r.Reviewer(srv.Reviewer)
	if _, err := rv.Approve(ctx, pr, "fine"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Gitea finds the PR mergeable", func() (bool, error) {
		p, _, err := admin.GetPullRequest(r.Owner, r.Name, int64(pr))
		return err == nil && p.Mergeable, err
	})
	code, msg := merge(t, r, pr, head, false)
	t.Logf("merge with ci/test failed: HTTP %d %s", code, msg)
	if code != http.StatusMethodNotAllowed || !strings.Contains(msg, "status check") {
		t.Errorf("merge with ci/test failed: HTTP %d %s", code, msg)
	}
	if code, msg := merge(t, r, pr, head, true); code != http.StatusMethodNotAllowed {
		t.Fatalf("the admin's forced merge with ci/test failed: HTTP %d %s", code, msg)
	}

	fix, err := r.Commit(ctx, srv.CI, Change{Branch: "feature", Message: "say hello", Files: map[string]string{"greet.txt": "hello\n"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the CI builds the fix", func() (bool, error) {
		err := ci.Step(ctx)
		return len(ci.Heads()) == 2, err
	})
	if st := statuses(t, r, fix); st["ci/test"] != gitea.StatusSuccess {
		t.Fatalf("statuses at the fix: %v", st)
	}
	eventually(t, 30*time.Second, "the approval dismissed by the new head", func() (bool, error) {
		rs, _, err := admin.ListPullReviews(r.Owner, r.Name, int64(pr), gitea.ListPullReviewsOptions{})
		return err == nil && len(rs) == 1 && rs[0].Dismissed, err
	})
	eventually(t, 30*time.Second, "Gitea finds the new head mergeable", func() (bool, error) {
		p, _, err := admin.GetPullRequest(r.Owner, r.Name, int64(pr))
		return err == nil && p.Mergeable && p.Head.Sha == fix, err
	})
	code, msg = merge(t, r, pr, fix, false)
	t.Logf("merge with the approval dismissed: HTTP %d %s", code, msg)
	if code != http.StatusMethodNotAllowed || !strings.Contains(msg, "approv") {
		t.Errorf("merge with the approval dismissed: HTTP %d %s", code, msg)
	}
	if _, err := rv.Approve(ctx, pr, "fine again"); err != nil {
		t.Fatal(err)
	}
	if code, msg := merge(t, r, pr, fix, false); code != http.StatusOK {
		t.Fatalf("merge of a green, approved head: HTTP %d %s", code, msg)
	}
	if p, _, err := admin.GetPullRequest(r.Owner, r.Name, int64(pr)); err != nil || !p.HasMerged {
		t.Errorf("after the merge: %+v, %v", p, err)
	}
}

const greetGo = "package greet\n\n// Greet says hello.\nfunc Greet() string {\n\treturn \"helo\"\n}\n"

// A reviewer's line comments, the replies on their lines and a resolution
// read back as threads, the same that jlgcli's adapter reads; an approval
// after a request for changes is the reviewer's decision.
func TestReviewer(t *testing.T) {
	srv := world.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	pr, head := openPR(t, r, "feature", map[string]string{"greet/greet.go": greetGo})
	rv := r.Reviewer(srv.Reviewer)

	th, err := rv.Comment(ctx, pr, gitea.ReviewStateRequestChanges, "greet/greet.go", 5, "This should say hello.")
	if err != nil {
		t.Fatal(err)
	}
	if th.Path != "greet/greet.go" || th.Line != 5 || th.CommitSHA != head || th.Resolved || len(th.Comments) != 1 ||
		th.Comments[0].Reviewer.UserName != ReviewerName || th.Comments[0].Body != "This should say hello." {
		t.Fatalf("thread: %+v", th)
	}
	th, err = r.Reviewer(srv.Admin).Reply(ctx, pr, th, "Fixed.")
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Comments) != 2 || th.Comments[1].Reviewer.UserName != AdminName || th.Comments[1].Body != "Fixed." || th.Line != 5 {
		t.Fatalf("thread after the reply: %+v", th)
	}
	th, err = rv.Reply(ctx, pr, th, "Not quite.")
	if err != nil || len(th.Comments) != 3 || th.Comments[2].Reviewer.UserName != ReviewerName {
		t.Fatalf("thread after the reviewer's answer: %+v, %v", th, err)
	}
	other, err := rv.Comment(ctx, pr, gitea.ReviewStateComment, "greet/greet.go", 3, "Nice comment.")
	if err != nil || other.Line != 3 || len(other.Comments) != 1 {
		t.Fatalf("second thread: %+v, %v", other, err)
	}
	if err := rv.Resolve(ctx, other); err != nil {
		t.Fatal(err)
	}
	ts, err := rv.Threads(ctx, pr)
	if err != nil || len(ts) != 2 {
		t.Fatalf("Threads: %+v, %v", ts, err)
	}
	if ts[0].ID() != th.ID() || ts[0].Resolved || len(ts[0].Comments) != 3 || ts[1].ID() != other.ID() || !ts[1].Resolved {
		t.Errorf("threads read back: %+v", ts)
	}

	// jlgcli's adapter reads the same threads, with the same comments.
	u, _ := url.Parse(r.URL)
	fg, err := forge.Open(ctx, u.String(), forge.Settings{Kind: forge.Gitea, TokenEnv: "T"},
		forge.Options{Getenv: func(string) string { return srv.Admin.Token }})
	if err != nil {
		t.Fatal(err)
	}
	fts, err := fg.Threads(ctx, pr)
	if err != nil || len(fts) != len(ts) {
		t.Fatalf("adapter's threads: %+v, %v", fts, err)
	}
	for i, ft := range fts {
		w := ts[i]
		if ft.ID != strconv.FormatInt(w.ID(), 10) || ft.Path != w.Path || ft.Line != w.Line || ft.Resolved != w.Resolved ||
			ft.CommitSHA != w.CommitSHA || len(ft.Comments) != len(w.Comments) {
			t.Errorf("thread %d: adapter %+v, here %+v", i, ft, w)
			continue
		}
		for j, c := range ft.Comments {
			if c.ID != w.Comments[j].ID || c.Author != w.Comments[j].Reviewer.UserName {
				t.Errorf("thread %d comment %d: adapter %+v, here %+v", i, j, c, w.Comments[j])
			}
		}
	}

	if err := rv.Unresolve(ctx, other); err != nil {
		t.Fatal(err)
	}
	if ts, err := rv.Threads(ctx, pr); err != nil || len(ts) != 2 || ts[1].Resolved {
		t.Errorf("after Unresolve: %+v, %v", ts, err)
	}
	if _, err := rv.Approve(ctx, pr, "Good now."); err != nil {
		t.Fatal(err)
	}
	reviews, err := fg.Reviews(ctx, pr)
	if err != nil || reviews.Decision != forge.DecisionApproved || !slices.Equal(reviews.Approvals, []string{ReviewerName}) {
		t.Errorf("adapter's reviews after the approval: %+v, %v", reviews, err)
	}
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
