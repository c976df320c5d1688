package runs

import (
	"context"
	"sync"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/local"
)

// Backend is one backend as it stands on this machine (the JSON of
// `jlgcli backends --json`).
type Backend struct {
	Name      string       `json:"name"`
	Installed bool         `json:"installed"`
	Path      string       `json:"path,omitempty"`
	Version   string       `json:"version,omitempty"`
	Status    agent.Status `json:"status"`
	Details   string       `json:"details,omitempty"`
	// Package is the npm package that installs a built-in backend's CLI.
	Package string `json:"package,omitempty"`
	// Note warns of what will make an installed CLI's calls fail here.
	Note string `json:"note,omitempty"`
}

// Backends checks every backend of cfg (Registry), all at once: the
// built-in ones, then those of the configuration.
func Backends(ctx context.Context, cfg *config.Config, p local.Parts) []Backend {
	reg := Registry(cfg, p)
	names := reg.Names()
	rows := make([]Backend, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := reg.Get(name)
			if err != nil {
				rows[i] = Backend{Name: name, Status: agent.Missing, Details: err.Error()}
				return
			}
			av := a.Check(ctx)
			rows[i] = Backend{Name: name, Installed: av.Status != agent.Missing, Path: av.Path, Version: av.Version, Status: av.Status,
				Details: av.Details, Note: av.Note, Package: agent.Package(name)}
		}()
	}
	wg.Wait()
	return rows
}
