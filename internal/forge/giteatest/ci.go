package giteatest

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"code.gitea.io/sdk/gitea"
)

// CI is a scripted CI bound to one repository, acting as user CI: it
// watches the repository's open pull requests and, for each head commit
// it has not seen, asks the test's function for a Verdict, posts every
// check of the verdict as a pending commit status at once, then each
// check's own state once its After has passed. It builds heads as a real
// CI does: a PR pushed again gets a build of the new head, the statuses of
// an older head are still posted at that head, and a closed or merged PR
// is no longer watched.
//
// Step makes one pass (for deterministic tests); Start makes one every
// Interval until Stop or its context ends. Both may be used on one CI.
type CI struct {
	// Interval is the time between two passes of Start (default 200ms).
	Interval time.Duration

	repo   Repo
	decide func(Head) Verdict

	mu     sync.Mutex // held by a pass
	seen   map[int]map[string]bool
	due    []due
	heads  []Head
	posted []Post

	run struct {
		sync.Mutex
		stop, done chan struct{}
		err        error
	}
}

// Head is a pull request's head commit as the CI builds it.
type Head struct {
	// PR is the pull request's number, Branch its head branch and SHA
	// the commit.
	PR     int
	Branch string
	SHA    string
	// N is how many heads of this pull request the CI has seen, this one
	// included: 1 for the first push.
	N int

	repo Repo
	c    *gitea.Client
}

// File is the content of path in the head's commit; an error that
// wraps fs.ErrNotExist when the commit has no such file. It reads as CI
// with the context of the pass that saw the head (a head of Start's
// cannot be read once the CI stopped).
func (h Head) File(path string) (string, error) {
	b, resp, err := h.c.GetFile(h.repo.Owner, h.repo.Name, h.SHA, path)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return "", fmt.Errorf("%s at %.12s: %w", path, h.SHA, fs.ErrNotExist)
		}
		return "", fmt.Errorf("read %s at %.12s: %w", path, h.SHA, err)
	}
	return string(b), nil
}

// Verdict is what the CI reports for one head: a check per context name
// (ci/test, ci/lint…).
type Verdict map[string]Status

// Status is one check's verdict: its state, description and link, posted
// After (0: at once) the pending status that starts it.
type Status struct {
	State       gitea.StatusState
	Description string
	TargetURL   string
	After       time.Duration
}

// Post is one commit status the CI posted.
type Post struct {
	PR      int
	SHA     string
	N       int
	Context string
	State   gitea.StatusState
	// Description and TargetURL are as posted.
	Description, TargetURL string
	At                     time.Time
}

// pendingDescription is the description of the pending status of a
// check that starts.
const pendingDescription = "running"

// due is a verdict's status not yet posted.
type due struct {
	head    Head
	context string
	status  Status
	at      time.Time
}

// CI makes the scripted CI of r, whose verdict for each head is decide's.
// decide runs inside a pass (once per head, in the order the CI sees
// them); it may read the head's files.
func (r Repo) CI(decide func(Head) Verdict) *CI {
	return &CI{repo: r, decide: decide, seen: map[int]map[string]bool{}}
}

// Step is one pass: it lists the open pull requests, starts a build of
// each head it has not seen (pending statuses, the verdict decided) and
// posts the verdicts that are due. It returns at the first error; a
// status it could not post is tried again by the next pass.
func (ci *CI) Step(ctx context.Context) error {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	c, err := ci.repo.srv.client(ctx, ci.repo.srv.CI)
	if err != nil {
		return err
	}
	prs, err := openPRs(c, ci.repo)
	if err != nil {
		return err
	}
	for _, p := range prs {
		if p.Head == nil || p.Head.Sha == "" {
			continue
		}
		n := int(p.Index)
		if ci.seen[n] == nil {
			ci.seen[n] = map[string]bool{}
		}
		if ci.seen[n][p.Head.Sha] {
			continue
		}
		h := Head{PR: n, Branch: p.Head.Ref, SHA: p.Head.Sha, N: len(ci.seen[n]) + 1, repo: ci.repo, c: c}
		v := ci.decide(h)
		names := slices.Sorted(maps.Keys(v))
		for _, name := range names {
			if err := ci.post(c, h, name, Status{State: gitea.StatusPending, Description: pendingDescription, TargetURL: v[name].TargetURL}); err != nil {
				return err
			}
		}
		ci.seen[n][h.SHA] = true
		ci.heads = append(ci.heads, h)
		now := time.Now()
		for _, name := range names {
			ci.due = append(ci.due, due{head: h, context: name, status: v[name], at: now.Add(v[name].After)})
		}
	}
	for len(ci.due) > 0 {
		i := slices.IndexFunc(ci.due, func(d due) bool { return !time.Now().Before(d.at) })
		if i < 0 {
			break
		}
		d := ci.due[i]
		if err := ci.post(c, d.head, d.context, d.status); err != nil {
			return err
		}
		ci.due = slices.Delete(ci.due, i, i+1)
	}
	return nil
}

// post posts one status of head h and records it.
func (ci *CI) post(c *gitea.Client, h Head, name string, s Status) error {
	if _, _, err := c.CreateStatus(ci.repo.Owner, ci.repo.Name, h.SHA, gitea.CreateStatusOption{State: s.State, Context: name,
		Description: s.Description, TargetURL: s.TargetURL}); err != nil {
		return fmt.Errorf("ci: post %s %s at %.12s of #%d: %w", name, s.State, h.SHA, h.PR, err)
	}
	ci.posted = append(ci.posted, Post{PR: h.PR, SHA: h.SHA, N: h.N, Context: name, State: s.State,
		Description: s.Description, TargetURL: s.TargetURL, At: time.Now()})
	return nil
}

// openPRs lists r's open pull requests, every page.
func openPRs(c *gitea.Client, r Repo) ([]*gitea.PullRequest, error) {
	var all []*gitea.PullRequest
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(r.Owner, r.Name, gitea.ListPullRequestsOptions{State: gitea.StateOpen,
			ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("ci: list the pull requests of %s/%s: %w", r.Owner, r.Name, err)
		}
		all = append(all, prs...)
		if len(prs) == 0 || resp == nil || resp.NextPage == 0 {
			return all, nil
		}
	}
}

// Start makes a pass every Interval in the background until Stop or ctx
// ends; an error of a pass does not stop it (the next pass tries again),
// the first is what Stop returns. A CI starts once: Start after Start or
// Stop does nothing.
func (ci *CI) Start(ctx context.Context) {
	ci.run.Lock()
	defer ci.run.Unlock()
	if ci.run.done != nil {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	ci.run.stop, ci.run.done = stop, done
	every := ci.Interval
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			// A pass under way when Stop comes ends first: a status
			// posted is a status recorded.
			if err := ci.Step(ctx); err != nil && ctx.Err() == nil {
				ci.run.Lock()
				if ci.run.err == nil {
					ci.run.err = err
				}
				ci.run.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the passes Start makes, after the one under way; it returns
// the first error a pass met (nil without Start).
func (ci *CI) Stop() error {
	ci.run.Lock()
	stop, done := ci.run.stop, ci.run.done
	if stop != nil {
		ci.run.stop = nil
		close(stop)
	}
	ci.run.Unlock()
	if done == nil {
		return nil
	}
	<-done
	ci.run.Lock()
	defer ci.run.Unlock()
	return ci.run.err
}

// Heads are the heads the CI has built, in the order it saw them.
func (ci *CI) Heads() []Head {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return slices.Clone(ci.heads)
}

// Posted are the statuses the CI posted, in order.
func (ci *CI) Posted() []Post {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return slices.Clone(ci.posted)
}

// Pending is how many statuses of verdicts are still to be posted.
func (ci *CI) Pending() int {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return len(ci.due)
}
