package forge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"
	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/forge/giteatest"
)

// The issue tracker on a real Gitea, as `batch --issues` will use it: a
// repository with issues of every kind (labelled, assigned, in a
// milestone, closed, and a pull request among them), listed two to a page
// by each kind of query; one claimed (a label made, an assignee) and let
// go; its comments, from writers and a passer-by, oldest first, one
// edited and one deleted.
func TestGiteaIssues(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	admin := client(t, srv, srv.Admin)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	newIssue := func(as giteatest.User, title string, labels ...string) int {
		t.Helper()
		n, err := r.NewIssue(ctx, as, title, "Body of "+title+".", labels...)
		must(err)
		return n
	}
	m1, _, err := admin.CreateMilestone(r.Owner, r.Name, gitea.CreateMilestoneOption{Title: "v1"})
	must(err)
	inMilestone := func(n int) {
		t.Helper()
		_, _, err := admin.EditIssue(r.Owner, r.Name, int64(n), gitea.EditIssueOption{Milestone: &m1.ID})
		must(err)
	}

	one := newIssue(srv.Admin, "bug one", "bug", "ready")
	inMilestone(one)
	plain := newIssue(srv.Outsider, "plain")
	assigned := newIssue(srv.Admin, "bug assigned", "bug", "wip")
	must(r.AssignIssue(ctx, srv.Admin, assigned, giteatest.ReviewerName))
	must(r.RemoveIssueLabel(ctx, srv.Reviewer, assigned, "wip"))
	closed := newIssue(srv.Admin, "closed", "ready")
	must(r.CloseIssue(ctx, srv.Admin, closed))
	_, err = r.Commit(ctx, srv.Admin, giteatest.Change{Branch: "feat", From: "main", Message: "feat", Files: map[string]string{"f.txt": "f\n"}})
	must(err)
	pr, _, err := admin.CreatePullRequest(r.Owner, r.Name, gitea.CreatePullRequestOption{Head: "feat", Base: "main", Title: "a pull request"})
	must(err)
	prNumber := int(pr.Index)
	ls, _, err := admin.ListRepoLabels(r.Owner, r.Name, gitea.ListLabelsOptions{})
	must(err)
	for _, l := range ls {
		if l.Name == "bug" {
			_, _, err := admin.AddIssueLabels(r.Owner, r.Name, pr.Index, gitea.IssueLabelsOption{Labels: []int64{l.ID}})
			must(err)
		}
	}
	ready := newIssue(srv.Admin, "ready two", "ready")
	inMilestone(ready)
	must(r.AssignIssue(ctx, srv.Admin, ready, giteatest.ReviewerName, giteatest.AdminName))
	if want := []int{1, 2, 3, 4, 5, 6}; !slices.Equal([]int{one, plain, assigned, closed, prNumber, ready}, want) {
		t.Fatalf("numbers %v, want %v", []int{one, plain, assigned, closed, prNumber, ready}, want)
	}

	fg := openGitea(t, srv, r)
	fg.(*giteaForge).pageSize = 2
	for _, tc := range []struct {
		q    IssueQuery
		want []int
	}{
		{IssueQuery{}, []int{one, plain, assigned, ready}},
		{IssueQuery{Labels: []string{"bug"}}, []int{one, assigned}},
		{IssueQuery{Labels: []string{"BUG"}}, []int{one, assigned}},
		{IssueQuery{Labels: []string{"bug", "ready"}}, []int{one}},
		{IssueQuery{Labels: []string{"ready"}}, []int{one, ready}},
		{IssueQuery{Labels: []string{"wip"}}, nil},
		{IssueQuery{Labels: []string{"no-such-label"}}, nil},
		{IssueQuery{Labels: []string{"bug", "no-such-label"}}, nil},
		{IssueQuery{Labels: []string{"bug,ready"}}, nil},
		{IssueQuery{Assignee: AssigneeNone}, []int{one, plain}},
		{IssueQuery{Assignee: AssigneeAny}, []int{assigned, ready}},
		{IssueQuery{Assignee: giteatest.ReviewerName}, []int{assigned, ready}},
		{IssueQuery{Assignee: giteatest.AdminName}, []int{ready}},
		{IssueQuery{Assignee: giteatest.OutsiderName}, nil},
		{IssueQuery{Assignee: "no-such-user"}, nil},
		{IssueQuery{Milestone: "v1"}, []int{one, ready}},
		{IssueQuery{Milestone: "no such milestone"}, nil},
		// No milestone has this title; Gitea reads it as v1's id.
		{IssueQuery{Milestone: fmt.Sprint(m1.ID)}, nil},
		{IssueQuery{Milestone: "v1", Assignee: AssigneeNone}, []int{one}},
		{IssueQuery{Milestone: "v1", Labels: []string{"ready"}, Assignee: giteatest.ReviewerName}, []int{ready}},
	} {
		got, err := fg.Issues(ctx, tc.q)
		if err != nil {
			t.Errorf("Issues(%+v): %v", tc.q, err)
			continue
		}
		var numbers []int
		for _, is := range got {
			numbers = append(numbers, is.Number)
		}
		if !slices.Equal(numbers, tc.want) {
			t.Errorf("Issues(%+v): %v, want %v", tc.q, numbers, tc.want)
		}
	}

	got, err := fg.Issue(ctx, one)
	must(err)
	if got.Updated.IsZero() || !strings.HasSuffix(got.URL, fmt.Sprintf("/%s/%s/issues/%d", r.Owner, r.Name, one)) {
		t.Errorf("Issue #%d: updated %v, URL %q", one, got.Updated, got.URL)
	}
	got.Updated, got.URL = got.Updated.UTC(), ""
	want := Issue{Number: one, Title: "bug one", Body: "Body of bug one.", Author: giteatest.AdminName, State: IssueOpen,
		Labels: []string{"bug", "ready"}, Milestone: "v1", Updated: got.Updated}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Issue #%d (-want +got):\n%s", one, diff)
	}
	if got, err := fg.Issue(ctx, ready); err != nil || !slices.Equal(got.Assignees, []string{giteatest.AdminName, giteatest.ReviewerName}) {
		t.Errorf("Issue #%d: assignees %v, %v; want both, sorted", ready, got.Assignees, err)
	}
	if got, err := fg.Issue(ctx, closed); err != nil || got.State != IssueClosed {
		t.Errorf("Issue #%d (closed): %+v, %v", closed, got, err)
	}
	if got, err := fg.Issue(ctx, plain); err != nil || got.Author != giteatest.OutsiderName || got.Labels != nil {
		t.Errorf("Issue #%d (a passer-by's): %+v, %v", plain, got, err)
	}
	for _, n := range []int{prNumber, 999} {
		if _, err := fg.Issue(ctx, n); !errors.Is(err, ErrNotFound) {
			t.Errorf("Issue #%d: %v, want ErrNotFound", n, err)
		}
	}

	// Claim the passer-by's issue: a label the repository lacks, made, and
	// one it has; then an assignee.
	view := func(n int) giteatest.IssueView {
		t.Helper()
		v, err := r.IssueView(ctx, n)
		must(err)
		return v
	}
	for i := 0; i < 2; i++ {
		if err := fg.AddLabels(ctx, plain, "jlgcli:claimed", "bug"); err != nil {
			t.Fatalf("AddLabels (%d): %v", i, err)
		}
	}
	if v := view(plain); !slices.Equal(v.Labels, []string{"bug", "jlgcli:claimed"}) {
		t.Errorf("labels after AddLabels: %v", v.Labels)
	}
	labels, _, err := admin.ListRepoLabels(r.Owner, r.Name, gitea.ListLabelsOptions{})
	must(err)
	if i := slices.IndexFunc(labels, func(l *gitea.Label) bool { return l.Name == "jlgcli:claimed" }); i < 0 || labels[i].Color != issueLabelColour {
		t.Errorf("the label made: %+v", labels)
	}
	for i := 0; i < 2; i++ {
		if err := fg.RemoveLabel(ctx, plain, "jlgcli:claimed"); err != nil {
			t.Errorf("RemoveLabel (%d): %v", i, err)
		}
	}
	if err := fg.RemoveLabel(ctx, plain, "never-made"); err != nil {
		t.Errorf("RemoveLabel of a label the repository lacks: %v", err)
	}
	if v := view(plain); !slices.Equal(v.Labels, []string{"bug"}) {
		t.Errorf("labels after RemoveLabel: %v", v.Labels)
	}

	assignees := func(want ...string) {
		t.Helper()
		if v := view(plain); !slices.Equal(v.Assignees, want) {
			t.Errorf("assignees %v, want %v", v.Assignees, want)
		}
	}
	must(fg.Assign(ctx, plain, giteatest.ReviewerName))
	must(fg.Assign(ctx, plain, giteatest.ReviewerName))
	assignees(giteatest.ReviewerName)
	must(fg.Assign(ctx, plain, giteatest.AdminName))
	assignees(giteatest.AdminName, giteatest.ReviewerName)
	must(fg.Unassign(ctx, plain, giteatest.ReviewerName))
	must(fg.Unassign(ctx, plain, giteatest.ReviewerName))
	assignees(giteatest.AdminName)
	must(fg.Unassign(ctx, plain, giteatest.AdminName))
	assignees()
	// A passer-by may be assigned the issue of a public repository (as
	// anyone who may read its pull requests, on Gitea); no one is assigned
	// a user the server does not know.
	must(fg.Assign(ctx, plain, giteatest.OutsiderName))
	assignees(giteatest.OutsiderName)
	must(fg.Unassign(ctx, plain, giteatest.OutsiderName))
	if err := fg.Assign(ctx, plain, "no-such-user"); err == nil {
		t.Errorf("Assign of no user: no error")
	}
	assignees()

	// Comments, from a writer, the admin and the passer-by, more than
	// fit on a page of the adapter's.
	var posted []int64
	authors := []giteatest.User{srv.Reviewer, srv.Admin, srv.Outsider}
	for i := 0; i < 7; i++ {
		id, err := r.CommentIssue(ctx, authors[i%3], plain, fmt.Sprintf("comment %d", i))
		must(err)
		posted = append(posted, id)
	}
	cs, err := fg.IssueComments(ctx, plain)
	must(err)
	perm := map[string]Permission{giteatest.ReviewerName: PermWrite, giteatest.AdminName: PermAdmin, giteatest.OutsiderName: PermRead}
	if len(cs) != len(posted) {
		t.Fatalf("IssueComments: %d, want %d: %+v", len(cs), len(posted), cs)
	}
	for i, c := range cs {
		a := authors[i%3].Name
		if c.ID != posted[i] || c.Author != a || c.Permission != perm[a] || c.Body != fmt.Sprintf("comment %d", i) || c.Created.IsZero() ||
			!strings.HasSuffix(c.URL, fmt.Sprintf("/issues/%d#issuecomment-%d", plain, c.ID)) {
			t.Errorf("comment %d: %+v; want id %d by %s (%s)", i, c, posted[i], a, perm[a])
		}
	}
	if ed, err := fg.EditComment(ctx, posted[1], "comment 1, edited"); err != nil || ed.Body != "comment 1, edited" {
		t.Errorf("EditComment: %+v, %v", ed, err)
	}
	must(fg.DeleteComment(ctx, posted[0]))
	if err := fg.DeleteComment(ctx, posted[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteComment of a deleted comment: %v, want ErrNotFound", err)
	}
	if v := view(plain); len(v.Comments) != len(posted)-1 || v.Comments[0] != (giteatest.IssueComment{ID: posted[1], Author: giteatest.AdminName, Body: "comment 1, edited"}) {
		t.Errorf("comments after the edit and the delete: %+v", v.Comments)
	}
	if cs, err := fg.IssueComments(ctx, plain); err != nil || len(cs) != len(posted)-1 || cs[0].ID != posted[1] {
		t.Errorf("IssueComments after the delete: %+v, %v", cs, err)
	}

	// A token the server refuses: at Open, and once revoked.
	u, _ := url.Parse(r.CloneURL)
	u.User = nil
	if _, err := Open(ctx, u.String(), Settings{Kind: Gitea, TokenEnv: "T"}, Options{Getenv: func(string) string { return "not-a-token" }}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Open with a refused token: %v, want ErrUnauthorized", err)
	}
	basic, err := gitea.NewClient(srv.URL, gitea.SetBasicAuth(srv.Admin.Name, srv.Admin.Password), gitea.SetGiteaVersion(""))
	must(err)
	tok, _, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{Name: "revoked-" + r.Name, Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll}})
	must(err)
	revoked, err := Open(ctx, u.String(), Settings{Kind: Gitea, TokenEnv: "T"}, Options{Getenv: func(string) string { return tok.Token }})
	must(err)
	if _, err := revoked.Issues(ctx, IssueQuery{}); err != nil {
		t.Fatalf("Issues before the token is revoked: %v", err)
	}
	_, err = basic.DeleteAccessToken(tok.ID)
	must(err)
	if _, err := revoked.Issues(ctx, IssueQuery{}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Issues with a revoked token: %v, want ErrUnauthorized", err)
	}
}

// TestGiteaDuplicateLabels: two runs that claim issues at once may both
// make the repository's missing label (Gitea does not refuse a second
// label of the same name): taking it off an issue takes off whichever
// of them it has, and adding it uses the oldest.
func TestGiteaDuplicateLabels(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	admin := client(t, srv, srv.Admin)
	var ids []int64
	for range 2 {
		l, _, err := admin.CreateLabel(r.Owner, r.Name, gitea.CreateLabelOption{Name: "dup", Color: "#000000"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	f := openGitea(t, srv, r)
	for i, id := range ids {
		n, err := r.NewIssue(ctx, srv.Admin, fmt.Sprint("issue ", i), "body")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := admin.AddIssueLabels(r.Owner, r.Name, int64(n), gitea.IssueLabelsOption{Labels: []int64{id}}); err != nil {
			t.Fatal(err)
		}
		if err := f.RemoveLabel(ctx, n, "dup"); err != nil {
			t.Fatal(err)
		}
		if v, err := r.IssueView(ctx, n); err != nil || len(v.Labels) != 0 {
			t.Errorf("issue with label %d: labels %v after RemoveLabel (%v)", id, v.Labels, err)
		}
	}
	n, err := r.NewIssue(ctx, srv.Admin, "third", "body")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AddLabels(ctx, n, "dup"); err != nil {
		t.Fatal(err)
	}
	ls, _, err := admin.GetIssueLabels(r.Owner, r.Name, int64(n), gitea.ListLabelsOptions{})
	if err != nil || len(ls) != 1 || ls[0].ID != ids[0] {
		t.Errorf("AddLabels put %+v (%v), want the oldest dup, %d", ls, err, ids[0])
	}
}

// A writer's token may not ask Gitea another user's permission (403:
// only the user itself and the repository's admins may): jlgcli run with
// it still knows who can push — the owner and the other writers — from
// the users an issue can be assigned to, and a passer-by still cannot.
func TestGiteaPermissionAsWriter(t *testing.T) {
	srv := giteaSrv.Get(t)
	r := srv.NewRepo(t)
	ctx := context.Background()
	u, _ := url.Parse(r.CloneURL)
	u.User = nil
	fg, err := Open(ctx, u.String(), Settings{Kind: Gitea, TokenEnv: "T"}, Options{Getenv: func(string) string { return srv.Reviewer.Token }})
	if err != nil {
		t.Fatal(err)
	}
	for login, write := range map[string]bool{giteatest.AdminName: true, giteatest.CIName: true, giteatest.ReviewerName: true,
		giteatest.OutsiderName: false, "nobody-at-all": false} {
		p, err := fg.Permission(ctx, login)
		if err != nil || p.CanWrite() != write {
			t.Errorf("Permission(%s) as a writer: %q, %v; can write: want %v", login, p, err, write)
		}
	}
}
