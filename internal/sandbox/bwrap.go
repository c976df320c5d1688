package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// Needs are what one agent's CLI needs beyond its working directory. Paths
// may start with "~/", the home directory of the agent's environment.
type Needs struct {
	// Dirs are the directories the CLI keeps its state in (sessions,
	// credentials it refreshes), made when missing; Files are state files
	// it writes, given when they exist.
	Dirs, Files []string
	// ReadOnly are paths inside Dirs that stay read-only: the CLI's
	// configuration that runs code or steers its next session (hooks, MCP
	// servers, notify commands, plugins, instructions). One that does not
	// exist before a call and exists after it is removed.
	ReadOnly []string
	// Hosts are the CLI's API endpoints: URLs or host[:port].
	Hosts []string
	// Env are the names of the variables the CLI needs (its keys, its
	// endpoint, its own settings); a name ending in "*" is a prefix.
	Env []string
}

// Agent confines an agent's call c: its working directory and its CLI's
// state (needs) writable, the rest read-only, secrets hidden, the network limited to its
// endpoints and allowHosts. The returned function releases what the call
// used (the network's relays, its temporary directory); call it once c has
// ended.
func (b *Box) Agent(c proc.Cmd, needs Needs) (proc.Cmd, func(), error) {
	return b.wrap(c, needs, false)
}

// Check confines a check: the same file rules as an agent, and the
// machine's network unless checksNetwork is off (then none).
func (b *Box) Check(c proc.Cmd) (proc.Cmd, func(), error) {
	return b.wrap(c, Needs{}, true)
}

func (b *Box) wrap(c proc.Cmd, needs Needs, check bool) (proc.Cmd, func(), error) {
	dir := c.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, nil, err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return c, nil, err
	}
	tmp, err := os.MkdirTemp("", "jlgcli-sandbox-")
	if err != nil {
		return c, nil, fmt.Errorf("sandbox: %w", err)
	}
	release := func() { _ = os.RemoveAll(tmp) }
	private := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(private, 0o700); err != nil {
		release()
		return c, nil, fmt.Errorf("sandbox: %w", err)
	}

	args := []string{
		"--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm",
	}
	env := slices.Clone(c.Env)
	if env == nil {
		env = os.Environ()
	}
	home := lookup(env, "HOME")
	if home == "" {
		home = b.home
	}
	var own []string      // the CLI's state, absolute
	var writable []string // resolved
	add := func(p string, makeDir bool) {
		p = expand(p, home, env)
		if p == "" {
			return
		}
		if makeDir {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				_ = os.MkdirAll(p, 0o700)
			}
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		writable = append(writable, real)
		args = append(args, "--bind", real, real)
	}
	add(dir, false)
	for _, p := range needs.Dirs {
		add(p, true)
		own = append(own, expand(p, home, env))
	}
	for _, p := range needs.Files {
		add(p, false)
		own = append(own, expand(p, home, env))
	}
	for _, p := range b.cfg.AllowWrite {
		add(p, false)
	}
	if !b.cfg.NoCaches {
		for _, p := range Caches {
			add(p, false)
		}
	}
	if n := b.tmpSize(); n > 0 {
		args = append(args, "--size", strconv.FormatInt(n, 10))
	}
	args = append(args, "--tmpfs", private)
	env = setEnv(env, "TMPDIR", private)
	env = setEnv(env, "IS_SANDBOX", "1")
	// The protected paths are made read-only again where a writable path
	// holds them; a writable path they hold (a task's worktree in the state
	// directory) is made writable again.
	for _, p := range b.protect {
		real, err := filepath.EvalSymlinks(expand(p, home, env))
		if err != nil || !slices.ContainsFunc(writable, func(w string) bool { return inside(real, w) }) {
			continue
		}
		args = append(args, "--ro-bind", real, real)
		for _, w := range writable {
			if w != real && inside(w, real) {
				args = append(args, "--bind", w, w)
			}
		}
	}
	for _, p := range PrivateDirs {
		if p = expand(p, home, env); p != "" && !slices.ContainsFunc(writable, func(w string) bool { return inside(w, p) }) {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				args = append(args, "--tmpfs", p)
			}
		}
	}
	for _, p := range b.denied(own, home, env) {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			args = append(args, "--tmpfs", p, "--remount-ro", p)
		default:
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}

	var inner []string
	switch {
	case check && !b.cfg.ChecksOffline:
		args = append(args, "--share-net")
	case check:
	default:
		n, err := b.listen(tmp, needs.Hosts)
		if err != nil {
			release()
			return c, nil, err
		}
		release = func() { n.close(); _ = os.RemoveAll(tmp) }
		inner = n.helperArgs()
		env = n.proxyEnv(env)
	}
	args = append(args, "--chdir", dir, "--")
	if len(inner) > 0 {
		args = append(args, b.self, initCommand)
		args = append(args, inner...)
		args = append(args, "--")
	}
	// Looked up here, so that a missing program is proc.ErrNotFound as it
	// is unconfined.
	path, err := proc.LookPath(c.Argv[0], c.Env)
	if err != nil {
		release()
		return c, nil, err
	}
	argv := append([]string{path}, c.Argv[1:]...)
	c.Argv = append(append([]string{b.bwrap}, args...), argv...)
	c.Env = env
	c.Dir = dir
	c.Stop = func(pid int) { signalDescendants(pid, syscall.SIGTERM) }
	return b.limit(c, release)
}

// denied are the paths hidden from a call: the defaults and denyRead, less
// allowRead and the call's CLI's own state (own), under the agent's home
// and jlgcli's, resolved through symbolic links (the target is hidden, so
// no link leads to it).
func (b *Box) denied(own []string, home string, env []string) []string {
	var out []string
	for _, h := range slices.Compact([]string{home, b.home}) {
	next:
		for _, p := range append(slices.Clone(DefaultDenyRead), b.cfg.DenyRead...) {
			p = expand(p, h, env)
			if p == "" {
				continue
			}
			for _, o := range own {
				if inside(p, o) || inside(o, p) {
					continue next
				}
			}
			for _, a := range b.cfg.AllowRead {
				if expand(a, h, env) == p {
					continue next
				}
			}
			if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, real) {
				out = append(out, real)
			}
		}
	}
	return out
}

// expand makes p absolute, "~/" being home and a leading "$NAME" the
// variable's value in env; "" when it cannot (a variable unset).
func expand(p, home string, env []string) string {
	if ref, ok := strings.CutPrefix(p, "$"); ok {
		name, rest, _ := strings.Cut(ref, "/")
		if p = lookup(env, name); p == "" {
			return ""
		}
		p = filepath.Join(p, rest)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home == "" {
			return ""
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// signalDescendants sends sig to every process descended from pid (not to
// pid): the confined processes, which bubblewrap (pid) would otherwise take
// down with SIGKILL as it dies, giving them no time to stop.
func signalDescendants(pid int, sig syscall.Signal) {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	queue := slices.Clone(children[pid])
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		_ = syscall.Kill(p, sig)
	}
}

// inside tells whether p is dir or lies in it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(os.PathSeparator))
}

// lookup is the value of k in env ("" when absent).
func lookup(env []string, k string) string {
	v, _ := proc.LookupEnv(env, k)
	return v
}

func setEnv(env []string, k, v string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(env, k+"="+v)
}
