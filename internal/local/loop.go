package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/guard"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/store"
)

// LoopSpec is what a loop runs with: the resolved settings, kept in its
// run's meta.json so that resume runs it again the same way.
type LoopSpec struct {
	Backend         string             `json:"backend"`
	Command         *agent.CommandSpec `json:"command,omitempty"` // for a command backend
	Model           string             `json:"model,omitempty"`
	Cwd             string             `json:"cwd"`
	Env             []string           `json:"env,omitempty"`
	MaxIterations   int                `json:"maxIterations"`
	TimeoutMs       millis.Duration    `json:"timeoutMs"`
	CompletionMode  string             `json:"completionMode"`
	Marker          string             `json:"marker"`
	NoProgressLimit int                `json:"noProgressLimit"`
	StallTimeoutMs  millis.Duration    `json:"stallTimeoutMs"`
	MaxWaitMs       millis.Duration    `json:"maxWaitMs"`
	// WindowLimits are --window-limit and the backends' own (percent).
	WindowLimits engine.WindowLimits `json:"windowLimits,omitempty"`
	Session      engine.Session      `json:"session"`
	Handoff      bool                `json:"handoff,omitempty"`
	Checks       []gate.Check        `json:"checks,omitempty"`
	Baseline     bool                `json:"baseline,omitempty"`
	Checklist    string              `json:"checklist,omitempty"`
	Premature    config.Premature    `json:"premature"`
	Sandbox      sandbox.Config      `json:"sandbox,omitzero"`
}

// LoopSpecOf makes the spec of a loop of backend from the configuration.
func LoopSpecOf(cfg *config.Config, backend string) LoopSpec {
	s := LoopSpec{
		Backend: backend, Model: cfg.Model, Cwd: cfg.Cwd, Env: cfg.EnvList(),
		MaxIterations: cfg.MaxIterations, TimeoutMs: millis.Of(cfg.Timeout),
		CompletionMode: string(cfg.CompletionMode), Marker: cfg.Marker, NoProgressLimit: cfg.NoProgressLimit,
		StallTimeoutMs: millis.Of(cfg.StallTimeout), MaxWaitMs: millis.Of(cfg.MaxWait), WindowLimits: cfg.WindowLimitsOf(),
		Session: cfg.Session, Handoff: cfg.Handoff, Baseline: cfg.Baseline, Checklist: cfg.Checklist, Premature: cfg.Premature,
		Sandbox: cfg.Sandbox,
	}
	if c, ok := cfg.Backends[backend]; ok {
		s.Command = &c
	}
	s.Checks = GateChecks(cfg.Checks)
	return s
}

// Options are the engine options of the spec, for a run of prompt.
func (s LoopSpec) Options(runID, prompt string) engine.Options {
	mode, err := completion.ParseMode(s.CompletionMode)
	if err != nil {
		mode = completion.ModeMarker
	}
	return engine.Options{
		RunID:           runID,
		Prompt:          prompt,
		Model:           s.Model,
		Dir:             s.Cwd,
		Env:             s.Env,
		MaxIterations:   s.MaxIterations,
		Timeout:         s.TimeoutMs.Duration(),
		Completion:      mode,
		Marker:          s.Marker,
		NoProgressLimit: s.NoProgressLimit,
		StallTimeout:    s.StallTimeoutMs.Duration(),
		MaxWait:         s.MaxWaitMs.Duration(),
		WindowLimits:    s.WindowLimits,
		Session:         s.Session,
		Handoff:         s.Handoff,
	}
}

// guards builds the guards of done: premature stop, checklist, checks.
// The checks run with the agents' environment, tag included, so that resume
// finds them too when jlgcli was killed during a check, and in the run's
// sandbox box (nil: none).
func (s LoopSpec) guards(baseline *gate.Result, env []string, box *sandbox.Box) ([]engine.Guard, error) {
	var gs []engine.Guard
	if s.Premature.Enabled {
		p := detect.NewPremature(s.Premature.Phrases, s.Premature.Negations)
		if err := p.Validate(); err != nil {
			return nil, &config.Error{Source: "configuration", Key: "prematureStop", Msg: err.Error()}
		}
		gs = append(gs, &guard.Premature{Detector: p})
	}
	if s.Checklist != "" {
		gs = append(gs, &guard.Checklist{File: s.Checklist})
	}
	if len(s.Checks) > 0 {
		gs = append(gs, &guard.Checks{Dir: s.Cwd, Env: env, Checks: s.Checks, Baseline: baseline, Box: box})
	}
	return gs, nil
}

// EventBaseline is the journal event that holds a loop's checks' baseline.
const EventBaseline = "baseline"

// StartLoop creates a persistent loop run of agent a and runs it.
func StartLoop(ctx context.Context, s LoopSpec, a agent.Agent, prompt, stateDir string, p Parts) (engine.Result, error) {
	if s.Checklist != "" {
		if _, err := os.Stat(s.Checklist); err != nil {
			return engine.Result{}, exit.Usagef("create the checklist first: done is refused while it has unchecked '- [ ]' items",
				"--checklist %s: %v", s.Checklist, errors.Unwrap(err))
		}
	}
	if _, err := s.guards(nil, nil, nil); err != nil {
		return engine.Result{}, err
	}
	root, err := StateRoot(p, s.Cwd, stateDir)
	if err != nil {
		return engine.Result{}, err
	}
	id := store.NewRunID(time.Now())
	box, confined, err := Confine(s.Sandbox, p, LoopSite(root, s.Cwd, id))
	if err != nil {
		return engine.Result{}, err
	}
	opts, _ := json.Marshal(s.Recorded())
	run, err := store.Create(root, id, store.Meta{Command: "loop", Backend: a.Name(), Prompt: prompt, Options: opts, Cwd: s.Cwd, Sandbox: &confined})
	if err != nil {
		return engine.Result{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	j := openJournal(p, root, run)
	defer j.close()
	baseline, err := s.takeBaseline(ctx, p, run, j, box)
	if err != nil {
		return engine.Result{}, err
	}
	return s.run(ctx, p, a, run, j, prompt, baseline, nil, box)
}

// ResumeLoop continues a loop run where its journal stopped. The caller
// holds the run's lock. A run already done is returned as it is, with done
// true.
func ResumeLoop(ctx context.Context, root string, run *store.Run, events []engine.Event, limits Limits, p Parts) (res engine.Result, done bool, err error) {
	st, transcript, stop, err := engine.Replay(events)
	if err != nil {
		return engine.Result{}, false, fmt.Errorf("run %s: %w", run.ID, err)
	}
	// Time used in an iteration cut short by a kill is in the checkpoint's
	// heartbeat, not in the journal: count it.
	var cp engine.Checkpoint
	if run.ReadCheckpoint(&cp) == nil && cp.State.Iterations == st.Iterations && cp.State.ElapsedMs > st.ElapsedMs {
		st.ElapsedMs = cp.State.ElapsedMs
	}
	if stop != nil && stop.Status == engine.StatusDone {
		res, err := engine.ResultOf(run.ID, run.Meta.Backend, events)
		if err == nil {
			// Killed after its stop was journaled, before its last
			// checkpoint: the checkpoint and the index say so now.
			cp := engine.Checkpoint{RunID: run.ID, State: st, Progress: store.Progress{Status: string(res.Status),
				Iterations: res.Iterations, CostUSD: res.CostUSD, CostKnown: res.CostKnown, DurationMs: res.DurationMs, Heartbeat: time.Now().UTC()}}
			j := openJournal(p, root, run)
			err = j.Checkpoint(cp)
			j.close()
		}
		return res, true, err
	}
	var s LoopSpec
	if err := settings(run, &s, p); err != nil {
		return engine.Result{}, false, err
	}
	if run.Meta.Format < 2 {
		// Loops of format 1 always handed their fresh sessions off: they go
		// on as they started.
		s.Handoff = true
	}
	limits.applyLoop(&s)
	box, _, err := Confine(s.Sandbox, p, LoopSite(root, s.Cwd, run.ID))
	if err != nil {
		return engine.Result{}, false, err
	}
	var commands map[string]agent.CommandSpec
	if s.Command != nil {
		commands = map[string]agent.CommandSpec{s.Backend: *s.Command}
	}
	a, err := p.Registry(commands, s.Env, s.Sandbox.ProjectEnv).Get(s.Backend)
	if err != nil {
		return engine.Result{}, false, &exit.UsageError{Err: err}
	}
	var baseline *gate.Result
	for _, ev := range events {
		if ev.Type == EventBaseline {
			baseline = &gate.Result{}
			if err := json.Unmarshal(ev.Data, baseline); err != nil {
				return engine.Result{}, false, fmt.Errorf("run %s: baseline: %w", run.ID, err)
			}
		}
	}
	p.progress("resuming run %s after %s (%s used)", run.ID, plural.N(st.Iterations, "iteration"),
		st.ElapsedMs.Duration().Round(time.Second))
	j := openJournal(p, root, run)
	defer j.close()
	j.running()
	if baseline == nil && s.Baseline && len(s.Checks) > 0 {
		if st.Iterations > 0 {
			// The agent has changed the tree since: a baseline now would be
			// of its work, not of the repository before it.
			p.warn("run %s has no baseline (it was cut short); every check must pass", run.ID)
		} else if baseline, err = s.takeBaseline(ctx, p, run, j, box); err != nil {
			return engine.Result{}, false, err
		}
	}
	res, err = s.run(ctx, p, a, run, j, run.Meta.Prompt, baseline, &engine.Resume{State: st, Transcript: transcript}, box)
	return res, false, err
}

// takeBaseline runs the checks once before the first iteration, in the
// run's sandbox box, when the run asks for a baseline, and records it in
// the journal. A baseline cut short (Ctrl-C) is not recorded: resume takes
// it again. It returns nil when there is none to take.
func (s LoopSpec) takeBaseline(ctx context.Context, p Parts, run *store.Run, j journal, box *sandbox.Box) (*gate.Result, error) {
	if !s.Baseline || len(s.Checks) == 0 {
		return nil, nil
	}
	p.progress("running %s for the baseline", plural.N(len(s.Checks), "check"))
	env := append(slices.Clip(s.Env), RunTag(run.ID))
	taken := gate.RunIn(ctx, box, s.Cwd, env, s.Checks)
	baseline := &taken
	if baseline.Interrupted || ctx.Err() != nil {
		return nil, nil
	}
	data, _ := json.Marshal(baseline)
	if err := j.Record(engine.Event{Type: EventBaseline, Time: time.Now(), Data: data}); err != nil {
		return nil, fmt.Errorf("record the baseline: %w", err)
	}
	return baseline, nil
}

// run runs (or resumes) a persistent loop on its journal, its agent's
// calls and its checks in its sandbox box (nil: none).
func (s LoopSpec) run(ctx context.Context, p Parts, a agent.Agent, run *store.Run, j journal,
	prompt string, baseline *gate.Result, resume *engine.Resume, box *sandbox.Box) (engine.Result, error) {
	ctx, unwatch := watchStop(ctx, run)
	defer unwatch()
	o := s.Options(run.ID, prompt)
	// The tag lets resume find agents (and checks) orphaned when jlgcli
	// was killed.
	o.Env = append(slices.Clip(o.Env), RunTag(run.ID))
	o.Box = box
	guards, err := s.guards(baseline, o.Env, box)
	if err != nil {
		return engine.Result{}, err
	}
	// In a repository, git's control files are checked around every call
	// and the checks.
	watch, err := loopWatch(ctx, s.Cwd, j.Record, p)
	if err != nil {
		return engine.Result{}, err
	}
	a = watch.agent(a)
	o.Guards, o.CallGuards = watch.guards(guards)
	o.Journal, o.Resume, o.Observer = j, resume, p.LoopObserver
	o.Windows = p.windowBook(o.WindowLimits, j)
	if s.Handoff {
		o.ProgressFile = run.ProgressPath()
	}
	res := engine.Run(ctx, a, o)
	endCaches(box, Resumable(res.Status))
	if c, ok := p.LoopObserver.(interface{ Close() }); ok {
		c.Close()
	}
	if Resumable(res.Status) {
		p.notice("run %s stopped (%s); continue it with: jlgcli resume %s", run.ID, res.Status, run.ID)
	}
	j.hooks.loopEnded(res)
	return res, nil
}
