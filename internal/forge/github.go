package forge

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v75/github"
	"github.com/shurcooL/githubv4"
)

// githubForge is the adapter of GitHub (github.com and Enterprise):
// google/go-github for the REST API, shurcooL/githubv4 for what only
// GraphQL tells (review threads, the review decision) and does (resolve a
// thread).
type githubForge struct {
	t    Target
	tr   *transport
	rest *github.Client
	gql  *githubv4.Client

	perms perms
}

func newGitHub(t Target, tr *transport) (*githubForge, error) {
	rest := github.NewClient(tr.client())
	if t.API != "https://api.github.com/" {
		var err error
		if rest, err = rest.WithEnterpriseURLs(t.API, t.API); err != nil {
			return nil, fmt.Errorf("github at %s: %w", t.Web, err)
		}
	}
	// The transport waits out the rate limits, for GraphQL too: go-github
	// must not refuse a call itself after an answer that said none is left.
	rest.DisableRateLimitCheck = true
	return &githubForge{t: t, tr: tr, rest: rest, gql: githubv4.NewEnterpriseClient(t.GraphQL, tr.client())}, nil
}

func (g *githubForge) Kind() Kind { return GitHub }

func (g *githubForge) Self(ctx context.Context) (string, error) {
	u, resp, err := g.rest.Users.Get(ctx, "")
	if err != nil {
		return "", githubErr("read the token's user", resp, err)
	}
	return u.GetLogin(), nil
}
func (g *githubForge) Repo() Repo { return g.t.Repo }

func (g *githubForge) owner() (string, string) { return g.t.Repo.Owner, g.t.Repo.Name }

// githubErr names what failed, and makes a 404 ErrNotFound.
func githubErr(what string, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w (%v)", what, ErrNotFound, err)
	}
	if resp != nil && resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s: %w (%v)", what, ErrUnauthorized, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func status(resp *github.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

func (g *githubForge) FindPR(ctx context.Context, head string) (*PR, error) {
	o, r := g.owner()
	prs, resp, err := g.rest.PullRequests.List(ctx, o, r, &github.PullRequestListOptions{State: "open", Head: o + ":" + head})
	if err != nil {
		return nil, githubErr("list the pull requests of "+g.t.Repo.String(), resp, err)
	}
	for _, p := range prs {
		if p.GetHead().GetRef() == head {
			pr := toGitHubPR(p)
			return &pr, nil
		}
	}
	return nil, nil
}

func (g *githubForge) OpenPR(ctx context.Context, n NewPR) (PR, bool, error) {
	if pr, err := g.FindPR(ctx, n.Head); err != nil || pr != nil {
		return deref(pr), false, err
	}
	o, r := g.owner()
	base := n.Base
	if base == "" {
		repo, resp, err := g.rest.Repositories.Get(ctx, o, r)
		if err != nil {
			return PR{}, false, githubErr("read "+g.t.Repo.String(), resp, err)
		}
		base = repo.GetDefaultBranch()
	}
	p, resp, err := g.rest.PullRequests.Create(ctx, o, r, &github.NewPullRequest{Title: &n.Title, Head: &n.Head, Base: &base, Body: &n.Body, Draft: &n.Draft})
	if err != nil {
		if status(resp) == http.StatusUnprocessableEntity {
			// "A pull request already exists": opened meanwhile.
			if pr, ferr := g.FindPR(ctx, n.Head); ferr == nil && pr != nil {
				return *pr, false, nil
			}
		}
		return PR{}, false, githubErr("open a pull request from "+n.Head, resp, err)
	}
	return toGitHubPR(p), true, nil
}

func (g *githubForge) PR(ctx context.Context, number int) (PR, error) {
	o, r := g.owner()
	p, resp, err := g.rest.PullRequests.Get(ctx, o, r, number)
	if err != nil {
		return PR{}, githubErr(fmt.Sprintf("read pull request #%d", number), resp, err)
	}
	return toGitHubPR(p), nil
}

// toGitHubPR reads a pull request. GitHub computes mergeable in the
// background: null until it has (MergeUnknown), false for a conflict.
func toGitHubPR(p *github.PullRequest) PR {
	pr := PR{Number: p.GetNumber(), URL: p.GetHTMLURL(), Title: p.GetTitle(), Body: p.GetBody(), Author: p.GetUser().GetLogin(),
		State: PRState(p.GetState()), Draft: p.GetDraft(), Head: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(), Base: p.GetBase().GetRef(), BaseSHA: p.GetBase().GetSHA(),
		Mergeable: MergeUnknown, MergeState: p.GetMergeableState()}
	if p.GetMerged() || p.MergedAt != nil {
		pr.State = StateMerged
		pr.MergeSHA = p.GetMergeCommitSHA()
	}
	if pr.State == StateOpen && p.Mergeable != nil {
		pr.Mergeable = Conflicting
		if *p.Mergeable {
			pr.Mergeable = Mergeable
		}
	}
	return pr
}

func (g *githubForge) Checks(ctx context.Context, sha, base string) (Checks, error) {
	o, r := g.owner()
	out := Checks{SHA: sha}
	if base != "" {
		req, known, err := g.required(ctx, base)
		if err != nil {
			return Checks{}, err
		}
		out.Required, out.RequiredKnown = req, known
	}
	opt := &github.ListCheckRunsOptions{Filter: github.Ptr("latest"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := g.rest.Checks.ListCheckRunsForRef(ctx, o, r, sha, opt)
		if err != nil {
			return Checks{}, githubErr("list the check runs of "+sha, resp, err)
		}
		for _, cr := range res.CheckRuns {
			out.Checks = append(out.Checks, Check{Name: cr.GetName(), State: checkRunState(cr), Conclusion: cmp.Or(cr.GetConclusion(), cr.GetStatus()),
				URL: cmp.Or(cr.GetDetailsURL(), cr.GetHTMLURL()), Description: cr.GetOutput().GetTitle(), Source: SourceCheckRun,
				ID: cr.GetID(), App: cr.GetApp().GetSlug()})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	// The combined status holds the latest status of each context.
	lopt := &github.ListOptions{PerPage: 100}
	for {
		cs, resp, err := g.rest.Repositories.GetCombinedStatus(ctx, o, r, sha, lopt)
		if err != nil {
			return Checks{}, githubErr("read the statuses of "+sha, resp, err)
		}
		for _, s := range cs.Statuses {
			out.Checks = append(out.Checks, Check{Name: s.GetContext(), State: statusState(s.GetState()), Conclusion: s.GetState(),
				URL: s.GetTargetURL(), Description: s.GetDescription(), Source: SourceStatus})
		}
		if resp.NextPage == 0 {
			break
		}
		lopt.Page = resp.NextPage
	}
	for i := range out.Checks {
		out.Checks[i].Required = slices.Contains(out.Required, out.Checks[i].Name)
	}
	slices.SortStableFunc(out.Checks, func(a, b Check) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// required are the checks the base branch requires: its classic
// protection's (as "Get a branch" shows it) and its rulesets'. known is
// false when the token may not read them.
func (g *githubForge) required(ctx context.Context, base string) (names []string, known bool, err error) {
	o, r := g.owner()
	b, resp, err := g.rest.Repositories.GetBranch(ctx, o, r, base, 1)
	if err != nil {
		if status(resp) == http.StatusForbidden {
			return nil, false, nil
		}
		return nil, false, githubErr("read branch "+base, resp, err)
	}
	if rs := b.GetProtection().GetRequiredStatusChecks(); rs != nil {
		if rs.Contexts != nil {
			names = append(names, *rs.Contexts...)
		}
		if rs.Checks != nil {
			for _, c := range *rs.Checks {
				names = append(names, c.Context)
			}
		}
	}
	rules, resp, err := g.rest.Repositories.GetRulesForBranch(ctx, o, r, base, &github.ListOptions{PerPage: 100})
	if err != nil {
		if s := status(resp); s == http.StatusForbidden || s == http.StatusNotFound {
			// Rulesets unknown to this server (an older Enterprise), or
			// not readable.
			return unique(names), s == http.StatusNotFound, nil
		}
		return nil, false, githubErr("read the rules of branch "+base, resp, err)
	}
	if rules != nil {
		for _, rule := range rules.RequiredStatusChecks {
			for _, c := range rule.Parameters.RequiredStatusChecks {
				names = append(names, c.Context)
			}
		}
	}
	return unique(names), true, nil
}

func unique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// checkRunState reads a check run: not completed is pending; neutral and
// skipped pass without succeeding; every other conclusion fails
// (cancelled, timed_out, action_required, stale, startup_failure).
func checkRunState(cr *github.CheckRun) CheckState {
	if cr.GetStatus() != "completed" {
		return Pending
	}
	switch cr.GetConclusion() {
	case "success":
		return Success
	case "neutral", "skipped":
		return Neutral
	}
	return Failed
}

func statusState(s string) CheckState {
	switch s {
	case "success":
		return Success
	case "failure", "error":
		return Failed
	}
	return Pending
}

// maxLogLines is how many lines of a failed job's log Failure keeps.
const maxLogLines = 80

// maxLogBytes is how much of a job's log Failure reads at most.
const maxLogBytes = 64 << 20

func (g *githubForge) Failure(ctx context.Context, c Check) (Failure, error) {
	f := Failure{Check: c, Summary: c.Description}
	if c.Source != SourceCheckRun {
		// A commit status carries only its description and URL.
		return f, nil
	}
	o, r := g.owner()
	cr, resp, err := g.rest.Checks.GetCheckRun(ctx, o, r, c.ID)
	if err != nil {
		return Failure{}, githubErr(fmt.Sprintf("read check run %d", c.ID), resp, err)
	}
	out := cr.GetOutput()
	f.Title, f.Summary, f.Text = out.GetTitle(), out.GetSummary(), out.GetText()
	if out.GetAnnotationsCount() > 0 {
		as, resp, err := g.rest.Checks.ListCheckRunAnnotations(ctx, o, r, c.ID, &github.ListOptions{PerPage: 50})
		if err != nil {
			return Failure{}, githubErr(fmt.Sprintf("list the annotations of check run %d", c.ID), resp, err)
		}
		for _, a := range as {
			f.Annotations = append(f.Annotations, Annotation{Path: a.GetPath(), StartLine: a.GetStartLine(), EndLine: a.GetEndLine(),
				Level: a.GetAnnotationLevel(), Title: a.GetTitle(), Message: a.GetMessage()})
		}
	}
	if c.App != "github-actions" {
		return f, nil
	}
	// A GitHub Actions check run is a job of the same id.
	job, resp, err := g.rest.Actions.GetWorkflowJobByID(ctx, o, r, c.ID)
	if err != nil {
		return Failure{}, githubErr(fmt.Sprintf("read job %d", c.ID), resp, err)
	}
	for _, s := range job.Steps {
		if c := s.GetConclusion(); c == "failure" || c == "timed_out" || c == "cancelled" {
			f.Step = s.GetName()
			break
		}
	}
	tail, err := g.logTail(ctx, c.ID)
	if err != nil {
		return Failure{}, err
	}
	f.LogTail = tail
	return f, nil
}

// logTail is the last lines of a job's log, which GitHub serves from where
// the API redirects (without the token).
func (g *githubForge) logTail(ctx context.Context, job int64) (string, error) {
	o, r := g.owner()
	u, resp, err := g.rest.Actions.GetWorkflowJobLogs(ctx, o, r, job, 1)
	if err != nil {
		if s := status(resp); s == http.StatusNotFound || s == http.StatusGone {
			// Expired, or not written yet.
			return "", nil
		}
		return "", githubErr(fmt.Sprintf("find the log of job %d", job), resp, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	lr, err := g.tr.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("read the log of job %d: %w", job, err)
	}
	defer func() { _ = lr.Body.Close() }()
	if lr.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read the log of job %d: HTTP %d", job, lr.StatusCode)
	}
	return tailLines(io.LimitReader(lr.Body, maxLogBytes), maxLogLines)
}

// tailLines is the last n lines of r.
func tailLines(r io.Reader, n int) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ring := make([]string, 0, n)
	for sc.Scan() {
		if len(ring) == n {
			ring = ring[1:]
		}
		ring = append(ring, sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return "", err
	}
	return strings.Join(ring, "\n"), nil
}

// Rerun: a GitHub Actions job is re-run as a job; another app's check run
// is requested again from its app; a commit status cannot be.
func (g *githubForge) Rerun(ctx context.Context, c Check) error {
	o, r := g.owner()
	switch {
	case c.Source != SourceCheckRun:
		return fmt.Errorf("re-run %s: %w (a commit status, posted by a CI outside GitHub)", c.Name, ErrUnsupported)
	case c.App == "github-actions":
		resp, err := g.rest.Actions.RerunJobByID(ctx, o, r, c.ID)
		return githubErr("re-run job "+c.Name, resp, err)
	default:
		resp, err := g.rest.Checks.ReRequestCheckRun(ctx, o, r, c.ID)
		return githubErr("re-request check run "+c.Name, resp, err)
	}
}

func (g *githubForge) Reviews(ctx context.Context, number int) (Reviews, error) {
	o, r := g.owner()
	var q struct {
		Repository struct {
			PullRequest struct {
				ReviewDecision *githubv4.PullRequestReviewDecision
				HeadRefOid     string
			} `graphql:"pullRequest(number: $number)"`
		} `graphql:"repository(owner: $owner, name: $name)"`
	}
	vars := map[string]any{"owner": githubv4.String(o), "name": githubv4.String(r), "number": githubv4.Int(number)}
	if err := g.gql.Query(ctx, &q, vars); err != nil {
		return Reviews{}, fmt.Errorf("read the review decision of #%d: %w", number, err)
	}
	head := q.Repository.PullRequest.HeadRefOid
	out := Reviews{Required: -1}
	opt := &github.ListOptions{PerPage: 100}
	for {
		rs, resp, err := g.rest.PullRequests.ListReviews(ctx, o, r, number, opt)
		if err != nil {
			return Reviews{}, githubErr(fmt.Sprintf("list the reviews of #%d", number), resp, err)
		}
		for _, rv := range rs {
			st := map[string]ReviewState{"APPROVED": Approved, "CHANGES_REQUESTED": ChangesRequested, "COMMENTED": Commented,
				"DISMISSED": Dismissed, "PENDING": PendingReview}[rv.GetState()]
			if st == "" {
				continue
			}
			review := Review{ID: rv.GetID(), Author: rv.GetUser().GetLogin(), State: st, Body: rv.GetBody(),
				CommitSHA: rv.GetCommitID(), Stale: head != "" && rv.GetCommitID() != head, Submitted: rv.GetSubmittedAt().Time, URL: rv.GetHTMLURL()}
			if verdict(st) || st == Commented {
				if review.Permission, err = g.permission(ctx, review.Author); err != nil {
					return Reviews{}, err
				}
			}
			out.Reviews = append(out.Reviews, review)
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	decide(&out)
	if d := q.Repository.PullRequest.ReviewDecision; d != nil {
		// GitHub's own, which knows the branch's rules and code owners.
		switch *d {
		case githubv4.PullRequestReviewDecisionApproved:
			out.Decision = DecisionApproved
		case githubv4.PullRequestReviewDecisionChangesRequested:
			out.Decision = DecisionChangesRequested
		case githubv4.PullRequestReviewDecisionReviewRequired:
			out.Decision = DecisionReviewRequired
		}
	}
	return out, nil
}

// ghThread is a review thread as GraphQL gives it.
type ghThread struct {
	ID           string
	IsResolved   bool
	IsOutdated   bool
	Path         string
	Line         *int
	OriginalLine *int
	DiffSide     githubv4.DiffSide
	Comments     struct {
		Nodes []ghComment
	} `graphql:"comments(first: 100)"`
}

type ghComment struct {
	FullDatabaseID string `graphql:"fullDatabaseId"`
	Author         *struct{ Login string }
	Body           string
	CreatedAt      time.Time
	URL            string
	DiffHunk       string
	OriginalCommit *struct{ Oid string }
}

func (g *githubForge) Threads(ctx context.Context, number int) ([]Thread, error) {
	o, r := g.owner()
	var q struct {
		Repository struct {
			PullRequest struct {
				ReviewThreads struct {
					Nodes    []ghThread
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				} `graphql:"reviewThreads(first: 50, after: $cursor)"`
			} `graphql:"pullRequest(number: $number)"`
		} `graphql:"repository(owner: $owner, name: $name)"`
	}
	vars := map[string]any{"owner": githubv4.String(o), "name": githubv4.String(r), "number": githubv4.Int(number), "cursor": (*githubv4.String)(nil)}
	var out []Thread
	for {
		if err := g.gql.Query(ctx, &q, vars); err != nil {
			return nil, fmt.Errorf("read the review threads of #%d: %w", number, err)
		}
		for _, n := range q.Repository.PullRequest.ReviewThreads.Nodes {
			t, err := g.toThread(ctx, n)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		pi := q.Repository.PullRequest.ReviewThreads.PageInfo
		if !pi.HasNextPage || pi.EndCursor == nil {
			break
		}
		vars["cursor"] = githubv4.String(*pi.EndCursor)
	}
	return out, nil
}

func (g *githubForge) toThread(ctx context.Context, n ghThread) (Thread, error) {
	t := Thread{ID: n.ID, Path: n.Path, Resolved: n.IsResolved, Outdated: n.IsOutdated}
	line := n.Line
	if line == nil {
		line = n.OriginalLine
	}
	if line != nil {
		if n.DiffSide == githubv4.DiffSideLeft {
			t.OldLine = *line
		} else {
			t.Line = *line
		}
	}
	for i, c := range n.Comments.Nodes {
		id, _ := strconv.ParseInt(c.FullDatabaseID, 10, 64)
		author := ""
		if c.Author != nil {
			author = c.Author.Login
		}
		perm, err := g.permission(ctx, author)
		if err != nil {
			return Thread{}, err
		}
		if i == 0 {
			t.DiffHunk = c.DiffHunk
			if c.OriginalCommit != nil {
				t.CommitSHA = c.OriginalCommit.Oid
			}
		}
		t.Comments = append(t.Comments, Comment{ID: id, Author: author, Permission: perm, Body: c.Body, Created: c.CreatedAt, URL: c.URL})
	}
	return t, nil
}

// permission is what user may do in the repository, asked once per user
// (GitHub's permission: admin, write — maintain included —, read —
// triage included —, none).
func (g *githubForge) permission(ctx context.Context, user string) (Permission, error) {
	return g.perms.of(user, func() (Permission, error) {
		o, r := g.owner()
		lvl, resp, err := g.rest.Repositories.GetPermissionLevel(ctx, o, r, user)
		switch {
		case err == nil:
			if p := Permission(lvl.GetPermission()); slices.Contains([]Permission{PermAdmin, PermWrite, PermRead}, p) {
				return p, nil
			}
			return PermNone, nil
		case status(resp) == http.StatusNotFound:
			// A deleted user (ghost), or a bot that is no user.
			return PermNone, nil
		}
		return "", githubErr("read the permission of "+user, resp, err)
	})
}

func (g *githubForge) Reply(ctx context.Context, number int, t Thread, body string) (Comment, error) {
	if len(t.Comments) == 0 || t.Comments[0].ID == 0 {
		return Comment{}, fmt.Errorf("reply on %s:%d: the thread has no comment to answer", t.Path, t.Line)
	}
	o, r := g.owner()
	c, resp, err := g.rest.PullRequests.CreateCommentInReplyTo(ctx, o, r, number, body, t.Comments[0].ID)
	if err != nil {
		return Comment{}, githubErr(fmt.Sprintf("reply on %s:%d", t.Path, t.Line), resp, err)
	}
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody(), Created: c.GetCreatedAt().Time, URL: c.GetHTMLURL()}, nil
}

func (g *githubForge) Resolve(ctx context.Context, number int, t Thread) error {
	var m struct {
		ResolveReviewThread struct {
			Thread struct {
				ID         string
				IsResolved bool
			}
		} `graphql:"resolveReviewThread(input: $input)"`
	}
	if err := g.gql.Mutate(ctx, &m, githubv4.ResolveReviewThreadInput{ThreadID: githubv4.ID(t.ID)}, nil); err != nil {
		return fmt.Errorf("resolve the thread on %s:%d: %w", t.Path, t.Line, err)
	}
	if !m.ResolveReviewThread.Thread.IsResolved {
		return fmt.Errorf("resolve the thread on %s:%d: GitHub says it is still open", t.Path, t.Line)
	}
	return nil
}

func (g *githubForge) Comment(ctx context.Context, number int, body string) (Comment, error) {
	o, r := g.owner()
	c, resp, err := g.rest.Issues.CreateComment(ctx, o, r, number, &github.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, githubErr(fmt.Sprintf("comment on #%d", number), resp, err)
	}
	return githubIssueComment(c), nil
}

func (g *githubForge) EditComment(ctx context.Context, id int64, body string) (Comment, error) {
	o, r := g.owner()
	c, resp, err := g.rest.Issues.EditComment(ctx, o, r, id, &github.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, githubErr(fmt.Sprintf("edit comment %d", id), resp, err)
	}
	return githubIssueComment(c), nil
}

func githubIssueComment(c *github.IssueComment) Comment {
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody(), Created: c.GetCreatedAt().Time, URL: c.GetHTMLURL()}
}

func (g *githubForge) Merge(ctx context.Context, number int, opt MergeOptions) (string, error) {
	o, r := g.owner()
	if _, err := ParseMergeMethod(string(opt.Method)); err != nil {
		return "", fmt.Errorf("merge #%d: %w", number, err)
	}
	res, resp, err := g.rest.PullRequests.Merge(ctx, o, r, number, opt.Message,
		&github.PullRequestOptions{CommitTitle: opt.Title, SHA: opt.SHA, MergeMethod: string(opt.Method)})
	if err != nil {
		switch status(resp) {
		case http.StatusConflict:
			// "Head branch was modified. Review and try the merge again."
			return "", fmt.Errorf("merge #%d: %w (%v)", number, ErrHeadMoved, err)
		case http.StatusMethodNotAllowed, http.StatusUnprocessableEntity:
			return "", fmt.Errorf("merge #%d by %s: %w: %v", number, opt.Method, ErrNotMergeable, err)
		}
		return "", githubErr(fmt.Sprintf("merge #%d", number), resp, err)
	}
	if !res.GetMerged() {
		return "", fmt.Errorf("merge #%d by %s: %w: %s", number, opt.Method, ErrNotMergeable, res.GetMessage())
	}
	return res.GetSHA(), nil
}
