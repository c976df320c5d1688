package local

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/store"
)

// The extra environment of a run's agents (--env, [env], a tier's env) may
// hold secrets: a run's meta.json keeps only its names (Recorded), and the
// values are given again (fillEnv) each time the run's settings are read
// back, by Parts.EnvValue: resume's --env, the configuration files, the
// environment.

// EnvValue gives the value of the variable name of the environment of tier
// ("" for the run's own --env and [env]); ok is false when it has none.
type EnvValue func(tier, name string) (value string, ok bool)

// Recorded is the spec as meta.json keeps it: the names of its
// environment, not their values.
func (s LoopSpec) Recorded() LoopSpec {
	s.Env = engine.EnvNames(s.Env)
	return s
}

// Recorded is the spec as meta.json keeps it: the names of its
// environment and of its tiers', not their values.
func (s TaskSpec) Recorded() TaskSpec {
	s.Env = engine.EnvNames(s.Env)
	s.Tiers = slices.Clone(s.Tiers)
	for i := range s.Tiers {
		s.Tiers[i].Env = engine.EnvNames(s.Tiers[i].Env)
	}
	if s.Planner != nil {
		pl := *s.Planner
		pl.Env = engine.EnvNames(pl.Env)
		s.Planner = &pl
	}
	if s.Reviewer != nil {
		rv := *s.Reviewer
		rv.Env = engine.EnvNames(rv.Env)
		s.Reviewer = &rv
	}
	return s
}

// Recorded is the spec as meta.json keeps it: each task's Recorded.
func (s BatchSpec) Recorded() BatchSpec {
	s.Tasks = slices.Clone(s.Tasks)
	for i := range s.Tasks {
		s.Tasks[i].Spec = s.Tasks[i].Spec.Recorded()
	}
	return s
}

// fillEnv gives each name of env (of tier) its value; an entry that holds
// its value (a run recorded before values were left out) is kept. It adds
// the names without a value to missing.
func fillEnv(env []string, tier string, value EnvValue, missing map[string]bool) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.Contains(kv, "=") {
			out = append(out, kv)
			continue
		}
		if v, ok := value(tier, kv); ok {
			out = append(out, kv+"="+v)
		} else {
			missing[kv] = true
		}
	}
	if env == nil {
		return nil
	}
	return out
}

// FillEnv gives the environment of the spec its values; it returns the
// names that have none.
func (s *LoopSpec) FillEnv(value EnvValue) (missing []string) {
	m := map[string]bool{}
	s.Env = fillEnv(s.Env, "", value, m)
	return slices.Sorted(maps.Keys(m))
}

// FillEnv gives the environment of the spec and of its tiers their values;
// it returns the names that have none.
func (s *TaskSpec) FillEnv(value EnvValue) (missing []string) {
	m := map[string]bool{}
	s.fillEnv(value, m)
	return slices.Sorted(maps.Keys(m))
}

func (s *TaskSpec) fillEnv(value EnvValue, missing map[string]bool) {
	s.Env = fillEnv(s.Env, "", value, missing)
	s.Tiers = slices.Clone(s.Tiers)
	for i := range s.Tiers {
		s.Tiers[i].Env = fillEnv(s.Tiers[i].Env, s.Tiers[i].Name, value, missing)
	}
	if s.Planner != nil {
		pl := *s.Planner
		pl.Env = fillEnv(pl.Env, pl.Name, value, missing)
		s.Planner = &pl
	}
	if s.Reviewer != nil {
		rv := *s.Reviewer
		rv.Env = fillEnv(rv.Env, rv.Name, value, missing)
		s.Reviewer = &rv
	}
}

// FillEnv gives the environment of every task of the batch its values; it
// returns the names that have none.
func (s *BatchSpec) FillEnv(value EnvValue) (missing []string) {
	m := map[string]bool{}
	s.Tasks = slices.Clone(s.Tasks)
	for i := range s.Tasks {
		s.Tasks[i].Spec.fillEnv(value, m)
	}
	return slices.Sorted(maps.Keys(m))
}

// MissingEnv is the usage error of a run whose recorded environment names
// have no value now.
func MissingEnv(runID string, missing []string) error {
	flags := make([]string, len(missing))
	for i, k := range missing {
		flags[i] = "--env " + k + "=VALUE"
	}
	return exit.Usagef("give it again: jlgcli resume "+strings.Join(flags, " ")+" "+runID+" (or set it in [env] of the configuration, or in the environment)",
		"run %s needs the value of %s, which jlgcli does not keep: it was given with --env or [env] when the run started", runID, strings.Join(missing, ", "))
}

// envSpec is a spec whose environment values are given again when it is
// read back.
type envSpec interface {
	FillEnv(value EnvValue) []string
}

// settings reads the spec run was started with into v, its environment's
// values given again by p (see EnvValue): a usage error names those
// missing.
func settings(run *store.Run, v envSpec, p Parts) error {
	if err := json.Unmarshal(run.Meta.Options, v); err != nil {
		return fmt.Errorf("run %s: its settings cannot be read: %w", run.ID, err)
	}
	if missing := v.FillEnv(p.envValue); len(missing) > 0 {
		return MissingEnv(run.ID, missing)
	}
	return nil
}

// envValue is p.EnvValue, else jlgcli's environment.
func (p Parts) envValue(tier, name string) (string, bool) {
	if p.EnvValue != nil {
		return p.EnvValue(tier, name)
	}
	v := p.getenv(name)
	return v, v != ""
}
