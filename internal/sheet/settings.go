package sheet

import (
	"slices"
	"time"
)

// Settings are the settings of a task that a sheet can override: the
// batch's flags give the defaults, each sheet's front matter what differs.
// A sheet's budget is no setting here: it is the task's, over the batch's
// --task-budget, as its own configuration layer (runs.PlanBatch).
type Settings struct {
	// Backend and Model make one developer tier, Tiers several
	// ("BACKEND[:MODEL]"); all empty: the configured backend.
	Backend string
	Model   string
	Tiers   []string
	// Attempts per tier and step; Checks the gate's command lines; Timeout
	// the task's time limit. Zero values: the configured ones.
	Attempts int
	Checks   []string
	Timeout  time.Duration
}

// Apply returns def with what the sheet sets in its place, and nothing
// else changed. Tiers and backend/model replace each other: a sheet's
// tiers replace the batch's backend and model, and a sheet's backend or
// model replaces the batch's tiers with one tier. A sheet's backend
// without a model drops the batch's model (a model belongs to its
// backend); a model without a backend keeps the batch's backend.
func (s *Sheet) Apply(def Settings) Settings {
	out := def
	out.Tiers, out.Checks = slices.Clone(def.Tiers), slices.Clone(def.Checks)
	if s.Has(FieldTiers) {
		out.Tiers = slices.Clone(s.Tiers)
		out.Backend, out.Model = "", ""
	}
	if s.Set&(FieldBackend|FieldModel) != 0 {
		out.Tiers = nil
		if s.Has(FieldBackend) {
			out.Backend, out.Model = s.Backend, ""
		}
		if s.Has(FieldModel) {
			out.Model = s.Model
		}
	}
	if s.Has(FieldAttempts) {
		out.Attempts = s.Attempts
	}
	if s.Has(FieldChecks) {
		out.Checks = slices.Clone(s.Checks)
	}
	if s.Has(FieldTimeout) {
		out.Timeout = s.Timeout
	}
	return out
}
