package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// giteaSrv is the Gitea of the pull-request tests, stopped by TestMain.
var giteaSrv giteatest.Shared

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var submittedAs = regexp.MustCompile(`as run (\S+):`)

// TestPRUntilMergedOnWorkers: jlgcli pr N --until merged --temporal works
// a pull request on a real Gitea on the workers, which read the forge's
// token from their own environment (the jlgcli that submits it has none):
// the check ci/test fails at the pull request's head and becomes a round
// (a task on a worker) pushed onto its branch; the worker is killed
// (SIGKILL) while the workflow waits for CI on a durable timer, with no
// activity under way; another worker, started after, finishes it: the
// reviewer approves, the workers merge. Nothing is lost or made twice: the
// agent was called once, one round was pushed.
func TestPRUntilMergedOnWorkers(t *testing.T) {
	srv := giteaSrv.Get(t)
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo := srv.NewRepo(t)
	// Every git of the world (the workers' too) authenticates to Gitea as
	// the admin through its environment; only the workers get the token.
	w.env = append(w.env, srv.GitEnv(srv.Admin)...)
	co := filepath.Join(w.dir, "co")
	must(t, repo.Clone(ctx, srv.Admin, co))
	g := func(args ...string) {
		t.Helper()
		if _, err := srv.Git(ctx, srv.Admin, co, args...); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(co, "answer.txt"), []byte("wrong\n"), 0o644))
	g("add", "-A")
	g("commit", "-q", "-m", "the answer is wrong")
	g("push", "-q", "origin", "main")
	g("checkout", "-q", "-b", "fix-answer")
	must(t, os.WriteFile(filepath.Join(co, "CHANGES.txt"), []byte("the answer is to be fixed\n"), 0o644))
	g("add", "-A")
	g("commit", "-q", "-m", "start the fix")
	g("push", "-q", "origin", "fix-answer")
	g("checkout", "-q", "main")
	must(t, repo.Protect(ctx, "main", giteatest.ProtectOptions{RequiredContexts: []string{"ci/test"}, RequiredApprovals: 1}))
	ci := repo.CI(func(h giteatest.Head) giteatest.Verdict {
		a, _ := h.File("answer.txt")
		if strings.TrimSpace(a) == "right" {
			return giteatest.Verdict{"ci/test": {State: gitea.StatusSuccess, Description: "all tests pass", After: 6 * time.Second}}
		}
		return giteatest.Verdict{"ci/test": {State: gitea.StatusFailure, Description: "TestAnswer: got " + strings.TrimSpace(a) + ", want right", After: time.Second}}
	})
	ci.Interval = 100 * time.Millisecond
	ci.Start(ctx)
	t.Cleanup(func() { _ = ci.Stop() })
	token := srv.Admin.Token
	fg, err := forge.Open(ctx, repo.URL, forge.Settings{Kind: forge.Gitea, URL: srv.URL, TokenEnv: tokenVar},
		forge.Options{Getenv: func(k string) string { return map[string]string{tokenVar: token}[k] }})
	must(t, err)
	pr, _, err := fg.OpenPR(ctx, forge.NewPR{Head: "fix-answer", Base: "main", Title: "Make the answer right", Body: "answer.txt must say right."})
	must(t, err)

	clientEnv := w.env
	w.env = append(w.env, tokenVar+"="+token)
	a := w.worker("a")
	w.env = clientEnv

	cmd := exec.Command(jlgcli, "pr", "--json", "--until", "merged", "--temporal", w.addr, "--temporal-namespace", w.ns, "-b", "fake",
		"--check", "grep -q right answer.txt", "--forge-kind", "gitea", "--forge-url", srv.URL, "--forge-token-env", tokenVar,
		"--poll", "2s", "--checks-grace", "2m", fmt.Sprint(pr.Number))
	var stdout, stderr syncBuffer
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = clientEnv, co, &stdout, &stderr
	must(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-ended
		}
	})

	// Once the round is pushed and the workflow waits for CI on a timer
	// (no activity under way), worker a is killed and worker b started.
	c := w.ts.GetDefaultClient()
	var id string
	deadline := time.Now().Add(3 * time.Minute)
	for killed := false; !killed; {
		if time.Now().After(deadline) {
			t.Fatalf("the round was not pushed, or no wait followed it\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
		if id == "" {
			m := submittedAs.FindStringSubmatch(stderr.String())
			if m == nil {
				continue
			}
			id = m[1]
		}
		st, err := temporal.QueryPRState(ctx, c, id)
		if err != nil || len(st.Result.Rounds) != 1 || st.Result.Rounds[0].Pushed == "" || len(st.Waiting) == 0 {
			continue
		}
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || len(d.GetPendingActivities()) != 0 || len(d.GetPendingChildren()) != 0 {
			continue
		}
		must(t, a.Process.Signal(syscall.SIGKILL))
		killed = true
		t.Logf("worker a killed during the wait for %s", strings.Join(st.Waiting, ", "))
	}
	w.env = append(w.env, tokenVar+"="+token)
	w.worker("b")
	w.env = clientEnv

	// The reviewer approves the round's head once CI is green there.
	reviewer := repo.Reviewer(srv.Reviewer)
	go func() {
		for ctx.Err() == nil {
			time.Sleep(300 * time.Millisecond)
			p, err := fg.PR(ctx, pr.Number)
			if err != nil || p.HeadSHA == pr.HeadSHA || p.State != forge.StateOpen {
				continue
			}
			cs, err := fg.Checks(ctx, p.HeadSHA, "")
			if err == nil && len(cs.Checks) == 1 && cs.Checks[0].State == forge.Success {
				_, _ = reviewer.Approve(ctx, pr.Number, "Right.")
				return
			}
		}
	}()

	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("jlgcli pr: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("jlgcli pr did not end\n%s", stderr.String())
	}
	var res local.PRResult
	must(t, json.Unmarshal([]byte(stdout.String()), &res))
	if res.Status != engine.StatusDone || res.Merged == "" || len(res.Rounds) != 1 || res.Rounds[0].Pushed == "" {
		t.Fatalf("result: %+v\n%s", res, stderr.String())
	}
	if got, err := fg.PR(ctx, pr.Number); err != nil || got.State != forge.StateMerged {
		t.Errorf("the pull request is %s (%v), want merged", got.State, err)
	}
	out := filepath.Join(w.dir, "out")
	must(t, repo.Clone(ctx, srv.Admin, out))
	if got, err := os.ReadFile(filepath.Join(out, "answer.txt")); err != nil || strings.TrimSpace(string(got)) != "right" {
		t.Errorf("main's answer.txt: %q (%v)", got, err)
	}
	if calls := w.callsMade(); len(calls) != 1 || calls[0] != "a" {
		t.Errorf("agent calls %v, want one, on worker a", calls)
	}
	if heads := ci.Heads(); len(heads) != 2 {
		t.Errorf("CI built %d heads, want the pull request's and the round's", len(heads))
	}
	blog, _ := os.ReadFile(filepath.Join(w.dir, "b.log"))
	if !strings.Contains(string(blog), "merged") {
		t.Errorf("worker b did not merge it:\n%s", blog)
	}
	// The run is kept where it was submitted: show reads it.
	show := exec.Command(jlgcli, "show", "--json", id)
	show.Env, show.Dir = clientEnv, co
	shown, err := show.Output()
	var back local.PRResult
	if err != nil || json.Unmarshal(shown, &back) != nil || back.Status != engine.StatusDone || back.Merged != res.Merged {
		t.Errorf("show: %v\n%s", err, shown)
	}
	if *update {
		// pr-history.json is kept as it was recorded, before the looks
		// were timed by the workflow's clock (pr/workflow-clock).
		recordHistory(t, w, id, filepath.Join("..", "..", "internal", "temporal", "testdata", "pr-clock-history.json"))
	}
}
