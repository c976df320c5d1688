package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/hooks"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
)

var giteaSrv giteatest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	giteaSrv.Stop()
	os.Exit(code)
}

// prWorld is a pull request on a real Gitea, opened from a checkout of
// the admin's (jlgcli), with a CI that fails ci/test until answer.txt says
// 42 (or decides as decide says); main is protected (ci/test and an
// approval required) for the targets past green.
type prWorld struct {
	srv    *giteatest.Server
	repo   giteatest.Repo
	dir    string
	number int
	ci     *giteatest.CI
	fg     forge.Forge
	parts  Parts
	said   *said
	state  string
	spec   PRSpec
}

const tokenVar = "JLGCLI_TEST_GITEA_TOKEN"

// comments are the comments of the world's pull request, oldest first.
func (w *prWorld) comments(t *testing.T) []*gitea.Comment {
	t.Helper()
	c, err := w.srv.Client(w.srv.Admin)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := c.ListIssueComments(w.repo.Owner, w.repo.Name, int64(w.number), gitea.ListIssueCommentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newPRWorld(t *testing.T, target pull.Target, ciAfter time.Duration, decide func(giteatest.Head) giteatest.Verdict) *prWorld {
	t.Helper()
	srv := giteaSrv.Get(t)
	ctx := context.Background()
	w := &prWorld{srv: srv, repo: srv.NewRepo(t), dir: filepath.Join(t.TempDir(), "co"), state: t.TempDir(), said: &said{}}
	if err := w.repo.Clone(ctx, srv.Admin, w.dir); err != nil {
		t.Fatal(err)
	}
	// jlgcli's own gits authenticate as the admin through the environment.
	for _, kv := range srv.GitEnv(srv.Admin) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	g := func(args ...string) {
		t.Helper()
		if _, err := srv.Git(ctx, srv.Admin, w.dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, w.dir, "answer.txt", "41\n")
	g("add", "-A")
	g("commit", "-q", "-m", "the answer")
	g("push", "-q", "origin", "main")
	g("checkout", "-q", "-b", "fix-answer")
	writeFile(t, w.dir, "CHANGES.txt", "the answer is to be fixed\n")
	g("add", "-A")
	g("commit", "-q", "-m", "start the fix")
	g("push", "-q", "origin", "fix-answer")
	g("checkout", "-q", "main")
	if target != pull.Green {
		// Merged through the branch protection: ci/test and an approval.
		if err := w.repo.Protect(ctx, "main", giteatest.ProtectOptions{RequiredContexts: []string{"ci/test"}, RequiredApprovals: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if decide == nil {
		decide = func(h giteatest.Head) giteatest.Verdict {
			a, _ := h.File("answer.txt")
			if strings.TrimSpace(a) == "42" {
				return giteatest.Verdict{"ci/test": {State: gitea.StatusSuccess, Description: "all tests pass", After: ciAfter}}
			}
			return giteatest.Verdict{"ci/test": {State: gitea.StatusFailure, Description: "TestAnswer: got " + strings.TrimSpace(a) + ", want 42", After: ciAfter}}
		}
	}
	w.ci = w.repo.CI(decide)
	w.ci.Interval = 100 * time.Millisecond
	w.ci.Start(ctx)
	t.Cleanup(func() { _ = w.ci.Stop() })

	repo, err := git.Open(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	token := srv.Admin.Token
	w.parts = Parts{Say: w.said, Getenv: func(k string) string {
		if k == tokenVar {
			return token
		}
		return os.Getenv(k)
	}}
	w.spec = PRSpec{
		Task: TaskSpec{
			Tiers: []TierSpec{{Name: "fake", Backend: "fake", Attempts: 2}},
			// The agent fixes the answer, and writes the note a review
			// thread asks for.
			Commands: map[string]agent.CommandSpec{"fake": {Command: []string{"sh", "-c",
				`p=$(cat); case "$p" in *"Review thread on answer.txt"*) echo "42, as the spec says" > NOTE.txt;; esac; echo 42 > answer.txt; echo done`}}},
			TimeoutMs: 120000, BudgetUSD: 1, EscalateFrom: "base", AntiGaming: "refuse",
			Checks: []gate.Check{{Name: "answer", Shell: "grep -qx 42 answer.txt"}},
		},
		Remote: "origin",
		Forge:  forge.Settings{Kind: forge.Gitea, URL: srv.URL, TokenEnv: tokenVar},
		Policy: pull.Policy{Target: target, Poll: millis.Of(300 * time.Millisecond), MaxPoll: millis.Of(2 * time.Second), Grace: millis.Of(time.Minute)},
	}
	if w.fg, err = OpenForge(ctx, repo, w.spec, w.parts); err != nil {
		t.Fatal(err)
	}
	pr, _, err := w.fg.OpenPR(ctx, forge.NewPR{Head: "fix-answer", Base: "main", Title: "Make the answer 42", Body: "The answer must be 42."})
	if err != nil {
		t.Fatal(err)
	}
	w.number, w.spec.Number = pr.Number, pr.Number
	return w
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *prWorld) start(ctx context.Context, t *testing.T) (PRResult, error) {
	repo, err := git.Open(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	return StartPR(ctx, NewPR{Spec: w.spec, Prompt: "Make the answer 42", Repo: repo, StateDir: w.state}, w.fg, w.parts)
}

// A pull request is worked on a real Gitea until merged: a check only CI
// runs fails on the first head and becomes a round; someone else pushes to
// the branch meanwhile and the next round builds on it; a reviewer's line
// comment becomes a round, is answered naming the commit and resolved; the
// reviewer approves; jlgcli merges through the branch protection.
func TestPRUntilMergedOnGitea(t *testing.T) {
	w := newPRWorld(t, pull.Merged, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	other, reviewer := w.srv.Reviewer, w.repo.Reviewer(w.srv.Reviewer)
	// The rest of the world: once jlgcli's fix is green, someone else
	// pushes to the branch; once that is green, the reviewer asks on a line;
	// once the thread is resolved, the reviewer approves.
	var (
		mu                    sync.Mutex
		pushed, asked, agreed string
	)
	world := make(chan error, 1)
	go func() {
		world <- func() error {
			for ctx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
				pr, err := w.fg.PR(ctx, w.number)
				if err != nil || pr.State != forge.StateOpen {
					continue
				}
				cs, err := w.fg.Checks(ctx, pr.HeadSHA, "")
				green := err == nil && len(cs.Checks) == 1 && cs.Checks[0].State == forge.Success
				mu.Lock()
				p, a := pushed, asked
				mu.Unlock()
				switch {
				case p == "" && green:
					sha, err := w.repo.Commit(ctx, other, giteatest.Change{Branch: "fix-answer", Message: "docs: a word from someone else", Files: map[string]string{"OTHER.txt": "someone else was here\n"}})
					if err != nil {
						return err
					}
					mu.Lock()
					pushed = sha
					mu.Unlock()
				case p != "" && a == "" && green && pr.HeadSHA == p:
					if _, err := reviewer.Comment(ctx, w.number, gitea.ReviewStateComment, "answer.txt", 1, "Say why 42 in a NOTE.txt."); err != nil {
						return err
					}
					mu.Lock()
					asked = pr.HeadSHA
					mu.Unlock()
				case a != "" && agreed == "":
					ts, err := reviewer.Threads(ctx, w.number)
					if err != nil || len(ts) == 0 || !ts[0].Resolved {
						continue
					}
					if _, err := reviewer.Approve(ctx, w.number, "Good."); err != nil {
						return err
					}
					agreed = pr.HeadSHA
					return nil
				}
			}
			return ctx.Err()
		}()
	}()

	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("what the run said:\n%s", strings.Join(w.said.snapshot(), "\n"))
	if werr := <-world; werr != nil {
		t.Fatalf("the world: %v", werr)
	}
	if res.Status != engine.StatusDone || res.ExitCode != 0 {
		t.Fatalf("status %s (exit %d): %s\n%s", res.Status, res.ExitCode, res.Reason, strings.Join(w.said.lines, "\n"))
	}
	pr, err := w.fg.PR(ctx, w.number)
	if err != nil || pr.State != forge.StateMerged {
		t.Fatalf("the pull request is %s (%v), want merged", pr.State, err)
	}
	if res.Merged == "" || len(res.Rounds) != 2 {
		t.Errorf("merged %q after %d rounds, want merged after 2: %+v", res.Merged, len(res.Rounds), res.Rounds)
	}
	if res.Title != "Make the answer 42" || res.Base != "main" || res.Current != nil || len(res.Rounds[0].Blockers) == 0 || res.Rounds[0].Head == "" {
		t.Errorf("the result tells title %q, base %q, current %v, round 1 on %q for %q", res.Title, res.Base, res.Current, res.Rounds[0].Head, res.Rounds[0].Blockers)
	}
	// What landed on main: jlgcli's fix, the other's commit it built on,
	// and the note the reviewer asked for.
	out := filepath.Join(t.TempDir(), "out")
	if err := w.repo.Clone(ctx, w.srv.Admin, out); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"answer.txt": "42", "OTHER.txt": "someone else was here", "NOTE.txt": "42, as the spec says"} {
		got, err := os.ReadFile(filepath.Join(out, file))
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("main's %s: %q (%v), want %q", file, got, err, want)
		}
	}
	// The thread was answered naming the commit, by jlgcli, and resolved.
	ts, err := reviewer.Threads(ctx, w.number)
	if err != nil || len(ts) != 1 {
		t.Fatalf("threads: %d, %v", len(ts), err)
	}
	last := ts[0].Comments[len(ts[0].Comments)-1]
	if !ts[0].Resolved || last.Reviewer == nil || last.Reviewer.UserName != w.srv.Admin.Name || !strings.Contains(last.Body, res.Rounds[1].Pushed) {
		t.Errorf("thread resolved %v, last comment %q by %v; want jlgcli's reply naming %s", ts[0].Resolved, last.Body, last.Reviewer, res.Rounds[1].Pushed)
	}
	// Round 2 was made on the other's head: it holds the other's commit.
	if r := res.Rounds[1]; r.Pushed == "" || !strings.Contains(strings.Join(w.said.lines, "\n"), "round 2 on "+git.ShortSHA(pushed)) {
		t.Errorf("round 2 %+v was not made on the head %s someone else pushed:\n%s", r, pushed, strings.Join(w.said.lines, "\n"))
	}
	// Every head CI built was one of the four: the PR's, jlgcli's fix, the
	// other's, jlgcli's answer to the review.
	if heads := w.ci.Heads(); len(heads) != 4 {
		t.Errorf("CI built %d heads, want 4", len(heads))
	}
	// The run is kept: show reads it back as it ended.
	run, err := store.Open(w.state, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	evs, _, err := Events(run)
	if err != nil {
		t.Fatal(err)
	}
	back, err := PRResultOf(run, evs)
	if err != nil || back.Status != engine.StatusDone || len(back.Rounds) != 2 || back.Merged != res.Merged {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

// A loop stopped while it waits (Ctrl-C, jlgcli stop) ends interrupted,
// touching nothing; resume goes on from its journal and reaches the
// target. A loop that cannot reach it (the check fails again after its
// round) gives up once: one comment on the pull request, exit 8.
func TestPRStopResumeAndGiveUpOnGitea(t *testing.T) {
	w := newPRWorld(t, pull.Green, 3*time.Second, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Stopped once its round is pushed and it waits for CI.
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			if strings.Contains(strings.Join(w.said.snapshot(), "\n"), "pushed ") {
				time.Sleep(500 * time.Millisecond)
				cancel()
			}
		}
	}()
	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusInterrupted || len(res.Rounds) != 1 || res.Rounds[0].Pushed == "" {
		t.Fatalf("stopped: %s after %+v, want interrupted after one pushed round\n%s", res.Status, res.Rounds, strings.Join(w.said.lines, "\n"))
	}
	run, err := store.Open(w.state, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := lockedEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	back, done, err := ResumePR(context.Background(), w.state, run, evs, w.parts)
	run.Close()
	if err != nil || done || back.Status != engine.StatusDone || len(back.Rounds) != 1 {
		t.Fatalf("resumed: %s (done before %v, %v) after %d rounds: %s\n%s", back.Status, done, err, len(back.Rounds), back.Reason, strings.Join(w.said.lines, "\n"))
	}

	// Giving up: a check the agent's change does not fix fails again on
	// the round's head.
	w2 := newPRWorld(t, pull.Green, 0, func(h giteatest.Head) giteatest.Verdict {
		return giteatest.Verdict{"ci/test": {State: gitea.StatusFailure, Description: "lint: line too long"}}
	})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel2()
	w2.spec.Policy.MaxRounds = 1
	// The user's hooks are told of the run: its round, its end, and that
	// it needs them.
	told := filepath.Join(t.TempDir(), "events")
	w2.parts.Hooks = &hooks.Dispatcher{Hooks: []hooks.Hook{{On: []string{"*"}, Command: []string{"sh", "-c", "cat >> " + told + "; echo >> " + told}}}}
	res2, err := w2.start(ctx2, t)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Status != engine.StatusNeedsYou || res2.ExitCode != 8 || res2.Comment == "" || len(res2.Rounds) != 1 {
		t.Fatalf("gave up: %s (exit %d, comment %q) after %d rounds: %s\n%s", res2.Status, res2.ExitCode, res2.Comment, len(res2.Rounds), res2.Reason, strings.Join(w2.said.lines, "\n"))
	}
	cs := w2.comments(t)
	n := 0
	for _, cm := range cs {
		if strings.Contains(cm.Body, "jlgcli stopped working on this pull request") && strings.Contains(cm.Body, "lint: line too long") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the pull request was told %d times why jlgcli gave up, want once", n)
	}
	data, err := os.ReadFile(told)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e hooks.Event
		if line == "" || json.Unmarshal([]byte(line), &e) != nil || e.Command != "pr" || e.RunID != res2.RunID {
			continue
		}
		kinds = append(kinds, e.Event)
		if e.Event == hooks.PRRound && (e.Attempt != 1 || e.Commit == "") {
			t.Errorf("the round's hook event: %+v", e)
		}
	}
	if got := strings.Join(kinds, ","); got != "run.started,pr.round,run.ended,run.needs-attention" {
		t.Errorf("the hooks were told %s", got)
	}
}

func (s *said) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// A pull request that conflicts with its base: the base is merged into its
// head without a working tree, the round's agent resolves the markers, and
// what it made is pushed as one merge of the base (two parents: the PR's
// head and the base), on the lease; the pull request is green after.
func TestPRConflictWithBaseOnGitea(t *testing.T) {
	w := newPRWorld(t, pull.Green, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The PR's branch and main both change answer.txt's line.
	if _, err := w.repo.Commit(ctx, w.srv.Admin, giteatest.Change{Branch: "fix-answer", Message: "answer 42 on the branch", Files: map[string]string{"answer.txt": "42\n"}}); err != nil {
		t.Fatal(err)
	}
	base, err := w.repo.Commit(ctx, w.srv.Admin, giteatest.Change{Branch: "main", Message: "answer 43 on main", Files: map[string]string{"answer.txt": "43\n"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(w.said.snapshot(), "\n")
	if res.Status != engine.StatusDone || len(res.Rounds) != 1 || res.Rounds[0].Pushed == "" {
		t.Fatalf("%s after %+v: %s\n%s", res.Status, res.Rounds, res.Reason, said)
	}
	if !strings.Contains(said, "conflicts in answer.txt") {
		t.Errorf("the run did not say the base conflicted:\n%s", said)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := w.repo.Clone(ctx, w.srv.Admin, out); err != nil {
		t.Fatal(err)
	}
	parents, err := w.srv.Git(ctx, w.srv.Admin, out, "log", "-1", "--format=%P", "origin/fix-answer")
	if err != nil {
		t.Fatal(err)
	}
	if ps := strings.Fields(parents); len(ps) != 2 || ps[1] != base {
		t.Errorf("the pushed head's parents are %v, want the PR's head and main's %s", ps, base)
	}
	if body, err := w.srv.Git(ctx, w.srv.Admin, out, "show", "origin/fix-answer:answer.txt"); err != nil || body != "42" {
		t.Errorf("the branch's answer.txt: %q (%v)", body, err)
	}
}

// A kill between the journal's round and its task run's creation leaves a
// round that was never made: resume looks again with the memory of before
// that round (its blockers not acted on), makes the round and reaches the
// target, where counting it as made would give up ("no new head").
func TestPRRoundNeverMadeIsMadeOnResume(t *testing.T) {
	w := newPRWorld(t, pull.Green, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, err := w.fg.PR(ctx, w.number)
	if err != nil {
		t.Fatal(err)
	}
	// The journal a kill leaves: the start, a look that decided a round
	// (its memory: the failed check acted on at the head), the round begun.
	w.spec.Policy.Self = w.srv.Admin.Name
	rec := w.spec
	rec.Task = w.spec.Task.Recorded()
	opts, _ := json.Marshal(rec)
	id := store.NewRunID(time.Now())
	run, err := store.Create(w.state, id, store.Meta{Command: "pr", Backend: "fake", Prompt: "Make the answer 42", Options: opts, Cwd: w.dir})
	if err != nil {
		t.Fatal(err)
	}
	before := pull.Memory{Head: pr.HeadSHA, HeadSince: time.Now(), Done: []string{pr.HeadSHA + " rerun:ci/test"}}
	after := before
	after.Done = append(after.Done, pr.HeadSHA+" check:ci/test")
	after.Rounds = 1
	for _, e := range []struct {
		typ  string
		data any
	}{
		{EventPRStart, PRStartData{Number: w.number, URL: pr.URL, Branch: pr.Head, Base: pr.Base, Target: pull.Green}},
		{EventPRLook, PRLookData{Action: pull.Action{Do: pull.Attempt, Head: pr.HeadSHA}, Memory: after}},
		{EventPRRound, PRRoundData{Round: 1, RunID: store.NewRunID(time.Now()), Head: pr.HeadSHA, Blockers: []string{`check "ci/test" failed`}, Before: before}},
	} {
		data, _ := json.Marshal(e.data)
		if err := run.Append(engine.Event{Type: e.typ, Time: time.Now().UTC(), Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	run.Close()
	run, err = store.Open(w.state, id)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	evs, err := lockedEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := ResumePR(ctx, w.state, run, evs, w.parts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusDone || len(res.Rounds) != 2 || !res.Rounds[0].NotMade || res.Rounds[1].Pushed == "" {
		t.Fatalf("resumed: %s after %+v: %s\n%s", res.Status, res.Rounds, res.Reason, strings.Join(w.said.snapshot(), "\n"))
	}
}

// A pull request whose whole change deletes or weakens its base's tests is
// not called green by jlgcli, whoever weakened them (here a collaborator,
// before jlgcli took it over): it ends needs-you naming the file. With
// --edit-tests (a task meant to change tests) the same pull request is green.
func TestPRThatWeakensTestsIsNotGreenOnGitea(t *testing.T) {
	for _, edit := range []bool{false, true} {
		w := newPRWorld(t, pull.Green, 0, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if _, err := w.repo.Commit(ctx, w.srv.Admin, giteatest.Change{Branch: "main", Message: "a test", Files: map[string]string{"answer_test.go": "package answer\n"}}); err != nil {
			t.Fatal(err)
		}
		g := func(args ...string) {
			t.Helper()
			if _, err := w.srv.Git(ctx, w.srv.Admin, w.dir, args...); err != nil {
				t.Fatal(err)
			}
		}
		g("fetch", "-q", "origin")
		g("checkout", "-q", "-B", "fix-answer", "origin/fix-answer")
		g("merge", "-q", "--no-edit", "origin/main")
		g("rm", "-q", "answer_test.go")
		writeFile(t, w.dir, "answer.txt", "42\n")
		g("commit", "-q", "-am", "the answer, and no test")
		g("push", "-q", "origin", "fix-answer")
		g("checkout", "-q", "main")
		w.spec.Task.EditTests = edit
		res, err := w.start(ctx, t)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !edit && (res.Status != engine.StatusNeedsYou || !strings.Contains(res.Reason, "deletes answer_test.go")):
			t.Errorf("a pull request that deletes a test: %s: %s", res.Status, res.Reason)
		case edit && res.Status != engine.StatusDone:
			t.Errorf("with --edit-tests: %s: %s", res.Status, res.Reason)
		}
	}
}

// A remote that cannot be fetched from (the network, a credential gone)
// is tried again with waits, then ends the run error, resumable, having
// made no round; once it can be reached, resume goes on to the target.
func TestPRRemoteUnreachableThenResumedOnGitea(t *testing.T) {
	w := newPRWorld(t, pull.Green, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g := func(args ...string) {
		t.Helper()
		if _, err := w.srv.Git(ctx, w.srv.Admin, w.dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	good := w.repo.URL
	g("remote", "set-url", "origin", "http://127.0.0.1:9/nowhere.git")
	res, err := w.start(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != engine.StatusError || len(res.Rounds) != 0 || !strings.Contains(res.Reason, "failed again and again") {
		t.Fatalf("unreachable remote: %s after %d rounds: %s", res.Status, len(res.Rounds), res.Reason)
	}
	g("remote", "set-url", "origin", good)
	run, err := store.Open(w.state, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	evs, err := lockedEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := ResumePR(ctx, w.state, run, evs, w.parts)
	if err != nil || back.Status != engine.StatusDone || len(back.Rounds) != 1 {
		t.Fatalf("resumed: %s (%v) after %d rounds: %s", back.Status, err, len(back.Rounds), back.Reason)
	}
}
