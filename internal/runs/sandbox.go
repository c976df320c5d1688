package runs

import (
	"context"
	"os"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// SandboxCheck runs a real confined probe as a call of backend ("": a
// command backend, which needs nothing beyond its working directory) would
// be confined with cfg's settings in cfg's directory, and reports what it
// could and could not reach on this machine. A machine that cannot
// confine gives a Probe with its Record saying why and no findings.
func SandboxCheck(ctx context.Context, cfg *config.Config, backend string, p local.Parts) (sandbox.Probe, error) {
	box, rec, err := local.Confine(cfg.Sandbox, p, local.LoopSite("", cfg.Cwd, ""))
	if err != nil {
		return sandbox.Probe{Record: rec}, err
	}
	if box == nil {
		return sandbox.Probe{Record: rec}, nil
	}
	env := append(os.Environ(), cfg.EnvList()...)
	pr, err := box.ProbeAgent(ctx, "", env, agent.SandboxNeeds(backend, box.Trusted(env), cfg.Cwd))
	pr.Record = rec
	pr.Limits = sandbox.Limits(cfg.Sandbox)
	return pr, err
}
