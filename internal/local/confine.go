package local

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// unconfined says once per process that agents run unconfined (sandbox
// auto on a machine that cannot confine).
var unconfined sync.Once

// Site is where a run's agents and checks run, as its confinement sees it.
type Site struct {
	// Root is the run's state directory ("" for a call of no run kept
	// here): its records stay read-only to its agents.
	Root string
	// Protect are the paths that stay read-only to the calls even inside
	// their working directory (loopSite, taskSite).
	Protect []string
	// RunID, when set, gives the calls the run's own caches (under Root,
	// else the temporary directory), kept until the run ends.
	RunID string
}

// LoopSite is the site of a loop run in cwd: its records, and the
// project's file of cwd, which an agent must not use to loosen its own
// sandbox or plant hooks.
func LoopSite(root, cwd, runID string) Site {
	return Site{Root: root, Protect: []string{filepath.Join(cwd, config.ProjectFile)}, RunID: runID}
}

// taskSite is the site of a task run: its records, and its worktree's
// pointer to the repository's git directory, which an agent must not turn
// to a git directory of its own.
func taskSite(root, worktree, runID string) Site {
	s := Site{Root: root, RunID: runID}
	if worktree != "" {
		s.Protect = append(s.Protect, filepath.Join(worktree, ".git"))
	}
	return s
}

// cacheDir is where the run's own caches are: under its state directory,
// else (a worker's attempt) the temporary directory.
func (s Site) cacheDir() string {
	if s.RunID == "" {
		return ""
	}
	if s.Root != "" {
		return filepath.Join(s.Root, "cache", s.RunID)
	}
	return filepath.Join(os.TempDir(), "jlgcli-cache", s.RunID)
}

// Confine is the sandbox of c (sandbox.New) for a run at site (nil:
// unconfined), and the record of the confinement it gives. A run confines
// once, where it starts, and hands the box to what runs its agents and
// checks (engine.Options.Box, taskengine.Options.Box,
// gate.TestOptions.Box). A sandbox asked for (mode on) that this machine
// cannot give is a UsageError naming what is missing.
func Confine(c sandbox.Config, p Parts, site Site) (*sandbox.Box, sandbox.Record, error) {
	var protect []string
	if site.Root != "" {
		protect = append(protect, site.Root)
	}
	protect = append(protect, site.Protect...)
	// The user's own configuration (their settings, the project files they
	// trusted) stays read-only to the calls even when allowWrite holds it.
	if f := config.UserFile(p.getenv); f != "" {
		protect = append(protect, filepath.Dir(f))
	}
	c.CacheDir = site.cacheDir()
	box, rec, err := sandbox.New(c, protect...)
	if err != nil {
		return nil, rec, err
	}
	if box == nil && rec.Mode == sandbox.Auto {
		unconfined.Do(func() {
			p.warn("agents and checks run unconfined, with your whole machine: %s (--sandbox off says you mean it; --sandbox on refuses)", rec.Reason)
		})
	}
	return box, rec, nil
}

// endCaches throws away the caches of a run confined in box once it has
// ended (not when it stopped in a way resume continues: they are still
// its).
func endCaches(box *sandbox.Box, resumable bool) {
	if box != nil && !resumable {
		_ = box.RemoveCaches()
	}
}
