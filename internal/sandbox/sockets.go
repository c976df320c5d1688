package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostSockets are the Unix sockets of the host that a call would see (a
// read-only file system does not stop a connect): every socket bound to a
// path in jlgcli's network namespace, as /proc/net/unix lists them — the
// user's tmux and screen servers, editors', browsers', agents', other
// calls' relays — that lies outside the call's private directories and its
// own network's, and still is a socket there. Abstract sockets need no
// hiding: they belong to a network namespace, and the call has its own.
func hostSockets(m *call) []string {
	var out []string
	for _, p := range listSockets() {
		// Hidden already (a tmpfs over it), or the call's own world (a
		// writable directory, where a mount point of ours would be a file
		// left on the host when the socket goes away meanwhile).
		if kind := m.mountOf(p); kind != "--tmpfs" && kind != "--bind" {
			out = append(out, p)
		}
	}
	return out
}

// soAcceptCon is the flag of a listening socket in /proc/net/unix.
const soAcceptCon = 1 << 16

// listSockets are the listening Unix sockets bound to a path in jlgcli's network
// namespace that are sockets there now.
func listSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the header
	for sc.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path: only a socket
		// that listens (__SO_ACCEPTCON in Flags) can be connected to.
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		if flags, err := strconv.ParseUint(fields[3], 16, 32); err != nil || flags&soAcceptCon == 0 {
			continue
		}
		p := strings.Join(fields[7:], " ")
		if !filepath.IsAbs(p) || seen[p] {
			continue
		}
		seen[p] = true
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			out = append(out, p)
		}
	}
	return out
}

// mountOf is the kind of the mount the call sees p through ("--ro-bind",
// "--bind", "--tmpfs", ...): the last one made over it, for a later mount
// lies over an earlier one.
func (m *call) mountOf(p string) string {
	kind := ""
	for i := 0; i+1 < len(m.args); i++ {
		switch a := m.args[i]; a {
		case "--bind", "--ro-bind", "--dev-bind":
			if i+2 < len(m.args) && inside(p, m.args[i+2]) {
				kind = a
			}
			i += 2
		case "--tmpfs", "--dev", "--proc":
			if inside(p, m.args[i+1]) {
				kind = a
			}
			i++
		case "--size", "--remount-ro", "--chdir", "--setenv", "--perms":
			i++
		}
	}
	return kind
}
