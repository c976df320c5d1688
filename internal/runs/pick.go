package runs

import (
	"fmt"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/proc"
)

// Registry is the backends of cfg, over the environment agents start from
// (p.Environ) and cfg's env (--env, [env]), so that a PATH given there is
// where the agents are looked for too.
func Registry(cfg *config.Config, p local.Parts) *agent.Registry {
	return p.Registry(cfg.Backends, cfg.EnvList(), cfg.Sandbox.ProjectEnv)
}

// Pick is the agent of cfg's backend. With none configured it picks the
// first installed built-in and says so (p.Say, unless cfg.Quiet). When no
// agent can be had, it returns the result that says why (backend-missing
// or backend-unknown) and no agent.
func Pick(cfg *config.Config, p local.Parts) (engine.Result, agent.Agent) {
	reg := Registry(cfg, p)
	name := cfg.Backend
	res := engine.Result{Transcript: []engine.Entry{}}
	if name == "" {
		for _, b := range agent.Builtins {
			if _, err := proc.LookPath(b, proc.Trusted(reg.Env, reg.Untrusted)); err == nil {
				name = b
				break
			}
		}
		if name == "" {
			res.Status = engine.StatusBackendMissing
			res.ExitCode = exit.BackendMissing
			res.Details = "no backend configured and none of " + strings.Join(agent.Builtins, ", ") + " is installed"
			res.Text = res.Details
			return res, nil
		}
		if !cfg.Quiet && p.Say != nil {
			p.Say.Notice(fmt.Sprintf("no backend configured; using %s, the first installed of %s", name, strings.Join(agent.Builtins, ", ")))
		}
	}
	a, err := reg.Get(name)
	if err != nil {
		res.Backend = name
		res.Status = engine.StatusBackendUnknown
		res.ExitCode = engine.StatusBackendUnknown.ExitCode()
		res.Details = err.Error()
		res.Text = res.Details
		return res, nil
	}
	return res, a
}
