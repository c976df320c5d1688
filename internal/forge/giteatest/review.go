package giteatest

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"code.gitea.io/sdk/gitea"
)

// Reviewer reviews a repository's pull requests as one user, through the
// API, as a person does on Gitea's pages.
type Reviewer struct {
	repo Repo
	as   User
}

// Reviewer is a reviewer of r acting as user as (usually the server's
// Reviewer; any user may review, only a writer's approval counts).
func (r Repo) Reviewer(as User) *Reviewer { return &Reviewer{repo: r, as: as} }

// LineComment is a review's comment on one line of one file: Line in the
// head's version of the file, or, when Line is 0, OldLine in the base's.
type LineComment struct {
	Path          string
	Line, OldLine int
	Body          string
}

// Thread is a conversation on one line of one file, as Gitea stores and
// shows it: every code comment on that path and line, whichever review it
// belongs to, oldest first; the first comment holds whether it is
// resolved. (The API of Gitea 1.26 has no reply to a comment: a reply is
// a review of one comment on the same line.)
type Thread struct {
	Path          string
	Line, OldLine int
	// CommitSHA is the commit the first comment was made at.
	CommitSHA string
	Resolved  bool
	Comments  []*gitea.PullReviewComment
}

// ID is the thread's first comment's, the one Gitea resolves it by.
func (t Thread) ID() int64 { return t.Comments[0].ID }

func (rv *Reviewer) client(ctx context.Context) (*gitea.Client, error) {
	return rv.repo.srv.client(ctx, rv.as)
}

// Review submits a review of pull request pr at its head: state
// (gitea.ReviewStateApproved, ReviewStateRequestChanges,
// ReviewStateComment), its body and line comments.
func (rv *Reviewer) Review(ctx context.Context, pr int, state gitea.ReviewStateType, body string, lines ...LineComment) (*gitea.PullReview, error) {
	return rv.review(ctx, pr, "", state, body, lines...)
}

// review submits a review at commit sha ("": the head).
func (rv *Reviewer) review(ctx context.Context, pr int, sha string, state gitea.ReviewStateType, body string, lines ...LineComment) (*gitea.PullReview, error) {
	c, err := rv.client(ctx)
	if err != nil {
		return nil, err
	}
	opt := gitea.CreatePullReviewOptions{State: state, Body: body, CommitID: sha}
	for _, l := range lines {
		cm := gitea.CreatePullReviewComment{Path: l.Path, Body: l.Body, NewLineNum: int64(l.Line)}
		if l.Line == 0 {
			cm.OldLineNum = int64(l.OldLine)
		}
		opt.Comments = append(opt.Comments, cm)
	}
	r, _, err := c.CreatePullReview(rv.repo.Owner, rv.repo.Name, int64(pr), opt)
	if err != nil {
		return nil, fmt.Errorf("%s: review #%d (%s): %w", rv.as.Name, pr, state, err)
	}
	return r, nil
}

// Approve approves pull request pr at its head.
func (rv *Reviewer) Approve(ctx context.Context, pr int, body string) (*gitea.PullReview, error) {
	return rv.Review(ctx, pr, gitea.ReviewStateApproved, body)
}

// Comment leaves a line comment on pull request pr: a review of state
// (ReviewStateRequestChanges or ReviewStateComment) whose one comment is
// body on line of path in the head. Gitea wants a body of a request for
// changes: that review's says "See the comment on path:line.". It
// returns the thread of that line, the comment last.
func (rv *Reviewer) Comment(ctx context.Context, pr int, state gitea.ReviewStateType, path string, line int, body string) (Thread, error) {
	summary := ""
	if state == gitea.ReviewStateRequestChanges {
		summary = fmt.Sprintf("See the comment on %s:%d.", path, line)
	}
	r, err := rv.Review(ctx, pr, state, summary, LineComment{Path: path, Line: line, Body: body})
	if err != nil {
		return Thread{}, err
	}
	return rv.threadOf(ctx, pr, r.ID)
}

// Reply answers thread t of pull request pr: a comment review of one
// comment on the thread's line at the thread's commit, which Gitea puts
// in the same conversation (as jlgcli's adapter replies). It returns the
// thread, the reply last.
func (rv *Reviewer) Reply(ctx context.Context, pr int, t Thread, body string) (Thread, error) {
	r, err := rv.review(ctx, pr, t.CommitSHA, gitea.ReviewStateComment, "", LineComment{Path: t.Path, Line: t.Line, OldLine: t.OldLine, Body: body})
	if err != nil {
		return Thread{}, err
	}
	return rv.threadOf(ctx, pr, r.ID)
}

// threadOf is the thread holding review id's comment.
func (rv *Reviewer) threadOf(ctx context.Context, pr int, id int64) (Thread, error) {
	ts, err := rv.Threads(ctx, pr)
	if err != nil {
		return Thread{}, err
	}
	for _, t := range ts {
		if slices.ContainsFunc(t.Comments, func(c *gitea.PullReviewComment) bool { return c.ReviewID == id }) {
			return t, nil
		}
	}
	return Thread{}, fmt.Errorf("%s: the comment of review %d is in no thread of #%d", rv.as.Name, id, pr)
}

// Resolve marks thread t resolved; Unresolve marks it open again.
func (rv *Reviewer) Resolve(ctx context.Context, t Thread) error {
	c, err := rv.client(ctx)
	if err != nil {
		return err
	}
	if _, err := c.ResolvePullReviewComment(rv.repo.Owner, rv.repo.Name, t.ID()); err != nil {
		return fmt.Errorf("%s: resolve the thread on %s:%d: %w", rv.as.Name, t.Path, t.Line, err)
	}
	return nil
}

// Unresolve marks thread t open again.
func (rv *Reviewer) Unresolve(ctx context.Context, t Thread) error {
	c, err := rv.client(ctx)
	if err != nil {
		return err
	}
	if _, err := c.UnresolvePullReviewComment(rv.repo.Owner, rv.repo.Name, t.ID()); err != nil {
		return fmt.Errorf("%s: unresolve the thread on %s:%d: %w", rv.as.Name, t.Path, t.Line, err)
	}
	return nil
}

// Threads are the threads of pull request pr, as read back by anyone:
// the code comments of every review, grouped by path and line (a comment
// on the base's side by its old line), oldest first.
func (rv *Reviewer) Threads(ctx context.Context, pr int) ([]Thread, error) {
	c, err := rv.client(ctx)
	if err != nil {
		return nil, err
	}
	o, n := rv.repo.Owner, rv.repo.Name
	type key struct {
		path      string
		line, old uint64
	}
	byKey := map[key]*Thread{}
	var out []*Thread
	for page := 1; ; page++ {
		rs, resp, err := c.ListPullReviews(o, n, int64(pr), gitea.ListPullReviewsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("list the reviews of #%d: %w", pr, err)
		}
		for _, r := range rs {
			if r.CodeCommentsCount == 0 {
				continue
			}
			cs, _, err := c.ListPullReviewComments(o, n, int64(pr), r.ID)
			if err != nil {
				return nil, fmt.Errorf("list the comments of review %d: %w", r.ID, err)
			}
			for _, cm := range cs {
				k := key{path: cm.Path, line: cm.LineNum}
				if cm.LineNum == 0 {
					k.old = cm.OldLineNum
				}
				t := byKey[k]
				if t == nil {
					t = &Thread{Path: cm.Path, Line: int(k.line), OldLine: int(k.old)}
					byKey[k] = t
					out = append(out, t)
				}
				t.Comments = append(t.Comments, cm)
			}
		}
		if len(rs) == 0 || resp == nil || resp.NextPage == 0 {
			break
		}
	}
	threads := make([]Thread, 0, len(out))
	for _, t := range out {
		slices.SortFunc(t.Comments, func(a, b *gitea.PullReviewComment) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
		t.CommitSHA, t.Resolved = t.Comments[0].CommitID, t.Comments[0].Resolver != nil
		threads = append(threads, *t)
	}
	slices.SortStableFunc(threads, func(a, b Thread) int {
		return cmp.Or(a.Comments[0].Created.Compare(b.Comments[0].Created), cmp.Compare(a.ID(), b.ID()))
	})
	return threads, nil
}
