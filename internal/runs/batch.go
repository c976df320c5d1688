package runs

import (
	"context"
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/git"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sheet"
)

// Batch is a batch to plan: its sheets and its own settings.
type Batch struct {
	Sheets []sheet.Sheet
	// Repo is the repository the tasks run in; "" for a batch sent to a
	// Temporal server (its workers clone the remote).
	Repo string
	// Base is the branch tasks start from and merge into; "": the
	// checked-out one.
	Base     string
	FailFast bool
	// BudgetUSD bounds the cost of the whole batch; 0: none.
	BudgetUSD float64
	// Plan asks each task's planner for steps first.
	Plan bool
}

// LoadSheets loads the task sheets that paths name (sheet.Load), telling
// warn what is amiss in them; one that cannot be read or parsed is a
// *exit.UsageError.
func LoadSheets(paths []string, warn func(string)) ([]sheet.Sheet, error) {
	sheets, warns, err := sheet.Load(paths)
	if err != nil {
		return nil, &exit.UsageError{Err: err}
	}
	for _, w := range warns {
		warn(w.String())
	}
	return sheets, nil
}

// BatchRepo is the repository the tasks of a batch with cfg run in, opened
// (local.OpenRepo): that of cfg's cwd; nil for a batch sent to a Temporal
// server (its workers clone the remote).
func BatchRepo(ctx context.Context, cfg *config.Config) (*git.Repo, error) {
	if cfg.Temporal.Address != "" {
		return nil, nil
	}
	return local.OpenRepo(ctx, cfg.Cwd)
}

// BatchPlan is a batch resolved: its spec, and the levels of its
// dependency graph (the tasks that can run once the levels before are
// done), which a dry run prints.
type BatchPlan struct {
	Spec   local.BatchSpec
	Levels [][]string
}

// PickError is a batch whose sheet File needs the backend picked (Pick)
// when none can be had: Result says why.
type PickError struct {
	File   string
	Result engine.Result
}

func (e *PickError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Result.Status, e.File, e.Result.Details)
}

// PlanBatch resolves each sheet of b over c's layers, read once for the
// batch: the batch's flags (c.Flags), then what the sheet's front matter
// sets. A sheet's single tier without a backend gets the one picked, once
// for the batch (Pick, saying so on p.Say); when none can be had the error
// is a *PickError. An unknown dependency or a cycle is a
// *exit.UsageError.
func PlanBatch(c Config, b Batch, p local.Parts) (BatchPlan, error) {
	spec := local.BatchSpec{Repo: b.Repo, BaseBranch: b.Base, Jobs: c.Jobs, FailFast: b.FailFast, BudgetUSD: b.BudgetUSD}
	picked := "" // the backend picked when none is configured
	for _, s := range b.Sheets {
		l, err := sheetLayer(c.Flags, s)
		if err != nil {
			return BatchPlan{}, err
		}
		cfg, err := c.Resolve(l)
		if err != nil {
			return BatchPlan{}, err
		}
		ts := local.TaskSpecOf(cfg, b.Repo)
		ts.Plan = b.Plan
		if len(ts.Tiers) == 1 && ts.Tiers[0].Backend == "" {
			if picked == "" { // once for the batch, as loop and task pick
				res, a := Pick(cfg, p)
				if a == nil { // backend-missing (2) or backend-unknown (64), as for a task
					return BatchPlan{}, &PickError{File: s.File, Result: res}
				}
				picked = a.Name()
			}
			ts.Tiers[0].Backend, ts.Tiers[0].Name = picked, picked
		}
		deps := s.Depends
		if deps == nil {
			deps = []string{}
		}
		spec.Tasks = append(spec.Tasks, local.BatchTask{ID: s.ID, File: s.File, Title: s.Title, Depends: deps,
			DependsFrom: string(s.DependsFrom), Prompt: s.Body, Spec: ts})
	}
	graph, err := local.BatchGraph(spec.Tasks)
	if err != nil {
		return BatchPlan{}, &exit.UsageError{Err: err}
	}
	return BatchPlan{Spec: spec, Levels: graph.Levels()}, nil
}

// sheetLayer is the layer of sheet s over the batch's flags: the flags,
// with what the front matter sets in their place (sheet.Apply for the
// developer tiers, whose keys replace each other). A sheet's budget is the
// task's, over --task-budget.
func sheetLayer(flags *config.Layer, s sheet.Sheet) (*config.Layer, error) {
	if flags == nil {
		flags = &config.Layer{}
	}
	var def sheet.Settings
	if flags.Backend != nil {
		def.Backend = *flags.Backend
	}
	if flags.Model != nil {
		def.Model = *flags.Model
	}
	for _, t := range flags.Tiers {
		v := t.Backend
		if t.Model != "" {
			v += ":" + t.Model
		}
		def.Tiers = append(def.Tiers, v)
	}
	if flags.Attempts != nil {
		def.Attempts = *flags.Attempts
	}
	def.Checks = flags.ShellChecks
	if flags.TimeoutMs != nil {
		def.Timeout = flags.TimeoutMs.Duration()
	}
	eff := s.Apply(def)
	l := *flags
	l.Name = s.File
	l.Backend, l.Model, l.Tiers, l.Attempts, l.ShellChecks, l.TimeoutMs = nil, nil, nil, nil, eff.Checks, nil
	if eff.Backend != "" {
		l.Backend = &eff.Backend
	}
	if eff.Model != "" {
		l.Model = &eff.Model
	}
	for _, t := range eff.Tiers {
		backend, model, _ := strings.Cut(t, ":")
		if backend == "" {
			return nil, &exit.UsageError{Err: fmt.Errorf("%s: tier %q: want BACKEND[:MODEL]", s.File, t)}
		}
		l.Tiers = append(l.Tiers, config.TierLayer{Name: config.TierName(t), Backend: backend, Model: model})
	}
	if s.Set&(sheet.FieldBackend|sheet.FieldModel) != 0 && len(eff.Tiers) == 0 {
		// The sheet's backend or model is its one tier, over any [[tiers]].
		name := eff.Backend
		if eff.Model != "" {
			name += ":" + eff.Model
		}
		l.Tiers = []config.TierLayer{{Name: config.TierName(name), Backend: eff.Backend, Model: eff.Model}}
	}
	if eff.Attempts > 0 {
		l.Attempts = &eff.Attempts
	}
	if s.Has(sheet.FieldBudget) {
		l.BudgetUSD = &s.BudgetUSD
	}
	if eff.Timeout > 0 {
		ms := millis.Of(eff.Timeout)
		l.TimeoutMs = &ms
	}
	if s.Has(sheet.FieldEditTests) {
		l.EditTests = &s.EditTests
	}
	if s.Has(sheet.FieldReview) {
		backend, model, _ := strings.Cut(s.Review, ":")
		l.Review = &config.PlannerLayer{Backend: backend, Model: model}
	}
	return &l, nil
}
