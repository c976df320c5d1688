package forge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
)

// giteaForge is the adapter of Gitea and Forgejo, on code.gitea.io/sdk/gitea.
// The SDK takes its context per client, so each call makes a client of
// its own (no request: the server's version is read once, at Open).
type giteaForge struct {
	t       Target
	tr      *transport
	version string
	recheck time.Duration
	sleep   func(context.Context, time.Duration) error
	// pageSize is how many items the tracker's listings ask per page
	// (50: Gitea's default most; the tests ask fewer to read many pages).
	pageSize int

	perms perms
}

func newGitea(ctx context.Context, t Target, tr *transport, o Options) (*giteaForge, error) {
	g := &giteaForge{t: t, tr: tr, recheck: o.ConflictRecheck, sleep: tr.sleep, pageSize: 50}
	if g.recheck <= 0 {
		g.recheck = 2 * time.Second
	}
	c, err := gitea.NewClient(strings.TrimSuffix(t.API, "/"), gitea.SetHTTPClient(tr.client()), gitea.SetContext(ctx), gitea.SetGiteaVersion(""))
	if err != nil {
		return nil, fmt.Errorf("gitea at %s: %w", t.Web, err)
	}
	v, resp, err := c.ServerVersion()
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			// Gitea checks a token given to any call, this one's too.
			return nil, fmt.Errorf("gitea at %s: %w (%v)", t.Web, ErrUnauthorized, err)
		}
		return nil, fmt.Errorf("gitea at %s does not answer: %w", t.Web, err)
	}
	// A version the SDK cannot read (a development build) turns its
	// version checks off.
	if _, err := gitea.NewClient(strings.TrimSuffix(t.API, "/"), gitea.SetGiteaVersion(v)); err == nil {
		g.version = v
	}
	return g, nil
}

func (g *giteaForge) Kind() Kind { return Gitea }
func (g *giteaForge) Repo() Repo { return g.t.Repo }

func (g *giteaForge) Self(ctx context.Context) (string, error) {
	u, resp, err := g.c(ctx).GetMyUserInfo()
	if err != nil {
		return "", giteaErr("read the token's user", resp, err)
	}
	return u.UserName, nil
}

// c is a client whose requests carry ctx.
func (g *giteaForge) c(ctx context.Context) *gitea.Client {
	// No request: the version is known (or "", no check), and only a
	// version that does not parse fails, which newGitea kept out.
	c, _ := gitea.NewClient(strings.TrimSuffix(g.t.API, "/"), gitea.SetHTTPClient(g.tr.client()), gitea.SetContext(ctx), gitea.SetGiteaVersion(g.version))
	return c
}

// giteaErr names what failed, and makes a 404 ErrNotFound.
func giteaErr(what string, resp *gitea.Response, err error) error {
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

func (g *giteaForge) owner() (string, string) { return g.t.Repo.Owner, g.t.Repo.Name }

func (g *giteaForge) FindPR(ctx context.Context, head string) (*PR, error) {
	o, r := g.owner()
	c := g.c(ctx)
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(o, r, gitea.ListPullRequestsOptions{State: gitea.StateOpen, ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, giteaErr("list the pull requests of "+g.t.Repo.String(), resp, err)
		}
		for _, p := range prs {
			if p.Head != nil && p.Head.Ref == head && (p.Head.Repository == nil || strings.EqualFold(p.Head.Repository.FullName, o+"/"+r)) {
				pr := g.toPR(p)
				return &pr, nil
			}
		}
		if len(prs) == 0 || resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
	}
}

func (g *giteaForge) OpenPR(ctx context.Context, n NewPR) (PR, bool, error) {
	if pr, err := g.FindPR(ctx, n.Head); err != nil || pr != nil {
		return deref(pr), false, err
	}
	o, r := g.owner()
	c := g.c(ctx)
	base := n.Base
	if base == "" {
		repo, resp, err := c.GetRepo(o, r)
		if err != nil {
			return PR{}, false, giteaErr("read "+g.t.Repo.String(), resp, err)
		}
		base = repo.DefaultBranch
	}
	title := n.Title
	if n.Draft {
		// Gitea's drafts are titles that begin so.
		title = "WIP: " + title
	}
	p, resp, err := c.CreatePullRequest(o, r, gitea.CreatePullRequestOption{Head: n.Head, Base: base, Title: title, Body: n.Body})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusConflict {
			// Opened meanwhile by someone else: it is the one.
			if pr, ferr := g.FindPR(ctx, n.Head); ferr == nil && pr != nil {
				return *pr, false, nil
			}
		}
		return PR{}, false, giteaErr("open a pull request from "+n.Head, resp, err)
	}
	return g.toPR(p), true, nil
}

func deref(pr *PR) PR {
	if pr == nil {
		return PR{}
	}
	return *pr
}

func (g *giteaForge) PR(ctx context.Context, number int) (PR, error) {
	o, r := g.owner()
	c := g.c(ctx)
	p, resp, err := c.GetPullRequest(o, r, int64(number))
	if err != nil {
		return PR{}, giteaErr(fmt.Sprintf("read pull request #%d", number), resp, err)
	}
	pr := g.toPR(p)
	// Gitea says not mergeable both for a conflict and while it checks
	// (after a push to the head or the base, a new protection…): reading
	// the pull request starts its check, and a few reads a while apart
	// that all say so tell a conflict.
	for i := 0; i < conflictReads && pr.State == StateOpen && !pr.Draft && !p.Mergeable; i++ {
		if err := g.sleep(ctx, g.recheck); err != nil {
			return PR{}, err
		}
		p, resp, err = c.GetPullRequest(o, r, int64(number))
		if err != nil {
			return PR{}, giteaErr(fmt.Sprintf("read pull request #%d", number), resp, err)
		}
		pr = g.toPR(p)
		if i == conflictReads-1 && pr.State == StateOpen && !pr.Draft && !p.Mergeable {
			pr.Mergeable = Conflicting
		}
	}
	return pr, nil
}

// conflictReads is how many more times PR reads a pull request Gitea says
// is not mergeable before it calls it conflicting.
const conflictReads = 3

// toPR reads a pull request; a not mergeable one is MergeUnknown here (PR
// reads it again to tell a conflict).
func (g *giteaForge) toPR(p *gitea.PullRequest) PR {
	pr := PR{Number: int(p.Index), URL: p.HTMLURL, Title: p.Title, Body: p.Body, State: PRState(p.State), Draft: p.Draft, Mergeable: MergeUnknown}
	if p.Poster != nil {
		pr.Author = p.Poster.UserName
	}
	if p.HasMerged {
		pr.State = StateMerged
		if p.MergedCommitID != nil {
			pr.MergeSHA = *p.MergedCommitID
		}
	}
	if p.Head != nil {
		pr.Head, pr.HeadSHA = p.Head.Ref, p.Head.Sha
		if p.Head.Repository != nil {
			pr.HeadRepo = p.Head.Repository.FullName
		}
	}
	if p.Base != nil {
		pr.Base, pr.BaseSHA = p.Base.Ref, p.Base.Sha
	}
	if pr.State == StateOpen && p.Mergeable {
		pr.Mergeable = Mergeable
	}
	return pr
}

func (g *giteaForge) Checks(ctx context.Context, sha, base string) (Checks, error) {
	o, r := g.owner()
	c := g.c(ctx)
	out := Checks{SHA: sha}
	var patterns []*regexp.Regexp
	if base != "" {
		b, resp, err := c.GetRepoBranch(o, r, base)
		if err != nil {
			return Checks{}, giteaErr("read branch "+base, resp, err)
		}
		out.RequiredKnown = true
		if b.EnableStatusCheck {
			out.Required = slices.Clone(b.StatusCheckContexts)
			for _, p := range b.StatusCheckContexts {
				patterns = append(patterns, globRegexp(p))
			}
		}
	}
	// The combined status holds the latest status of each context.
	cs, resp, err := c.GetCombinedStatus(o, r, sha)
	if err != nil {
		return Checks{}, giteaErr("read the statuses of "+sha, resp, err)
	}
	for _, s := range cs.Statuses {
		ch := Check{Name: s.Context, State: giteaState(s.State), Conclusion: string(s.State), URL: s.TargetURL,
			Description: s.Description, Source: SourceStatus}
		ch.Required = slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(s.Context) })
		out.Checks = append(out.Checks, ch)
	}
	slices.SortFunc(out.Checks, func(a, b Check) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// giteaState reads a commit status's state: warning and skipped do not
// block a merge on Gitea.
func giteaState(s gitea.StatusState) CheckState {
	switch s {
	case gitea.StatusSuccess:
		return Success
	case gitea.StatusPending, "":
		return Pending
	case gitea.StatusError, gitea.StatusFailure:
		return Failed
	}
	return Neutral
}

// globRegexp is a branch protection's status context pattern (a glob, *
// matching anything) as a regular expression.
func globRegexp(p string) *regexp.Regexp {
	q := regexp.QuoteMeta(p)
	q = strings.ReplaceAll(q, `\*`, `.*`)
	q = strings.ReplaceAll(q, `\?`, `.`)
	return regexp.MustCompile("^" + q + "$")
}

// Failure: a Gitea commit status carries only its description and URL.
func (g *giteaForge) Failure(ctx context.Context, c Check) (Failure, error) {
	return Failure{Check: c, Summary: c.Description}, nil
}

// Rerun: the statuses are posted by a CI outside Gitea, which Gitea cannot
// ask to run again.
func (g *giteaForge) Rerun(ctx context.Context, c Check) error {
	return fmt.Errorf("re-run %s: %w (a commit status, posted by a CI outside Gitea)", c.Name, ErrUnsupported)
}

func (g *giteaForge) reviews(ctx context.Context, c *gitea.Client, number int) ([]*gitea.PullReview, error) {
	o, r := g.owner()
	var all []*gitea.PullReview
	for page := 1; ; page++ {
		rs, resp, err := c.ListPullReviews(o, r, int64(number), gitea.ListPullReviewsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("list the reviews of #%d", number), resp, err)
		}
		all = append(all, rs...)
		if len(rs) == 0 || resp == nil || resp.NextPage == 0 {
			return all, nil
		}
	}
}

func (g *giteaForge) Reviews(ctx context.Context, number int) (Reviews, error) {
	o, r := g.owner()
	c := g.c(ctx)
	p, resp, err := c.GetPullRequest(o, r, int64(number))
	if err != nil {
		return Reviews{}, giteaErr(fmt.Sprintf("read pull request #%d", number), resp, err)
	}
	rs, err := g.reviews(ctx, c, number)
	if err != nil {
		return Reviews{}, err
	}
	out := Reviews{Required: -1}
	if p.Base != nil {
		if b, resp, err := c.GetRepoBranch(o, r, p.Base.Ref); err == nil {
			out.Required = int(b.RequiredApprovals)
		} else if resp == nil || resp.StatusCode != http.StatusNotFound {
			return Reviews{}, giteaErr("read branch "+p.Base.Ref, resp, err)
		}
	}
	for _, rv := range rs {
		st, ok := giteaReviewState(rv)
		if !ok {
			continue
		}
		review := Review{ID: rv.ID, State: st, Body: rv.Body, CommitSHA: rv.CommitID, Stale: rv.Stale, Submitted: rv.Submitted, URL: rv.HTMLURL}
		if rv.Reviewer != nil {
			review.Author = rv.Reviewer.UserName
		}
		if verdict(st) || st == Commented {
			if review.Permission, err = g.permission(ctx, c, review.Author); err != nil {
				return Reviews{}, err
			}
		}
		out.Reviews = append(out.Reviews, review)
	}
	decide(&out)
	return out, nil
}

func giteaReviewState(rv *gitea.PullReview) (ReviewState, bool) {
	if rv.Dismissed {
		return Dismissed, true
	}
	switch rv.State {
	case gitea.ReviewStateApproved:
		return Approved, true
	case gitea.ReviewStateRequestChanges:
		return ChangesRequested, true
	case gitea.ReviewStateComment:
		return Commented, true
	case gitea.ReviewStatePending:
		return PendingReview, true
	}
	// A review request is no review.
	return "", false
}

// verdict tells whether a review of state s approves, asks for changes or
// takes back its author's verdict: the reviews whose author's permission
// matters.
func verdict(s ReviewState) bool {
	return s == Approved || s == ChangesRequested || s == Dismissed
}

// decide fills the approvals, the changes asked and the decision from the
// reviews, oldest first, and the approvals required (-1: unknown): each
// writer's latest approval or request for changes counts (a dismissal
// takes theirs back); a request for changes outweighs approvals. The
// verdict of an author who cannot push counts for no forge (Gitea's
// official reviews, GitHub's branch protection) and not here.
func decide(rs *Reviews) {
	latest := map[string]ReviewState{}
	for _, r := range rs.Reviews {
		if verdict(r.State) && r.Permission.CanWrite() {
			latest[r.Author] = r.State
		}
	}
	rs.Approvals, rs.ChangesRequested = nil, nil
	for a, s := range latest {
		switch s {
		case Approved:
			rs.Approvals = append(rs.Approvals, a)
		case ChangesRequested:
			rs.ChangesRequested = append(rs.ChangesRequested, a)
		}
	}
	slices.Sort(rs.Approvals)
	slices.Sort(rs.ChangesRequested)
	switch {
	case len(rs.ChangesRequested) > 0:
		rs.Decision = DecisionChangesRequested
	case rs.Required > 0 && len(rs.Approvals) >= rs.Required, rs.Required <= 0 && len(rs.Approvals) > 0:
		rs.Decision = DecisionApproved
	case rs.Required > 0:
		rs.Decision = DecisionReviewRequired
	default:
		rs.Decision = NoDecision
	}
}

// Threads: Gitea shows the code comments on one line of one file as one
// conversation, whichever review they belong to; its first comment holds
// whether it is resolved. Gitea's API does not say whether a line is
// outdated: Outdated stays false.
func (g *giteaForge) Threads(ctx context.Context, number int) ([]Thread, error) {
	o, r := g.owner()
	c := g.c(ctx)
	rs, err := g.reviews(ctx, c, number)
	if err != nil {
		return nil, err
	}
	type lineKey struct {
		path string
		line int64
	}
	byLine := map[lineKey][]*gitea.PullReviewComment{}
	var order []lineKey
	for _, rv := range rs {
		if rv.CodeCommentsCount == 0 {
			continue
		}
		cs, resp, err := c.ListPullReviewComments(o, r, int64(number), rv.ID)
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("list the comments of review %d", rv.ID), resp, err)
		}
		for _, cm := range cs {
			k := lineKey{cm.Path, int64(cm.LineNum)}
			if cm.LineNum == 0 {
				k.line = -int64(cm.OldLineNum)
			}
			if _, ok := byLine[k]; !ok {
				order = append(order, k)
			}
			byLine[k] = append(byLine[k], cm)
		}
	}
	var out []Thread
	for _, k := range order {
		cs := byLine[k]
		slices.SortFunc(cs, func(a, b *gitea.PullReviewComment) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
		first := cs[0]
		t := Thread{ID: strconv.FormatInt(first.ID, 10), Path: first.Path, Line: int(first.LineNum), OldLine: int(first.OldLineNum),
			DiffHunk: first.DiffHunk, Resolved: first.Resolver != nil, CommitSHA: first.CommitID}
		for _, cm := range cs {
			author := ""
			if cm.Reviewer != nil {
				author = cm.Reviewer.UserName
			}
			perm, err := g.permission(ctx, c, author)
			if err != nil {
				return nil, err
			}
			t.Comments = append(t.Comments, Comment{ID: cm.ID, Author: author, Permission: perm, Body: cm.Body, Created: cm.Created, URL: cm.HTMLURL})
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b Thread) int { return a.Comments[0].Created.Compare(b.Comments[0].Created) })
	return out, nil
}

// permission is what user may do in the repository, asked once per user.
func (g *giteaForge) permission(ctx context.Context, c *gitea.Client, user string) (Permission, error) {
	return g.perms.of(user, func() (Permission, error) {
		o, r := g.owner()
		res, resp, err := c.CollaboratorPermission(o, r, user)
		switch {
		case err == nil:
			switch res.Permission {
			case gitea.AccessModeOwner, gitea.AccessModeAdmin:
				return PermAdmin, nil
			case gitea.AccessModeWrite:
				return PermWrite, nil
			case gitea.AccessModeRead:
				return PermRead, nil
			}
			return PermNone, nil
		case resp != nil && resp.StatusCode == http.StatusForbidden:
			// This token may not ask (only the user itself and the
			// repository's admins may): the users an issue can be
			// assigned to are the owner and those with write access.
			as, aresp, aerr := c.GetAssignees(o, r)
			if aerr != nil {
				return "", giteaErr("read the permission of "+user+" (the assignees of "+g.t.Repo.String()+")", aresp, aerr)
			}
			if slices.ContainsFunc(as, func(a *gitea.User) bool { return strings.EqualFold(a.UserName, user) }) {
				return PermWrite, nil
			}
			return PermNone, nil
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			// Not a collaborator (or a deleted user).
			return PermNone, nil
		}
		return "", giteaErr("read the permission of "+user, resp, err)
	})
}

// Reply: Gitea 1.26's API has no reply to a review comment; a review of
// one comment on the same line of the same file, made at the thread's
// commit, joins its conversation.
func (g *giteaForge) Reply(ctx context.Context, number int, t Thread, body string) (Comment, error) {
	o, r := g.owner()
	c := g.c(ctx)
	cm := gitea.CreatePullReviewComment{Path: t.Path, Body: body, NewLineNum: int64(t.Line)}
	if t.Line == 0 {
		cm.OldLineNum = int64(t.OldLine)
	}
	rv, resp, err := c.CreatePullReview(o, r, int64(number), gitea.CreatePullReviewOptions{State: gitea.ReviewStateComment, CommitID: t.CommitSHA, Comments: []gitea.CreatePullReviewComment{cm}})
	if err != nil {
		return Comment{}, giteaErr(fmt.Sprintf("reply on %s:%d", t.Path, t.Line), resp, err)
	}
	cs, resp, err := c.ListPullReviewComments(o, r, int64(number), rv.ID)
	if err != nil || len(cs) == 0 {
		return Comment{}, cmp.Or(giteaErr("read the reply", resp, err), errors.New("read the reply: the review has no comment"))
	}
	out := Comment{ID: cs[0].ID, Body: cs[0].Body, Created: cs[0].Created, URL: cs[0].HTMLURL}
	if cs[0].Reviewer != nil {
		out.Author = cs[0].Reviewer.UserName
	}
	return out, nil
}

func (g *giteaForge) Resolve(ctx context.Context, number int, t Thread) error {
	id, err := strconv.ParseInt(t.ID, 10, 64)
	if err != nil {
		return fmt.Errorf("resolve thread %q: not a Gitea thread", t.ID)
	}
	o, r := g.owner()
	resp, err := g.c(ctx).ResolvePullReviewComment(o, r, id)
	return giteaErr(fmt.Sprintf("resolve the thread on %s:%d", t.Path, t.Line), resp, err)
}

func (g *giteaForge) Comment(ctx context.Context, number int, body string) (Comment, error) {
	o, r := g.owner()
	cm, resp, err := g.c(ctx).CreateIssueComment(o, r, int64(number), gitea.CreateIssueCommentOption{Body: body})
	if err != nil {
		return Comment{}, giteaErr(fmt.Sprintf("comment on #%d", number), resp, err)
	}
	return giteaComment(cm), nil
}

func (g *giteaForge) EditComment(ctx context.Context, id int64, body string) (Comment, error) {
	o, r := g.owner()
	cm, resp, err := g.c(ctx).EditIssueComment(o, r, id, gitea.EditIssueCommentOption{Body: body})
	if err != nil {
		return Comment{}, giteaErr(fmt.Sprintf("edit comment %d", id), resp, err)
	}
	return giteaComment(cm), nil
}

func giteaComment(cm *gitea.Comment) Comment {
	out := Comment{ID: cm.ID, Body: cm.Body, Created: cm.Created, URL: cm.HTMLURL}
	if cm.Poster != nil {
		out.Author = cm.Poster.UserName
	}
	return out
}

func (g *giteaForge) Merge(ctx context.Context, number int, opt MergeOptions) (string, error) {
	o, r := g.owner()
	c := g.c(ctx)
	style := map[MergeMethod]gitea.MergeStyle{MethodMerge: gitea.MergeStyleMerge, MethodSquash: gitea.MergeStyleSquash, MethodRebase: gitea.MergeStyleRebase}[opt.Method]
	if style == "" {
		return "", fmt.Errorf("merge #%d: unknown merge method %q", number, opt.Method)
	}
	merge := func() (bool, *gitea.Response, error) {
		return c.MergePullRequest(o, r, int64(number), gitea.MergePullRequestOption{Style: style, Title: opt.Title, Message: opt.Message, HeadCommitId: opt.SHA})
	}
	merged, resp, err := merge()
	if err == nil && !merged && resp != nil && resp.StatusCode == http.StatusMethodNotAllowed {
		// 405 is also Gitea's "Please try again later" while it checks the
		// pull request: once it reads as mergeable, try once more.
		if p, perr := g.PR(ctx, number); perr == nil && p.State == StateOpen && p.Mergeable == Mergeable {
			merged, resp, err = merge()
		}
	}
	if err != nil {
		return "", giteaErr(fmt.Sprintf("merge #%d", number), resp, err)
	}
	if !merged {
		// The SDK keeps only the status: 405 for what Gitea checks first
		// (protection, checks, approvals, a merge style not allowed), 409
		// for a conflict or a head that is no longer opt.SHA.
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status == http.StatusConflict && opt.SHA != "" {
			if p, err := g.PR(ctx, number); err == nil && p.HeadSHA != opt.SHA {
				return "", fmt.Errorf("merge #%d: %w (now %s, not %s)", number, ErrHeadMoved, p.HeadSHA, opt.SHA)
			}
		}
		if status == http.StatusConflict || status == http.StatusMethodNotAllowed {
			return "", fmt.Errorf("merge #%d by %s: %w (HTTP %d)", number, opt.Method, ErrNotMergeable, status)
		}
		return "", fmt.Errorf("merge #%d: HTTP %d", number, status)
	}
	p, resp, err := c.GetPullRequest(o, r, int64(number))
	if err != nil {
		return "", giteaErr(fmt.Sprintf("read pull request #%d", number), resp, err)
	}
	if p.MergedCommitID != nil {
		return *p.MergedCommitID, nil
	}
	return "", nil
}
