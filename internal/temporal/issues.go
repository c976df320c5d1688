package temporal

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// A batch of a forge's issues (batch --issues) on Temporal: the batch's
// workflow claims each task's issue before its child workflow starts,
// reads the issue again on a durable timer while the task runs (and
// cancels the task when the tracker asks it to stop), the task's workflow
// asks for the issue's new comments before each attempt and tells the
// status comment where it is, and the batch labels every issue at its
// end. Each call is an activity that opens the forge with the worker's own
// token (the [forge] settings name its variable), and follows the rules of
// a batch run here (local.ClaimIssue and the rest).

// The activities of a batch of issues.
const (
	IssueClaimName    = "jlgcli.issue-claim"
	IssueLookName     = "jlgcli.issue-look"
	IssueNotesName    = "jlgcli.issue-notes"
	IssueProgressName = "jlgcli.issue-progress"
	IssuesEndedName   = "jlgcli.issues-ended"
)

// IssueTask is a task's issue, as its workflow is told it.
type IssueTask struct {
	// Repo is the remote; Source where the batch's issues come from; Run
	// the batch's run id (its status comments' marker).
	Repo   string            `json:"repo"`
	Source local.IssueSource `json:"source"`
	Run    string            `json:"run"`
	Claim  local.IssueClaim  `json:"claim"`
}

// IssueClaimInput is what the claim activity is given.
type IssueClaimInput struct {
	Repo   string            `json:"repo"`
	Source local.IssueSource `json:"source"`
	Run    string            `json:"run"`
	Task   local.BatchTask   `json:"task"`
}

// IssueProgressInput is where a task is, for its issue's status comment.
type IssueProgressInput struct {
	Issue     IssueTask `json:"issue"`
	Tier      string    `json:"tier,omitempty"`
	Attempt   int       `json:"attempt,omitempty"`
	Gate      string    `json:"gate,omitempty"`
	CostUSD   float64   `json:"costUsd,omitempty"`
	CostKnown bool      `json:"costKnown,omitempty"`
	Notes     []string  `json:"notes,omitempty"`
}

// IssuesEndedInput is what the batch's last activity is given.
type IssuesEndedInput struct {
	Repo    string             `json:"repo"`
	Source  local.IssueSource  `json:"source"`
	Run     string             `json:"run"`
	Tasks   []local.BatchTask  `json:"tasks"`
	Claims  []local.IssueClaim `json:"claims"`
	Result  batch.Result       `json:"result"`
	Summary batch.Summary      `json:"summary"`
}

func (w *Activities) issueWarn(ctx context.Context) func(string, ...any) {
	return func(format string, a ...any) { activity.GetLogger(ctx).Warn(fmt.Sprintf(format, a...)) }
}

// IssueClaim claims the issue of a batch task (local.ClaimIssue).
func (w *Activities) IssueClaim(ctx context.Context, in IssueClaimInput) (local.IssueClaim, error) {
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Repo, Forge: in.Source.Forge})
	if err != nil {
		return local.IssueClaim{}, err
	}
	defer done()
	return local.ClaimIssue(ctx, f, in.Source, in.Run, in.Task, w.issueWarn(ctx))
}

// IssueLook reads a running task's issue again: why the tracker asks the
// task to stop, "" when it does not.
func (w *Activities) IssueLook(ctx context.Context, in IssueTask) (string, error) {
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Repo, Forge: in.Source.Forge})
	if err != nil {
		return "", err
	}
	defer done()
	return local.IssueStopReason(ctx, f, in.Source, in.Claim)
}

// IssueNotes are the notes of a task's issue (its comments since the claim
// by someone who can push).
func (w *Activities) IssueNotes(ctx context.Context, in IssueTask) ([]taskengine.Note, error) {
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Repo, Forge: in.Source.Forge})
	if err != nil {
		return nil, err
	}
	defer done()
	return local.IssueNotes(ctx, f, in.Source, in.Run, in.Claim, w.issueWarn(ctx)), nil
}

// IssueProgress tells a task's issue where the task is.
func (w *Activities) IssueProgress(ctx context.Context, in IssueProgressInput) error {
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Issue.Repo, Forge: in.Issue.Source.Forge})
	if err != nil {
		return err
	}
	defer done()
	return local.IssueProgress(ctx, f, in.Issue.Run, in.Issue.Claim, func(s *intake.Status) {
		s.Tier, s.Attempt, s.Gate, s.CostUSD, s.CostKnown, s.Notes = in.Tier, in.Attempt, in.Gate, in.CostUSD, in.CostKnown, in.Notes
	})
}

// IssuesEnded tells every claimed issue how its task ended, and labels it.
func (w *Activities) IssuesEnded(ctx context.Context, in IssuesEndedInput) error {
	ctx, f, done, err := w.forgeStart(ctx, PRForge{Repo: in.Repo, Forge: in.Source.Forge})
	if err != nil {
		return err
	}
	defer done()
	return local.IssuesEnded(ctx, f, in.Source, in.Run, in.Tasks, in.Claims, in.Result, in.Summary, w.issueWarn(ctx))
}
