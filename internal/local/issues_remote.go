package local

import (
	"context"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// The conversation of a batch with its issues' tracker, one call at a
// time, for a batch whose tasks run on Temporal workers: each call opens
// the tracker with the worker's own token and follows the same rules as
// a batch run here (issueLink), the state between calls kept by the
// workflow (IssueClaim).

// IssueClaim is a batch run's claim of a task's issue, as a workflow
// keeps it between calls.
type IssueClaim struct {
	Task   string `json:"task"`
	Number int    `json:"number"`
	// Comment is the claim's status comment; Self jlgcli's login, Assigned
	// whether it is assigned.
	Comment  int64  `json:"comment,omitempty"`
	Self     string `json:"self,omitempty"`
	Assigned bool   `json:"assigned,omitempty"`
	// Warnings are what reading the issue said.
	Warnings []string `json:"warnings,omitempty"`
	// Skip, when set, says why the issue was not claimed (someone else's,
	// closed, no longer matching): the task is skipped.
	Skip string `json:"skip,omitempty"`
}

// bareLink is an issueLink for one call: no writer, nothing kept.
func bareLink(ctx context.Context, f forge.Forge, src IssueSource, run string, tasks []BatchTask, warn func(string, ...any)) (*issueLink, error) {
	self, err := f.Self(ctx)
	if err != nil {
		return nil, err
	}
	l := &issueLink{t: f, src: src, run: run, self: self, tasks: map[string]BatchTask{}, warn: warn, sleep: sleepCtx,
		issues: map[string]*linkedIssue{}, wake: make(chan struct{}, 1), stop: func() {}}
	for _, t := range tasks {
		l.tasks[t.ID] = t
	}
	return l, nil
}

// linked is the linkedIssue of claim c of run.
func (c IssueClaim) linked(run string) *linkedIssue {
	return &linkedIssue{n: c.Number, comment: c.Comment, claim: intake.Claim{Self: c.Self, Assigned: c.Assigned},
		status: intake.Status{Run: run, Task: c.Task, State: "running", Warnings: c.Warnings}}
}

// ClaimIssue claims the issue of task t for batch run on f, as a batch
// here does before the task starts; a claim this run made before is
// found again.
func ClaimIssue(ctx context.Context, f forge.Forge, src IssueSource, run string, t BatchTask, warn func(string, ...any)) (IssueClaim, error) {
	l, err := bareLink(ctx, f, src, run, []BatchTask{t}, warn)
	if err != nil {
		return IssueClaim{}, err
	}
	c := IssueClaim{Task: t.ID, Number: intake.NumberOf(t.ID), Self: l.self}
	if t.Issue != nil {
		c.Warnings = t.Issue.Warnings
	}
	li, skip, err := l.claim(ctx, t.ID, c.Number)
	if err != nil {
		return IssueClaim{}, err
	}
	if skip != "" {
		c.Skip = skip
		return c, nil
	}
	c.Comment, c.Assigned = li.comment, li.claim.Assigned
	li.status.State = "running"
	if err := l.edit(ctx, li.comment, li.status); err != nil {
		warn("issue #%d: edit its status comment: %v", c.Number, err)
	}
	return c, nil
}

// IssueStopReason reads claim c's issue again and says why the tracker
// asks its task to stop ("" when it does not).
func IssueStopReason(ctx context.Context, f forge.Forge, src IssueSource, c IssueClaim) (string, error) {
	iss, err := f.Issue(ctx, c.Number)
	if err != nil {
		return "", err
	}
	return intake.StopReason(src.Query, intake.Claim{Self: c.Self, Assigned: c.Assigned}, iss), nil
}

// IssueNotes are the notes of claim c's issue (issueLink.inbox).
func IssueNotes(ctx context.Context, f forge.Forge, src IssueSource, run string, c IssueClaim, warn func(string, ...any)) []taskengine.Note {
	l := &issueLink{t: f, src: src, run: run, self: c.Self, warn: warn, issues: map[string]*linkedIssue{c.Task: c.linked(run)}}
	return l.inbox(c.Task)(ctx)
}

// IssueProgress tells claim c's status comment where its task is.
func IssueProgress(ctx context.Context, f forge.Forge, run string, c IssueClaim, update func(*intake.Status)) error {
	li := c.linked(run)
	update(&li.status)
	l := &issueLink{t: f, run: run, self: c.Self}
	return l.edit(ctx, li.comment, li.status)
}

// IssuesEnded tells each claimed issue of batch run how its task ended and
// labels it (issueLink.ended): claims are the workflow's.
func IssuesEnded(ctx context.Context, f forge.Forge, src IssueSource, run string, tasks []BatchTask, claims []IssueClaim,
	res batch.Result, sum batch.Summary, warn func(string, ...any)) error {
	l, err := bareLink(ctx, f, src, run, tasks, warn)
	if err != nil {
		return err
	}
	for _, c := range claims {
		if c.Skip == "" && c.Comment != 0 {
			l.issues[c.Task] = c.linked(run)
		}
	}
	l.ended(ctx, res, sum)
	return nil
}
