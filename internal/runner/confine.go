package runner

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// unconfined says once per process that agents run unconfined (sandbox
// auto on a machine that cannot confine).
var unconfined sync.Once

// Confine returns ctx carrying the sandbox of c (sandbox.New) for a run kept
// under root in dir, and the record of the confinement it has. The run's
// records (root) and dir's project file stay read-only to its agents, so
// that none loosens its own sandbox or rewrites its journal. A sandbox asked
// for (mode on) that this machine cannot give is a UsageError naming what is
// missing.
func Confine(ctx context.Context, c sandbox.Config, p Parts, root, dir string) (context.Context, sandbox.Record, error) {
	var protect []string
	if root != "" {
		protect = append(protect, root)
	}
	if dir != "" {
		protect = append(protect, filepath.Join(dir, config.ProjectFile))
	}
	box, rec, err := sandbox.New(c, protect...)
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return ctx, rec, &UsageError{Err: err, Hint: ue.Hint}
	}
	if err != nil {
		return ctx, rec, err
	}
	if box == nil && rec.Mode == sandbox.Auto {
		unconfined.Do(func() {
			p.warn("agents and checks run unconfined, with your whole machine: %s (--sandbox off says you mean it; --sandbox on refuses)", rec.Reason)
		})
	}
	return sandbox.With(ctx, box), rec, nil
}
