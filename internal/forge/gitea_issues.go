package forge

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// Gitea's issue tracker. Gitea's issues and pull requests share their
// numbers: an issue read that is a pull request is none of the tracker's.

func (g *giteaForge) Issues(ctx context.Context, q IssueQuery) ([]Issue, error) {
	o, r := g.owner()
	c := g.c(ctx)
	// Gitea narrows by labels (all of them; one it does not know it drops),
	// milestone (a title, else an id) and assignee (a login; 404 for one
	// it does not know); a name with a comma, which it would split, is left
	// to matches, as are "none" and "*".
	opt := gitea.ListIssueOption{State: gitea.StateOpen, Type: gitea.IssueTypeIssue}
	for _, l := range q.Labels {
		if !strings.Contains(l, ",") {
			opt.Labels = append(opt.Labels, l)
		}
	}
	if q.Milestone != "" && !strings.Contains(q.Milestone, ",") {
		opt.Milestones = []string{q.Milestone}
	}
	if q.Assignee != AssigneeNone && q.Assignee != AssigneeAny {
		opt.AssignedBy = q.Assignee
	}
	var read []Issue
	for page := 1; ; page++ {
		opt.ListOptions = gitea.ListOptions{Page: page, PageSize: g.pageSize}
		is, resp, err := c.ListRepoIssues(o, r, opt)
		if err != nil {
			if opt.AssignedBy != "" && resp != nil && resp.StatusCode == http.StatusNotFound {
				// No such user, or no such repository: a user the
				// server does not know is assigned nothing.
				if _, uresp, uerr := c.GetUserInfo(opt.AssignedBy); uerr != nil && uresp != nil && uresp.StatusCode == http.StatusNotFound {
					return nil, nil
				}
			}
			return nil, giteaErr("list the issues of "+g.t.Repo.String(), resp, err)
		}
		for _, i := range is {
			if i.PullRequest == nil {
				read = append(read, giteaIssue(i))
			}
		}
		if len(is) == 0 || resp == nil || resp.NextPage == 0 {
			return issueList(q, read), nil
		}
	}
}

func giteaIssue(i *gitea.Issue) Issue {
	out := Issue{Number: int(i.Index), Title: i.Title, Body: i.Body, URL: i.HTMLURL, State: IssueState(i.State), Updated: i.Updated}
	if i.Poster != nil {
		out.Author = i.Poster.UserName
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.UserName)
	}
	out.Labels, out.Assignees = sortedNames(out.Labels), sortedNames(out.Assignees)
	if i.Milestone != nil {
		out.Milestone = i.Milestone.Title
	}
	return out
}

// issue reads issue number; ErrNotFound for a pull request's.
func (g *giteaForge) issue(c *gitea.Client, number int) (*gitea.Issue, error) {
	o, r := g.owner()
	i, resp, err := c.GetIssue(o, r, int64(number))
	if err != nil {
		return nil, giteaErr(fmt.Sprintf("read issue #%d", number), resp, err)
	}
	if i.PullRequest != nil {
		return nil, fmt.Errorf("read issue #%d: %w (a pull request)", number, ErrNotFound)
	}
	return i, nil
}

func (g *giteaForge) Issue(ctx context.Context, number int) (Issue, error) {
	i, err := g.issue(g.c(ctx), number)
	if err != nil {
		return Issue{}, err
	}
	return giteaIssue(i), nil
}

// labels are the repository's labels by name.
func (g *giteaForge) labels(c *gitea.Client) (map[string]int64, error) {
	o, r := g.owner()
	out := map[string]int64{}
	for page := 1; ; page++ {
		ls, resp, err := c.ListRepoLabels(o, r, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: g.pageSize}})
		if err != nil {
			return nil, giteaErr("list the labels of "+g.t.Repo.String(), resp, err)
		}
		for _, l := range ls {
			// Two labels of one name (made at once by two runs): the
			// oldest, so that every run adds the same one.
			if id, ok := out[l.Name]; !ok || l.ID < id {
				out[l.Name] = l.ID
			}
		}
		if len(ls) == 0 || resp == nil || resp.NextPage == 0 {
			return out, nil
		}
	}
}

// AddLabels: Gitea adds labels by id; a label the repository lacks is
// made first, in issueLabelColour.
func (g *giteaForge) AddLabels(ctx context.Context, number int, labels ...string) error {
	if len(labels) == 0 {
		return nil
	}
	o, r := g.owner()
	c := g.c(ctx)
	have, err := g.labels(c)
	if err != nil {
		return err
	}
	var ids []int64
	for _, name := range labels {
		id, ok := have[name]
		if !ok {
			l, resp, err := c.CreateLabel(o, r, gitea.CreateLabelOption{Name: name, Color: "#" + issueLabelColour})
			if err != nil {
				return giteaErr("make label "+name+" in "+g.t.Repo.String(), resp, err)
			}
			id, have[name] = l.ID, l.ID
		}
		ids = append(ids, id)
	}
	_, resp, err := c.AddIssueLabels(o, r, int64(number), gitea.IssueLabelsOption{Labels: ids})
	return giteaErr(fmt.Sprintf("label #%d %s", number, strings.Join(labels, ", ")), resp, err)
}

// RemoveLabel takes off every label of the issue named label: the
// repository may hold two of that name (made at once by two runs).
func (g *giteaForge) RemoveLabel(ctx context.Context, number int, label string) error {
	o, r := g.owner()
	c := g.c(ctx)
	ls, resp, err := c.GetIssueLabels(o, r, int64(number), gitea.ListLabelsOptions{})
	if err != nil {
		return giteaErr(fmt.Sprintf("read the labels of #%d", number), resp, err)
	}
	for _, l := range ls {
		if l.Name != label {
			continue
		}
		if resp, err := c.DeleteIssueLabel(o, r, int64(number), l.ID); err != nil {
			return giteaErr(fmt.Sprintf("take label %s off #%d", label, number), resp, err)
		}
	}
	return nil
}

// Assign and Unassign: Gitea's API sets an issue's assignees as a whole
// (no call adds or removes one), from the set just read.
func (g *giteaForge) Assign(ctx context.Context, number int, login string) error {
	return g.assignees(ctx, number, login, true)
}

func (g *giteaForge) Unassign(ctx context.Context, number int, login string) error {
	return g.assignees(ctx, number, login, false)
}

func (g *giteaForge) assignees(ctx context.Context, number int, login string, add bool) error {
	o, r := g.owner()
	c := g.c(ctx)
	i, err := g.issue(c, number)
	if err != nil {
		return err
	}
	is := func(a string) bool { return strings.EqualFold(a, login) }
	// Not nil: an empty list, sent as [], clears the assignees (null
	// leaves them).
	set := []string{}
	for _, a := range i.Assignees {
		set = append(set, a.UserName)
	}
	if slices.ContainsFunc(set, is) == add {
		return nil
	}
	what := fmt.Sprintf("unassign %s from #%d", login, number)
	if add {
		what = fmt.Sprintf("assign #%d to %s", number, login)
		set = append(set, login)
	} else {
		set = slices.DeleteFunc(set, is)
	}
	i, resp, err := c.EditIssue(o, r, int64(number), gitea.EditIssueOption{Assignees: set})
	if err != nil {
		return giteaErr(what, resp, err)
	}
	if slices.ContainsFunc(i.Assignees, func(u *gitea.User) bool { return is(u.UserName) }) != add {
		return fmt.Errorf("%s: Gitea did not", what)
	}
	return nil
}

// IssueComments: Gitea 1.26 answers every comment of an issue at once,
// whatever page is asked; the pages are read as long as the server says
// there is another, each comment kept once.
func (g *giteaForge) IssueComments(ctx context.Context, number int) ([]Comment, error) {
	o, r := g.owner()
	c := g.c(ctx)
	var out []Comment
	seen := map[int64]bool{}
	for page := 1; ; page++ {
		cs, resp, err := c.ListIssueComments(o, r, int64(number), gitea.ListIssueCommentOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: g.pageSize}})
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("list the comments of #%d", number), resp, err)
		}
		fresh := 0
		for _, cm := range cs {
			if seen[cm.ID] {
				continue
			}
			seen[cm.ID], fresh = true, fresh+1
			out = append(out, giteaComment(cm))
		}
		if fresh == 0 || resp == nil || resp.NextPage == 0 {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b Comment) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	for i := range out {
		p, err := g.permission(ctx, c, out[i].Author)
		if err != nil {
			return nil, err
		}
		out[i].Permission = p
	}
	return out, nil
}

func (g *giteaForge) DeleteComment(ctx context.Context, id int64) error {
	o, r := g.owner()
	resp, err := g.c(ctx).DeleteIssueComment(o, r, id)
	return giteaErr(fmt.Sprintf("delete comment %d", id), resp, err)
}

func (g *giteaForge) Permission(ctx context.Context, login string) (Permission, error) {
	return g.permission(ctx, g.c(ctx), login)
}
