package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
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
		if !inside(p, m.tmp) && !hiddenByTmpfs(p, m) {
			out = append(out, p)
		}
	}
	return out
}

// listSockets are the Unix sockets bound to a path in jlgcli's network
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
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
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

// hiddenByTmpfs tells whether p lies under the call's private /tmp and
// was not bound back into it.
func hiddenByTmpfs(p string, m *call) bool {
	if !strings.HasPrefix(p, "/tmp/") {
		return false
	}
	for i := 0; i+2 < len(m.args); i++ {
		if (m.args[i] == "--ro-bind" || m.args[i] == "--bind") && m.args[i+1] != "/" && inside(p, m.args[i+1]) {
			return false
		}
	}
	return true
}
