package local

import (
	"fmt"

	"github.com/jlgcli/jlgcli/internal/millis"
	"github.com/jlgcli/jlgcli/internal/sandbox"
	"github.com/jlgcli/jlgcli/internal/taskengine"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/gate"
	"github.com/jlgcli/jlgcli/internal/git"
)

// TaskSpec is what a task runs with: the resolved settings, kept in its
// run's meta.json so that resume runs it again the same way.
type TaskSpec struct {
	Tiers   []TierSpec `json:"tiers"`
	Planner *TierSpec  `json:"planner,omitempty"`
	// Reviewer, when set, reads each change that passes the checks before
	// it lands (config review, --review, a sheet's review).
	Reviewer       *TierSpec                    `json:"reviewer,omitempty"`
	Plan           bool                         `json:"plan,omitempty"`
	Commands       map[string]agent.CommandSpec `json:"commands,omitempty"`
	Repo           string                       `json:"repo"`
	Env            []string                     `json:"env,omitempty"`
	TimeoutMs      millis.Duration              `json:"timeoutMs"`
	StallTimeoutMs millis.Duration              `json:"stallTimeoutMs"`
	MaxWaitMs      millis.Duration              `json:"maxWaitMs"`
	WindowLimits   engine.WindowLimits          `json:"windowLimits,omitempty"`
	BudgetUSD      float64                      `json:"budgetUsd"`
	Prices         cost.Table                   `json:"prices,omitempty"`
	EscalateFrom   taskengine.EscalateFrom      `json:"escalateFrom"`
	AntiGaming     gate.Gaming                  `json:"antiGaming"`
	// EditTests: the task is meant to change its tests; a change that
	// removes or alters lines of the base's test files is then no
	// anti-gaming finding (config editTests, --edit-tests, a sheet's
	// editTests).
	EditTests  bool               `json:"editTests,omitempty"`
	Checks     []gate.Check       `json:"checks"`
	Similarity float64            `json:"similarity,omitempty"`
	SameErrors int                `json:"sameErrors,omitempty"`
	Embeddings *config.Embeddings `json:"embeddings,omitempty"`
	Commit     git.CommitMode     `json:"commit"`
	Merge      git.MergeMode      `json:"merge"`
	Push       bool               `json:"push,omitempty"`
	PR         bool               `json:"pr,omitempty"`
	// ViaPR: the branch lands through its pull request, worked until a
	// target (task --until): nothing merges here, and the result says so.
	ViaPR bool `json:"viaPr,omitempty"`
	// Worktree and DirtyLeftOut are set when the task starts.
	Worktree     git.Worktree `json:"worktree"`
	DirtyLeftOut bool         `json:"dirtyLeftOut,omitempty"`
	// Sandbox is how its agents and checks are confined, here and on a
	// worker.
	Sandbox sandbox.Config `json:"sandbox,omitzero"`
}

// TierSpec is one developer tier (or the planner) of a task.
type TierSpec struct {
	Name     string   `json:"name"`
	Backend  string   `json:"backend"`
	Model    string   `json:"model,omitempty"`
	Env      []string `json:"env,omitempty"`
	Attempts int      `json:"attempts"`
}

// TaskSpecOf makes the spec of a task from the configuration, for the
// repository (or a directory in it) repo. A task without [[tiers]] has one
// tier of the configured backend and model.
func TaskSpecOf(cfg *config.Config, repo string) TaskSpec {
	s := TaskSpec{Repo: repo, Env: cfg.EnvList(), StallTimeoutMs: millis.Of(cfg.StallTimeout),
		MaxWaitMs: millis.Of(cfg.MaxWait), WindowLimits: cfg.WindowLimitsOf(), BudgetUSD: cfg.BudgetUSD, Prices: cfg.Prices, EscalateFrom: cfg.EscalateFrom,
		AntiGaming: cfg.AntiGaming, EditTests: cfg.EditTests, Similarity: cfg.LoopDetection.Similarity, SameErrors: cfg.LoopDetection.SameErrorCount,
		Embeddings: cfg.LoopDetection.Embeddings, Commit: cfg.Commit, Merge: cfg.Merge, Push: cfg.Push, PR: cfg.PR,
		Commands: cfg.Backends, Sandbox: cfg.Sandbox}
	s.TimeoutMs = millis.Of(cfg.Timeout)
	if cfg.Sources["timeoutMs"] == "default" {
		s.TimeoutMs = millis.Of(taskengine.DefaultTimeout)
	}
	s.Checks = GateChecks(cfg.Checks)
	for _, t := range cfg.Tiers {
		s.Tiers = append(s.Tiers, TierSpec{Name: t.Name, Backend: t.Backend, Model: t.Model, Env: t.EnvList(), Attempts: t.Attempts})
	}
	if len(s.Tiers) == 0 {
		attempts := config.DefaultAttempts
		if cfg.Attempts > 0 {
			attempts = cfg.Attempts
		}
		s.Tiers = []TierSpec{{Name: cfg.Backend, Backend: cfg.Backend, Model: cfg.Model, Attempts: attempts}}
	}
	// Two tiers of the same name would be told apart nowhere.
	seen := map[string]int{}
	for i := range s.Tiers {
		seen[s.Tiers[i].Name]++
		if n := seen[s.Tiers[i].Name]; n > 1 {
			s.Tiers[i].Name = fmt.Sprintf("%s#%d", s.Tiers[i].Name, n)
		}
	}
	if p := cfg.Planner; p != nil {
		s.Planner = &TierSpec{Name: "planner", Backend: p.Backend, Model: p.Model, Env: p.EnvList(), Attempts: 1}
	}
	if r := cfg.Review; r != nil {
		s.Reviewer = &TierSpec{Name: "review", Backend: r.Backend, Model: r.Model, Env: r.EnvList(), Attempts: 1}
	}
	return s
}

// GateChecks are the configured checks as the gate runs them.
func GateChecks(checks []config.Check) []gate.Check {
	var out []gate.Check
	for _, c := range checks {
		out = append(out, gate.Check{Name: c.Name, Argv: c.Run, Shell: c.Shell, Timeout: c.Timeout})
	}
	return out
}

// tier is the engine's tier of t, whose agent is a.
func (t TierSpec) tier(a agent.Agent) taskengine.Tier {
	return taskengine.Tier{Name: t.Name, Backend: t.Backend, Model: t.Model, Env: t.Env, Attempts: t.Attempts, Agent: a}
}

// agents resolves the tiers' backends; a result that says why when one is
// unknown.
func (s TaskSpec) agents(p Parts) ([]taskengine.Tier, *taskengine.Tier, *taskengine.Result) {
	get := func(t TierSpec) (taskengine.Tier, *taskengine.Result) { return s.agentTier(p, t) }
	if _, bad := s.reviewer(p); bad != nil {
		return nil, nil, bad
	}
	var tiers []taskengine.Tier
	for _, t := range s.Tiers {
		tr, bad := get(t)
		if bad != nil {
			return nil, nil, bad
		}
		tiers = append(tiers, tr)
	}
	var planner *taskengine.Tier
	if s.Planner != nil {
		pl := *s.Planner
		if pl.Backend == "" {
			pl.Backend = s.Tiers[0].Backend
		}
		tr, bad := get(pl)
		if bad != nil {
			return nil, nil, bad
		}
		planner = &tr
	}
	return tiers, planner, nil
}

// agentTier is tier t with its agent; a result that says why when its
// backend is unknown.
func (s TaskSpec) agentTier(p Parts, t TierSpec) (taskengine.Tier, *taskengine.Result) {
	a, err := p.Registry(s.Commands, append(append([]string(nil), s.Env...), t.Env...), s.Sandbox.ProjectEnv).Get(t.Backend)
	if err != nil {
		r := Failure(engine.Result{Status: engine.StatusBackendUnknown, ExitCode: engine.StatusBackendUnknown.ExitCode(),
			Backend: t.Backend, Details: fmt.Sprintf("tier %s: %v", t.Name, err)})
		return taskengine.Tier{}, &r
	}
	return t.tier(a), nil
}

// reviewer is the task's reviewer with its agent (nil: none).
func (s TaskSpec) reviewer(p Parts) (*taskengine.Tier, *taskengine.Result) {
	if s.Reviewer == nil {
		return nil, nil
	}
	t, bad := s.agentTier(p, *s.Reviewer)
	if bad != nil {
		return nil, bad
	}
	return &t, nil
}

// Failure is a task that could not start, as a result.
func Failure(r engine.Result) taskengine.Result {
	return taskengine.Result{Status: r.Status, ExitCode: r.ExitCode, Backend: r.Backend, Details: r.Details, Text: r.Text,
		Tiers: []taskengine.TierSummary{}, Attempts: []taskengine.Attempt{}, Detections: []taskengine.Detection{}, Flaky: []string{}, Commits: []string{}}
}
