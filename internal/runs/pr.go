package runs

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// PRCommand is `jlgcli pr`: a pull request to work until a target.
type PRCommand struct {
	// Ref is the pull request: its number, or its address on the forge.
	Ref string
	// Flags is the configuration layer of the command's flags.
	Flags *config.Layer
	// Remote is the git remote its branch is on ("": origin).
	Remote string
	// Detach, with a Temporal server: return once the loop is submitted.
	Detach bool
}

// PRDone is what StartPR (or a task with --until) did: its result, or
// the run submitted with Detach (ID, Result nil).
type PRDone struct {
	Result *local.PRResult
	ID     string
	JSON   bool
}

// prRef reads a pull request's number from its number or address
// (…/pull/7 on GitHub, …/pulls/7 on Gitea).
var prURL = regexp.MustCompile(`/pulls?/(\d+)/?(?:[#?].*)?$`)

func prNumber(ref string) (int, error) {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "#")
	if m := prURL.FindStringSubmatch(ref); m != nil {
		ref = m[1]
	}
	n, err := strconv.Atoi(ref)
	if err != nil || n <= 0 {
		return 0, exit.Usagef("give its number (7) or its address (https://github.com/OWNER/REPO/pull/7)", "%q is not a pull request", ref)
	}
	return n, nil
}

// policyOf is the loop's policy under cfg, its target def when cfg names
// none.
func policyOf(cfg *config.Config, def pull.Target) pull.Policy {
	return pull.Policy{Target: cmp.Or(cfg.Until, def), Method: cfg.MergeMethod, Poll: millis.Of(cfg.Poll), Grace: millis.Of(cfg.ChecksGrace),
		MaxRounds: cfg.MaxRounds, Trusted: cfg.Trust, GiveUpAfter: millis.Of(cfg.GiveUpAfter)}
}

// StartPR works the pull request of the command until its target
// (default green), its rounds made as tasks of the configuration in the
// repository of its directory: here, or on the Temporal server cfg names
// (SubmitPR), where the workers do it all with their own token.
func StartPR(ctx context.Context, f Front, c PRCommand) (PRDone, error) {
	n, err := prNumber(c.Ref)
	if err != nil {
		return PRDone{}, err
	}
	lc, err := f.LoadLayers(c.Flags)
	if err != nil {
		return PRDone{}, err
	}
	cfg := lc.Config
	if cfg.Temporal.Address != "" {
		in, err := prSubmission(ctx, cfg, c, n)
		if err != nil {
			return PRDone{}, err
		}
		p := withEnv(f.Parts(cfg.Quiet, true, false), cfg)
		defer endParts(p)
		res, _, err := SubmitPR(ctx, cfg, in, temporal.DefaultHeartbeat, c.Detach, p)
		if err != nil {
			return PRDone{}, err
		}
		if c.Detach {
			return PRDone{ID: res.RunID, JSON: cfg.JSON}, nil
		}
		return PRDone{Result: &res, JSON: cfg.JSON}, nil
	}
	if c.Detach {
		return PRDone{}, usagef("--detach is for a pull request's loop sent to a Temporal server (--temporal HOST:PORT)")
	}
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		return PRDone{}, err
	}
	s, failed := taskSpec(cfg, repo, false, f.Base())
	if failed != nil {
		return PRDone{}, fmt.Errorf("%s", failed.Details)
	}
	spec := local.PRSpec{Task: s, Number: n, Remote: cmp.Or(c.Remote, "origin"), Forge: cfg.Forge, Policy: policyOf(cfg, pull.Green)}
	p := withEnv(f.Parts(cfg.Quiet, true, false), cfg)
	defer endParts(p)
	fg, err := local.OpenForge(ctx, repo, spec, p)
	if err != nil {
		return PRDone{}, err
	}
	res, err := local.StartPR(ctx, local.NewPR{Spec: spec, Repo: repo, StateDir: cfg.StateDir}, fg, p)
	if err != nil {
		return PRDone{}, err
	}
	return PRDone{Result: &res, JSON: cfg.JSON}, nil
}

// watchFlag is the first flag of the pull-request loop's settings given
// on the command line (flags), "" for none: a task without --until
// refuses them rather than ignore them.
func watchFlag(flags *config.Layer) string {
	switch {
	case flags == nil:
	case flags.Poll != nil:
		return "poll"
	case flags.Trust != nil:
		return "trust"
	}
	return untilFlag(flags)
}

// untilFlag is the first flag given on the command line (flags) that only
// the pull-request loop takes (a batch of issues takes --poll and --trust
// too), "" for none.
func untilFlag(flags *config.Layer) string {
	switch {
	case flags == nil:
	case flags.ChecksGrace != nil:
		return "checks-grace"
	case flags.GiveUpAfter != nil:
		return "give-up-after"
	case flags.MaxRounds != nil:
		return "max-rounds"
	case flags.MergeMethod != nil:
		return "merge-method"
	}
	return ""
}

// taskForge is the forge a task with --until pushes its branch to and
// opens its pull request on: that of the remote a new branch is pushed to
// (remote.pushDefault, else origin, else the only one), its token read.
func taskForge(ctx context.Context, cfg *config.Config, repo *git.Repo, p local.Parts) (forge.Forge, error) {
	rm, err := repo.Remote(ctx, "jlgcli/new")
	if err != nil {
		return nil, cfg.KeyError("until", fmt.Sprintf("works a pull request of the task's branch, which it cannot push: %v", err))
	}
	return local.OpenForge(ctx, repo, local.PRSpec{Remote: rm, Forge: cfg.Forge}, p)
}

// watchTaskPR opens (or finds) the pull request of the done task res,
// pushed to its remote, on fg (taskForge's), and works it until cfg's
// target: the loop a task with --until goes on with.
func watchTaskPR(ctx context.Context, cfg *config.Config, fg forge.Forge, repo *git.Repo, s local.TaskSpec, prompt string, res taskengine.Result, p local.Parts) (*local.PRResult, error) {
	g := res.Git
	if res.Status != engine.StatusDone || g == nil || !g.Pushed {
		return nil, nil
	}
	spec := local.PRSpec{Task: s, Remote: g.Remote, Forge: cfg.Forge, Policy: policyOf(cfg, ""), From: res.RunID}
	pr, err := local.OpenTaskPR(ctx, fg, res, s.Worktree.BaseBranch, spec.Policy.Target, 0, p)
	if err != nil {
		return nil, err
	}
	spec.Number = pr.Number
	out, err := local.StartPR(ctx, local.NewPR{Spec: spec, Prompt: prompt, Repo: repo, StateDir: cfg.StateDir}, fg, p)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
