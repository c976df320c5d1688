package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeGitHub serves GitHub's documented answers (testdata/github) under
// /api/v3 and /api/graphql, as GitHub Enterprise places them, and records
// every request.
type fakeGitHub struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]func(w http.ResponseWriter, r *http.Request, body []byte)
	graphq []func(w http.ResponseWriter, q gqlRequest)
	log    []string
}

type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, routes: map[string]func(http.ResponseWriter, *http.Request, []byte){}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	key := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	f.log = append(f.log, key)
	if r.Header.Get("Authorization") != "token tok-123" {
		f.mu.Unlock()
		f.t.Errorf("%s: Authorization %q", key, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.URL.Path == "/api/graphql" {
		var q gqlRequest
		if err := json.Unmarshal(body, &q); err != nil {
			f.mu.Unlock()
			f.t.Errorf("graphql body %s: %v", body, err)
			return
		}
		if len(f.graphq) == 0 {
			f.mu.Unlock()
			f.t.Errorf("unexpected GraphQL query %s", q.Query)
			return
		}
		h := f.graphq[0]
		f.graphq = f.graphq[1:]
		f.mu.Unlock()
		h(w, q)
		return
	}
	h, ok := f.routes[key]
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	h(w, r, body)
}

// on answers the request "METHOD /path?query" with file (of
// testdata/github) or with body, at status.
func (f *fakeGitHub) on(key string, status int, fileOrBody string) {
	f.onFunc(key, func(w http.ResponseWriter, r *http.Request, body []byte) { f.write(w, status, fileOrBody) })
}

func (f *fakeGitHub) onFunc(key string, h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes["/"+strings.TrimPrefix(key, "/")] = h
	if m, p, ok := strings.Cut(key, " "); ok {
		f.routes[m+" /api/v3"+p] = h
	}
}

func (f *fakeGitHub) write(w http.ResponseWriter, status int, fileOrBody string) {
	body := fileOrBody
	if strings.HasSuffix(fileOrBody, ".json") {
		b, err := os.ReadFile(filepath.Join("testdata", "github", fileOrBody))
		if err != nil {
			f.t.Fatal(err)
		}
		body = string(b)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// graphql answers the next GraphQL query with h.
func (f *fakeGitHub) graphql(h func(w http.ResponseWriter, q gqlRequest)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.graphq = append(f.graphq, h)
}

func (f *fakeGitHub) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.log)
	f.log = nil
	return out
}

// open is the adapter of octo/hello on the fake, as GitHub Enterprise at
// its address.
func (f *fakeGitHub) open(t *testing.T) Forge {
	t.Helper()
	fg, err := Open(context.Background(), "git@ghe.example:octo/hello.git", Settings{Kind: GitHub, URL: f.srv.URL, TokenEnv: "T"},
		Options{Getenv: func(k string) string { return map[string]string{"T": "tok-123"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return fg
}

const (
	headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	baseSHA = "553c2077f0edc3d5dc5d17262f6aa498e69d6f8e"
)

// A pull request is found by its head branch, opened when there is none
// (into the default branch when no base is given), and read: mergeable
// true, false (a conflict) and null (not computed yet), and merged.
func TestGitHubPullRequests(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	ctx := context.Background()
	pull, err := os.ReadFile("testdata/github/pull.json")
	if err != nil {
		t.Fatal(err)
	}
	f.on("GET /repos/octo/hello/pulls?head=octo%3Ajlgcli%2Ffix-1&state=open", 200, "["+string(pull)+"]")
	pr, err := fg.FindPR(ctx, "jlgcli/fix-1")
	if err != nil || pr == nil {
		t.Fatalf("FindPR: %v, %v", pr, err)
	}
	want := PR{Number: 1347, URL: "https://github.com/octo/hello/pull/1347", Title: "feat: add the greeting", Body: "Made by jlgcli.", Author: "jlg-bot",
		State: StateOpen, Head: "jlgcli/fix-1", HeadSHA: headSHA, HeadRepo: "octo/hello", Base: "main", BaseSHA: baseSHA,
		Mergeable: Mergeable, MergeState: "clean"}
	if diff := cmp.Diff(want, *pr); diff != "" {
		t.Errorf("FindPR (-want +got):\n%s", diff)
	}
	if got, created, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/fix-1", Title: "x"}); err != nil || created || got.Number != 1347 {
		t.Errorf("OpenPR of a head with an open pull request: #%d created %v, %v", got.Number, created, err)
	}

	f.on("GET /repos/octo/hello/pulls?head=octo%3Ajlgcli%2Ffix-2&state=open", 200, "[]")
	f.on("GET /repos/octo/hello", 200, `{"id":1296269,"name":"hello","full_name":"octo/hello","default_branch":"trunk"}`)
	var sent map[string]any
	f.onFunc("POST /repos/octo/hello/pulls", func(w http.ResponseWriter, r *http.Request, body []byte) {
		_ = json.Unmarshal(body, &sent)
		f.write(w, 201, strings.Replace(string(pull), `"ref": "jlgcli/fix-1"`, `"ref": "jlgcli/fix-2"`, 1))
	})
	f.requests()
	got, created, err := fg.OpenPR(ctx, NewPR{Head: "jlgcli/fix-2", Title: "feat: two", Body: "why", Draft: true})
	if err != nil || !created || got.Head != "jlgcli/fix-2" {
		t.Errorf("OpenPR: %+v created %v, %v", got, created, err)
	}
	if w := map[string]any{"title": "feat: two", "head": "jlgcli/fix-2", "base": "trunk", "body": "why", "draft": true}; !cmp.Equal(w, sent) {
		t.Errorf("OpenPR sent %v, want %v", sent, w)
	}
	if diff := cmp.Diff([]string{"GET /api/v3/repos/octo/hello/pulls?head=octo%3Ajlgcli%2Ffix-2&state=open", "GET /api/v3/repos/octo/hello", "POST /api/v3/repos/octo/hello/pulls"}, f.requests()); diff != "" {
		t.Errorf("OpenPR requests (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		mergeable, state, merged string
		want                     Mergeability
		prState                  PRState
	}{
		{"true", "clean", "false", Mergeable, StateOpen},
		{"false", "dirty", "false", Conflicting, StateOpen},
		{"null", "unknown", "false", MergeUnknown, StateOpen},
		{"null", "unknown", "true", MergeUnknown, StateMerged},
	} {
		body := strings.Replace(string(pull), `"mergeable": true`, `"mergeable": `+tc.mergeable, 1)
		body = strings.Replace(body, `"mergeable_state": "clean"`, `"mergeable_state": "`+tc.state+`"`, 1)
		body = strings.Replace(body, `"merged": false`, `"merged": `+tc.merged, 1)
		if tc.merged == "true" {
			body = strings.Replace(body, `"state": "open"`, `"state": "closed"`, 1)
		}
		f.on("GET /repos/octo/hello/pulls/1347", 200, body)
		got, err := fg.PR(ctx, 1347)
		if err != nil || got.Mergeable != tc.want || got.MergeState != tc.state || got.State != tc.prState {
			t.Errorf("mergeable %s: %s %s %s, %v; want %s %s", tc.mergeable, got.Mergeable, got.MergeState, got.State, err, tc.want, tc.prState)
		}
		if tc.merged == "true" && got.MergeSHA != "e5bd3914e2e596debea16f433f57875b5b90bcd6" {
			t.Errorf("merged: merge commit %q", got.MergeSHA)
		}
	}
	if _, err := fg.PR(ctx, 9); !errors.Is(err, ErrNotFound) {
		t.Errorf("PR #9: %v, want ErrNotFound", err)
	}
}

// The checks at a commit are its latest check runs and its commit
// statuses; the base branch's protection and rulesets say which are
// required, and a required check that has not appeared is in Required.
func TestGitHubChecks(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.on("GET /repos/octo/hello/branches/main", 200, "branch.json")
	f.on("GET /repos/octo/hello/rules/branches/main?per_page=100", 200, "rules.json")
	f.on("GET /repos/octo/hello/commits/"+headSHA+"/check-runs?filter=latest&per_page=100", 200, "check-runs.json")
	f.on("GET /repos/octo/hello/commits/"+headSHA+"/status?per_page=100", 200, "status.json")
	got, err := fg.Checks(context.Background(), headSHA, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := Checks{SHA: headSHA, RequiredKnown: true, Required: []string{"build", "continuous-integration/jenkins", "lint"}, Checks: []Check{
		{Name: "build", State: Failed, Conclusion: "failure", URL: "https://github.com/octo/hello/actions/runs/99/job/4", Description: "build failed",
			Required: true, Source: SourceCheckRun, ID: 4, App: "github-actions"},
		{Name: "continuous-integration/jenkins", State: Success, Conclusion: "success", URL: "https://ci.example.com/1000/output",
			Description: "Build has completed successfully", Required: true, Source: SourceStatus},
		{Name: "docs", State: Neutral, Conclusion: "skipped", URL: "https://github.com/octo/hello/actions/runs/99/job/8", Source: SourceCheckRun, ID: 8, App: "github-actions"},
		{Name: "lint", State: Pending, Conclusion: "in_progress", URL: "https://lint.example.com/runs/42", Required: true, Source: SourceCheckRun, ID: 7, App: "lint-app"},
		{Name: "security/brakeman", State: Failed, Conclusion: "error", URL: "https://ci.example.com/2000/output", Description: "Brakeman could not start", Source: SourceStatus},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Checks (-want +got):\n%s", diff)
	}

	// Without a base, nothing is said of what is required; a branch whose
	// protection this token may not read leaves it unknown.
	f.requests()
	got, err = fg.Checks(context.Background(), headSHA, "")
	if err != nil || got.RequiredKnown || len(got.Checks) != 5 {
		t.Errorf("no base: known %v, %d checks, %v", got.RequiredKnown, len(got.Checks), err)
	}
	if reqs := f.requests(); len(reqs) != 2 {
		t.Errorf("no base: requests %v, want only the checks and statuses", reqs)
	}
	f.on("GET /repos/octo/hello/branches/main", 403, `{"message":"Resource not accessible by integration"}`)
	got, err = fg.Checks(context.Background(), headSHA, "main")
	if err != nil || got.RequiredKnown || got.Required != nil {
		t.Errorf("protection unreadable: known %v required %v, %v", got.RequiredKnown, got.Required, err)
	}
}

// A failed GitHub Actions check gives its output, annotations, failing
// step and the tail of its job's log, fetched where GitHub redirects
// without the token; a commit status gives its description alone.
func TestGitHubFailure(t *testing.T) {
	var logAuth []string
	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logAuth = append(logAuth, r.Header.Get("Authorization"))
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(w, "2026-01-26T19:03:%02dZ line %d\n", i%60, i)
		}
	}))
	defer blob.Close()
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.on("GET /repos/octo/hello/check-runs/4", 200, "check-run-4.json")
	f.on("GET /repos/octo/hello/check-runs/4/annotations?per_page=50", 200, "annotations.json")
	f.on("GET /repos/octo/hello/actions/jobs/4", 200, "job-4.json")
	f.onFunc("GET /repos/octo/hello/actions/jobs/4/logs", func(w http.ResponseWriter, r *http.Request, body []byte) {
		http.Redirect(w, r, blob.URL+"/logs/4.txt?sig=secret", http.StatusFound)
	})
	c := Check{Name: "build", State: Failed, Source: SourceCheckRun, ID: 4, App: "github-actions", Description: "build failed"}
	got, err := fg.Failure(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var tail []string
	for i := 21; i <= 100; i++ {
		tail = append(tail, fmt.Sprintf("2026-01-26T19:03:%02dZ line %d", i%60, i))
	}
	want := Failure{Check: c, Title: "build failed", Summary: "1 test failed", Text: `TestGreeting: want "hello", got "helo"`,
		Step: "Run go test ./...", LogTail: strings.Join(tail, "\n"), Annotations: []Annotation{
			{Path: "greet/greet_test.go", StartLine: 12, EndLine: 12, Level: "failure", Title: "TestGreeting", Message: `want "hello", got "helo"`},
			{Path: ".github", StartLine: 1, EndLine: 1, Level: "failure", Message: "Process completed with exit code 1."},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Failure (-want +got):\n%s", diff)
	}
	if !slices.Equal(logAuth, []string{""}) {
		t.Errorf("the log's host was sent Authorization %q", logAuth)
	}

	st := Check{Name: "ci/jenkins", State: Failed, Source: SourceStatus, Description: "2 tests failed", URL: "https://ci.example.com/1"}
	f.requests()
	if got, err := fg.Failure(context.Background(), st); err != nil || got.Summary != "2 tests failed" || got.LogTail != "" || len(f.requests()) != 0 {
		t.Errorf("a status's failure: %+v, %v", got, err)
	}
}

// A GitHub Actions job is re-run as a job, another app's check run is
// requested again, a commit status cannot be.
func TestGitHubRerun(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.on("POST /repos/octo/hello/actions/jobs/4/rerun", 201, `{}`)
	f.on("POST /repos/octo/hello/check-runs/7/rerequest", 201, `{}`)
	ctx := context.Background()
	if err := fg.Rerun(ctx, Check{Name: "build", Source: SourceCheckRun, ID: 4, App: "github-actions"}); err != nil {
		t.Error(err)
	}
	if err := fg.Rerun(ctx, Check{Name: "lint", Source: SourceCheckRun, ID: 7, App: "lint-app"}); err != nil {
		t.Error(err)
	}
	if err := fg.Rerun(ctx, Check{Name: "ci/jenkins", Source: SourceStatus}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("re-run a status: %v, want ErrUnsupported", err)
	}
	if diff := cmp.Diff([]string{"POST /api/v3/repos/octo/hello/actions/jobs/4/rerun", "POST /api/v3/repos/octo/hello/check-runs/7/rerequest"}, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Reviews: each writer's latest verdict (a drive-by's approval counts for
// nothing), GitHub's own review decision over it; a review of an older
// head is stale; the permission of each verdict's and comment's author.
func TestGitHubReviews(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.on("GET /repos/octo/hello/pulls/1347/reviews?per_page=100", 200, "reviews.json")
	f.on("GET /repos/octo/hello/collaborators/reviewer/permission", 200, `{"permission":"write","role_name":"maintain","user":{"login":"reviewer"}}`)
	f.on("GET /repos/octo/hello/collaborators/drive-by/permission", 200, `{"permission":"read","role_name":"read","user":{"login":"drive-by"}}`)
	f.on("GET /repos/octo/hello/collaborators/passerby/permission", 200, `{"permission":"read","role_name":"read","user":{"login":"passerby"}}`)
	for _, tc := range []struct {
		decision string
		want     Decision
	}{{`"REVIEW_REQUIRED"`, DecisionReviewRequired}, {"null", DecisionApproved}, {`"CHANGES_REQUESTED"`, DecisionChangesRequested}} {
		f.graphql(func(w http.ResponseWriter, q gqlRequest) {
			if !strings.Contains(q.Query, "pullRequest(number: $number){reviewDecision,headRefOid}") ||
				!cmp.Equal(q.Variables, map[string]any{"owner": "octo", "name": "hello", "number": float64(1347)}) {
				t.Errorf("query %s %v", q.Query, q.Variables)
			}
			f.write(w, 200, `{"data":{"repository":{"pullRequest":{"reviewDecision":`+tc.decision+`,"headRefOid":"`+headSHA+`"}}}}`)
		})
		got, err := fg.Reviews(context.Background(), 1347)
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision != tc.want || !slices.Equal(got.Approvals, []string{"reviewer"}) || got.ChangesRequested != nil || got.Required != -1 {
			t.Errorf("decision %s: %s, approvals %v, changes %v, required %d", tc.decision, got.Decision, got.Approvals, got.ChangesRequested, got.Required)
		}
		if len(got.Reviews) != 4 || !got.Reviews[0].Stale || got.Reviews[1].Stale || got.Reviews[2].State != Commented || got.Reviews[2].Permission != PermRead ||
			got.Reviews[1].Permission != PermWrite || got.Reviews[3].Author != "drive-by" || got.Reviews[3].Permission != PermRead ||
			got.Reviews[0].Submitted != time.Date(2026, 1, 26, 19, 5, 0, 0, time.UTC) {
			t.Errorf("reviews %+v", got.Reviews)
		}
	}
}

// Review threads come from GraphQL, page by page, each comment with its
// author's permission (asked once per author); a reply answers the
// thread's first comment; Resolve resolves it by its id.
func TestGitHubThreads(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.graphql(func(w http.ResponseWriter, q gqlRequest) {
		if q.Variables["cursor"] != nil || !strings.Contains(q.Query, "reviewThreads(first: 50, after: $cursor)") ||
			!strings.Contains(q.Query, "fullDatabaseId") {
			t.Errorf("first page: %s %v", q.Query, q.Variables)
		}
		f.write(w, 200, "threads-1.json")
	})
	f.graphql(func(w http.ResponseWriter, q gqlRequest) {
		if q.Variables["cursor"] != "Y3Vyc29yOnYyOpHOAAAAAQ==" {
			t.Errorf("second page: cursor %v", q.Variables["cursor"])
		}
		f.write(w, 200, "threads-2.json")
	})
	f.on("GET /repos/octo/hello/collaborators/reviewer/permission", 200, `{"permission":"write","role_name":"maintain","user":{"login":"reviewer"}}`)
	f.on("GET /repos/octo/hello/collaborators/jlg-bot/permission", 200, `{"permission":"admin","role_name":"admin","user":{"login":"jlg-bot"}}`)
	f.on("GET /repos/octo/hello/collaborators/passerby/permission", 200, `{"permission":"read","role_name":"read","user":{"login":"passerby"}}`)
	got, err := fg.Threads(context.Background(), 1347)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	hunk1 := "@@ -10,3 +10,3 @@ func Greet() string {\n-\treturn \"hi\"\n+\treturn \"helo\""
	want := []Thread{
		{ID: "PRRT_kwDOAAABc84AAAAB", Path: "greet/greet.go", Line: 12, DiffHunk: hunk1, CommitSHA: baseSHA, Comments: []Comment{
			{ID: 2811234567, Author: "reviewer", Permission: PermWrite, Body: "This should say hello.", Created: at("2026-01-26T19:05:00Z"),
				URL: "https://github.com/octo/hello/pull/1347#discussion_r2811234567"},
			{ID: 2811234999, Author: "jlg-bot", Permission: PermAdmin, Body: "Fixed in 6dcb09b.", Created: at("2026-01-26T19:20:00Z"),
				URL: "https://github.com/octo/hello/pull/1347#discussion_r2811234999"},
		}},
		{ID: "PRRT_kwDOAAABc84AAAAC", Path: "README.md", OldLine: 3, DiffHunk: "@@ -1,4 +1,3 @@\n # hello\n-old line", CommitSHA: baseSHA,
			Resolved: true, Outdated: true, Comments: []Comment{
				{ID: 2811235000, Permission: PermNone, Body: "Why remove this line?", Created: at("2026-01-26T19:06:00Z"),
					URL: "https://github.com/octo/hello/pull/1347#discussion_r2811235000"},
				{ID: 2811235001, Author: "passerby", Permission: PermRead, Body: "+1", Created: at("2026-01-26T19:07:00Z"),
					URL: "https://github.com/octo/hello/pull/1347#discussion_r2811235001"},
			}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Threads (-want +got):\n%s", diff)
	}
	var perms int
	for _, r := range f.requests() {
		if strings.Contains(r, "/permission") {
			perms++
		}
	}
	if perms != 3 {
		t.Errorf("%d permission requests, want one per author (3)", perms)
	}

	var replied map[string]any
	// "Create a review comment" with in_reply_to: every field but the body
	// is then the first comment's.
	f.onFunc("POST /repos/octo/hello/pulls/1347/comments", func(w http.ResponseWriter, r *http.Request, body []byte) {
		_ = json.Unmarshal(body, &replied)
		f.write(w, 201, "reply.json")
	})
	c, err := fg.Reply(context.Background(), 1347, got[0], "Fixed in 6dcb09b: it says hello now.")
	if err != nil || c.ID != 2811236000 || c.Author != "jlg-bot" || !cmp.Equal(replied, map[string]any{"body": "Fixed in 6dcb09b: it says hello now.", "in_reply_to": float64(2811234567)}) {
		t.Errorf("Reply: %+v, %v; sent %v", c, err, replied)
	}
	f.graphql(func(w http.ResponseWriter, q gqlRequest) {
		if !strings.HasPrefix(q.Query, "mutation") || !strings.Contains(q.Query, "resolveReviewThread(input: $input)") ||
			!cmp.Equal(q.Variables, map[string]any{"input": map[string]any{"threadId": "PRRT_kwDOAAABc84AAAAB"}}) {
			t.Errorf("resolve: %s %v", q.Query, q.Variables)
		}
		f.write(w, 200, `{"data":{"resolveReviewThread":{"thread":{"id":"PRRT_kwDOAAABc84AAAAB","isResolved":true}}}}`)
	})
	if err := fg.Resolve(context.Background(), 1347, got[0]); err != nil {
		t.Error(err)
	}
	f.graphql(func(w http.ResponseWriter, q gqlRequest) {
		f.write(w, 200, `{"data":{"resolveReviewThread":null},"errors":[{"type":"FORBIDDEN","message":"Resource not accessible by integration"}]}`)
	})
	if err := fg.Resolve(context.Background(), 1347, got[0]); err == nil || !strings.Contains(err.Error(), "not accessible") {
		t.Errorf("a refused resolve: %v", err)
	}
}

// One comment is posted on the pull request and edited later.
func TestGitHubComment(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	var bodies []string
	h := func(w http.ResponseWriter, r *http.Request, body []byte) {
		bodies = append(bodies, string(body))
		f.write(w, 201, "issue-comment.json")
	}
	f.onFunc("POST /repos/octo/hello/issues/1347/comments", h)
	f.onFunc("PATCH /repos/octo/hello/issues/comments/1146825", h)
	c, err := fg.Comment(context.Background(), 1347, "jlgcli gave up")
	if err != nil || c.ID != 1146825 || c.URL != "https://github.com/octo/hello/pull/1347#issuecomment-1146825" || c.Author != "jlg-bot" {
		t.Errorf("Comment: %+v, %v", c, err)
	}
	if _, err := fg.EditComment(context.Background(), c.ID, "jlgcli gave up (edited)"); err != nil {
		t.Error(err)
	}
	if want := []string{`{"body":"jlgcli gave up"}` + "\n", `{"body":"jlgcli gave up (edited)"}` + "\n"}; !slices.Equal(bodies, want) {
		t.Errorf("sent %q, want %q", bodies, want)
	}
}

// A merge names its method and the head it is for; GitHub's 409 (the head
// moved) and 405 (not mergeable) are told apart.
func TestGitHubMerge(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	var sent map[string]any
	status, answer := 200, `{"sha":"e5bd3914e2e596debea16f433f57875b5b90bcd6","merged":true,"message":"Pull Request successfully merged"}`
	f.onFunc("PUT /repos/octo/hello/pulls/1347/merge", func(w http.ResponseWriter, r *http.Request, body []byte) {
		_ = json.Unmarshal(body, &sent)
		f.write(w, status, answer)
	})
	sha, err := fg.Merge(context.Background(), 1347, MergeOptions{Method: MethodSquash, SHA: headSHA, Title: "feat: add the greeting (#1347)"})
	if err != nil || sha != "e5bd3914e2e596debea16f433f57875b5b90bcd6" {
		t.Errorf("Merge: %q, %v", sha, err)
	}
	if w := map[string]any{"merge_method": "squash", "sha": headSHA, "commit_title": "feat: add the greeting (#1347)"}; !cmp.Equal(w, sent) {
		t.Errorf("sent %v, want %v", sent, w)
	}
	status, answer = 409, `{"message":"Head branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`
	if _, err := fg.Merge(context.Background(), 1347, MergeOptions{Method: MethodMerge, SHA: baseSHA}); !errors.Is(err, ErrHeadMoved) {
		t.Errorf("409: %v, want ErrHeadMoved", err)
	}
	status, answer = 405, `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`
	if _, err := fg.Merge(context.Background(), 1347, MergeOptions{Method: MethodRebase}); !errors.Is(err, ErrNotMergeable) || !strings.Contains(err.Error(), "not mergeable") {
		t.Errorf("405: %v, want ErrNotMergeable", err)
	}
	if _, err := fg.Merge(context.Background(), 1347, MergeOptions{Method: "octopus"}); err == nil || !strings.Contains(err.Error(), "unknown merge method") {
		t.Errorf("an unknown method: %v", err)
	}
}

// The last request of the hour (X-RateLimit-Remaining: 0) does not stop
// the next call: it is sent, and its 403 waited out until the reset.
func TestGitHubRateLimit(t *testing.T) {
	f := newFakeGitHub(t)
	reset := time.Now().Add(30 * time.Minute).Unix()
	calls := 0
	f.onFunc("GET /repos/octo/hello/pulls/1347", func(w http.ResponseWriter, r *http.Request, body []byte) {
		calls++
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Reset", fmt.Sprint(reset))
		switch calls {
		case 1:
			w.Header().Set("X-RateLimit-Remaining", "0")
			f.write(w, 200, "pull.json")
		case 2:
			w.Header().Set("X-RateLimit-Remaining", "0")
			f.write(w, 403, `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`)
		default:
			w.Header().Set("X-RateLimit-Remaining", "4999")
			f.write(w, 200, "pull.json")
		}
	})
	var waits []time.Duration
	fg, err := Open(context.Background(), "git@ghe.example:octo/hello.git", Settings{Kind: GitHub, URL: f.srv.URL, TokenEnv: "T"},
		Options{Getenv: func(string) string { return "tok-123" }, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if pr, err := fg.PR(context.Background(), 1347); err != nil || pr.Number != 1347 {
			t.Fatalf("read %d: %+v, %v", i, pr, err)
		}
	}
	if calls != 3 || len(waits) != 1 || waits[0] < 29*time.Minute || waits[0] > 30*time.Minute+2*time.Second {
		t.Errorf("%d calls, waits %v; want 3 calls and one wait until the reset", calls, waits)
	}
}

// Self is the token's login, from GET /user (GitHub's documented payload).
func TestGitHubSelf(t *testing.T) {
	f := newFakeGitHub(t)
	fg := f.open(t)
	f.onFunc("GET /user", func(w http.ResponseWriter, r *http.Request, body []byte) {
		f.write(w, 200, `{"login":"jlg-bot","id":1,"type":"Bot"}`)
	})
	if who, err := fg.Self(context.Background()); err != nil || who != "jlg-bot" {
		t.Errorf("Self: %q, %v", who, err)
	}
}
