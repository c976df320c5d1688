package forge

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v75/github"
)

// GitHub's issue tracker. GitHub's issues API serves pull requests too
// (an item with pull_request set): they are none of the tracker's.

func (g *githubForge) Issues(ctx context.Context, q IssueQuery) ([]Issue, error) {
	o, r := g.owner()
	// GitHub narrows by labels (all of them), assignee ("none", "*" or a
	// login) and milestone (by its number); a label with a comma, which it
	// would split, is left to matches.
	opt := &github.IssueListByRepoOptions{State: "open", Assignee: q.Assignee, ListOptions: github.ListOptions{PerPage: 100}}
	for _, l := range q.Labels {
		if !strings.Contains(l, ",") {
			opt.Labels = append(opt.Labels, l)
		}
	}
	if q.Milestone != "" {
		n, err := g.milestone(ctx, q.Milestone)
		if err != nil || n == 0 {
			// A title no milestone has: no issue is in it.
			return nil, err
		}
		opt.Milestone = strconv.Itoa(n)
	}
	var read []Issue
	for {
		is, resp, err := g.rest.Issues.ListByRepo(ctx, o, r, opt)
		if err != nil {
			return nil, githubErr("list the issues of "+g.t.Repo.String(), resp, err)
		}
		for _, i := range is {
			if !i.IsPullRequest() {
				read = append(read, githubIssue(i))
			}
		}
		if resp.NextPage == 0 {
			return issueList(q, read), nil
		}
		opt.ListOptions.Page = resp.NextPage
	}
}

// milestone is the number of the milestone titled title, open or closed
// (its own case first); 0 when there is none.
func (g *githubForge) milestone(ctx context.Context, title string) (int, error) {
	o, r := g.owner()
	opt := &github.MilestoneListOptions{State: "all", ListOptions: github.ListOptions{PerPage: 100}}
	folded := 0
	for {
		ms, resp, err := g.rest.Issues.ListMilestones(ctx, o, r, opt)
		if err != nil {
			return 0, githubErr("list the milestones of "+g.t.Repo.String(), resp, err)
		}
		for _, m := range ms {
			if m.GetTitle() == title {
				return m.GetNumber(), nil
			}
			if folded == 0 && strings.EqualFold(m.GetTitle(), title) {
				folded = m.GetNumber()
			}
		}
		if resp.NextPage == 0 {
			return folded, nil
		}
		opt.Page = resp.NextPage
	}
}

func githubIssue(i *github.Issue) Issue {
	out := Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), URL: i.GetHTMLURL(), Author: i.GetUser().GetLogin(),
		State: IssueState(i.GetState()), Milestone: i.GetMilestone().GetTitle(), Updated: i.GetUpdatedAt().Time}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.GetLogin())
	}
	out.Labels, out.Assignees = sortedNames(out.Labels), sortedNames(out.Assignees)
	return out
}

func (g *githubForge) Issue(ctx context.Context, number int) (Issue, error) {
	o, r := g.owner()
	i, resp, err := g.rest.Issues.Get(ctx, o, r, number)
	if err != nil {
		return Issue{}, githubErr(fmt.Sprintf("read issue #%d", number), resp, err)
	}
	if i.IsPullRequest() {
		return Issue{}, fmt.Errorf("read issue #%d: %w (a pull request)", number, ErrNotFound)
	}
	return githubIssue(i), nil
}

// AddLabels: GitHub makes a label the repository lacks itself, when one
// is put on an issue (in its default colour, not issueLabelColour).
func (g *githubForge) AddLabels(ctx context.Context, number int, labels ...string) error {
	if len(labels) == 0 {
		return nil
	}
	o, r := g.owner()
	_, resp, err := g.rest.Issues.AddLabelsToIssue(ctx, o, r, number, labels)
	return githubErr(fmt.Sprintf("label #%d %s", number, strings.Join(labels, ", ")), resp, err)
}

// RemoveLabel: GitHub answers 404 for a label the issue does not have.
func (g *githubForge) RemoveLabel(ctx context.Context, number int, label string) error {
	o, r := g.owner()
	// go-github puts the name in the path as it is.
	resp, err := g.rest.Issues.RemoveLabelForIssue(ctx, o, r, number, url.PathEscape(label))
	if status(resp) == http.StatusNotFound {
		return nil
	}
	return githubErr(fmt.Sprintf("take label %s off #%d", label, number), resp, err)
}

// Assign: GitHub ignores, without an error, a login that may not be
// assigned; the issue it answers tells.
func (g *githubForge) Assign(ctx context.Context, number int, login string) error {
	o, r := g.owner()
	i, resp, err := g.rest.Issues.AddAssignees(ctx, o, r, number, []string{login})
	if err != nil {
		return githubErr(fmt.Sprintf("assign #%d to %s", number, login), resp, err)
	}
	if !slices.ContainsFunc(i.Assignees, func(u *github.User) bool { return strings.EqualFold(u.GetLogin(), login) }) {
		return fmt.Errorf("assign #%d to %s: GitHub did not (%s may not be assigned in %s)", number, login, login, g.t.Repo)
	}
	return nil
}

func (g *githubForge) Unassign(ctx context.Context, number int, login string) error {
	o, r := g.owner()
	_, resp, err := g.rest.Issues.RemoveAssignees(ctx, o, r, number, []string{login})
	return githubErr(fmt.Sprintf("unassign %s from #%d", login, number), resp, err)
}

func (g *githubForge) IssueComments(ctx context.Context, number int) ([]Comment, error) {
	o, r := g.owner()
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []Comment
	for {
		cs, resp, err := g.rest.Issues.ListComments(ctx, o, r, number, opt)
		if err != nil {
			return nil, githubErr(fmt.Sprintf("list the comments of #%d", number), resp, err)
		}
		for _, c := range cs {
			out = append(out, githubIssueComment(c))
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	slices.SortStableFunc(out, func(a, b Comment) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	for i := range out {
		p, err := g.permission(ctx, out[i].Author)
		if err != nil {
			return nil, err
		}
		out[i].Permission = p
	}
	return out, nil
}

func (g *githubForge) DeleteComment(ctx context.Context, id int64) error {
	o, r := g.owner()
	resp, err := g.rest.Issues.DeleteComment(ctx, o, r, id)
	return githubErr(fmt.Sprintf("delete comment %d", id), resp, err)
}

func (g *githubForge) Permission(ctx context.Context, login string) (Permission, error) {
	return g.permission(ctx, login)
}
