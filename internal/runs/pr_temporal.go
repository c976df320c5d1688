package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/pull"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// SubmitPR sends a pull request's loop to the Temporal server of cfg (the
// workflow temporal.PullRequestWorkflow), keeps a local record of it
// (command pr), and follows it to its end, saying on p where it stands:
// its result. in is its input but for the run id and the server's queue
// and timeouts, which SubmitPR gives it; with in.First, the task that
// opens the pull request runs first, and first is its result once the
// run ended (nil otherwise). With detach it returns once submitted: res
// is the run, running, for show, resume and stop to follow later.
func SubmitPR(ctx context.Context, cfg *config.Config, in temporal.PRInput, heartbeat time.Duration, detach bool, p local.Parts) (res local.PRResult, first *taskengine.Result, err error) {
	t := cfg.Temporal
	c, err := Dial(ctx, temporal.ConnectionOf(cfg, getenv(p)))
	if err != nil {
		return res, nil, err
	}
	defer c.Close()
	if in.RunID == "" {
		in.RunID = store.NewRunID(time.Now())
	}
	in.Queue, in.WorkerWaitMs, in.HeartbeatMs = t.TaskQueue, millis.Of(t.WorkerWait), millis.Of(heartbeat)
	if in.First != nil {
		in.First.Queue, in.First.WorkerWaitMs, in.First.HeartbeatMs = in.Queue, in.WorkerWaitMs, in.HeartbeatMs
	}
	if err := temporal.SubmitPR(ctx, c, in); err != nil {
		return res, nil, err
	}
	rec := in // the record keeps the environment's names only
	rec.Spec = in.Spec.Recorded()
	if in.First != nil {
		f := *in.First
		f.Spec = f.Spec.Recorded()
		rec.First = &f
	}
	prompt := in.Task
	if prompt == "" {
		prompt = fmt.Sprintf("pull request #%d", in.Number)
	}
	run := keepRecord(p, cfg, in.RunID, "pr", in.Spec.Tiers[0].Backend, prompt, rec)
	if run != nil {
		defer run.Close()
	}
	if detach {
		return local.PRResult{RunID: in.RunID, Number: in.Number, Target: in.Policy.Target, Status: store.Running}, nil, nil
	}
	what := fmt.Sprintf("pull request #%d", in.Number)
	if in.Number == 0 {
		what = "the task's pull request"
	}
	say(p).Notice(fmt.Sprintf("%s submitted to %s (queue %s) as run %s: worked until %s on the workers", what, t.Address, t.TaskQueue, in.RunID, in.Policy.Target))
	hooks := local.HooksOf(p, run)
	hooks.Started()
	res, err = temporal.FollowPR(ctx, c, in.RunID, prTeller(p, run), time.Second)
	if err := followed(ctx, p, "pull request", in.RunID, err, run, func() error { return savePR(run, res) }); err != nil {
		return res, nil, err
	}
	prStopped(p, res)
	hooks.PREnded(res)
	if in.First != nil {
		first = firstTask(ctx, c, in.RunID)
	}
	return res, first, nil
}

// firstTask is the result of the task that opened the pull request of
// run id on Temporal, once it ended (nil when it did not run).
func firstTask(ctx context.Context, c client.Client, id string) *taskengine.Result {
	var res taskengine.Result
	if closed, err := temporal.Outcome(ctx, c, temporal.PRTaskID(id), &res); err != nil || !closed {
		return nil
	}
	return &res
}

// prTeller is what tells, on p, where a pull request's run on Temporal
// stands as it changes (its waits, its rounds begun and ended), and keeps
// it in the run's record (nil: none) for show.
func prTeller(p local.Parts, run *store.Run) func(temporal.PRState) {
	var said string
	rounds, begun := 0, ""
	return func(st temporal.PRState) {
		n := st.Result.Number
		if w := strings.Join(st.Waiting, ", "); w != "" && w != said {
			said = w
			say(p).Progress(fmt.Sprintf("pull request #%d: waiting for %s", n, w))
		}
		if r := st.Round; r != nil && r.Data.RunID != begun {
			begun = r.Data.RunID
			say(p).Progress(fmt.Sprintf("pull request #%d: round %d on %s: %s", n, r.Data.Round, git.ShortSHA(r.Data.Head), strings.Join(r.Data.Blockers, "; ")))
		}
		for _, r := range st.Result.Rounds[min(rounds, len(st.Result.Rounds)):] {
			switch {
			case r.Pushed != "":
				say(p).Progress(fmt.Sprintf("pull request #%d: round %d pushed %s", n, r.Round, git.ShortSHA(r.Pushed)))
			default:
				say(p).Progress(fmt.Sprintf("pull request #%d: round %d ended %s: %s", n, r.Round, r.Status, r.Details))
			}
		}
		rounds = len(st.Result.Rounds)
		if run != nil {
			_ = savePR(run, st.Result) // where it stands, until its end is saved
		}
	}
}

// prStopped tells of a pull-request run that ended to be resumed.
func prStopped(p local.Parts, res local.PRResult) {
	if res.Status == engine.StatusInterrupted || res.Status == engine.StatusError || local.Resumable(res.Status) {
		say(p).Notice(fmt.Sprintf("pull request #%d: %s", res.Number, res.Reason))
	}
}

// savePR writes a Temporal pull-request run's result as its record's
// report and checkpoint.
func savePR(run *store.Run, res local.PRResult) error {
	if err := run.WriteReport(res, ""); err != nil {
		return err
	}
	if err := run.WriteCheckpoint(store.Progress{Status: string(res.Status), Iterations: len(res.Rounds), CostUSD: res.CostUSD,
		CostKnown: res.CostUSD > 0, DurationMs: res.DurationMs, Heartbeat: time.Now().UTC()}); err != nil {
		return err
	}
	indexRun(run)
	return nil
}

// temporalPR is the result of a pull-request run on Temporal as its
// record keeps it (Refresh writes it there).
func temporalPR(run *store.Run) (local.PRResult, error) {
	var res local.PRResult
	found, err := run.ReadReport(&res)
	if err != nil {
		return res, err
	}
	if !found {
		res = local.PRResult{RunID: run.ID, Status: store.Running}
	}
	return res, nil
}

// refreshPR brings the record of a pull-request run on Temporal up to date
// from its server: its result, or where it stands.
func refreshPR(ctx context.Context, c client.Client, run *store.Run) error {
	var res local.PRResult
	closed, err := temporal.Outcome(ctx, c, run.ID, &res)
	if err == nil && !closed {
		var st temporal.PRState
		st, err = temporal.QueryPRState(ctx, c, run.ID)
		res = st.Result
	}
	if err != nil {
		return fmt.Errorf("pull request run %s on %s: %w", run.ID, run.Meta.Temporal.Address, err)
	}
	return savePR(run, res)
}

// resumePR continues a pull-request run on Temporal: one still going on
// the workers is followed to its end; one stopped, or ended by an error,
// is started again on the server from where it stood (a round under way
// goes on from its task's history); one that ended otherwise is only
// returned.
func resumePR(ctx context.Context, c client.Client, run *store.Run, rp ResumeParts, env local.EnvValue) (local.PRResult, error) {
	var res local.PRResult
	closed, err := temporal.Outcome(ctx, c, run.ID, &res)
	if err != nil {
		return res, fmt.Errorf("pull request run %s on %s: %w", run.ID, run.Meta.Temporal.Address, err)
	}
	p := rp.task(env)
	hooks := local.HooksOf(p, run)
	if closed && res.Resumable() {
		var in temporal.PRInput
		if err := jsonOptions(run, &in); err != nil {
			return res, err
		}
		st, err := temporal.QueryPRState(ctx, c, run.ID)
		if err != nil {
			return res, fmt.Errorf("pull request run %s: read where it stood: %w", run.ID, err)
		}
		if missing := in.Spec.FillEnv(env); len(missing) > 0 {
			return res, local.MissingEnv(run.ID, missing)
		}
		if in.First != nil {
			if missing := in.First.Spec.FillEnv(env); len(missing) > 0 {
				return res, local.MissingEnv(run.ID, missing)
			}
		}
		in.Carry = temporal.ResumedPR(st)
		if err := temporal.SubmitPR(ctx, c, in); err != nil {
			return res, err
		}
		say(p).Progress(fmt.Sprintf("resuming the work on pull request #%d on %s after %s", st.Result.Number, run.Meta.Temporal.Address, plural.N(len(st.Result.Rounds), "round")))
		hooks.Resumed()
		closed = false
	}
	if !closed {
		res, err = temporal.FollowPR(ctx, c, run.ID, prTeller(p, run), time.Second)
		if err != nil {
			return res, err
		}
	}
	if err := savePR(run, res); err != nil {
		return res, err
	}
	if !closed {
		prStopped(p, res)
		hooks.PREnded(res)
	}
	return res, nil
}

// prSubmission is the input of the workflow of pull request n of the
// repository of cfg's directory (on its remote), its rounds made as tasks
// of cfg: what `jlgcli pr N --temporal` sends.
func prSubmission(ctx context.Context, cfg *config.Config, c PRCommand, n int) (temporal.PRInput, error) {
	if cfg.Commit == "direct" {
		return temporal.PRInput{}, cfg.KeyError("commit", "direct cannot be done by Temporal workers: they commit on the task branch on the remote")
	}
	repo, err := local.OpenRepo(ctx, cfg.Cwd)
	if err != nil {
		return temporal.PRInput{}, err
	}
	remote := c.Remote
	if remote == "" {
		remote = "origin"
	}
	url, err := repo.RemoteURL(ctx, remote)
	if err != nil {
		return temporal.PRInput{}, exit.Usagef("add a remote, or name one with --remote", "the pull request's remote %q: %v", remote, err)
	}
	s := local.TaskSpecOf(cfg, "")
	if err := namedBackends(s); err != nil {
		return temporal.PRInput{}, err
	}
	if s.Checks, err = submittedChecks(s.Checks, repo.Dir, url, "", local.TaskChecksHint); err != nil {
		return temporal.PRInput{}, err
	}
	return temporal.PRInput{Repo: url, Number: n, Forge: cfg.Forge, Policy: policyOf(cfg, pull.Green), Spec: s}, nil
}

// taskPRSubmission is the input of the workflow that makes the task of
// prompt, opens its pull request and works it until cfg's target: what
// `jlgcli task --pr --until T --temporal` sends.
func taskPRSubmission(ctx context.Context, cfg *config.Config, sub Submission, prompt string, p local.Parts) (temporal.PRInput, error) {
	if cfg.Merge == "push" {
		return temporal.PRInput{}, cfg.KeyError("merge", "push lands the task on its base; with --until its pull request is the landing")
	}
	first, err := submittedTask(ctx, cfg, sub, prompt, p)
	if err != nil {
		return temporal.PRInput{}, err
	}
	first.MergePush, first.Spec.PR = false, false // the pull request is the landing, opened through the forge
	return temporal.PRInput{RunID: first.RunID, Repo: first.Repo, Forge: cfg.Forge, Policy: policyOf(cfg, ""), Task: prompt,
		Spec: first.Spec, First: &first}, nil
}

// jsonOptions decodes the options run was recorded with into v.
func jsonOptions(run *store.Run, v any) error {
	if err := json.Unmarshal(run.Meta.Options, v); err != nil {
		return fmt.Errorf("run %s: its record cannot be read: %w", run.ID, err)
	}
	return nil
}
