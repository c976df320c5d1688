package temporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/pull"
)

// openForge opens the forge of f's repository with this worker's token,
// read from its own environment (its Parts' Getenv, else the process's)
// by the name the settings give.
func (w *Activities) openForge(ctx context.Context, f PRForge) (forge.Forge, error) {
	open := w.OpenForge
	if open == nil {
		getenv := w.Parts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		open = func(ctx context.Context, repo string, s forge.Settings) (forge.Forge, error) {
			return forge.Open(ctx, repo, s, forge.Options{Getenv: getenv})
		}
	}
	return open(ctx, f.Repo, f.Forge)
}

// forgeStart begins an activity that talks to the forge: started
// (Activities.start), heartbeating, with the forge opened; end must be
// called when it returns.
func (w *Activities) forgeStart(ctx context.Context, f PRForge) (context.Context, forge.Forge, func(), error) {
	ctx, end := w.start(ctx)
	stop := w.beat(ctx)
	done := func() { stop(); end() }
	fg, err := w.openForge(ctx, f)
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return ctx, fg, done, nil
}

// PRBegin reads the pull request and the login the worker's token acts as;
// a pull request from a fork, or one not open, is refused (ErrPRRefused):
// the loop pushes only to the repository's own branches.
func (w *Activities) PRBegin(ctx context.Context, in PRForge) (PRBegun, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in)
	if err != nil {
		return PRBegun{}, err
	}
	defer end()
	pr, err := fg.PR(ctx, in.Number)
	if err != nil {
		return PRBegun{}, fmt.Errorf("pull request #%d: %w", in.Number, err)
	}
	if pr.HeadRepo != "" && pr.HeadRepo != fg.Repo().String() {
		return PRBegun{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("pull request #%d comes from %s, a fork: jlgcli pushes only to %s",
			pr.Number, pr.HeadRepo, fg.Repo()), ErrPRRefused, nil)
	}
	if pr.State != forge.StateOpen {
		return PRBegun{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("pull request #%d is %s", pr.Number, pr.State), ErrPRRefused, nil)
	}
	self, err := fg.Self(ctx)
	if err != nil {
		return PRBegun{}, err
	}
	return PRBegun{Self: self, PR: pr}, nil
}

// PRLook reads the pull request, the checks at its head, its reviews and
// threads, at the worker's time (the Observation's At, which the workflow
// decides with).
func (w *Activities) PRLook(ctx context.Context, in PRForge) (pull.Observation, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in)
	if err != nil {
		return pull.Observation{}, err
	}
	defer end()
	o, err := local.Look(ctx, fg, in.Number)
	if err == nil && o.PR.State == forge.StateOpen && o.PR.Mergeable == forge.Mergeable {
		w.checkMerge(ctx, in.Repo, &o)
	}
	return o, err
}

// checkMerge checks, with git on the worker's clone, a forge's word that
// the pull request of o merges into its base, as the loop run here does
// (local's checkMerge): a conflict the forge has not computed yet is no
// green; a head the forge's git does not hold yet leaves its word in
// doubt. A fetch that fails leaves the forge's word.
func (w *Activities) checkMerge(ctx context.Context, repo string, o *pull.Observation) {
	c, unlock, err := w.fetched(ctx, repo, o.PR.Base)
	if err != nil {
		return
	}
	defer unlock()
	if err := c.Fetch(ctx, "+refs/heads/"+o.PR.Head+":refs/remotes/origin/"+o.PR.Head); err != nil {
		return
	}
	base, err := c.Rev(ctx, "refs/remotes/origin/"+o.PR.Base)
	if err != nil {
		return
	}
	head, err := c.Rev(ctx, "refs/remotes/origin/"+o.PR.Head)
	if err != nil || head != o.PR.HeadSHA {
		o.PR.Mergeable = forge.MergeUnknown
		return
	}
	if _, conflicts, err := c.MergeTree(ctx, head, base); err == nil && len(conflicts) > 0 {
		o.PR.Mergeable, o.PR.BaseSHA = forge.Conflicting, base
	}
}

// PRRound prepares a round decided at the head in.Action.Head: the
// pull request's branch is fetched into the worker's clone, and a branch
// that moved meanwhile is said (Moved: the workflow looks again);
// otherwise what the forge tells of each failed check is read, and the
// section of the round's prompt that says what the pull request needs is
// made of it.
func (w *Activities) PRRound(ctx context.Context, in PRRoundInput) (PRRoundReady, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return PRRoundReady{}, err
	}
	defer end()
	c, unlock, err := w.fetched(ctx, in.Repo, in.Obs.PR.Head)
	if err != nil {
		return PRRoundReady{}, err
	}
	head, err := c.Rev(ctx, "refs/remotes/origin/"+in.Obs.PR.Head)
	unlock()
	if err != nil {
		return PRRoundReady{}, gitError(ctx, err)
	}
	if head != in.Action.Head {
		return PRRoundReady{Moved: head}, nil
	}
	needs := pull.Needs{PR: in.Obs.PR, Target: in.Target, Self: in.Self, Blockers: in.Action.Blockers, Failures: map[string]forge.Failure{}}
	for _, b := range in.Action.Blockers {
		if b.Check != nil {
			if f, err := fg.Failure(ctx, *b.Check); err == nil {
				needs.Failures[b.Check.Name] = f
			}
		}
	}
	return PRRoundReady{Needs: needs.Prompt()}, nil
}

// PRPush pushes a round's task branch onto the pull request's branch, on
// the lease of the head the round started from (a push of someone else's
// that came meanwhile is never overwritten: Rejected), then answers each
// thread the round addressed, naming the commit, and resolves it. Made
// again after a worker died, it pushes nothing twice (the branch already at
// the round's tip is pushed) and answers no thread twice (one whose words
// name the tip is answered).
func (w *Activities) PRPush(ctx context.Context, in PRPushInput) (PRPushed, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return PRPushed{}, err
	}
	defer end()
	out := PRPushed{End: local.PRRoundEndData{Round: in.Round, RunID: in.RunID}}
	c, unlock, err := w.fetched(ctx, in.Repo, in.From)
	if err != nil {
		return out, err
	}
	tip, err := c.Rev(ctx, "refs/remotes/origin/"+in.From)
	if err != nil {
		unlock()
		return out, gitError(ctx, err)
	}
	if tip == in.Lease {
		unlock()
		out.End.Details, out.At = "the attempt changed nothing", time.Now()
		return out, nil
	}
	at, found, err := c.RemoteRef(ctx, "refs/heads/"+in.Branch)
	if err == nil && (!found || at != tip) {
		err = c.PushLeased(ctx, tip, in.Branch, in.Lease)
	}
	unlock()
	out.At = time.Now()
	switch {
	case errors.Is(err, git.ErrPushRejected):
		out.End.Rejected, out.End.Details = true, "the branch moved on the forge meanwhile: the next look builds on it"
		w.say("pull request #%d: %s", in.Number, out.End.Details)
		return out, nil
	case err != nil:
		return out, gitError(ctx, err)
	}
	out.End.Pushed = tip
	w.say("pull request #%d: pushed %s to %s", in.Number, git.ShortSHA(tip), in.Branch)
	if len(in.Threads) == 0 {
		return out, nil
	}
	now := map[string]forge.Thread{}
	if ts, err := fg.Threads(ctx, in.Number); err == nil {
		for _, t := range ts {
			now[t.ID] = t
		}
	}
	for _, t := range in.Threads {
		cur, seen := now[t.ID]
		answered := seen && answers(cur, tip)
		if !answered {
			body := fmt.Sprintf("Addressed in %s (jlgcli run %s, round %d).", tip, in.RunID, in.Round)
			if _, err := fg.Reply(ctx, in.Number, t, body); err != nil {
				w.say("pull request #%d: reply on %s: %v", in.Number, t.Path, err)
				continue
			}
		}
		if !seen || !cur.Resolved {
			if err := fg.Resolve(ctx, in.Number, t); err != nil {
				w.say("pull request #%d: resolve the thread on %s: %v", in.Number, t.Path, err)
			}
		}
		out.End.Replied++
	}
	return out, nil
}

// answers reports whether thread t has a reply that names commit tip.
func answers(t forge.Thread, tip string) bool {
	for _, c := range t.Comments {
		if strings.Contains(c.Body, tip) {
			return true
		}
	}
	return false
}

// PRRerun asks the forge to run failed checks again, where it can (a
// commit status posted by an outside CI cannot be: the next look acts on
// it).
func (w *Activities) PRRerun(ctx context.Context, in PRRerunInput) error {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return err
	}
	defer end()
	for _, c := range in.Checks {
		if err := fg.Rerun(ctx, c); err == nil {
			w.say("pull request #%d: check %q failed; asked the forge to run it again", in.Number, c.Name)
		} else if !errors.Is(err, forge.ErrUnsupported) {
			w.say("pull request #%d: re-run %q: %v", in.Number, c.Name, err)
		}
	}
	return nil
}

// PRMerge asks the forge to merge the pull request at in.Head; a refusal
// is returned as the merge's Error, not as the activity's: the workflow
// looks again.
func (w *Activities) PRMerge(ctx context.Context, in PRMergeInput) (local.PRMergeData, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return local.PRMergeData{}, err
	}
	defer end()
	sha, err := fg.Merge(ctx, in.Number, forge.MergeOptions{Method: in.Method, SHA: in.Head})
	d := local.PRMergeData{Head: in.Head, Commit: sha}
	if err != nil {
		if ctx.Err() != nil {
			return d, err
		}
		d.Error = err.Error()
		w.say("pull request #%d: merge: %v", in.Number, err)
	} else {
		w.say("pull request #%d: merged", in.Number)
	}
	return d, nil
}

// PRComment posts the comment that tells the pull request why the loop
// gave up, and returns its address.
func (w *Activities) PRComment(ctx context.Context, in PRCommentInput) (string, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return "", err
	}
	defer end()
	c, err := fg.Comment(ctx, in.Number, in.Body)
	if err != nil {
		return "", err
	}
	return c.URL, nil
}

// PROpen opens the pull request of a task's branch, or finds the one open
// for it.
func (w *Activities) PROpen(ctx context.Context, in PROpenInput) (forge.PR, error) {
	ctx, fg, end, err := w.forgeStart(ctx, in.PRForge)
	if err != nil {
		return forge.PR{}, err
	}
	defer end()
	pr, created, err := fg.OpenPR(ctx, in.New)
	if err != nil {
		return forge.PR{}, fmt.Errorf("open the pull request of %s: %w", in.New.Head, err)
	}
	if created {
		w.say("opened pull request #%d: %s", pr.Number, pr.URL)
	}
	return pr, nil
}

// PRJudgeInput names the pull request whose whole change PRJudge judges:
// its base and head branches, and the head the workflow decided at.
type PRJudgeInput struct {
	PRForge
	Base string `json:"base"`
	Head string `json:"head"`
	SHA  string `json:"sha"`
}

// PRJudge judges the pull request's whole change against its base's tests
// on the worker's clone, as the loop run here does before it calls a pull
// request done or merges it: why it may not (local.TestsWeakenedReason),
// "" when it may.
func (w *Activities) PRJudge(ctx context.Context, in PRJudgeInput) (string, error) {
	c, unlock, err := w.fetched(ctx, in.Repo, in.Base)
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := c.Fetch(ctx, "+refs/heads/"+in.Head+":refs/remotes/origin/"+in.Head); err != nil {
		return "", gitError(ctx, err)
	}
	base, err := c.Rev(ctx, "refs/remotes/origin/"+in.Base)
	if err != nil {
		return "", gitError(ctx, err)
	}
	ch, err := c.TestsWeakened(ctx, base, cmp.Or(in.SHA, "refs/remotes/origin/"+in.Head))
	if err != nil {
		return "", gitError(ctx, err)
	}
	return local.TestsWeakenedReason(ch, in.Base), nil
}
