package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/dag"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sheet"
)

// issueForge is what the intake of a batch's issues asks of the forge.
type issueForge interface {
	forge.Tracker
	Repo() forge.Repo
}

// Intake is the batch a query's issues make: the sheets of the issues to
// run, each one's issue, and what was left out and why.
type Intake struct {
	Sheets []sheet.Sheet
	Issues map[string]*local.TaskIssue // by task id
	// Left are the issues matched but not taken, each with why
	// ("#4: claimed by …").
	Left []string
}

// TakeIssues reads the open issues of f that q matches and makes each the
// sheet of a task (intake.SheetOf): settings are taken from issues whose
// author can push or is in trust. An issue is left out when it is
// claimed already, carries an outcome of an earlier run (take the label
// off to run it again), or depends on an open issue that is not taken
// (it waits for it); a dependency on a closed issue is met. An issue
// whose body cannot be read as a sheet is a task that fails alone, its
// reason told on the issue.
func TakeIssues(ctx context.Context, f issueForge, q forge.IssueQuery, trust []string, warn func(string)) (Intake, error) {
	all, err := f.Issues(ctx, q)
	if err != nil {
		return Intake{}, fmt.Errorf("read the issues of %s: %w", f.Repo(), err)
	}
	in := Intake{Issues: map[string]*local.TaskIssue{}}
	taken := map[int]sheet.Sheet{}
	var order []int
	for _, i := range all {
		if l := outcomeLabel(i); l != "" {
			in.Left = append(in.Left, fmt.Sprintf("#%d: it has the label %s of an earlier run (take it off to run it again)", i.Number, l))
			continue
		}
		if slices.Contains(i.Labels, intake.LabelClaimed) {
			in.Left = append(in.Left, fmt.Sprintf("#%d: claimed already (it has the label %s)", i.Number, intake.LabelClaimed))
			continue
		}
		trusted := slices.Contains(trust, i.Author)
		if !trusted && i.Author != "" {
			p, err := f.Permission(ctx, i.Author)
			if err != nil {
				return Intake{}, fmt.Errorf("issue #%d: the permission of its author %s: %w", i.Number, i.Author, err)
			}
			trusted = p.CanWrite()
		}
		ti := &local.TaskIssue{Number: i.Number, URL: i.URL}
		s, warns, err := intake.SheetOf(i, trusted)
		ti.Warnings = warns
		if err != nil {
			ti.Unreadable = err.Error()
			s = sheet.Sheet{ID: intake.IDOf(i.Number), File: fmt.Sprintf("issue #%d", i.Number), Title: i.Title, Body: i.Title}
		}
		for _, w := range warns {
			warn(w)
		}
		in.Issues[s.ID] = ti
		taken[i.Number] = s
		order = append(order, i.Number)
	}
	// Dependencies outside the batch: a closed issue is met, an open one
	// holds its dependents back (and theirs).
	closed := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, n := range order {
			s, ok := taken[n]
			if !ok {
				continue
			}
			var deps []string
			for _, d := range s.Depends {
				dn := intake.NumberOf(d)
				if _, in := taken[dn]; in {
					deps = append(deps, d)
					continue
				}
				if !closed[dn] {
					di, err := f.Issue(ctx, dn)
					switch {
					case errors.Is(err, forge.ErrNotFound):
						warn(fmt.Sprintf("issue #%d depends on #%d, which is not an issue of %s: ignored", n, dn, f.Repo()))
						closed[dn] = true
					case err != nil:
						return Intake{}, fmt.Errorf("issue #%d depends on #%d: %w", n, dn, err)
					case di.State == forge.IssueClosed:
						closed[dn] = true
					}
				}
				if !closed[dn] {
					in.Left = append(in.Left, fmt.Sprintf("#%d: it waits for #%d, which is open and not taken by this batch", n, dn))
					delete(taken, n)
					delete(in.Issues, s.ID)
					changed = true
					break
				}
			}
			if _, still := taken[n]; still {
				s.Depends = deps
				taken[n] = s
			}
		}
	}
	// A cycle is the issues' own (their authors may write any "depends
	// on"): each issue in it fails alone, its dependencies dropped, and
	// the rest of the backlog runs.
	for {
		var nodes []dag.Node
		for _, n := range order {
			if s, ok := taken[n]; ok {
				nodes = append(nodes, dag.Node{ID: s.ID, Deps: s.Depends})
			}
		}
		_, err := dag.New(nodes)
		var ce *dag.CycleError
		if !errors.As(err, &ce) {
			break
		}
		path := make([]string, len(ce.Path))
		for i, id := range ce.Path {
			path[i] = fmt.Sprintf("#%d", intake.NumberOf(id))
		}
		why := "its dependencies make a dependency cycle: " + strings.Join(path, " → ")
		for _, id := range ce.Path {
			n := intake.NumberOf(id)
			s := taken[n]
			s.Depends = nil
			taken[n] = s
			if ti := in.Issues[id]; ti != nil && ti.Unreadable == "" {
				ti.Unreadable = why
				warn(fmt.Sprintf("issue #%d: %s", n, why))
			}
		}
	}
	for _, n := range order {
		if s, ok := taken[n]; ok {
			in.Sheets = append(in.Sheets, s)
		}
	}
	return in, nil
}

// trackerError is err of the tracker of src as the user is told it: a
// token refused is theirs to fix (exit 64), nothing claimed.
func trackerError(err error, src local.IssueSource) error {
	if errors.Is(err, forge.ErrUnauthorized) {
		where := "the token's variable (forge.tokenEnv)"
		if src.Forge.TokenEnv != "" {
			where = src.Forge.TokenEnv
		}
		return exit.NewUsage(err, "check the token in "+where+": it must be valid for this forge")
	}
	return err
}

// outcomeLabel is the outcome label of an earlier run that issue i has
// ("" for none).
func outcomeLabel(i forge.Issue) string {
	for _, l := range intake.OutcomeLabels {
		if slices.Contains(i.Labels, l) {
			return l
		}
	}
	return ""
}

// issueSource is the IssueSource of a batch of q's issues under cfg.
func issueSource(cfg *config.Config, q forge.IssueQuery, remote string) local.IssueSource {
	if remote == "" {
		remote = "origin"
	}
	return local.IssueSource{Query: q, Remote: remote, Forge: cfg.Forge, Trust: cfg.Trust, PollMs: millis.Of(cfg.Poll)}
}

// openIssues opens the tracker of the batch's issues (from the remote of
// the repository in dir) for the intake.
func openIssues(ctx context.Context, dir string, src local.IssueSource, p local.Parts) (issueForge, error) {
	return local.OpenTracker(ctx, dir, src, p)
}

// planIssues is the plan of the batch of the query's issues on the forge
// of the repository in repo, its tasks to run in planRepo ("": on
// Temporal workers), and what the intake left out; a plan without a
// task when nothing is to be run.
func planIssues(ctx context.Context, lc Config, c BatchCommand, repo, planRepo string, p local.Parts) (BatchPlan, Intake, error) {
	cfg := lc.Config
	q, err := intake.ParseQuery(c.Issues)
	if err != nil {
		return BatchPlan{}, Intake{}, err
	}
	src := issueSource(cfg, q, c.Remote)
	f, err := openIssues(ctx, repo, src, p)
	if err != nil {
		return BatchPlan{}, Intake{}, trackerError(err, src)
	}
	in, err := TakeIssues(ctx, f, q, cfg.Trust, say(p).Warn)
	if err != nil {
		return BatchPlan{}, Intake{}, trackerError(err, src)
	}
	if len(in.Sheets) == 0 {
		return BatchPlan{}, in, nil
	}
	b := Batch{Sheets: in.Sheets, Base: c.Base, FailFast: c.FailFast, BudgetUSD: c.BudgetUSD, Plan: c.Plan, Repo: planRepo}
	plan, err := planTaken(lc, in, src, b, p)
	return plan, in, err
}

// planTaken is the plan of batch b of the issues the intake in took from
// src: each task is told its issue, and its file is the issue's address.
func planTaken(lc Config, in Intake, src local.IssueSource, b Batch, p local.Parts) (BatchPlan, error) {
	plan, err := PlanBatch(lc, b, p)
	if err != nil {
		return BatchPlan{}, err
	}
	plan.Spec.Issues = &src
	for i := range plan.Spec.Tasks {
		t := &plan.Spec.Tasks[i]
		t.Issue = in.Issues[t.ID]
		if t.Issue != nil && t.Issue.URL != "" {
			t.File = t.Issue.URL
		}
	}
	return plan, nil
}

// watchIssues runs a batch of the query's issues, then again each time new
// ones match, until ctx ends: it waits between two reads of the tracker
// as local.NextIssueWait says. Each batch is a run of its own. once runs
// one batch (nil plan: nothing to run now).
func watchIssues(ctx context.Context, poll time.Duration, say func(string), once func() (*batch.Summary, error)) (*batch.Summary, error) {
	var wait time.Duration
	var last *batch.Summary
	for {
		sum, err := once()
		if err != nil && !exit.IsUsage(err) {
			return last, err
		}
		if sum != nil {
			last = sum
		}
		wait = local.NextIssueWait(wait, poll, sum != nil)
		if ctx.Err() != nil {
			return last, nil
		}
		say(fmt.Sprintf("watching for new issues: next look in %s (Ctrl-C to stop)", wait.Round(time.Second)))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, nil
		case <-t.C:
		}
	}
}

// leftNotice is what a batch of issues says of those it left out.
func leftNotice(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return "left out: " + strings.Join(left, "; ")
}
