package giteatest

import (
	"context"
	"fmt"
	"slices"

	"code.gitea.io/sdk/gitea"
)

// The issues of a repository, as people use them through the API: open
// one, comment, label, assign, close; and read one back as the admin.

// NewIssue opens an issue of r as user as, and puts labels on it, making
// each the repository lacks. The admin labels it: Gitea lets only a
// writer label an issue, and any user open one. It returns its number.
func (r Repo) NewIssue(ctx context.Context, as User, title, body string, labels ...string) (int, error) {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return 0, err
	}
	i, _, err := c.CreateIssue(r.Owner, r.Name, gitea.CreateIssueOption{Title: title, Body: body})
	if err != nil {
		return 0, fmt.Errorf("%s: open issue %q: %w", as.Name, title, err)
	}
	if len(labels) == 0 {
		return int(i.Index), nil
	}
	admin, err := r.srv.client(ctx, r.srv.Admin)
	if err != nil {
		return 0, err
	}
	ids, err := r.labelIDs(admin, labels, true)
	if err != nil {
		return 0, err
	}
	if _, _, err := admin.AddIssueLabels(r.Owner, r.Name, i.Index, gitea.IssueLabelsOption{Labels: ids}); err != nil {
		return 0, fmt.Errorf("label #%d: %w", i.Index, err)
	}
	return int(i.Index), nil
}

// labelIDs are the ids of the labels named, made (in grey) when missing
// and create is true, left out when missing otherwise.
func (r Repo) labelIDs(c *gitea.Client, names []string, create bool) ([]int64, error) {
	have := map[string]int64{}
	for page := 1; ; page++ {
		ls, resp, err := c.ListRepoLabels(r.Owner, r.Name, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("list the labels of %s/%s: %w", r.Owner, r.Name, err)
		}
		for _, l := range ls {
			have[l.Name] = l.ID
		}
		if len(ls) == 0 || resp == nil || resp.NextPage == 0 {
			break
		}
	}
	var ids []int64
	for _, n := range names {
		id, ok := have[n]
		if !ok && create {
			l, _, err := c.CreateLabel(r.Owner, r.Name, gitea.CreateLabelOption{Name: n, Color: "#cccccc"})
			if err != nil {
				return nil, fmt.Errorf("make label %s: %w", n, err)
			}
			id, ok, have[n] = l.ID, true, l.ID
		}
		if ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// CloseIssue closes issue n as user as (its author or a writer).
func (r Repo) CloseIssue(ctx context.Context, as User, n int) error {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return err
	}
	closed := gitea.StateClosed
	if _, _, err := c.EditIssue(r.Owner, r.Name, int64(n), gitea.EditIssueOption{State: &closed}); err != nil {
		return fmt.Errorf("%s: close #%d: %w", as.Name, n, err)
	}
	return nil
}

// CommentIssue comments body on issue (or pull request) n as user as,
// and returns the comment's id.
func (r Repo) CommentIssue(ctx context.Context, as User, n int, body string) (int64, error) {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return 0, err
	}
	cm, _, err := c.CreateIssueComment(r.Owner, r.Name, int64(n), gitea.CreateIssueCommentOption{Body: body})
	if err != nil {
		return 0, fmt.Errorf("%s: comment on #%d: %w", as.Name, n, err)
	}
	return cm.ID, nil
}

// RemoveIssueLabel takes label off issue n as user as (a writer); a label
// the repository lacks is no error.
func (r Repo) RemoveIssueLabel(ctx context.Context, as User, n int, label string) error {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return err
	}
	ids, err := r.labelIDs(c, []string{label}, false)
	if err != nil || len(ids) == 0 {
		return err
	}
	if _, err := c.DeleteIssueLabel(r.Owner, r.Name, int64(n), ids[0]); err != nil {
		return fmt.Errorf("%s: take %s off #%d: %w", as.Name, label, n, err)
	}
	return nil
}

// AssignIssue makes logins the assignees of issue n (none: nobody), as
// user as (a writer).
func (r Repo) AssignIssue(ctx context.Context, as User, n int, logins ...string) error {
	c, err := r.srv.client(ctx, as)
	if err != nil {
		return err
	}
	// Not nil: [] clears the assignees, null leaves them.
	set := append([]string{}, logins...)
	if _, _, err := c.EditIssue(r.Owner, r.Name, int64(n), gitea.EditIssueOption{Assignees: set}); err != nil {
		return fmt.Errorf("%s: assign #%d to %v: %w", as.Name, n, logins, err)
	}
	return nil
}

// IssueView is an issue as read back: its state (open, closed), labels
// and assignees (sorted) and comments (oldest first).
type IssueView struct {
	State     string
	Labels    []string
	Assignees []string
	Comments  []IssueComment
}

// IssueComment is one comment of an issue.
type IssueComment struct {
	ID           int64
	Author, Body string
}

// IssueView reads issue (or pull request) n back, as the admin.
func (r Repo) IssueView(ctx context.Context, n int) (IssueView, error) {
	c, err := r.srv.client(ctx, r.srv.Admin)
	if err != nil {
		return IssueView{}, err
	}
	i, _, err := c.GetIssue(r.Owner, r.Name, int64(n))
	if err != nil {
		return IssueView{}, fmt.Errorf("read #%d: %w", n, err)
	}
	v := IssueView{State: string(i.State)}
	for _, l := range i.Labels {
		v.Labels = append(v.Labels, l.Name)
	}
	for _, a := range i.Assignees {
		v.Assignees = append(v.Assignees, a.UserName)
	}
	slices.Sort(v.Labels)
	slices.Sort(v.Assignees)
	// Gitea 1.26 answers every comment at once.
	cs, _, err := c.ListIssueComments(r.Owner, r.Name, int64(n), gitea.ListIssueCommentOptions{})
	if err != nil {
		return IssueView{}, fmt.Errorf("list the comments of #%d: %w", n, err)
	}
	for _, cm := range cs {
		ic := IssueComment{ID: cm.ID, Body: cm.Body}
		if cm.Poster != nil {
			ic.Author = cm.Poster.UserName
		}
		v.Comments = append(v.Comments, ic)
	}
	return v, nil
}
