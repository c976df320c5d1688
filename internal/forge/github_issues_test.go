package forge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// servePages answers key with file, and a Link header to page 2 (next
// and last) when next is set, as GitHub pages a list.
func (f *fakeGitHub) servePages(key, file, next string) {
	f.onFunc(key, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if next != "" {
			u := f.srv.URL + "/api/v3" + next
			w.Header().Set("Link", `<`+u+`>; rel="next", <`+u+`>; rel="last"`)
		}
		f.write(w, 200, file)
	})
}

// Issues reads every page of the open issues, leaves the pull requests
// out and sorts them by number; the query is GitHub's: labels
// comma-joined, the assignee as given ("none", "*", a login), the
// milestone by its number, which its title is mapped to (a title no
// milestone has: no issue, nothing listed).
func TestGitHubIssues(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	ctx := context.Background()
	f.servePages("GET /repos/octo/hello/issues?per_page=100&state=open", "issues-1.json", "/repos/octo/hello/issues?page=2&per_page=100&state=open")
	f.servePages("GET /repos/octo/hello/issues?page=2&per_page=100&state=open", "issues-2.json", "")
	got, err := fg.Issues(ctx, IssueQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int
	for _, is := range got {
		numbers = append(numbers, is.Number)
	}
	if !slices.Equal(numbers, []int{1, 3, 7}) {
		t.Errorf("Issues: %v, want [1 3 7] (the pull request left out)", numbers)
	}
	want := Issue{Number: 1, Title: "Greeting says helo", Body: "It should say hello.", URL: "https://github.com/octo/hello/issues/1", Author: "passerby",
		State: IssueOpen, Labels: []string{"bug", "good first issue"}, Milestone: "v1.0", Updated: time.Date(2026, 1, 25, 10, 0, 0, 0, time.UTC)}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("issue #1 (-want +got):\n%s", diff)
	}
	if !slices.Equal(got[2].Assignees, []string{"hubot", "octocat"}) || got[2].Milestone != "" || got[2].Body != "" {
		t.Errorf("issue #7: %+v", got[2])
	}

	f.requests()
	f.on("GET /repos/octo/hello/milestones?per_page=100&state=all", 200, "milestones.json")
	f.on("GET /repos/octo/hello/issues?assignee=none&labels=bug%2Cgood+first+issue&milestone=1&per_page=100&state=open", 200, "issues-2.json")
	got, err = fg.Issues(ctx, IssueQuery{Labels: []string{"bug", "good first issue"}, Assignee: AssigneeNone, Milestone: "v1.0"})
	if err != nil || len(got) != 1 || got[0].Number != 1 {
		t.Errorf("Issues by labels, no assignee, milestone: %+v, %v; want #1 alone", got, err)
	}
	if diff := cmp.Diff([]string{"GET /api/v3/repos/octo/hello/milestones?per_page=100&state=all",
		"GET /api/v3/repos/octo/hello/issues?assignee=none&labels=bug%2Cgood+first+issue&milestone=1&per_page=100&state=open"}, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// A closed milestone's title is one too.
	f.on("GET /repos/octo/hello/issues?assignee=%2A&milestone=2&per_page=100&state=open", 200, "[]")
	if got, err := fg.Issues(ctx, IssueQuery{Assignee: AssigneeAny, Milestone: "v0.9"}); err != nil || got != nil {
		t.Errorf("Issues of a closed milestone, anyone assigned: %+v, %v", got, err)
	}
	f.on("GET /repos/octo/hello/issues?assignee=octocat&per_page=100&state=open", 200, "issues-1.json")
	if got, err := fg.Issues(ctx, IssueQuery{Assignee: "octocat"}); err != nil || len(got) != 1 || got[0].Number != 7 {
		t.Errorf("Issues of octocat: %+v, %v; want #7", got, err)
	}
	f.requests()
	if got, err := fg.Issues(ctx, IssueQuery{Milestone: "v2.0"}); err != nil || got != nil {
		t.Errorf("Issues of a milestone no one has: %+v, %v; want none", got, err)
	}
	if diff := cmp.Diff([]string{"GET /api/v3/repos/octo/hello/milestones?per_page=100&state=all"}, f.requests()); diff != "" {
		t.Errorf("a milestone no one has: requests (-want +got):\n%s", diff)
	}

	// Issue reads an issue; a pull request's number is none.
	f.on("GET /repos/octo/hello/issues/1", 200, "issue.json")
	if got, err := fg.Issue(ctx, 1); err != nil || got.Number != 1 || got.Author != "passerby" || got.State != IssueOpen {
		t.Errorf("Issue #1: %+v, %v", got, err)
	}
	// The first item of issues-1.json is pull request #1347.
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(testdata(t, "issues-1.json")), &items); err != nil {
		t.Fatal(err)
	}
	f.on("GET /repos/octo/hello/issues/1347", 200, string(items[0]))
	for _, n := range []int{1347, 9} {
		if _, err := fg.Issue(ctx, n); !errors.Is(err, ErrNotFound) {
			t.Errorf("Issue #%d: %v, want ErrNotFound", n, err)
		}
	}

	// A token GitHub refuses.
	f.on("GET /repos/octo/hello/issues?labels=bug&per_page=100&state=open", 401, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
	if _, err := fg.Issues(ctx, IssueQuery{Labels: []string{"bug"}}); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Issues with a refused token: %v, want ErrUnauthorized", err)
	}
}

// testdata is the content of a file of testdata/github.
func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "github", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Labels are added by name (GitHub makes those the repository lacks) and
// taken off by name, escaped in the path; one the issue does not have is
// no error. Assign checks the issue GitHub answers (it ignores, without
// an error, a login that may not be assigned).
func TestGitHubIssueLabelsAssignees(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	ctx := context.Background()
	var sent []string
	record := func(status int, file string) func(http.ResponseWriter, *http.Request, []byte) {
		return func(w http.ResponseWriter, r *http.Request, body []byte) {
			sent = append(sent, r.Method+" "+r.RequestURI+" "+strings.TrimSpace(string(body)))
			f.write(w, status, file)
		}
	}
	f.onFunc("POST /repos/octo/hello/issues/1/labels", record(200, "labels.json"))
	if err := fg.AddLabels(ctx, 1, "jlgcli:claimed", "bug"); err != nil {
		t.Error(err)
	}
	f.onFunc("DELETE /repos/octo/hello/issues/1/labels/good first issue", record(200, "labels.json"))
	if err := fg.RemoveLabel(ctx, 1, "good first issue"); err != nil {
		t.Error(err)
	}
	f.onFunc("DELETE /repos/octo/hello/issues/1/labels/jlgcli:claimed", record(404, `{"message":"Label does not exist","documentation_url":"https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue","status":"404"}`))
	if err := fg.RemoveLabel(ctx, 1, "jlgcli:claimed"); err != nil {
		t.Errorf("RemoveLabel of a label the issue lacks: %v", err)
	}
	f.onFunc("DELETE /repos/octo/hello/issues/1/labels/bug", record(403, `{"message":"Must have admin rights to Repository.","documentation_url":"https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue","status":"403"}`))
	if err := fg.RemoveLabel(ctx, 1, "bug"); err == nil || !strings.Contains(err.Error(), "Must have admin rights") {
		t.Errorf("RemoveLabel refused: %v", err)
	}

	assigned := strings.Replace(testdata(t, "issue.json"), `"assignees": []`, `"assignees": [{"login": "octocat", "id": 5, "type": "User"}]`, 1)
	f.onFunc("POST /repos/octo/hello/issues/1/assignees", func(w http.ResponseWriter, r *http.Request, body []byte) {
		sent = append(sent, r.Method+" "+r.RequestURI+" "+strings.TrimSpace(string(body)))
		f.write(w, 201, assigned)
	})
	if err := fg.Assign(ctx, 1, "octocat"); err != nil {
		t.Error(err)
	}
	if err := fg.Assign(ctx, 1, "hubot"); err == nil || !strings.Contains(err.Error(), "may not be assigned") {
		t.Errorf("Assign ignored by GitHub: %v", err)
	}
	f.onFunc("DELETE /repos/octo/hello/issues/1/assignees", record(200, "issue.json"))
	if err := fg.Unassign(ctx, 1, "octocat"); err != nil {
		t.Error(err)
	}
	want := []string{
		`POST /api/v3/repos/octo/hello/issues/1/labels ["jlgcli:claimed","bug"]`,
		`DELETE /api/v3/repos/octo/hello/issues/1/labels/good%20first%20issue `,
		`DELETE /api/v3/repos/octo/hello/issues/1/labels/jlgcli:claimed `,
		`DELETE /api/v3/repos/octo/hello/issues/1/labels/bug `,
		`POST /api/v3/repos/octo/hello/issues/1/assignees {"assignees":["octocat"]}`,
		`POST /api/v3/repos/octo/hello/issues/1/assignees {"assignees":["hubot"]}`,
		`DELETE /api/v3/repos/octo/hello/issues/1/assignees {"assignees":["octocat"]}`,
	}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}

// An issue's comments, every page, oldest first, each with its author's
// permission (asked once per author; a deleted user's is none); one is
// deleted, and then it is not found.
func TestGitHubIssueComments(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	ctx := context.Background()
	f.servePages("GET /repos/octo/hello/issues/1/comments?per_page=100", "issue-comments-1.json", "/repos/octo/hello/issues/1/comments?page=2&per_page=100")
	f.servePages("GET /repos/octo/hello/issues/1/comments?page=2&per_page=100", "issue-comments-2.json", "")
	f.on("GET /repos/octo/hello/collaborators/octocat/permission", 200, `{"permission":"write","role_name":"write","user":{"login":"octocat"}}`)
	f.on("GET /repos/octo/hello/collaborators/passerby/permission", 200, `{"permission":"read","role_name":"read","user":{"login":"passerby"}}`)
	got, err := fg.IssueComments(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	url := func(id string) string { return "https://github.com/octo/hello/issues/1#issuecomment-" + id }
	want := []Comment{
		{ID: 1146830, Author: "passerby", Permission: PermRead, Body: "Can I take this?", Created: at("2026-01-25T11:00:00Z"), URL: url("1146830")},
		{ID: 1146831, Author: "octocat", Permission: PermWrite, Body: "/jlgcli please", Created: at("2026-01-25T12:00:00Z"), URL: url("1146831")},
		{ID: 1146832, Author: "ghost", Permission: PermNone, Body: "A comment of a deleted user.", Created: at("2026-01-25T13:00:00Z"), URL: url("1146832")},
		{ID: 1146833, Author: "octocat", Permission: PermWrite, Body: "Thanks.", Created: at("2026-01-25T14:00:00Z"), URL: url("1146833")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IssueComments (-want +got):\n%s", diff)
	}
	var perms []string
	for _, r := range f.requests() {
		if strings.Contains(r, "/permission") {
			perms = append(perms, r)
		}
	}
	if len(perms) != 3 {
		t.Errorf("permission requests %v, want one per author", perms)
	}

	f.on("DELETE /repos/octo/hello/issues/comments/1146831", 204, "")
	if err := fg.DeleteComment(ctx, 1146831); err != nil {
		t.Error(err)
	}
	if err := fg.DeleteComment(ctx, 1146899); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteComment of a comment gone: %v, want ErrNotFound", err)
	}
}
