package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/report"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
)

// finish ends a task's git life: a failed task's work is committed as WIP,
// the worktree is removed, a successful task is squash-merged into its base
// branch when that is checked out and clean; then the push, the reports and
// the pull request. What it did is res.Git, set here and nowhere else.
func (s TaskSpec) finish(ctx context.Context, p Parts, run *store.Run, res *taskengine.Result) {
	ctx = context.WithoutCancel(ctx) // Ctrl-C must not leave the branch half done
	wt := s.Worktree
	info := &taskengine.GitInfo{Mode: string(git.CommitBranch), Repo: s.Repo, Worktree: wt.Path, Branch: wt.Branch, Base: wt.Base,
		BaseBranch: wt.BaseBranch, DirtyIncluded: wt.DirtyIncluded, DirtyLeftOut: s.DirtyLeftOut,
		Refs: git.RefPrefix + run.ID + "/"}
	res.Git = info // filled in as the steps below go
	warn := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		info.Warnings = append(info.Warnings, msg)
		p.warn("%s", msg)
	}
	if res.Status != engine.StatusDone && len(res.Attempts) > 0 {
		msg := fmt.Sprintf("%s\n\njlgcli task %s stopped: %s.\n%s\n", taskengine.SubjectLine("WIP: ", res.Task, " (needs manual review)"), run.ID, res.Status, res.Details)
		if sha, ok, err := wt.Commit(ctx, msg); err != nil {
			warn("commit the partial work: %v (it is kept in %s)", err, wt.Path)
			return
		} else if ok {
			info.WIP = sha
		}
	}
	if res.Status != engine.StatusDone && len(res.Attempts) == 0 {
		// No attempt ran: a branch and a worktree with nothing to keep.
		if ok, err := wt.Discard(ctx); err != nil {
			warn("remove the branch %s and the worktree %s of a task that made nothing: %v", wt.Branch, wt.Path, err)
		} else if ok {
			info.Removed, info.Discarded = true, true
			p.progress("no attempt ran: branch %s and its worktree are removed (nothing to keep)", wt.Branch)
		}
	}
	if !info.Discarded {
		if err := wt.Remove(ctx); err != nil {
			warn("remove the worktree %s: %v", wt.Path, err)
		} else {
			info.Removed = true
		}
	}
	var opened *git.Repo
	repo := func() *git.Repo { // opened once, by the first step that needs it
		if opened == nil {
			opened = s.repo(ctx)
		}
		return opened
	}
	switch {
	case s.Commit == git.CommitDirect && (res.Status == engine.StatusDone || info.WIP != ""):
		// Seed 003's direct strategy: the commits, a failure's WIP too, land
		// on the current branch.
		info.Mode = string(git.CommitDirect)
		sha, err := repo().FastForward(ctx, wt.BaseBranch, wt.Branch)
		info.Merge = mergeOutcome(&taskengine.MergeInfo{Into: wt.BaseBranch}, git.MergeFastForwarded, sha, err)
	case res.Status == engine.StatusDone:
		info.Merge = s.merge(ctx, repo, res)
	}
	if m := info.Merge; m != nil && m.Status == git.MergeRefused {
		warn("%s was not merged (%s); to merge it: %s", wt.Branch, m.Reason, m.Command)
	}

	if (s.Push || s.PR) && len(res.Attempts) > 0 {
		if rm, err := repo().Remote(ctx, wt.Branch); err != nil {
			warn("push: %v", err)
		} else if err := repo().Push(ctx, wt.Branch); err != nil {
			warn("%v", err)
		} else {
			info.Pushed, info.Remote = true, rm
			p.progress("pushed %s to %s", wt.Branch, rm)
		}
	}
	res.HoldForReview()
	writeReports(p, run, *res)
	if s.PR && info.Pushed {
		if url, err := OpenPR(ctx, p, s.Repo, wt.Branch, wt.BaseBranch, SquashSubject(res.Task), run.MarkdownReportPath()); err != nil {
			warn("pull request: %v", err)
		} else {
			info.PR = url
			writeReports(p, run, *res)
		}
	}
}

// repo is the user's checkout the task works on, its git directories
// resolved once (git.Open); one that cannot be opened fails each call with
// why.
func (s TaskSpec) repo(ctx context.Context) *git.Repo {
	if r, err := git.Open(ctx, s.Repo); err == nil {
		return r
	}
	return &git.Repo{Dir: s.Repo}
}

// writeReports writes the task's final report into its run directory.
func writeReports(p Parts, run *store.Run, res taskengine.Result) {
	if err := run.WriteReport(res, report.New(res).Markdown()); err != nil {
		p.warn("write the report: %v", err)
	}
}

// OpenPR opens a pull request of branch head into base ("": the
// repository's default) with gh, run in dir, the file body as its text,
// and returns its address.
func OpenPR(ctx context.Context, p Parts, dir, head, base, title, body string) (string, error) {
	env := p.environ()
	gh, err := proc.LookPath("gh", env)
	if err != nil {
		return "", fmt.Errorf("gh is not installed; open it by hand from branch %s (the report is in %s)", head, body)
	}
	args := []string{gh, "pr", "create", "--head", head, "--title", title, "--body-file", body}
	if base != "" {
		args = append(args, "--base", base)
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := proc.Run(ctx, proc.Cmd{Argv: args, Dir: dir, Env: env, Stdout: &out, Stderr: &errb})
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return "", fmt.Errorf("gh pr create exited with status %d: %s", r.ExitCode, strings.TrimSpace(errb.String()))
	}
	url := strings.TrimSpace(out.String())
	if i := strings.LastIndexByte(url, '\n'); i >= 0 {
		url = url[i+1:]
	}
	return url, nil
}

// SquashSubject is the subject of the squash commit of task, and the title
// of its pull request.
func SquashSubject(task string) string { return taskengine.SubjectLine("feat: ", task, "") }

// squashMessage is the message of the squash commit of the done task res,
// made on branch, that lands on its base branch.
func squashMessage(res taskengine.Result, branch string) string {
	return fmt.Sprintf("%s\n\n%s\n\nMade by jlgcli task %s on branch %s, which keeps each attempt's commit.\n",
		SquashSubject(res.Task), res.Summary, res.RunID, branch)
}

// merge squash-merges a successful task into its base branch, in repo.
func (s TaskSpec) merge(ctx context.Context, repo func() *git.Repo, res *taskengine.Result) *taskengine.MergeInfo {
	wt := s.Worktree
	m := &taskengine.MergeInfo{Into: wt.BaseBranch}
	if s.Merge == git.MergeNone {
		m.Status = git.MergeSkipped
		if s.ViaPR {
			m.Reason = "it lands through its pull request"
			return m
		}
		m.Command = squashByHand(wt.Branch, res.Task)
		return m
	}
	msg := squashMessage(*res, wt.Branch)
	included := ""
	if wt.DirtyIncluded {
		included = wt.Base // the user's changes it took in, still in their tree
	}
	sha, err := repo().SquashMerge(ctx, wt.BaseBranch, wt.Branch, msg, included)
	return mergeOutcome(m, git.MergeMerged, sha, err)
}

// squashByHand is the command that squash-merges branch, the work of task,
// into the checked-out branch by hand.
func squashByHand(branch, task string) string {
	return fmt.Sprintf("git merge --squash %s && git commit -m %q", branch, SquashSubject(task))
}

// mergeOutcome fills m with how a merge (squash or fast-forward) into the
// base branch ended: done (status done, at commit sha), nothing to merge,
// or refused with why and, when git gave one, the command to merge by hand.
func mergeOutcome(m *taskengine.MergeInfo, done git.MergeStatus, sha string, err error) *taskengine.MergeInfo {
	var refused *git.MergeRefusedError
	switch {
	case err == nil:
		m.Status, m.Commit = done, sha
	case errors.As(err, &refused):
		m.Status, m.Reason, m.Command = git.MergeRefused, string(refused.Reason)+": "+refused.Detail, refused.Command
	case errors.Is(err, git.ErrNothingToMerge):
		m.Status = git.MergeNothing
	default:
		m.Status, m.Reason = git.MergeRefused, err.Error()
	}
	return m
}

// relTo is p relative to dir when it is inside it.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
