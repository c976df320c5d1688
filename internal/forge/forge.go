// Package forge is what the pull-request loop asks of a git forge, GitHub
// or Gitea/Forgejo: open or find a pull request, read its head, checks,
// reviews and review threads, answer and resolve a thread, post one
// comment, re-run a failed check, merge. Each forge has an adapter built
// on its own well-kept client (google/go-github and shurcooL/githubv4 for
// GitHub, code.gitea.io/sdk/gitea for Gitea), both behind one HTTP
// transport that waits out rate limits and answers repeated reads from
// their ETag (transport.go). Which forge, where and with which token is
// settled by Open from the remote's URL and the [forge] settings; the
// token is read from the environment (or the gh CLI's login) and never
// kept in a value that is printed or recorded.
package forge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Kind is a forge's API: github (github.com and GitHub Enterprise) or
// gitea (Gitea, Forgejo, Codeberg).
type Kind string

// The kinds of forge.
const (
	GitHub Kind = "github"
	Gitea  Kind = "gitea"
)

// Kinds are the kinds a configuration may name, in the order help lists
// them.
var Kinds = []Kind{GitHub, Gitea}

// ParseKind reads a kind's name; "" is none (chosen from the remote).
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case "", GitHub, Gitea:
		return k, nil
	}
	return "", fmt.Errorf("unknown forge kind %q (known: github, gitea)", s)
}

// Repo is the repository a forge serves: the host of its web pages and
// its owner and name.
type Repo struct {
	Host, Owner, Name string
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// Forge is one repository on one forge, as the pull-request loop uses it,
// and its issue tracker (Tracker, as `batch --issues` uses it). Numbers
// are pull-request numbers (issue numbers for Tracker's); every call
// honours ctx and the forge's rate limits.
type Forge interface {
	Tracker
	// Kind and Repo say which forge and repository this is.
	Kind() Kind
	Repo() Repo
	// Self is the login the token acts as: the pull-request loop's own
	// comments are its.
	Self(ctx context.Context) (string, error)
	// FindPR is the open pull request whose head is branch head of this
	// repository; nil when there is none.
	FindPR(ctx context.Context, head string) (*PR, error)
	// OpenPR opens a pull request, or returns the one already open for its
	// head branch (created false).
	OpenPR(ctx context.Context, n NewPR) (pr PR, created bool, err error)
	// PR reads a pull request.
	PR(ctx context.Context, number int) (PR, error)
	// Checks are the checks and commit statuses reported at commit sha, the
	// latest of each name; base, when given, is the branch whose protection
	// says which are required.
	Checks(ctx context.Context, sha, base string) (Checks, error)
	// Failure is what the forge tells of a failed check beyond its state:
	// GitHub's check runs give their output, annotations and, for GitHub
	// Actions, the failing step and the tail of the job's log; a commit
	// status (GitHub's or Gitea's) gives only its description and URL.
	Failure(ctx context.Context, c Check) (Failure, error)
	// Rerun asks the forge to run a failed check again; ErrUnsupported
	// where it cannot (a commit status, posted by a CI the forge does not
	// run).
	Rerun(ctx context.Context, c Check) error
	// Reviews are the pull request's reviews and its review decision.
	Reviews(ctx context.Context, number int) (Reviews, error)
	// Threads are the pull request's review threads (line comments and
	// their replies), oldest first, resolved ones included.
	Threads(ctx context.Context, number int) ([]Thread, error)
	// Reply answers a thread; Resolve marks it resolved.
	Reply(ctx context.Context, number int, t Thread, body string) (Comment, error)
	Resolve(ctx context.Context, number int, t Thread) error
	// Comment posts a comment on the pull request (or issue) number;
	// EditComment replaces the text of one posted before.
	Comment(ctx context.Context, number int, body string) (Comment, error)
	EditComment(ctx context.Context, id int64, body string) (Comment, error)
	// Merge merges the pull request by method, only while its head is
	// opt.SHA when that is set; it returns the merge commit's SHA when the
	// forge says it.
	Merge(ctx context.Context, number int, opt MergeOptions) (string, error)
}

// NewPR is a pull request to open: from branch Head (of this repository)
// into Base ("": the repository's default branch).
type NewPR struct {
	Head, Base, Title, Body string
	Draft                   bool
}

// PRState is a pull request's state.
type PRState string

// The states of a pull request.
const (
	StateOpen   PRState = "open"
	StateClosed PRState = "closed"
	StateMerged PRState = "merged"
)

// Mergeability says whether a pull request merges into its base.
type Mergeability string

// The mergeabilities. Unknown: the forge has not computed it yet (or does
// not say, as for a draft on Gitea); ask again later.
const (
	MergeUnknown Mergeability = "unknown"
	Mergeable    Mergeability = "mergeable"
	Conflicting  Mergeability = "conflicting"
)

// PR is a pull request as read.
type PR struct {
	Number int     `json:"number,omitempty"`
	URL    string  `json:"url,omitempty"`
	Title  string  `json:"title,omitempty"`
	Body   string  `json:"body,omitempty"`
	Author string  `json:"author,omitempty"`
	State  PRState `json:"state,omitempty"`
	Draft  bool    `json:"draft,omitempty"`
	// Head is the branch and the commit the pull request proposes;
	// HeadRepo its repository ("owner/name"), another for a fork.
	Head     string `json:"head,omitempty"`
	HeadSHA  string `json:"headSha,omitempty"`
	HeadRepo string `json:"headRepo,omitempty"`
	// Base is the branch it merges into; BaseSHA that branch's commit as
	// the forge last saw it.
	Base      string       `json:"base,omitempty"`
	BaseSHA   string       `json:"baseSha,omitempty"`
	Mergeable Mergeability `json:"mergeable,omitempty"`
	// MergeState is the forge's own word on it, where it has one
	// (GitHub's mergeable_state: clean, dirty, blocked, behind…).
	MergeState string `json:"mergeState,omitempty"`
	// MergeSHA is the merge commit of a merged pull request.
	MergeSHA string `json:"mergeSha,omitempty"`
}

// CheckState is the state of one check.
type CheckState string

// The states of a check. Neutral is a check that finished neither passing
// nor failing (GitHub's neutral and skipped), which does not block a merge.
const (
	Pending CheckState = "pending"
	Success CheckState = "success"
	Failed  CheckState = "failure"
	Neutral CheckState = "neutral"
)

// Check is one check run or commit status at a commit.
type Check struct {
	// Name is the check run's name or the status's context.
	Name  string     `json:"name,omitempty"`
	State CheckState `json:"state,omitempty"`
	// Conclusion is the forge's own word for the state (GitHub's
	// conclusion or status, Gitea's status: error, cancelled,
	// timed_out, action_required…).
	Conclusion string `json:"conclusion,omitempty"`
	// URL is where the check's page or the CI's build is.
	URL         string `json:"url,omitempty"`
	Description string `json:"description,omitempty"`
	// Required: the base branch's protection requires it; known only when
	// RequiredKnown (of Checks) is true.
	Required bool `json:"required,omitempty"`
	// Source is "check-run" or "status"; ID the check run's id (0 for a
	// status); App the slug of the app that made a check run
	// ("github-actions" for GitHub Actions).
	Source string `json:"source,omitempty"`
	ID     int64  `json:"id,omitempty"`
	App    string `json:"app,omitempty"`
}

// The sources of a check.
const (
	SourceCheckRun = "check-run"
	SourceStatus   = "status"
)

// Checks are the checks at one commit.
type Checks struct {
	SHA    string  `json:"sha,omitempty"`
	Checks []Check `json:"checks,omitempty"`
	// Required are the names the base branch's protection requires, and
	// RequiredKnown whether the forge told them (false: not asked, or not
	// readable with this token). A required name no check reports yet is
	// one that has not appeared.
	Required      []string `json:"required,omitempty"`
	RequiredKnown bool     `json:"requiredKnown,omitempty"`
}

// Failure is what a forge tells of a failed check.
type Failure struct {
	Check Check `json:"check,omitempty"`
	// Title, Summary and Text are a check run's output.
	Title   string `json:"title,omitempty"`
	Summary string `json:"summary,omitempty"`
	Text    string `json:"text,omitempty"`
	// Step is the first failed step of a GitHub Actions job; LogTail the
	// last lines of its log.
	Step    string `json:"step,omitempty"`
	LogTail string `json:"logTail,omitempty"`
	// Annotations are a check run's annotations (the failures' file and
	// line, as the CI reported them).
	Annotations []Annotation `json:"annotations,omitempty"`
}

// Annotation is one annotation of a check run.
type Annotation struct {
	Path      string `json:"path,omitempty"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Level     string `json:"level,omitempty"`
	Title     string `json:"title,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ReviewState is a review's verdict.
type ReviewState string

// The states of a review.
const (
	Approved         ReviewState = "approved"
	ChangesRequested ReviewState = "changes_requested"
	Commented        ReviewState = "commented"
	Dismissed        ReviewState = "dismissed"
	PendingReview    ReviewState = "pending"
)

// Decision is a pull request's review decision.
type Decision string

// The review decisions. NoDecision: no review is required and none
// approved or asked for changes.
const (
	DecisionApproved         Decision = "approved"
	DecisionChangesRequested Decision = "changes_requested"
	DecisionReviewRequired   Decision = "review_required"
	NoDecision               Decision = "none"
)

// Review is one review of a pull request.
type Review struct {
	ID     int64  `json:"id,omitempty"`
	Author string `json:"author,omitempty"`
	// Permission is the author's in the repository, asked for the
	// verdicts (approved, changes requested, dismissed) and the comments:
	// only a writer's verdict counts (as for the forge's branch
	// protection), only a writer's (or a trusted author's) request for
	// changes is feedback, and a passer-by's comment is nothing new to
	// the pull-request loop.
	Permission Permission  `json:"permission,omitempty"`
	State      ReviewState `json:"state,omitempty"`
	Body       string      `json:"body,omitempty"`
	// CommitSHA is the head the review was given at.
	CommitSHA string `json:"commitSha,omitempty"`
	// Stale: the head has moved since (Gitea says it; on GitHub it is
	// CommitSHA != the head).
	Stale     bool      `json:"stale,omitempty"`
	Submitted time.Time `json:"submitted,omitempty"`
	URL       string    `json:"url,omitempty"`
}

// Reviews are a pull request's reviews and where they leave it.
type Reviews struct {
	Decision Decision `json:"decision,omitempty"`
	// Approvals and ChangesRequested are the authors with write access
	// whose latest verdict is that, sorted: anyone may review a public
	// repository's pull request, and a passer-by's verdict counts for no
	// forge.
	Approvals        []string `json:"approvals,omitempty"`
	ChangesRequested []string `json:"changesRequested,omitempty"`
	// Required is how many approvals the base branch's protection asks
	// for, where the forge says it (Gitea); -1 when unknown.
	Required int      `json:"required,omitempty"`
	Reviews  []Review `json:"reviews,omitempty"`
}

// Permission is what an author may do in the repository.
type Permission string

// The permissions, from most to least.
const (
	PermAdmin Permission = "admin"
	PermWrite Permission = "write"
	PermRead  Permission = "read"
	PermNone  Permission = "none"
)

// CanWrite tells whether p may push (and so whether a thread of theirs
// blocks).
func (p Permission) CanWrite() bool { return p == PermAdmin || p == PermWrite }

// Thread is one review thread: a line of a file and the comments on it.
type Thread struct {
	// ID is the forge's id of the thread (GitHub's node id; on Gitea the id
	// of its first comment, as a decimal).
	ID string `json:"id,omitempty"`
	// Path and Line are the file and line of the new side the thread is
	// on; Line 0 with OldLine set is a line of the old side. DiffHunk is
	// the hunk around it, as the forge gives it.
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	OldLine  int    `json:"oldLine,omitempty"`
	DiffHunk string `json:"diffHunk,omitempty"`
	// CommitSHA is the commit the thread was begun on.
	CommitSHA string `json:"commitSha,omitempty"`
	Resolved  bool   `json:"resolved,omitempty"`
	// Outdated: the line has changed since the thread began.
	Outdated bool      `json:"outdated,omitempty"`
	Comments []Comment `json:"comments,omitempty"`
}

// Comment is a comment of a thread, or of a pull request.
type Comment struct {
	ID     int64  `json:"id,omitempty"`
	Author string `json:"author,omitempty"`
	// Permission is the author's in the repository (PermNone for a
	// deleted user).
	Permission Permission `json:"permission,omitempty"`
	Body       string     `json:"body,omitempty"`
	Created    time.Time  `json:"created,omitempty"`
	URL        string     `json:"url,omitempty"`
}

// MergeMethod is how a pull request is merged.
type MergeMethod string

// The merge methods.
const (
	MethodMerge  MergeMethod = "merge"
	MethodSquash MergeMethod = "squash"
	MethodRebase MergeMethod = "rebase"
)

// ParseMergeMethod reads a merge method's name.
func ParseMergeMethod(s string) (MergeMethod, error) {
	switch m := MergeMethod(s); m {
	case MethodMerge, MethodSquash, MethodRebase:
		return m, nil
	}
	return "", fmt.Errorf("unknown merge method %q (known: merge, squash, rebase)", s)
}

// MergeOptions say how to merge.
type MergeOptions struct {
	Method MergeMethod
	// SHA, when set, is the head the merge is for: the forge refuses when
	// the pull request's head is another (ErrHeadMoved).
	SHA string
	// Title and Message are the merge commit's ("": the forge's own).
	Title, Message string
}

var (
	// ErrUnsupported is an operation this forge does not offer.
	ErrUnsupported = errors.New("not supported by this forge")
	// ErrNotFound is a pull request, comment or check the forge does not
	// know (or does not show to this token).
	ErrNotFound = errors.New("not found")
	// ErrHeadMoved is a merge refused because the head is no longer the
	// one given.
	ErrHeadMoved = errors.New("the pull request's head has moved")
	// ErrUnauthorized is a token the forge refused (HTTP 401): expired,
	// revoked, or of another server.
	ErrUnauthorized = errors.New("the forge refused the token")
	// ErrNotMergeable is a merge the forge refused: conflicts, checks or
	// reviews that branch protection requires, or a merge method the
	// repository does not allow.
	ErrNotMergeable = errors.New("the forge refused to merge")
)

// perms keeps what each user may do in a repository, asked of the forge
// once per user. Its zero value is ready to use.
type perms struct {
	mu sync.Mutex
	m  map[string]Permission
}

// of is user's permission: PermNone for no user, else the one kept, else
// what ask says (kept when it does not fail).
func (c *perms) of(user string, ask func() (Permission, error)) (Permission, error) {
	if user == "" {
		return PermNone, nil
	}
	c.mu.Lock()
	p, ok := c.m[user]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := ask()
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]Permission{}
	}
	c.m[user] = p
	c.mu.Unlock()
	return p, nil
}
