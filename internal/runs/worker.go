package runs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/local"
	"github.com/jlgcli/jlgcli/internal/plural"
	"github.com/jlgcli/jlgcli/internal/temporal"
)

// Worker is what a worker is given besides its configuration.
type Worker struct {
	// Concurrency bounds the attempts run at once on this machine, all
	// backends together.
	Concurrency int
	// Only are the backends whose attempts it takes (--backends), each of
	// which must be known and usable here; nil: every backend usable here.
	Only []string
}

// BackendError is a worker refused for its backends: none is usable here,
// or one it was asked to take is not. Code is the exit code that says why.
type BackendError struct {
	Msg  string
	Code int
}

func (e *BackendError) Error() string { return e.Msg }

// Serve runs a worker of cfg's Temporal server until ctx is done: the
// workflows, and the attempts of the backends usable here (w.Only, else
// every one), with their clones under cfg's state directory (by default
// $XDG_STATE_HOME/jlgcli/worker). It says on p.Say where it works and when
// it stopped. A configuration without a server is a *exit.UsageError; a
// worker with no backend to take attempts of, a *BackendError.
func Serve(ctx context.Context, cfg *config.Config, w Worker, p local.Parts) error {
	t := cfg.Temporal
	if t.Address == "" {
		return &exit.UsageError{Err: errors.New("a worker needs a Temporal server: --temporal HOST:PORT, or temporal.address in the configuration")}
	}
	getenv := getenv(p)
	dir := cfg.StateDir
	if dir == "" {
		base := getenv("XDG_STATE_HOME")
		if base == "" {
			base = filepath.Join(getenv("HOME"), ".local", "state")
		}
		dir = filepath.Join(base, "jlgcli", "worker")
	}
	have, err := workerBackends(ctx, Registry(cfg, p), w.Only)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		return &BackendError{Msg: "no agent backend is installed on this machine: the worker would take no attempt (see jlgcli backends)", Code: exit.BackendMissing}
	}
	c, err := Dial(ctx, temporal.ConnectionOf(cfg, getenv))
	if err != nil {
		return err
	}
	defer c.Close()
	r := say(p)
	r.Notice(fmt.Sprintf("worker on %s (namespace %s, queue %s): backends %s, %s at once; clones in %s",
		t.Address, t.Namespace, t.TaskQueue, strings.Join(have, ", "), plural.N(w.Concurrency, "attempt"), dir))
	acts := &temporal.Activities{StateDir: dir, Parts: p, Commands: cfg.Backends, Prices: cfg.Prices, PlanIssues: LookIssues}
	err = temporal.Serve(ctx, c, acts, temporal.WorkerOptions{Queue: t.TaskQueue, Backends: have, Concurrency: w.Concurrency})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	r.Notice("worker stopped")
	return nil
}

// workerBackends are the backends whose attempts the worker takes: every
// one usable on this machine, or those of only, each of which must be
// known (else a *exit.UsageError) and usable here (else a
// *BackendError).
func workerBackends(ctx context.Context, reg *agent.Registry, only []string) ([]string, error) {
	var have []string
	if len(only) == 0 {
		for _, name := range reg.Names() {
			if a, err := reg.Get(name); err == nil && a.Check(ctx).Status == agent.Available {
				have = append(have, name)
			}
		}
		slices.Sort(have)
		return have, nil
	}
	for _, name := range only {
		a, err := reg.Get(name)
		if err != nil {
			return nil, &exit.UsageError{Err: fmt.Errorf("--backends: %w", err)}
		}
		if s, details := engine.Unavailable(a.Check(ctx)); s != "" {
			return nil, &BackendError{Msg: fmt.Sprintf("--backends: %s is not usable on this machine (%s): %s", name, s, details), Code: s.ExitCode()}
		}
		if !slices.Contains(have, name) {
			have = append(have, name)
		}
	}
	slices.Sort(have)
	return have, nil
}
