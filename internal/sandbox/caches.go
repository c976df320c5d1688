package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The build and package caches. Whatever a confined call writes in a cache
// would be run by the next build that trusts it (a module edited in the Go
// module cache runs its init in the user's next go test; a poisoned build
// cache links into the user's next binary). So the user's caches stay
// read-only to every confined call, and a run's calls get caches of their
// own under the run's cache directory (Config.CacheDir), thrown away with
// it: the agents' apart from the checks', so that an agent cannot plant
// what the gate's build will trust. Go's is seeded read-only from the
// user's: its module cache's download directory is the first GOPROXY.

// cacheVars are the variables that move each tool's cache, and the
// directory each gets in the run's cache directory.
var cacheVars = [][2]string{
	{"GOCACHE", "go-build"}, {"GOMODCACHE", "go-mod"}, {"npm_config_cache", "npm"},
	{"PIP_CACHE_DIR", "pip"}, {"YARN_CACHE_FOLDER", "yarn"}, {"XDG_CACHE_HOME", "xdg"},
}

// caches binds the run's own caches for the call (nothing when the run has
// none, or caches = false: then every cache is the user's, read-only) and
// returns the variables that point the tools at them. env is the trusted
// environment.
func (b *Box) caches(m *call, env []string, who string) ([]string, error) {
	if b.cfg.NoCaches || b.cfg.CacheDir == "" {
		return nil, nil
	}
	root := filepath.Join(b.cfg.CacheDir, who)
	var out []string
	for _, v := range cacheVars {
		d := filepath.Join(root, v[1])
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: the run's caches: %w", err)
		}
		if v[0] == "XDG_CACHE_HOME" && ownsCacheHome(m, env, b.home) {
			continue // the CLI keeps its state there: it stays where it is
		}
		out = append(out, v[0]+"="+d)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		m.bind(real)
	}
	now := time.Now()
	_ = os.Chtimes(b.cfg.CacheDir, now, now)
	// Go: modules the user has are taken from their module cache
	// (read-only) before any proxy; private modules too, as the sandbox
	// reaches no repository directly.
	if dl := filepath.Join(userGoModCache(env, b.home), "cache", "download"); isDir(dl) {
		proxy := lookup(env, "GOPROXY")
		if proxy == "" {
			proxy = "https://proxy.golang.org,direct"
		}
		out = append(out, "GOPROXY=file://"+dl+","+proxy, "GONOPROXY=jlgcli.invalid")
	}
	out = append(out, "GOFLAGS="+strings.TrimSpace(lookup(env, "GOFLAGS")+" -modcacherw"))
	// Go's build cache: the user's read through, the run's written (the go
	// command splits GOCACHEPROG at spaces).
	prog := []string{b.self, goCacheCommand, filepath.Join(root, "go-prog")}
	if u := userGoCache(env, b.home); isDir(u) {
		prog = append(prog, u)
	}
	if !slices.ContainsFunc(prog, func(s string) bool { return strings.ContainsAny(s, " \t") }) {
		out = append(out, "GOCACHEPROG="+strings.Join(prog, " "))
	}
	return out, nil
}

// ownsCacheHome tells whether a path the call writes lies in the user's
// cache home (a CLI's own state, opencode's): then XDG_CACHE_HOME is left
// as it is, or the CLI would not find its state.
func ownsCacheHome(m *call, env []string, home string) bool {
	ch := lookup(env, "XDG_CACHE_HOME")
	if ch == "" {
		ch = filepath.Join(home, ".cache")
	}
	if real, err := filepath.EvalSymlinks(ch); err == nil {
		ch = real
	}
	for _, w := range m.writable {
		if inside(w, ch) && w != ch {
			return true
		}
	}
	return false
}

// userGoModCache is where the user's Go module cache is: GOMODCACHE, else
// the first GOPATH's pkg/mod, else ~/go/pkg/mod.
func userGoModCache(env []string, home string) string {
	if d := lookup(env, "GOMODCACHE"); d != "" {
		return d
	}
	if gp := filepath.SplitList(lookup(env, "GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	return filepath.Join(home, "go", "pkg", "mod")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// staleCaches is how long a run's caches are kept unused before any run
// removes them (a run killed, never resumed; a worker's).
const staleCaches = 24 * time.Hour

// RemoveCaches removes the caches of the box's run (Config.CacheDir);
// caches left unused for a day by other runs under the same parent go too.
func (b *Box) RemoveCaches() error { return removeCaches(b.cfg.CacheDir) }

func removeCaches(dir string) error {
	if dir == "" {
		return nil
	}
	err := removeAll(dir)
	parent := filepath.Dir(dir)
	if ents, e := os.ReadDir(parent); e == nil {
		for _, d := range ents {
			p := filepath.Join(parent, d.Name())
			if fi, e := os.Stat(p); e == nil && fi.IsDir() && time.Since(fi.ModTime()) > staleCaches {
				_ = removeAll(p)
			}
		}
	}
	return err
}

// removeAll is os.RemoveAll that first makes read-only directories
// writable (Go's module cache makes them so).
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
