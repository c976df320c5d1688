package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/detect"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/guard"
	"github.com/jlgcli/jlgcli/internal/store"
)

// settings are what a loop run was started with, kept in its meta.json so
// that resume runs it again the same way.
type settings struct {
	Backend         string             `json:"backend"`
	Command         *agent.CommandSpec `json:"command,omitempty"` // for a command backend
	Model           string             `json:"model,omitempty"`
	Cwd             string             `json:"cwd"`
	Env             []string           `json:"env,omitempty"`
	MaxIterations   int                `json:"maxIterations"`
	TimeoutMs       int64              `json:"timeoutMs"`
	CompletionMode  string             `json:"completionMode"`
	Marker          string             `json:"marker"`
	NoProgressLimit int                `json:"noProgressLimit"`
	StallTimeoutMs  int64              `json:"stallTimeoutMs"`
	MaxWaitMs       int64              `json:"maxWaitMs"`
	Session         string             `json:"session"`
	Handoff         bool               `json:"handoff,omitempty"`
	Checks          []gate.Check       `json:"checks,omitempty"`
	Baseline        bool               `json:"baseline,omitempty"`
	Checklist       string             `json:"checklist,omitempty"`
	Premature       config.Premature   `json:"premature"`
}

func settingsOf(cfg *config.Config, backend string) settings {
	s := settings{
		Backend: backend, Model: cfg.Model, Cwd: cfg.Cwd, Env: cfg.EnvList(),
		MaxIterations: cfg.MaxIterations, TimeoutMs: cfg.Timeout.Milliseconds(),
		CompletionMode: string(cfg.CompletionMode), Marker: cfg.Marker, NoProgressLimit: cfg.NoProgressLimit,
		StallTimeoutMs: cfg.StallTimeout.Milliseconds(), MaxWaitMs: cfg.MaxWait.Milliseconds(),
		Session: cfg.Session, Handoff: cfg.Handoff, Baseline: cfg.Baseline, Checklist: cfg.Checklist, Premature: cfg.Premature,
	}
	if c, ok := cfg.Backends[backend]; ok {
		s.Command = &c
	}
	s.Checks = gateChecks(cfg.Checks)
	return s
}

// gateChecks are the configured checks as the gate runs them.
func gateChecks(checks []config.Check) []gate.Check {
	var out []gate.Check
	for _, c := range checks {
		out = append(out, gate.Check{Name: c.Name, Argv: c.Run, Shell: c.Shell, Timeout: c.Timeout})
	}
	return out
}

// options are the engine options of these settings.
func (s settings) options(runID, prompt string) engine.Options {
	return engine.Options{
		RunID:           runID,
		Prompt:          prompt,
		Model:           s.Model,
		Dir:             s.Cwd,
		Env:             s.Env,
		MaxIterations:   s.MaxIterations,
		Timeout:         time.Duration(s.TimeoutMs) * time.Millisecond,
		Completion:      completionMode(s.CompletionMode),
		Marker:          s.Marker,
		NoProgressLimit: s.NoProgressLimit,
		StallTimeout:    time.Duration(s.StallTimeoutMs) * time.Millisecond,
		MaxWait:         time.Duration(s.MaxWaitMs) * time.Millisecond,
		Session:         s.Session,
		Handoff:         s.Handoff,
	}
}

// guards builds the guards of done: premature stop, checklist, checks.
// The checks run with the agents' environment, tag included, so that resume
// finds them too when jlgcli was killed during a check.
func (s settings) guards(baseline *gate.Result, env []string) ([]engine.Guard, error) {
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
		gs = append(gs, &guard.Checks{Dir: s.Cwd, Env: env, Checks: s.Checks, Baseline: baseline})
	}
	return gs, nil
}

// journal keeps a run in its store directory and the index.
type journal struct {
	run *store.Run
	idx *store.Index // nil when the index could not be opened
}

func (j journal) Record(ev engine.Event) error { return j.run.Append(store.Event(ev)) }

func (j journal) Checkpoint(cp engine.Checkpoint) error { return j.checkpoint(cp) }

func (j journal) CheckpointTask(cp engine.TaskCheckpoint) error { return j.checkpoint(cp) }

// checkpoint writes a loop's or a task's checkpoint and indexes the run.
func (j journal) checkpoint(cp any) error {
	if err := j.run.WriteCheckpoint(cp); err != nil {
		return err
	}
	if j.idx != nil {
		if row, err := j.run.Row(); err == nil {
			_ = j.idx.Upsert(row) // the index is a cache; the directory is the truth
		}
	}
	return nil
}

func (j journal) Output(i int) io.WriteCloser {
	w, err := j.run.Output(i)
	if err != nil {
		return nil
	}
	return w
}

// eventBaseline is the journal event that holds the checks' baseline.
const eventBaseline = "baseline"

// stateRoot is where runs are kept for a command run in dir.
func stateRoot(stdio *Stdio, dir, override string) (string, error) {
	root, err := store.StateDir(dir, stdio.getenv, override)
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	return root, nil
}

// startLoop runs a new persistent loop.
func startLoop(ctx context.Context, stdio *Stdio, cfg *config.Config, a agent.Agent, prompt string) (engine.Result, error) {
	s := settingsOf(cfg, a.Name())
	if s.Checklist != "" {
		if _, err := os.Stat(s.Checklist); err != nil {
			return engine.Result{}, &hintError{usagef("--checklist %s: %v", s.Checklist, errors.Unwrap(err)),
				"create the checklist first: done is refused while it has unchecked '- [ ]' items"}
		}
	}
	if _, err := s.guards(nil, nil); err != nil {
		return engine.Result{}, err
	}
	root, err := stateRoot(stdio, s.Cwd, cfg.StateDir)
	if err != nil {
		return engine.Result{}, err
	}
	opts, _ := json.Marshal(s)
	id := store.NewRunID(time.Now())
	run, err := store.Create(root, id, store.Meta{Command: "loop", Backend: a.Name(), Prompt: prompt, Options: opts, Cwd: s.Cwd})
	if err != nil {
		return engine.Result{}, fmt.Errorf("create run: %w", err)
	}
	defer run.Close()
	j := openJournal(stdio, root, run)
	defer j.close()

	baseline, err := takeBaseline(ctx, stdio, cfg.Quiet, s, run, j.journal)
	if err != nil {
		return engine.Result{}, err
	}
	return runLoop(ctx, stdio, cfg.Quiet, a, s, run, j.journal, prompt, baseline, nil)
}

// takeBaseline runs the checks once before the first iteration when the run
// asks for a baseline, and records it in the journal. A baseline cut short
// (Ctrl-C) is not recorded: resume takes it again. It returns nil when there
// is none to take.
func takeBaseline(ctx context.Context, stdio *Stdio, quiet bool, s settings, run *store.Run, j journal) (*gate.Result, error) {
	if !s.Baseline || len(s.Checks) == 0 {
		return nil, nil
	}
	if !quiet {
		fmt.Fprintf(stdio.Err, "jlgcli: running %d check(s) for the baseline\n", len(s.Checks))
	}
	env := append(slices.Clip(s.Env), runTag(run.ID))
	baseline := gate.Baseline(ctx, s.Cwd, env, s.Checks)
	if baseline.Interrupted || ctx.Err() != nil {
		return nil, nil
	}
	data, _ := json.Marshal(baseline)
	if err := j.Record(engine.Event{Type: eventBaseline, Time: time.Now(), Data: data}); err != nil {
		return nil, fmt.Errorf("record the baseline: %w", err)
	}
	return baseline, nil
}

// runLoop runs (or resumes) a persistent loop on its journal.
func runLoop(ctx context.Context, stdio *Stdio, quiet bool, a agent.Agent, s settings, run *store.Run, j journal,
	prompt string, baseline *gate.Result, resume *engine.Resume) (engine.Result, error) {
	o := s.options(run.ID, prompt)
	// The tag lets resume find agents (and checks) orphaned when jlgcli
	// was killed.
	o.Env = append(slices.Clip(o.Env), runTag(run.ID))
	guards, err := s.guards(baseline, o.Env)
	if err != nil {
		return engine.Result{}, err
	}
	o.Guards = guards
	o.Journal = j
	o.Resume = resume
	if s.Handoff {
		o.ProgressFile = filepath.Join(run.Dir, "progress.md")
	}
	var progress interface{ Close() }
	if !quiet {
		p := newProgress(stdio)
		o.Observer, progress = p, p
	}
	res := engine.Run(ctx, a, o)
	if progress != nil {
		progress.Close()
	}
	if resumable(res.Status) {
		fmt.Fprintf(stdio.Err, "jlgcli: run %s stopped (%s); continue it with: jlgcli resume %s\n", run.ID, res.Status, run.ID)
	}
	return res, nil
}

// runTag is the environment entry that marks a run's agents.
func runTag(id string) string { return "JLGCLI_RUN_ID=" + id }

// resumable tells the statuses after which resume has something to do.
func resumable(s engine.Status) bool {
	switch s {
	case engine.StatusInterrupted, engine.StatusTimeout, engine.StatusRateLimited, engine.StatusMaxIterations, engine.StatusNoProgress:
		return true
	}
	return false
}

type openedJournal struct {
	journal
}

func (j openedJournal) close() {
	if j.idx != nil {
		j.idx.Close()
	}
}

// openJournal opens the index beside run; without one the run goes on and
// `runs` rebuilds the index later.
func openJournal(stdio *Stdio, root string, run *store.Run) openedJournal {
	idx, err := store.OpenIndex(root)
	if err != nil {
		fmt.Fprintf(stdio.Err, "jlgcli: warning: run index: %v (the run is kept; 'jlgcli runs' rebuilds the index)\n", err)
		idx = nil
	}
	return openedJournal{journal{run: run, idx: idx}}
}
