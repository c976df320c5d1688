package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// IssueSource is where a batch's tasks came from when it was made of a
// forge's issues (batch --issues): kept in its spec, so that a resumed
// batch talks to the same tracker. Each of its tasks is an issue
// (intake.NumberOf its id).
type IssueSource struct {
	// Query selects the issues; Remote is the git remote whose forge holds
	// them, Forge the [forge] settings it was opened with.
	Query  forge.IssueQuery `json:"query"`
	Remote string           `json:"remote"`
	Forge  forge.Settings   `json:"forge"`
	// Trust are the logins, besides those who can push, whose issue
	// settings and comments are taken.
	Trust []string `json:"trust,omitempty"`
	// PollMs is how often a running task's issue is read again (0:
	// DefaultIssuePoll).
	PollMs millis.Duration `json:"pollMs,omitempty"`
}

// DefaultIssuePoll is how often the issue of a running task is read again
// when the configuration's poll does not say: the pull-request loop's
// first wait, the key's default.
const DefaultIssuePoll = pull.DefaultPoll

// MaxIssueWait is the longest wait of a watch (batch --issues --watch)
// between two reads of the tracker when nothing new was found.
const MaxIssueWait = 5 * time.Minute

// NextIssueWait is the wait of a watch before its next read of the
// tracker: poll (DefaultIssuePoll when 0) after a read that found issues
// to run (found) and before the first wait (last 0); while nothing new
// matches, twice the last wait, up to MaxIssueWait.
func NextIssueWait(last, poll time.Duration, found bool) time.Duration {
	if poll <= 0 {
		poll = DefaultIssuePoll
	}
	if found || last <= 0 {
		return poll
	}
	return min(max(last, poll)*2, MaxIssueWait)
}

// TaskIssue is the issue a batch task came from.
type TaskIssue struct {
	Number int    `json:"number"`
	URL    string `json:"url,omitempty"`
	// Unreadable, when set, is why the issue's body is not a task sheet:
	// the task fails with it, and the issue is told.
	Unreadable string `json:"unreadable,omitempty"`
	// Warnings are what reading it said (settings not taken).
	Warnings []string `json:"warnings,omitempty"`
}

// OpenTracker opens the tracker of the forge that remote of the
// repository in dir is on.
func OpenTracker(ctx context.Context, dir string, src IssueSource, p Parts) (forge.Forge, error) {
	url, err := TaskSpec{Repo: dir}.repo(ctx).RemoteURL(ctx, src.Remote)
	if err != nil {
		return nil, exit.Usagef("add a remote on the forge whose issues to take, or name one with --remote", "remote %q: %v", src.Remote, err)
	}
	return forge.Open(ctx, url, src.Forge, forge.Options{Getenv: p.getenv})
}

// issueLink is a batch's conversation with the tracker its tasks came
// from: each task claims its issue before it starts, its status comment
// is edited as it goes, its issue is read again while it runs (closed,
// unlabelled, unassigned: the task stops; a comment from a writer: a
// note for its next attempt), and each issue gets the label of its
// outcome at the end. Nothing the forge says or fails to say stops the
// batch: what cannot be written is said and tried again at the next
// change.
type issueLink struct {
	t     tracker
	src   IssueSource
	run   string
	self  string
	poll  time.Duration
	tasks map[string]BatchTask
	warn  func(format string, a ...any)
	sleep func(context.Context, time.Duration) error

	mu     sync.Mutex
	issues map[string]*linkedIssue // the claimed ones, by task id
	wake   chan struct{}
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// linkedIssue is one claimed issue.
type linkedIssue struct {
	n       int
	claim   intake.Claim
	comment int64 // the status comment's id
	status  intake.Status
	written string // the body last written
	// steered is why the tracker stopped the task ("" when it did not).
	steered string
}

// tracker is what a batch asks of its issues' forge (forge.Forge).
type tracker interface {
	forge.Tracker
	Self(ctx context.Context) (string, error)
	Comment(ctx context.Context, number int, body string) (forge.Comment, error)
	EditComment(ctx context.Context, id int64, body string) (forge.Comment, error)
}

// errSteered is the cause of a task's context cancelled by its issue.
var errSteered = errors.New("stopped by its issue")

func newIssueLink(ctx context.Context, tr tracker, src IssueSource, run string, tasks []BatchTask, warn func(string, ...any)) (*issueLink, error) {
	self, err := tr.Self(ctx)
	if err != nil {
		return nil, fmt.Errorf("the forge of the batch's issues: %w", err)
	}
	l := &issueLink{t: tr, src: src, run: run, self: self, poll: src.PollMs.Duration(), tasks: map[string]BatchTask{},
		warn: warn, sleep: sleepCtx, issues: map[string]*linkedIssue{}, wake: make(chan struct{}, 1)}
	if l.poll <= 0 {
		l.poll = DefaultIssuePoll
	}
	for _, t := range tasks {
		l.tasks[t.ID] = t
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = cancel
	l.wg.Add(1)
	go l.writer(wctx)
	return l, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// statusComments are the status comments jlgcli's login wrote on an
// issue (mine, oldest first) and the claims that hold on it
// (intake.Claims: jlgcli's or another writer's jlgcli's, oldest first).
func (l *issueLink) statusComments(ctx context.Context, n int) (mine, claims []forge.Comment, err error) {
	cs, err := l.t.IssueComments(ctx, n)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		if run, _ := intake.RunOf(c.Body); run != "" && c.Author == l.self {
			mine = append(mine, c)
		}
	}
	return mine, intake.Claims(cs, l.self), nil
}

// claim claims issue n for task id, or says who holds it (skip) or why
// it is not to be taken. A claim of this run found again (a resumed
// batch) is its own, unless the tracker took it back while the batch was
// stopped (closed, unlabelled, unassigned): then it is let go.
//
// The label goes on before the status comment is posted, and the
// comments are read before the issue: so an active claim read on an
// issue without the label is one let go (its label was taken off), never
// one under way, whose label would have been seen.
func (l *issueLink) claim(ctx context.Context, id string, n int) (li *linkedIssue, skip string, err error) {
	mine, claims, err := l.statusComments(ctx, n)
	if err != nil {
		return nil, "", err
	}
	iss, err := l.t.Issue(ctx, n)
	if err != nil {
		return nil, "", err
	}
	li = &linkedIssue{n: n, claim: intake.Claim{Self: l.self, Assigned: slices.Contains(iss.Assignees, l.self)},
		status: intake.Status{Run: l.run, Task: id, State: "claimed"}}
	if t, ok := l.tasks[id]; ok && t.Issue != nil {
		li.status.Warnings = t.Issue.Warnings
	}
	for _, c := range mine {
		if run, _ := intake.RunOf(c.Body); run == l.run {
			li.comment = c.ID
		}
	}
	labelled := slices.Contains(iss.Labels, intake.LabelClaimed)
	if who := intake.Claimant(iss, l.run, intake.Runs(claims)); labelled && who != "" {
		return nil, fmt.Sprintf("issue #%d is claimed by %s", n, who), nil
	}
	if labelled || slices.Contains(intake.Runs(claims), l.run) {
		// This run's own claim, made before it was stopped.
		if why := intake.StopReason(l.src.Query, li.claim, iss); why != "" {
			l.release(ctx, li, why)
			return nil, why, nil
		}
		if li.comment == 0 {
			if li.comment, err = l.post(ctx, n, li.status); err != nil {
				return nil, "", err
			}
		}
		l.keep(id, li)
		return li, "", nil
	}
	if iss.State != forge.IssueOpen {
		return nil, fmt.Sprintf("issue #%d is closed", n), nil
	}
	if !intake.Holds(l.src.Query, iss) {
		return nil, fmt.Sprintf("issue #%d no longer matches %s", n, intake.QueryString(l.src.Query)), nil
	}
	// Unclaimed: the claims read were let go (their label was taken off);
	// they end, this run's is made.
	for _, c := range claims {
		if run, _ := intake.RunOf(c.Body); run != l.run {
			old := strings.Replace(c.Body, intake.Marker(run, true), intake.Marker(run, false), 1)
			if _, err := l.t.EditComment(ctx, c.ID, old); err != nil {
				l.warn("issue #%d: let go of run %s's claim: %v", n, run, err)
			}
		}
	}
	if err := l.t.AddLabels(ctx, n, intake.LabelClaimed); err != nil {
		return nil, "", err
	}
	if li.comment == 0 {
		li.comment, err = l.post(ctx, n, li.status)
	} else {
		err = l.edit(ctx, li.comment, li.status)
	}
	if err != nil {
		l.unlabel(ctx, n)
		return nil, "", err
	}
	// Two runs that claimed at once both read who holds it now: the
	// older claim. Only the holder assigns itself (Gitea sets the
	// assignees as a whole: two runs assigning at once would leave one).
	iss.Labels = append(iss.Labels, intake.LabelClaimed)
	if _, claims, err = l.statusComments(ctx, n); err != nil {
		return nil, "", err
	}
	if who := intake.Claimant(iss, l.run, intake.Runs(claims)); who != "" {
		if err := l.t.DeleteComment(ctx, li.comment); err != nil && !errors.Is(err, forge.ErrNotFound) {
			l.warn("issue #%d: delete this run's claim: %v", n, err)
		}
		return nil, fmt.Sprintf("issue #%d was claimed by %s at the same time", n, who), nil
	}
	if !li.claim.Assigned {
		if err := l.t.Assign(ctx, n, l.self); err != nil {
			l.warn("issue #%d: assign %s: %v (the label says it is claimed)", n, l.self, err)
		} else {
			li.claim.Assigned = true
		}
	}
	l.keep(id, li)
	return li, "", nil
}

// release lets go of this run's claim of li's issue, for why: its comment
// says so and no longer claims it, the claim's label and assignment are
// taken off.
func (l *issueLink) release(ctx context.Context, li *linkedIssue, why string) {
	s := li.status
	s.State, s.Reason = "released", why
	if li.comment != 0 {
		if err := l.edit(ctx, li.comment, s); err != nil {
			l.warn("issue #%d: say its claim is let go: %v", li.n, err)
		}
	}
	if err := l.t.RemoveLabel(ctx, li.n, intake.LabelClaimed); err != nil {
		l.warn("issue #%d: take %s off: %v", li.n, intake.LabelClaimed, err)
	}
	if li.claim.Assigned {
		if err := l.t.Unassign(ctx, li.n, l.self); err != nil {
			l.warn("issue #%d: unassign %s: %v", li.n, l.self, err)
		}
	}
}

// unlabel takes the claim's label off issue n when its status comment
// could not be written, unless a claim holds there (another run's, made
// at the same time): the label without a claim would keep every run off
// the issue.
func (l *issueLink) unlabel(ctx context.Context, n int) {
	_, claims, err := l.statusComments(ctx, n)
	if err == nil && len(claims) == 0 {
		err = l.t.RemoveLabel(ctx, n, intake.LabelClaimed)
	}
	if err != nil {
		l.warn("issue #%d: its status comment could not be written, and the label %s stays on it: %v", n, intake.LabelClaimed, err)
	}
}

func (l *issueLink) keep(id string, li *linkedIssue) {
	l.mu.Lock()
	li.written = li.status.Body()
	l.issues[id] = li
	l.mu.Unlock()
}

func (l *issueLink) post(ctx context.Context, n int, s intake.Status) (int64, error) {
	s.Updated = time.Now()
	c, err := l.t.Comment(ctx, n, s.Body())
	return c.ID, err
}

func (l *issueLink) edit(ctx context.Context, id int64, s intake.Status) error {
	s.Updated = time.Now()
	_, err := l.t.EditComment(ctx, id, s.Body())
	return err
}

// begin claims the issue of task id before its run starts, and watches it
// while it runs: ctx is cancelled (cause errSteered) when the tracker asks
// the task to stop; end stops the watch. skip, when not nil, is the
// task's outcome in place of a run: its issue is someone else's, or
// closed, or its body could not be read.
func (l *issueLink) begin(ctx context.Context, id string) (context.Context, func(), *batch.Outcome) {
	n := intake.NumberOf(id)
	li, why, err := l.claim(ctx, id, n)
	switch {
	case err != nil:
		return ctx, func() {}, &batch.Outcome{Status: batch.StatusError, ExitCode: exit.Error,
			Details: fmt.Sprintf("issue #%d could not be claimed: %v", n, err)}
	case why != "":
		return ctx, func() {}, &batch.Outcome{Status: batch.StatusSkipped, Details: why + ": skipped"}
	}
	if t := l.tasks[id]; t.Issue != nil && t.Issue.Unreadable != "" {
		return ctx, func() {}, &batch.Outcome{Status: batch.StatusError, ExitCode: exit.Usage,
			Details: "its body is not a task sheet: " + t.Issue.Unreadable}
	}
	l.update(id, func(s *intake.Status) { s.State = "running" })
	tctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if l.sleep(tctx, l.poll) != nil {
				return
			}
			select {
			case <-done:
				return
			default:
			}
			iss, err := l.t.Issue(tctx, n)
			if err != nil {
				if tctx.Err() == nil {
					l.warn("issue #%d: read it again: %v", n, err)
				}
				continue
			}
			if why := intake.StopReason(l.src.Query, li.claim, iss); why != "" {
				l.mu.Lock()
				li.steered = why
				l.mu.Unlock()
				cancel(fmt.Errorf("%w: %s", errSteered, why))
				return
			}
		}
	}()
	var once sync.Once
	return tctx, func() { once.Do(func() { close(done); cancel(nil); wg.Wait() }) }, nil
}

// steered is why the tracker stopped task id ("" when it did not).
func (l *issueLink) steered(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if li := l.issues[id]; li != nil {
		return li.steered
	}
	return ""
}

// inbox gives the notes of task id's issue: the comments since its claim
// by someone who can push or is trusted, jlgcli's own left out.
func (l *issueLink) inbox(id string) taskengine.Inbox {
	return func(ctx context.Context) []taskengine.Note {
		l.mu.Lock()
		li := l.issues[id]
		l.mu.Unlock()
		if li == nil {
			return nil
		}
		cs, err := l.t.IssueComments(ctx, li.n)
		if err != nil {
			l.warn("issue #%d: read its comments: %v", li.n, err)
			return nil
		}
		var notes []taskengine.Note
		for _, c := range cs {
			if c.ID <= li.comment || c.Author == l.self {
				continue // before the claim, or jlgcli's
			}
			if !c.Permission.CanWrite() && !slices.Contains(l.src.Trust, c.Author) {
				continue
			}
			notes = append(notes, taskengine.Note{ID: strconv.FormatInt(c.ID, 10), From: c.Author, Text: c.Body, At: c.Created, URL: c.URL})
		}
		return notes
	}
}

// update changes the status of task id's issue; the writer edits its
// comment soon after.
func (l *issueLink) update(id string, f func(*intake.Status)) {
	l.mu.Lock()
	li := l.issues[id]
	if li != nil {
		f(&li.status)
	}
	l.mu.Unlock()
	if li != nil {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// writer edits the status comments whose status changed, at most once a
// second each, until ctx ends.
func (l *issueLink) writer(ctx context.Context) {
	defer l.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		l.flush(ctx)
		if l.sleep(ctx, time.Second) != nil {
			return
		}
	}
}

// flush writes every status comment whose body changed: the status as
// it was when flush looked, the next change written by the next flush.
func (l *issueLink) flush(ctx context.Context) {
	type job struct {
		li     *linkedIssue
		status intake.Status
		body   string
	}
	var jobs []job
	l.mu.Lock()
	for _, li := range l.issues {
		if body := li.status.Body(); body != li.written {
			jobs = append(jobs, job{li, li.status, body})
		}
	}
	l.mu.Unlock()
	for _, j := range jobs {
		if err := l.edit(ctx, j.li.comment, j.status); err != nil {
			l.warn("issue #%d: edit its status comment: %v", j.li.n, err)
			continue
		}
		l.mu.Lock()
		j.li.written = j.body
		l.mu.Unlock()
	}
}

// observer tells task id's status comment of its attempts, and next.
func (l *issueLink) observer(id string, next taskengine.Observer) taskengine.Observer {
	return &issueObserver{l: l, id: id, next: next}
}

type issueObserver struct {
	l    *issueLink
	id   string
	next taskengine.Observer
}

func (o *issueObserver) AttemptStarted(p taskengine.Progress) {
	o.l.update(o.id, func(s *intake.Status) {
		s.State, s.Tier, s.Attempt, s.CostUSD, s.CostKnown = "running", p.Tier, p.Number, p.CostUSD, p.CostKnown
	})
	if o.next != nil {
		o.next.AttemptStarted(p)
	}
}

func (o *issueObserver) Phase(p taskengine.Progress, phase string) {
	if o.next != nil {
		o.next.Phase(p, phase)
	}
}

func (o *issueObserver) AttemptDone(p taskengine.Progress, a taskengine.Attempt) {
	o.l.update(o.id, func(s *intake.Status) {
		s.Gate, s.CostUSD, s.CostKnown = string(a.Gate.Status), p.CostUSD, p.CostKnown
		for _, n := range a.Notes {
			if !slices.Contains(s.Notes, n.ID) {
				s.Notes = append(s.Notes, n.ID)
			}
		}
	})
	if o.next != nil {
		o.next.AttemptDone(p, a)
	}
}

// Close ends the next observer's live line, as the task's end does.
func (o *issueObserver) Close() {
	if c, ok := o.next.(interface{ Close() }); ok {
		c.Close()
	}
}

// ended tells the status comments of the batch's tasks how they ended and
// puts on each issue the label of its outcome: done, failed (with the
// reason), blocked (by the issue of the task that failed); a task
// stopped keeps its claim, to be resumed. A task that never started and
// was not blocked is left alone, and so is an issue another run holds.
func (l *issueLink) ended(ctx context.Context, res batch.Result, sum batch.Summary) {
	ctx = context.WithoutCancel(ctx)
	l.stop()
	l.wg.Wait()
	blockedBy := map[string]string{}
	for _, t := range res.Tasks {
		blockedBy[t.ID] = t.BlockedBy
	}
	for _, t := range sum.Tasks {
		n := intake.NumberOf(t.ID)
		if n == 0 {
			continue
		}
		l.mu.Lock()
		li := l.issues[t.ID]
		l.mu.Unlock()
		st := batch.Status(t.Status)
		label, state, reason := "", "", t.Details
		switch st {
		case batch.StatusDone:
			label, state, reason = intake.LabelDone, "done", ""
		case batch.StatusInterrupted:
			state = "stopped"
		case batch.StatusBlocked:
			label, state = intake.LabelBlocked, "blocked"
			if b := intake.NumberOf(blockedBy[t.ID]); b > 0 {
				reason = fmt.Sprintf("blocked by #%d, which did not get done", b)
			}
		case batch.StatusSkipped, batch.StatusPending, "":
			continue
		default:
			label, state = intake.LabelFailed, "failed"
		}
		if li == nil {
			var err error
			if li, err = l.found(ctx, t.ID, n); err != nil {
				l.warn("issue #%d: %v", n, err)
				continue
			}
			if li == nil {
				continue // another run's, or gone
			}
		}
		s := li.status
		s.State, s.Reason = state, reason
		s.CostUSD, s.CostKnown = t.CostUSD, t.CostKnown
		s.Branch = t.Branch
		if t.Commit != nil {
			s.Commit = *t.Commit
		}
		if why := l.steeredOf(li); why != "" && st == batch.StatusInterrupted {
			s.Reason = why
		}
		if err := l.edit(ctx, li.comment, s); err != nil {
			l.warn("issue #%d: write how its task ended: %v", n, err)
		}
		if label == "" {
			continue
		}
		if err := l.t.AddLabels(ctx, n, label); err != nil {
			l.warn("issue #%d: label it %s: %v", n, label, err)
		}
		for _, other := range append(slices.Clone(intake.OutcomeLabels), intake.LabelClaimed) {
			if other != label {
				if err := l.t.RemoveLabel(ctx, n, other); err != nil {
					l.warn("issue #%d: take %s off: %v", n, other, err)
				}
			}
		}
		if li.claim.Assigned && st != batch.StatusDone {
			// Let go: someone else may take it.
			if err := l.t.Unassign(ctx, n, l.self); err != nil {
				l.warn("issue #%d: unassign %s: %v", n, l.self, err)
			}
		}
	}
}

func (l *issueLink) steeredOf(li *linkedIssue) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return li.steered
}

// found is the claim of task id's issue n that this run made in an
// earlier process, or a comment of its own to post for a task that never
// claimed it (a blocked one); nil when another run holds the issue.
func (l *issueLink) found(ctx context.Context, id string, n int) (*linkedIssue, error) {
	iss, err := l.t.Issue(ctx, n)
	if err != nil {
		return nil, err
	}
	mine, claims, err := l.statusComments(ctx, n)
	if err != nil {
		return nil, err
	}
	if intake.Claimant(iss, l.run, intake.Runs(claims)) != "" {
		return nil, nil
	}
	li := &linkedIssue{n: n, claim: intake.Claim{Self: l.self, Assigned: slices.Contains(iss.Assignees, l.self)},
		status: intake.Status{Run: l.run, Task: id}}
	for _, c := range mine {
		if run, _ := intake.RunOf(c.Body); run == l.run {
			li.comment = c.ID
		}
	}
	if li.comment == 0 {
		if li.comment, err = l.post(ctx, n, li.status); err != nil {
			return nil, err
		}
	}
	return li, nil
}
