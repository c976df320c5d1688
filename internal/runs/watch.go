package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/jlgcli/jlgcli/internal/batch"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/forge"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/intake"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// The watch of a forge's issues on Temporal (batch --issues --watch
// --temporal): a workflow of its own (temporal.IssueWatchWorkflow), kept
// here as a batch run whose summary holds the tasks of all the batches it
// ran, so that runs, show, report, stop and resume take it as a batch.

// watchLayers is the configuration a watch plans its batches with: lc's
// layers as they were resolved here (the user file, the project file as
// trusted here, the environment, the command's flags), without their
// hooks, which fire where the watch is followed.
func watchLayers(lc Config) []*config.Layer {
	flags := lc.Flags
	if flags == nil {
		flags = &config.Layer{Name: "flag"}
	}
	var out []*config.Layer
	for _, l := range append(append([]*config.Layer(nil), lc.Base...), flags) {
		if l == nil {
			continue
		}
		cp := *l
		cp.Hooks, cp.HookTimeout = nil, nil
		out = append(out, &cp)
	}
	return out
}

// firstLook reads the tracker of the repository at url once, from the
// submitter, when it holds a token for it: a token the forge refuses, a
// forge that cannot be reached or a query it refuses end the submission
// here, with the reason, rather than in looks the workers retry. Without a
// token here (the workers have their own), it says that nothing was
// checked.
func firstLook(ctx context.Context, url string, src local.IssueSource, q forge.IssueQuery, p local.Parts) error {
	t, err := forge.Resolve(url, src.Forge)
	if err != nil {
		return err
	}
	o := forge.Options{Getenv: getenv(p)}
	if _, _, err := forge.Token(t, src.Forge.TokenEnv, o); err != nil {
		say(p).Notice(fmt.Sprintf("the issues are not read here (%v): the workers read them with their own token", err))
		return nil
	}
	f, err := forge.OpenTarget(ctx, t, src.Forge.TokenEnv, o)
	if err == nil {
		_, err = f.Issues(ctx, q)
	}
	if err != nil {
		return fmt.Errorf("the issues of %s: %w", t.Repo, trackerError(err, src))
	}
	return nil
}

// submitWatch sends the watch of the command's query to the Temporal
// server of lc, keeps a local record of it (a batch), and follows it
// until it is stopped (jlgcli stop; a Ctrl-C only stops following): its
// summary; with Detach it returns once submitted. The tracker is read here
// once at most (firstLook); the workers read it with their own token. What
// a batch sent to Temporal needs is checked now: backends named, checks
// configured or detected in this checkout.
func submitWatch(ctx context.Context, f Front, lc Config, c BatchCommand) (string, *batch.Summary, error) {
	cfg := lc.Config
	p := withEnv(f.Parts(cfg.Quiet, false, false), cfg)
	if err := checkTemporal(cfg, c.Submission); err != nil {
		return "", nil, err
	}
	q, err := intake.ParseQuery(c.Issues)
	if err != nil {
		return "", nil, err
	}
	s := local.TaskSpecOf(cfg, "")
	if err := namedBackends(s); err != nil {
		return "", nil, err
	}
	url, base, checkout, err := remoteOf(ctx, cfg, c.RepoURL, c.Base)
	if err != nil {
		return "", nil, err
	}
	var checks []gate.Check
	if len(s.Checks) == 0 {
		if checks, err = submittedChecks(nil, checkout, url, "", local.BatchChecksHint); err != nil {
			return "", nil, err
		}
	}
	if err := firstLook(ctx, url, issueSource(cfg, q, c.Remote), q, p); err != nil {
		return "", nil, err
	}
	t := cfg.Temporal
	id := store.NewRunID(time.Now())
	in := temporal.WatchInput{RunID: id, Repo: url, Base: base, Query: c.Issues, Source: issueSource(cfg, q, c.Remote),
		Config:    temporal.WatchConfig{Layers: watchLayers(lc), FailFast: c.FailFast, BudgetUSD: c.BudgetUSD, Plan: c.Plan, Checks: checks},
		MergePush: cfg.Merge == git.MergePush, Queue: t.TaskQueue, WorkerWaitMs: millis.Of(t.WorkerWait), HeartbeatMs: millis.Of(c.Heartbeat)}
	if len(s.WindowLimits) > 0 {
		in.Windows = knownWindows(p, cfg)
	}
	tc, err := Dial(ctx, temporal.ConnectionOf(cfg, getenv(p)))
	if err != nil {
		return "", nil, err
	}
	defer tc.Close()
	if err := temporal.SubmitWatch(ctx, tc, in); err != nil {
		return "", nil, err
	}
	rec := in // the record keeps the environment's names only
	rec.Config = in.Config.Recorded()
	run := keepRecord(p, cfg, id, "batch", "", "watch of the issues "+c.Issues, rec)
	if run != nil {
		defer run.Close()
	}
	if c.Detach {
		return id, nil, nil
	}
	say(p).Notice(fmt.Sprintf("watch %s of the issues %s submitted to %s (queue %s): the workers take them, each batch a run %s-b<n>; jlgcli stop %s ends it",
		id, c.Issues, t.Address, t.TaskQueue, id, id))
	hooks := local.HooksOf(p, run)
	hooks.Started()
	sum, err := followWatch(ctx, tc, p, run, id, f.TaskChanged)
	if err := followed(ctx, p, "watch", id, err, run, func() error { return saveBatch(run, sum) }); err != nil {
		return id, nil, err
	}
	if n := local.StoppedBatch(id, sum.Status); n != "" {
		say(p).Notice(n)
	}
	hooks.BatchEnded(sum)
	return id, &sum, nil
}

// followWatch follows watch id until it ends, as a batch is followed:
// each task of its batches gets a local record under the watch (whose
// settings the watch's query gives, while its batch is under way),
// changed (nil: nobody) is told of each task whose status changes.
func followWatch(ctx context.Context, c client.Client, p local.Parts, run *store.Run, id string, changed func(batch.TaskSummary)) (batch.Summary, error) {
	tasks := &batchTasks{ctx: ctx, c: c, p: p, in: temporal.BatchInput{RunID: id}, changed: changed,
		inputOf: func(task string) (temporal.BatchInput, bool) {
			st, err := temporal.QueryWatchState(ctx, c, id)
			in := temporal.BatchInput{}
			switch b, ok := temporal.WatchBatchOf(id, task); {
			case err == nil && st.Current != nil && st.Current.RunID == b:
				in = *st.Current
			case ok:
				// Its batch ended between two looks of the follower: its
				// input is in its history.
				if in, err = temporal.StartedBatchInput(ctx, c, b); err != nil {
					return in, false
				}
			default:
				return in, false
			}
			in.RunID = id // the records' parent: the watch
			return in, true
		}}
	if run != nil {
		tasks.root, tasks.meta = run.Root(), run.Meta
	}
	sum, err := temporal.FollowWatch(ctx, c, id, tasks.change, time.Second)
	tasks.wait()
	return sum, err
}

// resumeWatch goes on with a watch on Temporal: one still running is
// followed; one that was stopped starts again on the server from where it
// stood, the batch it stopped under way resumed first as `jlgcli resume`
// resumes a batch (its done tasks kept, its stopped ones going on from
// their history). env gives the values of its recorded environment names.
func resumeWatch(ctx context.Context, c client.Client, run *store.Run, rp ResumeParts, env local.EnvValue) (batch.Summary, error) {
	addr := run.Meta.Temporal.Address
	hooks := local.HooksOf(rp.Parts, run)
	var sum batch.Summary
	closed, err := temporal.Outcome(ctx, c, run.ID, &sum)
	if err != nil {
		return sum, fmt.Errorf("watch %s on %s: %w", run.ID, addr, err)
	}
	if closed {
		var in temporal.WatchInput
		if err := json.Unmarshal(run.Meta.Options, &in); err != nil {
			return sum, fmt.Errorf("run %s: its record cannot be read: %w", run.ID, err)
		}
		if missing := in.Config.FillEnv(env); len(missing) > 0 {
			return sum, local.MissingEnv(run.ID, missing)
		}
		st, err := temporal.QueryWatchState(ctx, c, run.ID)
		if err != nil {
			return sum, fmt.Errorf("watch %s on %s: read where it stood: %w", run.ID, addr, err)
		}
		var cur *batch.Summary
		var again *temporal.BatchResume
		if st.Current != nil {
			var cs batch.Summary
			ended, err := temporal.Outcome(ctx, c, st.Current.RunID, &cs)
			var nf *serviceerror.NotFound
			switch {
			case err != nil && !errors.As(err, &nf): // not found: it never started, and starts now
				return sum, fmt.Errorf("batch %s of watch %s on %s: %w", st.Current.RunID, run.ID, addr, err)
			case err == nil && ended:
				cur = &cs
				if cs.Status != string(batch.BatchDone) {
					if again, err = temporal.ResumeBatchOf(ctx, c, cs, st.Current.Spec.PR != nil); err != nil {
						return sum, fmt.Errorf("batch %s of watch %s on %s: %w", st.Current.RunID, run.ID, addr, err)
					}
				}
			}
		}
		in.Carry = temporal.ResumedWatch(st, cur, again)
		if err := temporal.SubmitWatch(ctx, c, in); err != nil {
			return sum, err
		}
		say(rp.Parts).Progress(fmt.Sprintf("resuming the watch %s of the issues %s on %s after %d looks and %d batches", run.ID, in.Query, addr, st.Looks, st.Started))
		hooks.Resumed()
	} else {
		say(rp.Parts).Progress(fmt.Sprintf("following the watch %s on %s", run.ID, addr))
	}
	sum, err = followWatch(ctx, c, rp.Parts, run, run.ID, nil)
	if err != nil {
		return sum, err
	}
	if err := saveBatch(run, sum); err != nil {
		return sum, err
	}
	if n := local.StoppedBatch(run.ID, sum.Status); n != "" {
		say(rp.Parts).Notice(n)
	}
	hooks.BatchEnded(sum)
	return sum, nil
}

// LookIssues is a look of a watch on Temporal, on a worker
// (temporal.PlanIssues): the issues of the query that f, the worker's
// tracker, holds are taken (TakeIssues: claimed, outcome labels and open
// dependencies left out, settings only from writers) and planned as a
// batch over the configuration the watch was submitted with, as the
// submitter would plan them (PlanBatch), their checks those detected at
// submission when none is configured. A setting refused is an
// *exit.UsageError; an error of the tracker is returned as it is.
func LookIssues(ctx context.Context, f forge.Forge, in temporal.WatchLookInput, warn func(string)) (temporal.WatchLook, error) {
	q, err := intake.ParseQuery(in.Query)
	if err != nil {
		return temporal.WatchLook{}, err
	}
	n := len(in.Config.Layers)
	if n == 0 {
		return temporal.WatchLook{}, usagef("the watch carries no configuration to plan its batches with")
	}
	lc := Config{Base: in.Config.Layers[:n-1], Flags: in.Config.Layers[n-1]}
	if lc.Config, err = lc.Resolve(lc.Flags); err != nil {
		return temporal.WatchLook{}, &exit.UsageError{Err: err}
	}
	taken, err := TakeIssues(ctx, f, q, lc.Trust, warn)
	if err != nil {
		return temporal.WatchLook{}, err
	}
	look := temporal.WatchLook{Left: taken.Left}
	if len(taken.Sheets) == 0 {
		return look, nil
	}
	p := local.Parts{Say: warner(warn)}
	b := Batch{Sheets: taken.Sheets, Base: in.Base, FailFast: in.Config.FailFast, BudgetUSD: in.Config.BudgetUSD, Plan: in.Config.Plan}
	plan, err := planTaken(lc, taken, in.Source, b, p)
	if err != nil {
		return look, &exit.UsageError{Err: err}
	}
	spec := plan.Spec
	if lc.Until != "" {
		if err := landByPR(ctx, lc.Config, nil, &spec, p); err != nil {
			return look, &exit.UsageError{Err: err}
		}
	}
	for i := range spec.Tasks {
		t := &spec.Tasks[i]
		if err := namedBackends(t.Spec); err != nil {
			return look, fmt.Errorf("task %s (%s): %w", t.ID, t.File, err)
		}
		if len(t.Spec.Checks) == 0 {
			if len(in.Config.Checks) == 0 {
				return look, usagef("task %s (%s): no checks to judge its work with: none configured, none detected at submission", t.ID, t.File)
			}
			t.Spec.Checks = in.Config.Checks
		}
	}
	spec.Repo, spec.BaseBranch = in.Repo, in.Base
	look.Spec = &spec
	return look, nil
}

// warner is a reporter that tells warn each message.
type warner func(string)

func (w warner) Progress(s string) { w(s) }
func (w warner) Notice(s string)   { w(s) }
func (w warner) Warn(s string)     { w(s) }
