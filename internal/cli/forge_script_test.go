package cli_test

// The world a pull request meets, for the scripts of the pull-request loop
// (pr_*.txtar): a real Gitea server (giteatest), one per test binary,
// started by the first script that asks and stopped after the run
// (TestMain), and the script command forge that makes a repository on it,
// starts a scripted CI and a reviewer in the background, acts as someone
// else, and checks what the forge holds. A script that needs it starts
// with
//
//	[!forge] skip 'no Gitea binary'
//
// ([forge] is false without the binary; with JLGCLI_REQUIRE_FORGE=1 a
// missing binary fails the script instead).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
)

// giteaSrv is the test binary's Gitea server, stopped by TestMain.
var giteaSrv giteatest.Shared

func init() { scriptCmds["forge"] = cmdForge }

// forgeCondition is [forge]: a Gitea binary to start. Without one it is
// false, or an error when JLGCLI_REQUIRE_FORGE=1 (as in CI).
func forgeCondition() (bool, error) {
	if giteatest.Binary() != "" {
		return true, nil
	}
	if os.Getenv(giteatest.EnvRequire) == "1" {
		return false, fmt.Errorf("%s=1 but there is no Gitea binary: run make gitea, or set %s", giteatest.EnvRequire, giteatest.EnvBinary)
	}
	return false, nil
}

// stopGitea runs the tests, then stops the server the scripts shared.
type stopGitea struct{ m *testing.M }

func (s stopGitea) Run() int {
	defer giteaSrv.Stop()
	return s.m.Run()
}

// scriptTB is the key of Env.Values that holds the script's testing.TB
// (setupScript), which giteatest wants.
type scriptTB struct{}

// forgeWorld is one script's repository on the server and what acts on it
// in the background.
type forgeWorld struct {
	srv  *giteatest.Server
	repo giteatest.Repo
	ctx  context.Context
	cis  []*giteatest.CI
}

var (
	worldsMu sync.Mutex
	worlds   = map[*testscript.TestScript]*forgeWorld{}
)

func worldOf(ts *testscript.TestScript) *forgeWorld {
	worldsMu.Lock()
	defer worldsMu.Unlock()
	w := worlds[ts]
	if w == nil {
		ts.Fatalf("no repository on the forge yet: forge repo first")
	}
	return w
}

// forge SUBCOMMAND [args...]
//
//	repo [-protect CONTEXTS] [-approvals N]
//	    makes a repository on the server whose main holds the files of
//	    $WORK/repo (and Gitea's README): $WORK/repo becomes its checkout,
//	    origin its address without credentials. For the rest of the
//	    script, git authenticates to the server as the admin, who is
//	    jlgcli (GIT_CONFIG_COUNT…), and jlgcli finds the forge:
//	    JLGCLI_FORGE_KIND=gitea, JLGCLI_FORGE_URL, JLGCLI_FORGE_TOKEN_ENV=
//	    FORGE_TOKEN and FORGE_TOKEN (all named in PASSENV, for exitcode).
//	    $FORGE_REPO is OWNER/NAME. -protect protects main: the commit
//	    status contexts (comma-separated) that must succeed, -approvals
//	    the approvals it needs.
//	ci [-after DURATION] CONTEXT PATH=TEXT|fail:DESCRIPTION
//	    starts, for the rest of the script, a CI that posts CONTEXT on each
//	    new head of every open pull request: pending, then (DURATION
//	    later) success when the head's file PATH says TEXT, else failure
//	    saying what it says; fail: always fails with DESCRIPTION, in which
//	    {head} is the head's commit (its first 10 digits).
//	reviewer [-comment PATH:LINE TEXT] [-approve]
//	    starts, for the rest of the script, the reviewer (user reviewer,
//	    with write access) on every open pull request: once its head is
//	    green (every status posted at it succeeded) it comments TEXT on
//	    LINE of PATH, once; then, once the head is green and every thread
//	    resolved, it approves, once. TEXT takes Go's escapes (\n, \x1b).
//	pr BRANCH TITLE
//	    opens a pull request of BRANCH into main as user ci (someone
//	    else) and sets $PR to its number.
//	push-other BRANCH PATH TEXT
//	    commits TEXT (Go's escapes) to PATH on BRANCH on the server as
//	    user reviewer (someone else), BRANCH made from main when it does
//	    not exist.
//	state N open|closed|merged
//	    fails unless pull request N is in that state.
//	comments N REGEXP COUNT
//	    fails unless exactly COUNT comments of pull request N match REGEXP.
//	threads N COUNT
//	    fails unless pull request N has COUNT review threads, each
//	    resolved, its last comment jlgcli's naming the commit it was
//	    addressed in.
//	heads N COUNT
//	    fails unless the (first) CI built exactly COUNT heads of pull
//	    request N: one for its opening, one for each push.
//	wait-threads N COUNT
//	    waits until pull request N has COUNT review threads (a reviewer's
//	    comment made before jlgcli looks).
//	wait-heads N COUNT
//	    waits, up to the hang guard, until the CI built COUNT heads of
//	    pull request N.
func cmdForge(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! forge")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: forge repo|ci|reviewer|pr|push-other|state|comments|threads|heads|wait-heads|wait-threads ...")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "repo":
		forgeRepo(ts, args)
	case "ci":
		forgeCI(ts, args)
	case "reviewer":
		forgeReviewer(ts, args)
	case "pr":
		forgePR(ts, args)
	case "push-other":
		forgePushOther(ts, args)
	case "state":
		forgeState(ts, args)
	case "comments":
		forgeComments(ts, args)
	case "threads":
		forgeThreads(ts, args)
	case "heads", "wait-heads":
		forgeHeads(ts, sub == "wait-heads", args)
	case "wait-threads":
		forgeWaitThreads(ts, args)
	default:
		if f := forgeSubs[sub]; f != nil {
			f(ts, args)
			return
		}
		ts.Fatalf("unknown forge subcommand %q", sub)
	}
}

// forgeSubs are the subcommands of forge defined beside it (the issues').
var forgeSubs = map[string]func(ts *testscript.TestScript, args []string){}

func forgeRepo(ts *testscript.TestScript, args []string) {
	var o giteatest.ProtectOptions
	protect := false
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-protect":
			o.RequiredContexts, protect = strings.Split(args[1], ","), true
		case "-approvals":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			o.RequiredApprovals, protect = n, true
		default:
			ts.Fatalf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) > 0 {
		ts.Fatalf("usage: forge repo [-protect CONTEXTS] [-approvals N]")
	}
	tb, ok := ts.Value(scriptTB{}).(testing.TB)
	if !ok {
		ts.Fatalf("the script's T is no testing.TB")
	}
	srv := giteaSrv.Get(tb)
	ctx, cancel := context.WithCancel(context.Background())
	ts.Defer(cancel)
	w := &forgeWorld{srv: srv, repo: srv.NewRepo(tb), ctx: ctx}
	worldsMu.Lock()
	worlds[ts] = w
	worldsMu.Unlock()
	ts.Defer(func() {
		worldsMu.Lock()
		delete(worlds, ts)
		worldsMu.Unlock()
	})

	// The script's files become the first commit on main after Gitea's:
	// the clone's .git moves into $WORK/repo, and what Gitea made that the
	// script did not write is checked out.
	work := ts.Getenv("WORK")
	dir := filepath.Join(work, "repo")
	ts.Check(os.MkdirAll(dir, 0o755))
	clone := filepath.Join(work, ".forge-clone")
	ts.Check(w.repo.Clone(ctx, srv.Admin, clone))
	ts.Check(os.Rename(filepath.Join(clone, ".git"), filepath.Join(dir, ".git")))
	ts.Check(os.RemoveAll(clone))
	git := func(args ...string) string {
		out, err := srv.Git(ctx, srv.Admin, dir, args...)
		ts.Check(err)
		return out
	}
	for _, f := range strings.Fields(git("ls-files", "--deleted")) {
		git("checkout", "-q", "HEAD", "--", f)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "the project")
	git("push", "-q", "origin", "main")
	if protect {
		ts.Check(w.repo.Protect(ctx, "main", o))
	}

	vars := map[string]string{
		"JLGCLI_FORGE_KIND":      "gitea",
		"JLGCLI_FORGE_URL":       srv.URL,
		"JLGCLI_FORGE_TOKEN_ENV": "FORGE_TOKEN",
		"FORGE_TOKEN":            srv.Admin.Token,
		"FORGE_REPO":             w.repo.Owner + "/" + w.repo.Name,
	}
	for _, kv := range srv.GitEnv(srv.Admin) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	pass := strings.Fields(ts.Getenv("PASSENV"))
	for k, v := range vars {
		ts.Setenv(k, v)
		if k != "FORGE_REPO" {
			pass = append(pass, k)
		}
	}
	ts.Setenv("PASSENV", strings.Join(pass, " "))
}

func forgeCI(ts *testscript.TestScript, args []string) {
	after := time.Duration(0)
	if len(args) > 1 && args[0] == "-after" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		after, args = d, args[2:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: forge ci [-after DURATION] CONTEXT PATH=TEXT|fail:DESCRIPTION ({head} in it: the head's commit)")
	}
	w := worldOf(ts)
	name, rule := args[0], args[1]
	var decide func(giteatest.Head) giteatest.Verdict
	if why, ok := strings.CutPrefix(rule, "fail:"); ok {
		decide = func(h giteatest.Head) giteatest.Verdict {
			return giteatest.Verdict{name: {State: gitea.StatusFailure, Description: strings.ReplaceAll(why, "{head}", h.SHA[:10]), After: after}}
		}
	} else {
		path, want, ok := strings.Cut(rule, "=")
		if !ok {
			ts.Fatalf("bad rule %q: PATH=TEXT or fail:DESCRIPTION", rule)
		}
		decide = func(h giteatest.Head) giteatest.Verdict {
			got, err := h.File(path)
			got = strings.TrimSpace(got)
			if err != nil {
				got = "missing"
			}
			if got == want {
				return giteatest.Verdict{name: {State: gitea.StatusSuccess, Description: "all tests pass", After: after}}
			}
			return giteatest.Verdict{name: {State: gitea.StatusFailure, Description: fmt.Sprintf("TestAnswer: %s says %s, want %s", path, got, want), After: after}}
		}
	}
	ci := w.repo.CI(decide)
	ci.Interval = 100 * time.Millisecond
	ci.Start(w.ctx)
	w.cis = append(w.cis, ci)
	ts.Defer(func() {
		if err := ci.Stop(); err != nil {
			ts.Logf("forge ci %s: %v", name, err)
		}
	})
}

func forgeReviewer(ts *testscript.TestScript, args []string) {
	var comment *giteatest.LineComment
	approve := false
	for len(args) > 0 {
		switch {
		case args[0] == "-approve":
			approve, args = true, args[1:]
		case args[0] == "-comment" && len(args) >= 3:
			path, line, ok := strings.Cut(args[1], ":")
			n, err := strconv.Atoi(line)
			if !ok || err != nil {
				ts.Fatalf("-comment %q: PATH:LINE", args[1])
			}
			comment = &giteatest.LineComment{Path: path, Line: n, Body: goUnescape(ts, args[2])}
			args = args[3:]
		default:
			ts.Fatalf("usage: forge reviewer [-comment PATH:LINE TEXT] [-approve]")
		}
	}
	w := worldOf(ts)
	rv := w.repo.Reviewer(w.srv.Reviewer)
	c, err := w.srv.Client(w.srv.Reviewer)
	ts.Check(err)
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan error, 1)
	go func() {
		commented, approved := map[int64]bool{}, map[int64]bool{}
		var first error
		note := func(err error) {
			if err != nil && first == nil && ctx.Err() == nil {
				first = err
			}
		}
		for ctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			prs, _, err := c.ListRepoPullRequests(w.repo.Owner, w.repo.Name, gitea.ListPullRequestsOptions{State: gitea.StateOpen})
			if err != nil {
				note(err)
				continue
			}
			for _, p := range prs {
				if p.Head == nil || approved[p.Index] {
					continue
				}
				st, _, err := c.GetCombinedStatus(w.repo.Owner, w.repo.Name, p.Head.Sha)
				if err != nil {
					note(err)
					continue
				}
				if st.State != gitea.StatusSuccess || st.TotalCount == 0 {
					continue
				}
				switch {
				case comment != nil && !commented[p.Index]:
					_, err := rv.Comment(ctx, int(p.Index), gitea.ReviewStateComment, comment.Path, comment.Line, comment.Body)
					note(err)
					commented[p.Index] = err == nil
				case approve:
					threads, err := rv.Threads(ctx, int(p.Index))
					if err != nil {
						note(err)
						continue
					}
					open := false
					for _, t := range threads {
						open = open || !t.Resolved
					}
					if open {
						continue
					}
					_, err = rv.Approve(ctx, int(p.Index), "Good.")
					note(err)
					approved[p.Index] = err == nil
				}
			}
		}
		done <- first
	}()
	ts.Defer(func() {
		cancel()
		if err := <-done; err != nil {
			ts.Logf("forge reviewer: %v", err)
		}
	})
}

func forgePR(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge pr BRANCH TITLE")
	}
	w := worldOf(ts)
	c, err := w.srv.Client(w.srv.CI)
	ts.Check(err)
	pr, _, err := c.CreatePullRequest(w.repo.Owner, w.repo.Name, gitea.CreatePullRequestOption{Head: args[0], Base: "main", Title: args[1]})
	if err != nil {
		ts.Fatalf("open a pull request of %s: %v", args[0], err)
	}
	ts.Setenv("PR", strconv.FormatInt(pr.Index, 10))
}

func forgePushOther(ts *testscript.TestScript, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: forge push-other BRANCH PATH TEXT")
	}
	w := worldOf(ts)
	c, err := w.srv.Client(w.srv.Reviewer)
	ts.Check(err)
	ch := giteatest.Change{Branch: args[0], Message: "a word from someone else", Files: map[string]string{args[1]: goUnescape(ts, args[2])}}
	if _, resp, err := c.GetRepoBranch(w.repo.Owner, w.repo.Name, args[0]); err != nil {
		if resp == nil || resp.StatusCode != 404 {
			ts.Fatalf("branch %s: %v", args[0], err)
		}
		ch.From = "main"
	}
	_, err = w.repo.Commit(w.ctx, w.srv.Reviewer, ch)
	ts.Check(err)
}

// prArg is the number of a pull request in a forge command.
func prArg(ts *testscript.TestScript, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		ts.Fatalf("%q is not a pull request's number", s)
	}
	return n
}

func forgeState(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge state N open|closed|merged")
	}
	w := worldOf(ts)
	c, err := w.srv.Client(w.srv.Admin)
	ts.Check(err)
	pr, _, err := c.GetPullRequest(w.repo.Owner, w.repo.Name, prArg(ts, args[0]))
	ts.Check(err)
	got := string(pr.State)
	if pr.HasMerged {
		got = "merged"
	}
	if got != args[1] {
		ts.Fatalf("pull request #%s is %s, want %s", args[0], got, args[1])
	}
}

func forgeComments(ts *testscript.TestScript, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: forge comments N REGEXP COUNT")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	w := worldOf(ts)
	c, err := w.srv.Client(w.srv.Admin)
	ts.Check(err)
	cs, _, err := c.ListIssueComments(w.repo.Owner, w.repo.Name, prArg(ts, args[0]), gitea.ListIssueCommentOptions{})
	ts.Check(err)
	got := 0
	for _, cm := range cs {
		ts.Logf("comment by %s: %q", cm.Poster.UserName, cm.Body)
		if re.MatchString(cm.Body) {
			got++
		}
	}
	if got != want {
		ts.Fatalf("%d comments of #%s match %q, want %d", got, args[0], args[1], want)
	}
}

// addressed is jlgcli's reply on a thread it addressed.
var addressed = regexp.MustCompile(`^Addressed in [0-9a-f]{40} \(jlgcli run \S+, round \d+\)\.$`)

func forgeThreads(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge threads N COUNT")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	w := worldOf(ts)
	threads, err := w.repo.Reviewer(w.srv.Admin).Threads(w.ctx, int(prArg(ts, args[0])))
	ts.Check(err)
	if len(threads) != want {
		ts.Fatalf("#%s has %d review threads, want %d", args[0], len(threads), want)
	}
	for _, t := range threads {
		last := t.Comments[len(t.Comments)-1]
		who := ""
		if last.Reviewer != nil {
			who = last.Reviewer.UserName
		}
		if !t.Resolved || who != w.srv.Admin.Name || !addressed.MatchString(last.Body) || len(t.Comments) != 2 {
			ts.Fatalf("the thread on %s:%d: resolved %v, %d comments, the last %q by %s; want resolved, one reply of jlgcli's (%s) naming its commit",
				t.Path, t.Line, t.Resolved, len(t.Comments), last.Body, who, w.srv.Admin.Name)
		}
	}
}

func forgeHeads(ts *testscript.TestScript, wait bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge heads|wait-heads N COUNT")
	}
	n := int(prArg(ts, args[0]))
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	w := worldOf(ts)
	if len(w.cis) == 0 {
		ts.Fatalf("no CI: forge ci first")
	}
	count := func() (int, []string) {
		var shas []string
		for _, h := range w.cis[0].Heads() {
			if h.PR == n {
				shas = append(shas, h.SHA[:10])
			}
		}
		return len(shas), shas
	}
	deadline := time.Now().Add(hangGuard)
	for {
		got, shas := count()
		switch {
		case !wait && got != want:
			ts.Fatalf("CI built %d heads of #%d (%s), want %d", got, n, strings.Join(shas, " "), want)
		case got >= want || !wait:
			return
		case time.Now().After(deadline):
			ts.Fatalf("CI built %d heads of #%d (%s), never %d", got, n, strings.Join(shas, " "), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// goUnescape reads s as the inside of a Go string literal (\n, \t, \x1b,
// \u202e…); a double quote stands for itself.
func goUnescape(ts *testscript.TestScript, s string) string {
	u, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	if err != nil {
		ts.Fatalf("%q: %v", s, err)
	}
	return u
}

func forgeWaitThreads(ts *testscript.TestScript, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: forge wait-threads N COUNT")
	}
	n := int(prArg(ts, args[0]))
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	w := worldOf(ts)
	rv := w.repo.Reviewer(w.srv.Reviewer)
	deadline := time.Now().Add(hangGuard)
	for {
		got, err := rv.Threads(w.ctx, n)
		if err == nil && len(got) >= want {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("pull request #%d never had %d review threads", n, want)
}
