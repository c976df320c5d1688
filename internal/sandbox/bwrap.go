package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
// endpoints and allowHosts. explicit are the names of the variables the
// run gives its agents (--env, [env], a tier's env), which it gets beside
// what its CLI needs. The returned function releases what the call used
// (the network's relays, its temporary directory); call it once c has
// ended.
func (b *Box) Agent(c proc.Cmd, needs Needs, explicit []string) (proc.Cmd, func(), error) {
	needs.Env = append(slices.Clip(needs.Env), explicit...)
	return b.wrap(c, needs, false)
}

// Check confines a check: the same file rules as an agent; its network
// goes through the allow-listing proxy to the package registries of the
// project's language and allowHosts (checksNetwork: none, or the
// machine's). explicit are the names of the variables the run gives its
// checks; a name that looks like a secret still needs passEnv.
func (b *Box) Check(c proc.Cmd, explicit []string) (proc.Cmd, func(), error) {
	return b.wrap(c, Needs{Env: slices.DeleteFunc(slices.Clone(explicit), secretName)}, true)
}

// call is the confinement of one call as it is built: bubblewrap's
// arguments in the order they apply (a later mount lies over an earlier
// one), what the call can write, and what its release undoes.
type call struct {
	args     []string
	writable []string // resolved, bound writable
	missing  []string // read-only paths absent before the call
	notes    []string // said on the call's stderr once it ended
	tmp      string   // the host's side of the call: its network's sockets
}

func (m *call) bind(p string) {
	m.writable = append(m.writable, p)
	m.args = append(m.args, "--bind", p, p)
}

func (m *call) roBind(p string) { m.args = append(m.args, "--ro-bind", p, p) }

// linkIn is the first symbolic link on the way to p that lies in a
// directory the call writes ("" when none).
func (m *call) linkIn(p string) string {
	for q := p; q != "/" && q != "."; q = filepath.Dir(q) {
		fi, err := os.Lstat(q)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if parent, err := filepath.EvalSymlinks(filepath.Dir(q)); err == nil && m.isWritable(parent) {
			return q
		}
	}
	return ""
}

func (m *call) isWritable(p string) bool {
	return slices.ContainsFunc(m.writable, func(w string) bool { return inside(p, w) })
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
	env := slices.Clone(c.Env)
	if env == nil {
		env = os.Environ()
	}
	// What the sandbox lets the call write, read and reach is decided by
	// jlgcli's environment and the user's files only: the variables a
	// project's file set keep their value for the call, never a say here.
	trusted := b.trusted(env)
	home := lookup(trusted, "HOME")
	if home == "" {
		home = b.home
	}
	// Looked up first, so that a missing program is proc.ErrNotFound as it
	// is unconfined.
	path, err := proc.LookPath(c.Argv[0], trusted)
	if err != nil {
		return c, nil, err
	}
	tmp, err := os.MkdirTemp("", "jlgcli-sandbox-")
	if err != nil {
		return c, nil, fmt.Errorf("sandbox: %w", err)
	}
	m := &call{tmp: tmp}
	release := func() { _ = os.RemoveAll(tmp) }

	// The machine read-only; /tmp and /dev/shm the call's own.
	m.args = append(m.args,
		"--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	for _, d := range []string{"/dev/shm", "/tmp"} {
		if n := b.tmpSize(); n > 0 {
			m.args = append(m.args, "--size", strconv.FormatInt(n, 10))
		}
		m.args = append(m.args, "--tmpfs", d)
	}
	// What the call needs of the host's /tmp, read-only: its home, its
	// PATH, the program it runs, jlgcli's helper; and the files its
	// command line names (a script, the prompt's file), each alone.
	for _, p := range hostTmp(append([]string{home, path, b.self, userGoCache(trusted, home), userGoModCache(trusted, home)}, filepath.SplitList(lookup(trusted, "PATH"))...)) {
		m.roBind(p)
	}
	for _, a := range c.Argv[1:] {
		if !strings.HasPrefix(a, "/tmp/") || m.mountOf(a) != "--tmpfs" {
			continue
		}
		if real, err := filepath.EvalSymlinks(a); err == nil && real == filepath.Clean(a) {
			if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
				m.roBind(real)
			}
		}
	}

	var own []string // the CLI's state, absolute
	add := func(p string, makeDir bool) {
		p = expand(p, home, trusted)
		if p == "" {
			return
		}
		if makeDir {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				_ = os.MkdirAll(p, 0o700)
			}
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			m.bind(real)
		}
	}
	add(dir, false)
	// A CLI's state is made writable only where an agent cannot have
	// aimed it: a symbolic link in a directory an earlier call could
	// write (~/.claude/.claude.json turned into a link to the home) is not
	// followed.
	state := func(p string, isDir bool) {
		e := expand(p, home, trusted)
		if l := m.linkIn(e); l != "" {
			m.notes = append(m.notes, fmt.Sprintf("%s is a symbolic link where a confined call could have made it: not made writable", l))
			return
		}
		add(p, isDir)
		own = append(own, e)
	}
	for _, p := range needs.Dirs {
		state(p, true)
	}
	for _, p := range needs.Files {
		state(p, false)
	}
	for _, p := range b.cfg.AllowWrite {
		add(p, false)
	}
	who := "agent"
	if check {
		who = "check"
	}
	cenv, err := b.caches(m, trusted, who)
	if err != nil {
		release()
		return c, nil, err
	}

	// Read-only again inside what is writable: jlgcli's records and the
	// project's file (protect), the CLI's configuration (needs.ReadOnly),
	// git's control files, and every directory of PATH, for nothing
	// writable may later run by name. A writable path they hold (a task's
	// worktree in the state directory) is made writable again.
	var ro []string
	whole := map[string]bool{} // read-only with all they hold
	keep := func(p string) {
		if real, err := filepath.EvalSymlinks(p); err == nil && m.isWritable(real) && !slices.Contains(ro, real) {
			ro = append(ro, real)
		}
	}
	for _, p := range needs.ReadOnly {
		if p = expand(p, home, trusted); p == "" {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			m.missing = append(m.missing, p)
			continue
		}
		keep(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			whole[real] = true
		}
	}
	for _, p := range b.protect {
		if p = expand(p, home, trusted); p != "" {
			keep(p)
		}
	}
	// The program the call runs (a CLI installed in its own state
	// directory, ~/.claude/local) and the package it lies in: jlgcli runs
	// it unconfined too (--version).
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if root := programRoot(real); !inside(dir, root) {
			keep(root)
			whole[root] = true
		}
	}
	for _, p := range b.control {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !m.isWritable(real) {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() && filepath.Base(real) == ".git" {
			m.bind(real) // pinned: a mount point is not renamed nor removed
			continue
		}
		keep(real)
	}
	for _, p := range filepath.SplitList(lookup(trusted, "PATH")) {
		if !filepath.IsAbs(p) {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && slices.Contains(m.writable, real) {
			release()
			return c, nil, fmt.Errorf("sandbox: %s is on PATH and would be writable to the call: whatever it wrote there your shell would run (run it in another directory, or take it out of PATH)", real)
		}
		keep(p)
	}
	sort.Strings(ro)
	for _, real := range ro {
		m.roBind(real)
		if whole[real] {
			continue // a CLI's configuration, a program: nothing in it is writable
		}
		for _, w := range m.writable {
			if w != real && inside(w, real) {
				m.args = append(m.args, "--bind", w, w)
			}
		}
	}

	for _, p := range PrivateDirs {
		if p = expand(p, home, trusted); p != "" && !m.isWritable(p) {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				m.args = append(m.args, "--tmpfs", p)
			}
		}
	}
	for _, p := range b.denied(own, home, trusted) {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			m.args = append(m.args, "--tmpfs", p, "--remount-ro", p)
		default:
			m.args = append(m.args, "--ro-bind", "/dev/null", p)
		}
	}
	for _, s := range hostSockets(m) {
		if !slices.ContainsFunc(b.cfg.AllowRead, func(a string) bool { a = expand(a, home, trusted); return a != "" && inside(s, a) }) {
			m.args = append(m.args, "--ro-bind", "/dev/null", s)
		}
	}

	env = allowEnv(env, b.cfg.PassEnv, needs.Env)
	env = append(env, cenv...)
	env = setEnv(env, "TMPDIR", "/tmp")
	env = setEnv(env, "IS_SANDBOX", "1")
	var inner []string
	switch {
	case check && b.cfg.ChecksHostNetwork:
		m.args = append(m.args, "--share-net")
	case check && b.cfg.ChecksOffline:
	default:
		hosts := needs.Hosts
		if check {
			hosts = registries(dir, trusted)
		}
		n, err := b.listen(tmp, hosts)
		if err != nil {
			release()
			return c, nil, err
		}
		m.roBind(tmp)
		release = func() { n.close(); _ = os.RemoveAll(tmp) }
		inner = n.helperArgs()
		env = n.proxyEnv(env)
	}
	m.args = append(m.args, "--chdir", dir, "--")
	if len(inner) > 0 {
		m.args = append(m.args, b.self, initCommand)
		m.args = append(m.args, inner...)
		m.args = append(m.args, "--")
	}
	argv := append([]string{path}, c.Argv[1:]...)
	c.Argv = append(append([]string{b.bwrap}, m.args...), argv...)
	c.Env = env
	c.Dir = dir
	c.Stop = func(pid int) { signalDescendants(pid, syscall.SIGTERM) }
	if len(m.missing) > 0 || len(m.notes) > 0 {
		rel, stderr := release, c.Stderr
		release = func() {
			rel()
			notes := m.notes
			for _, p := range m.missing {
				if _, err := os.Lstat(p); err == nil {
					_ = os.RemoveAll(p)
					notes = append(notes, fmt.Sprintf("removed %s, which the call created: a CLI's configuration stays as it was", p))
				}
			}
			if stderr != nil {
				for _, n := range notes {
					fmt.Fprintf(stderr, "jlgcli sandbox: %s\n", n)
				}
			}
		}
	}
	return b.limit(c, release)
}

// programRoot is the directory that holds the program at path (its real
// path): the package tree it was installed in for a program in a
// node_modules tree, else its directory.
func programRoot(path string) string {
	if i := strings.Index(path, "/node_modules/"); i > 0 {
		return path[:i]
	}
	return filepath.Dir(path)
}

// hostTmp are the directories of the host's /tmp that a call needs to see
// (those of paths under it: a file's directory; for a path in a
// node_modules tree, the directory that holds the tree, where Node looks
// for its packages), without those inside another, parents first. Nothing
// else of the host's /tmp is there: not other calls' sockets, not other
// programs' files.
func hostTmp(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !strings.HasPrefix(real, "/tmp/") {
			continue
		}
		if fi, err := os.Stat(real); err != nil {
			continue
		} else if !fi.IsDir() && filepath.Dir(real) != "/tmp" {
			real = filepath.Dir(real) // a file right in /tmp is bound alone
		}
		if strings.Contains(real+"/", "/node_modules/") {
			real = programRoot(real)
		}
		if real != "/tmp" {
			dirs = append(dirs, real)
		}
	}
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		if !slices.ContainsFunc(out, func(o string) bool { return inside(d, o) }) {
			out = append(out, d)
		}
	}
	return out
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
