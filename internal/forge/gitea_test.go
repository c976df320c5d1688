package forge

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
)

// giteaSrv is the real Gitea of this package's tests, started by the
// first that needs it and stopped by TestMain.
var giteaSrv giteatest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	giteaSrv.Stop()
	os.Exit(code)
}

// checkout is a clone of a test repository with a git that reads no
// configuration of the machine's.
type checkout struct {
	t   *testing.T
	dir string
}

func (c checkout) git(args ...string) string {
	c.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=jlg", "-c", "user.email=jlg@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+c.dir, "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files and commits them, returning the commit's SHA.
func (c checkout) commit(msg string, files map[string]string) string {
	c.t.Helper()
	for name, content := range files {
		p := filepath.Join(c.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.git("add", "-A")
	c.git("commit", "-q", "-m", msg)
	return c.git("rev-parse", "HEAD")
}

func clone(t *testing.T, r giteatest.Repo) checkout {
	t.Helper()
	dir := t.TempDir()
	c := checkout{t: t, dir: dir}
	c.git("clone", "-q", r.CloneURL, "src")
	c.dir = filepath.Join(dir, "src")
	return c
}

// openGitea is the adapter of repository r, acting as the admin, its
// remote given without the token (which comes from a variable), the kind
// configured.
func openGitea(t *testing.T, srv *giteatest.Server, r giteatest.Repo) Forge {
	t.Helper()
	u, _ := url.Parse(r.CloneURL)
	u.User = nil
	fg, err := Open(context.Background(), u.String(), Settings{Kind: Gitea, TokenEnv: "GITEA_TEST_TOKEN"},
		Options{Getenv: func(k string) string { return map[string]string{"GITEA_TEST_TOKEN": srv.Admin.Token}[k] }, ConflictRecheck: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return fg
}

func client(t *testing.T, srv *giteatest.Server, u giteatest.User) *gitea.Client {
	t.Helper()
	c, err := srv.Client(u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const greet = "package greet\n\n// Greet says hello.\nfunc Greet() string {\n\treturn \"helo\"\n}\n"

// The whole life of a pull request on a real Gitea, as the PR loop will
// see it: opened once for its head branch; a CI posting statuses at its
// head (pending, failure, success) under a protection that requires them
// and one approval; a reviewer's line comment, answered and resolved; a
// request for changes, then an approval; one comment posted and edited;
// a merge refused for a head that is not the PR's, then done.
func TestGiteaPullRequestLife(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	co := clone(t, r)
	co.git("checkout", "-q", "-b", "jlgcli/fix-1")
	head := co.commit("feat: greet", map[string]string{"greet/greet.go": greet})
	co.git("push", "-q", "origin", "jlgcli/fix-1")

	fg := openGitea(t, srv, r)
	if fg.Kind() != Gitea || fg.Repo() != (Repo{Host: strings.TrimPrefix(srv.URL, "http://"), Owner: r.Owner, Name: r.Name}) {
		t.Errorf("forge %s %+v", fg.Kind(), fg.Repo())
	}
	if who, err := fg.Self(ctx); err != nil || who != giteatest.AdminName {
		t.Errorf("Self: %q, %v; want %s, the token's user", who, err, giteatest.AdminName)
	}
	if pr, err := fg.FindPR(ctx, "jlgcli/fix-1"); err != nil || pr != nil {
		t.Fatalf("FindPR before any: %v, %v", pr, err)
	}
	pr, created, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/fix-1", Title: "feat: greet", Body: "Made by jlgcli."})
	if err != nil || !created {
		t.Fatalf("OpenPR: %+v created %v, %v", pr, created, err)
	}
	if again, created, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/fix-1", Title: "other"}); err != nil || created || again.Number != pr.Number {
		t.Errorf("OpenPR again: #%d created %v, %v; want #%d not created", again.Number, created, err, pr.Number)
	}
	pr, err = fg.PR(ctx, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if pr.State != StateOpen || pr.HeadSHA != head || pr.Head != "jlgcli/fix-1" || pr.Base != "main" || pr.Author != giteatest.AdminName ||
		pr.Mergeable != Mergeable || pr.HeadRepo != r.Owner+"/"+r.Name || !strings.HasSuffix(pr.URL, "/pulls/1") {
		t.Errorf("PR: %+v", pr)
	}

	// Branch protection: statuses ci/* and one approval required.
	admin := client(t, srv, srv.Admin)
	if _, _, err := admin.CreateBranchProtection(r.Owner, r.Name, gitea.CreateBranchProtectionOption{RuleName: "main", BranchName: "main",
		EnableStatusCheck: true, StatusCheckContexts: []string{"ci/*"}, RequiredApprovals: 1}); err != nil {
		t.Fatal(err)
	}

	// CI posts statuses at the head: pending, failure, success.
	ci := client(t, srv, srv.CI)
	checks, err := fg.Checks(ctx, head, "main")
	if err != nil || len(checks.Checks) != 0 || !checks.RequiredKnown || !slices.Equal(checks.Required, []string{"ci/*"}) {
		t.Errorf("no status yet: %+v, %v", checks, err)
	}
	post := func(state gitea.StatusState, desc string) Check {
		t.Helper()
		if _, _, err := ci.CreateStatus(r.Owner, r.Name, head, gitea.CreateStatusOption{State: state, Context: "ci/build",
			Description: desc, TargetURL: "https://ci.example.com/builds/7"}); err != nil {
			t.Fatal(err)
		}
		got, err := fg.Checks(ctx, head, "main")
		if err != nil || len(got.Checks) != 1 || got.SHA != head {
			t.Fatalf("after %s: %+v, %v", state, got, err)
		}
		return got.Checks[0]
	}
	c := post(gitea.StatusPending, "building")
	if want := (Check{Name: "ci/build", State: Pending, Conclusion: "pending", URL: "https://ci.example.com/builds/7", Description: "building",
		Required: true, Source: SourceStatus}); c != want {
		t.Errorf("pending: %+v, want %+v", c, want)
	}
	c = post(gitea.StatusFailure, "2 tests failed: TestGreet")
	if c.State != Failed || c.Conclusion != "failure" {
		t.Errorf("failure: %+v", c)
	}
	f, err := fg.Failure(ctx, c)
	if err != nil || f.Summary != "2 tests failed: TestGreet" || f.LogTail != "" || f.Check.URL != "https://ci.example.com/builds/7" {
		t.Errorf("Failure: %+v, %v", f, err)
	}
	if err := fg.Rerun(ctx, c); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Rerun: %v, want ErrUnsupported", err)
	}
	if c = post(gitea.StatusSuccess, "all green"); c.State != Success {
		t.Errorf("success: %+v", c)
	}

	// No review yet: one approval is required.
	rv, err := fg.Reviews(ctx, pr.Number)
	if err != nil || rv.Decision != DecisionReviewRequired || rv.Required != 1 || len(rv.Reviews) != 0 {
		t.Errorf("no review: %+v, %v", rv, err)
	}

	// The reviewer asks for changes with a line comment.
	reviewer := client(t, srv, srv.Reviewer)
	if _, _, err := reviewer.CreatePullReview(r.Owner, r.Name, int64(pr.Number), gitea.CreatePullReviewOptions{State: gitea.ReviewStateRequestChanges,
		Body: "One thing.", Comments: []gitea.CreatePullReviewComment{{Path: "greet/greet.go", Body: "This should say hello.", NewLineNum: 5}}}); err != nil {
		t.Fatal(err)
	}
	rv, err = fg.Reviews(ctx, pr.Number)
	if err != nil || rv.Decision != DecisionChangesRequested || !slices.Equal(rv.ChangesRequested, []string{giteatest.ReviewerName}) ||
		len(rv.Reviews) != 1 || rv.Reviews[0].Body != "One thing." || rv.Reviews[0].CommitSHA != head {
		t.Errorf("changes requested: %+v, %v", rv, err)
	}
	threads, err := fg.Threads(ctx, pr.Number)
	if err != nil || len(threads) != 1 {
		t.Fatalf("Threads: %+v, %v", threads, err)
	}
	th := threads[0]
	if th.Path != "greet/greet.go" || th.Line != 5 || th.Resolved || th.CommitSHA != head || !strings.Contains(th.DiffHunk, `return "helo"`) ||
		len(th.Comments) != 1 || th.Comments[0].Author != giteatest.ReviewerName || th.Comments[0].Permission != PermWrite ||
		th.Comments[0].Body != "This should say hello." || th.Comments[0].URL == "" {
		t.Errorf("thread: %+v", th)
	}

	// jlgcli answers on the thread and resolves it.
	reply, err := fg.Reply(ctx, pr.Number, th, "Fixed in abc123: it says hello now.")
	if err != nil || reply.Author != giteatest.AdminName || reply.ID == 0 {
		t.Fatalf("Reply: %+v, %v", reply, err)
	}
	if err := fg.Resolve(ctx, pr.Number, th); err != nil {
		t.Fatal(err)
	}
	threads, err = fg.Threads(ctx, pr.Number)
	if err != nil || len(threads) != 1 {
		t.Fatalf("Threads after the reply: %+v, %v", threads, err)
	}
	if th := threads[0]; !th.Resolved || len(th.Comments) != 2 || th.Comments[1].ID != reply.ID || th.Comments[1].Permission != PermAdmin ||
		th.Comments[1].Body != "Fixed in abc123: it says hello now." {
		t.Errorf("resolved thread: %+v", th)
	}

	// A passer-by (no collaborator) approves: it counts for nothing.
	if _, _, err := client(t, srv, srv.Outsider).CreatePullReview(r.Owner, r.Name, int64(pr.Number), gitea.CreatePullReviewOptions{State: gitea.ReviewStateApproved, Body: "LGTM"}); err != nil {
		t.Fatal(err)
	}
	rv, err = fg.Reviews(ctx, pr.Number)
	if last := len(rv.Reviews) - 1; err != nil || rv.Decision != DecisionChangesRequested || rv.Approvals != nil || last < 1 ||
		rv.Reviews[last].Author != giteatest.OutsiderName || rv.Reviews[last].State != Approved || rv.Reviews[last].Permission.CanWrite() ||
		rv.Reviews[0].Permission != PermWrite {
		t.Errorf("a passer-by's approval: %+v, %v", rv, err)
	}

	// The reviewer approves.
	if _, _, err := reviewer.CreatePullReview(r.Owner, r.Name, int64(pr.Number), gitea.CreatePullReviewOptions{State: gitea.ReviewStateApproved}); err != nil {
		t.Fatal(err)
	}
	rv, err = fg.Reviews(ctx, pr.Number)
	if err != nil || rv.Decision != DecisionApproved || !slices.Equal(rv.Approvals, []string{giteatest.ReviewerName}) || rv.ChangesRequested != nil {
		t.Errorf("approved: %+v, %v", rv, err)
	}

	// One comment, posted then edited.
	cm, err := fg.Comment(ctx, pr.Number, "jlgcli: working on it")
	if err != nil || cm.ID == 0 || cm.Author != giteatest.AdminName {
		t.Fatalf("Comment: %+v, %v", cm, err)
	}
	if ed, err := fg.EditComment(ctx, cm.ID, "jlgcli: done"); err != nil || ed.ID != cm.ID || ed.Body != "jlgcli: done" {
		t.Errorf("EditComment: %+v, %v", ed, err)
	}
	got, _, err := admin.GetIssueComment(r.Owner, r.Name, cm.ID)
	if err != nil || got.Body != "jlgcli: done" {
		t.Errorf("the comment on the server: %+v, %v", got, err)
	}

	// A merge for another head is refused; for the head, done.
	if _, err := fg.Merge(ctx, pr.Number, MergeOptions{Method: MethodSquash, SHA: strings.Repeat("0", 40)}); !errors.Is(err, ErrHeadMoved) {
		t.Errorf("merge of another head: %v, want ErrHeadMoved", err)
	}
	sha, err := fg.Merge(ctx, pr.Number, MergeOptions{Method: MethodSquash, SHA: head, Title: "feat: greet (#1)"})
	if err != nil || len(sha) != 40 {
		t.Fatalf("Merge: %q, %v", sha, err)
	}
	pr, err = fg.PR(ctx, pr.Number)
	if err != nil || pr.State != StateMerged || pr.MergeSHA != sha {
		t.Errorf("merged PR: %+v, %v", pr, err)
	}
	co.git("fetch", "-q", "origin", "main")
	if subject := co.git("log", "-1", "--format=%s", "origin/main"); subject != "feat: greet (#1)" || co.git("rev-parse", "origin/main") != sha {
		t.Errorf("main after the merge: %q", subject)
	}
	if who, err := fg.Self(ctx); err != nil || who != giteatest.AdminName {
		t.Errorf("Self: %q, %v; want %s, the token's user", who, err, giteatest.AdminName)
	}
	if pr, err := fg.FindPR(ctx, "jlgcli/fix-1"); err != nil || pr != nil {
		t.Errorf("FindPR after the merge: %+v, %v", pr, err)
	}
}

// A pull request whose head conflicts with its base reads as conflicting
// (not while Gitea is still checking it), and cannot be merged; a draft
// is a title Gitea reads as work in progress.
func TestGiteaConflict(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	co := clone(t, r)
	co.commit("base", map[string]string{"greet/greet.go": greet})
	co.git("push", "-q", "origin", "HEAD:main")
	co.git("checkout", "-q", "-b", "jlgcli/fix-2")
	co.commit("say hi", map[string]string{"greet/greet.go": strings.Replace(greet, "helo", "hi", 1)})
	co.git("push", "-q", "origin", "jlgcli/fix-2")
	co.git("checkout", "-q", "main")
	co.commit("say hey", map[string]string{"greet/greet.go": strings.Replace(greet, "helo", "hey", 1)})
	co.git("push", "-q", "origin", "main")

	fg := openGitea(t, srv, r)
	pr, created, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/fix-2", Base: "main", Title: "fix: hi"})
	if err != nil || !created {
		t.Fatalf("OpenPR: %v", err)
	}
	start := time.Now()
	pr, err = fg.PR(ctx, pr.Number)
	if err != nil || pr.Mergeable != Conflicting {
		t.Errorf("conflicting PR: %+v, %v", pr, err)
	}
	t.Logf("read as conflicting in %s", time.Since(start))
	if _, err := fg.Merge(ctx, pr.Number, MergeOptions{Method: MethodMerge, SHA: pr.HeadSHA}); !errors.Is(err, ErrNotMergeable) {
		t.Errorf("merge of a conflict: %v, want ErrNotMergeable", err)
	}

	co.git("checkout", "-q", "-b", "jlgcli/draft")
	co.commit("wip", map[string]string{"other.txt": "x\n"})
	co.git("push", "-q", "origin", "jlgcli/draft")
	d, _, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/draft", Title: "later", Draft: true})
	if err != nil || !d.Draft || d.Title != "WIP: later" || d.Mergeable != MergeUnknown {
		t.Errorf("draft: %+v, %v", d, err)
	}
}

// A pull request or comment the forge does not have is ErrNotFound; a
// token the server refuses fails at once.
func TestGiteaErrors(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	fg := openGitea(t, srv, r)
	if _, err := fg.PR(context.Background(), 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("PR #999: %v, want ErrNotFound", err)
	}
	if _, err := fg.EditComment(context.Background(), 999999, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("comment 999999: %v, want ErrNotFound", err)
	}
	u, _ := url.Parse(r.CloneURL)
	u.User = nil
	bad, err := Open(context.Background(), u.String(), Settings{Kind: Gitea, TokenEnv: "T"}, Options{Getenv: func(string) string { return "not-a-token" }})
	if err == nil {
		_, err = bad.FindPR(context.Background(), "main")
	}
	if err == nil {
		t.Error("a refused token: no error")
	}
}
