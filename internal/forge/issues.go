package forge

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// Tracker is a repository's issue tracker, as `batch --issues` uses it:
// find the open issues a query matches, claim one (a label, an
// assignee), tell it what became of its task in one comment edited in
// place, and read it again while the task runs (closed, unlabelled,
// unassigned, new comments). Numbers are issue numbers; a pull request is
// never one of its issues. Every call honours ctx and the forge's rate
// limits.
type Tracker interface {
	// Issues are the open issues (pull requests left out) that q matches,
	// every page read, by number ascending.
	Issues(ctx context.Context, q IssueQuery) ([]Issue, error)
	// Issue reads one issue, open or closed; ErrNotFound for a number that
	// is not an issue of this repository (a pull request's included).
	Issue(ctx context.Context, number int) (Issue, error)
	// AddLabels puts labels on an issue, making in the repository each one
	// it does not have yet; RemoveLabel takes one off, and is no error
	// when the issue does not have it.
	AddLabels(ctx context.Context, number int, labels ...string) error
	RemoveLabel(ctx context.Context, number int, label string) error
	// Assign adds login to an issue's assignees; Unassign takes it off
	// (no error when it was not one).
	Assign(ctx context.Context, number int, login string) error
	Unassign(ctx context.Context, number int, login string) error
	// IssueComments are an issue's comments, oldest first, each with its
	// author's permission in the repository.
	IssueComments(ctx context.Context, number int) ([]Comment, error)
	// Permission is what login may do in the repository (PermNone for no
	// such user): an issue's settings and comments count only from those
	// who can push.
	Permission(ctx context.Context, login string) (Permission, error)
	// DeleteComment deletes a comment posted before (on an issue or a
	// pull request); ErrNotFound when it is gone.
	DeleteComment(ctx context.Context, id int64) error
}

// IssueQuery selects open issues, as GitHub's search qualifiers do.
type IssueQuery struct {
	// Labels must all be on the issue.
	Labels []string `json:"labels,omitempty"`
	// Assignee is "" (anyone or no one), AssigneeNone (no one),
	// AssigneeAny (someone) or a login.
	Assignee string `json:"assignee,omitempty"`
	// Milestone is "" (any) or a milestone's title.
	Milestone string `json:"milestone,omitempty"`
}

// The assignees an IssueQuery may name other than a login.
const (
	AssigneeNone = "none"
	AssigneeAny  = "*"
)

// IssueState is an issue's state.
type IssueState string

// The states of an issue.
const (
	IssueOpen   IssueState = "open"
	IssueClosed IssueState = "closed"
)

// Issue is an issue as read.
type Issue struct {
	Number int        `json:"number"`
	Title  string     `json:"title,omitempty"`
	Body   string     `json:"body,omitempty"`
	URL    string     `json:"url,omitempty"`
	Author string     `json:"author,omitempty"`
	State  IssueState `json:"state,omitempty"`
	// Labels and Assignees are names and logins, sorted.
	Labels    []string `json:"labels,omitempty"`
	Assignees []string `json:"assignees,omitempty"`
	// Milestone is its milestone's title ("": none).
	Milestone string    `json:"milestone,omitempty"`
	Updated   time.Time `json:"updated,omitempty"`
}

// Matches tells whether issue is one q selects, as the forges compare
// names: labels and logins without case, a milestone by its title. Each
// adapter asks its forge to narrow the list as far as it can, then keeps
// what Matches says: a forge drops a filter it cannot read (Gitea drops a
// label or milestone it does not know, and reads a comma as a separator),
// and "none"/"*" assignees are GitHub's alone.
func (q IssueQuery) Matches(is Issue) bool {
	if is.State != IssueOpen {
		return false
	}
	for _, l := range q.Labels {
		if !slices.ContainsFunc(is.Labels, func(h string) bool { return strings.EqualFold(h, l) }) {
			return false
		}
	}
	switch q.Assignee {
	case "":
	case AssigneeNone:
		if len(is.Assignees) > 0 {
			return false
		}
	case AssigneeAny:
		if len(is.Assignees) == 0 {
			return false
		}
	default:
		if !slices.ContainsFunc(is.Assignees, func(a string) bool { return strings.EqualFold(a, q.Assignee) }) {
			return false
		}
	}
	return q.Milestone == "" || strings.EqualFold(is.Milestone, q.Milestone)
}

// issueList is what Issues answers of the issues read page by page: those
// q matches, each once (a page may repeat an item of the one before when
// an issue is opened meanwhile), by number ascending.
func issueList(q IssueQuery, read []Issue) []Issue {
	var out []Issue
	seen := map[int]bool{}
	for _, is := range read {
		if !seen[is.Number] && q.Matches(is) {
			seen[is.Number] = true
			out = append(out, is)
		}
	}
	slices.SortFunc(out, func(a, b Issue) int { return cmp.Compare(a.Number, b.Number) })
	return out
}

// sortedNames is names sorted, nil when there are none.
func sortedNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return names
}

// issueLabelColour is the colour of a label AddLabels makes.
const issueLabelColour = "5319e7"
