// Package sandbox confines the processes jlgcli starts and does not trust
// (agents and the project's checks) in an OS sandbox: on Linux, bubblewrap.
//
// A confined process sees the machine read-only. It writes only in its
// working directory, the paths its CLI keeps its state in (Needs), the build
// caches, the configured allowWrite paths and a private temporary directory. A default
// list of secrets (DefaultDenyRead) is hidden from it. It has no network of
// its own: the only way out of its network namespace is through jlgcli, which
// forwards the loopback ports of its API endpoints and runs an allow-listing
// HTTP proxy for the other hosts (Needs.Hosts and allowHosts). It runs in its
// own user, PID and IPC namespaces with no capabilities, and dies with
// jlgcli. Checks get the same file rules; their network is the machine's
// unless checksNetwork is off. Each call has limits of processes, memory
// and temporary space (limits.go).
//
// A run makes its Box once, where it starts (local.Confine), and hands it,
// as a field of what they are given, to the two places that start
// untrusted processes: an agent call (agent.Request.Box) and a check
// (gate.TestOptions.Box, gate.RunIn).
package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// Mode is how a run is confined: auto (whenever the platform can), on
// (refuse to run unconfined) or off (never).
type Mode string

// The modes.
const (
	Auto Mode = "auto"
	On   Mode = "on"
	Off  Mode = "off"
)

// ParseMode reads a mode; "" is Auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return Auto, nil
	case Auto, On, Off:
		return m, nil
	}
	return "", fmt.Errorf("invalid sandbox mode %q (want auto, on or off)", s)
}

// Config is the [sandbox] configuration, as a run's spec keeps it. Paths
// are absolute or start with "~/".
type Config struct {
	Mode Mode `json:"mode,omitempty"`
	// DenyRead adds paths the confined processes cannot read; AllowRead
	// takes paths out of the default list.
	DenyRead  []string `json:"denyRead,omitempty"`
	AllowRead []string `json:"allowRead,omitempty"`
	// AllowWrite adds paths they can write.
	AllowWrite []string `json:"allowWrite,omitempty"`
	// AllowHosts adds hosts ("host", "host:port", "*.domain", a URL)
	// agents reach.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// ChecksOffline takes the network from the checks (checksNetwork =
	// false); ChecksHostNetwork gives them the machine's (checksNetwork =
	// true, the user's own files only). By default (neither) their network
	// goes through the allow-listing proxy, to the package registries of the
	// project's language and allowHosts.
	ChecksOffline     bool `json:"checksOffline,omitempty"`
	ChecksHostNetwork bool `json:"checksHostNetwork,omitempty"`
	// NoCaches keeps the build and package caches read-only (caches =
	// false); by default each run gets caches of its own (private,
	// thrown away at its end, seeded read-only from the user's where the
	// tool allows it), and the user's stay read-only.
	NoCaches bool `json:"noCaches,omitempty"`
	// PassEnv are the names of the variables of jlgcli's environment that
	// agents and checks get beyond those they need (the user's own files,
	// JLGCLI_SANDBOX_PASS_ENV); a name ending in "*" is a prefix.
	PassEnv []string `json:"passEnv,omitempty"`
	// ProjectEnv are the names of the variables a project's file set
	// ([env], a tier's or the planner's env): their values reach the
	// calls, but never decide what a call may write, reach or read.
	ProjectEnv []string `json:"projectEnv,omitempty"`
	// MaxProcesses, MaxMemory and MaxTmp limit each call: its processes
	// (threads included), its memory in bytes, the size of its private
	// temporary directory in bytes; 0 is the default (DefaultLimits), a
	// negative value none (the configuration gives none: tests do).
	MaxProcesses int   `json:"maxProcesses,omitempty"`
	MaxMemory    int64 `json:"maxMemory,omitempty"`
	MaxTmp       int64 `json:"maxTmp,omitempty"`
	// CacheDir holds the run's own caches (see caches.go); "" gives the
	// calls none: every cache is then the user's, read-only. It is the
	// run's, not a setting: never recorded.
	CacheDir string `json:"-"`
}

// DefaultLimits are the limits of a call when the configuration sets none.
var DefaultLimits = struct {
	Processes   int
	Memory, Tmp int64
}{Processes: 512, Memory: 8 << 30, Tmp: 2 << 30}

// Caches are the build and package caches a confined process may write
// (unless caches = false): where the usual toolchains keep them by default,
// and where the environment moves them.
var Caches = []string{
	"~/.cache", "~/go/pkg/mod", "~/.npm", "~/.yarn", "~/.local/share/pnpm",
	"~/.cargo/registry", "~/.cargo/git", "~/.m2/repository", "~/.gradle/caches",
	"$XDG_CACHE_HOME", "$GOCACHE", "$GOMODCACHE", "$npm_config_cache", "$PIP_CACHE_DIR", "$CARGO_HOME/registry",
}

// CheckPath tells whether p can be a path of the configuration.
func CheckPath(p string) error {
	if strings.HasPrefix(p, "~/") || filepath.IsAbs(p) {
		return nil
	}
	return fmt.Errorf("%q: want an absolute path or one that starts with ~/", p)
}

// CheckHost tells whether h can be an allowed host.
func CheckHost(h string) error {
	// A URL has slashes; a host, host:port or *.domain has none.
	if _, ok := parseEndpoint(h); ok && (strings.Contains(h, "://") || !strings.ContainsAny(h, " /")) {
		return nil
	}
	return fmt.Errorf("%q: want a host, host:port, *.domain or a URL", h)
}

// DefaultDenyRead are the secrets no confined process reads, relative to the
// home directory: keys, cloud and cluster credentials, password stores, and
// the credentials of the agent CLIs (each CLI's own are given back to it by
// Needs.Write).
var DefaultDenyRead = []string{
	"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
	"~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
	"~/.config/gh", "~/.password-store", "~/.local/share/keyrings", "~/.pki",
	"~/.npmrc", "~/.pypirc", "~/.cargo/credentials.toml", "~/.cargo/credentials",
	"~/.config/hub", "~/.terraform.d/credentials.tfrc.json", "~/.vault-token",
	// The agent CLIs' credentials: a call of one CLI cannot read another's.
	"~/.claude/.credentials.json", "~/.claude.json", "~/.codex/auth.json",
	"~/.gemini/oauth_creds.json", "~/.qwen/oauth_creds.json", "~/.copilot",
	"~/.local/share/opencode/auth.json", "~/.local/share/kilo/auth.json",
	// Sockets that lead out of any sandbox (a file system does not stop a
	// connect): the container engines' (root on the host), the user's
	// ssh-agent (its keys), the system bus, X11.
	"/var/run/docker.sock", "/run/docker.sock", "/run/podman", "/var/run/podman", "$SSH_AUTH_SOCK",
	"/run/dbus/system_bus_socket", "/tmp/.X11-unix",
}

// PrivateDirs are replaced by an empty directory of the sandbox's own,
// writable: the user session's runtime directory (its bus, its agents'
// sockets), which tools still expect to write in.
var PrivateDirs = []string{"$XDG_RUNTIME_DIR"}

// Record is the confinement a run had, as its record and report show it.
type Record struct {
	// Mode is the mode asked for.
	Mode Mode `json:"mode"`
	// Confined is true when agents and checks ran in the sandbox.
	Confined bool `json:"confined"`
	// Tool is the sandbox ("bubblewrap 0.8.0") when Confined.
	Tool string `json:"tool,omitempty"`
	// Reason says why a run in auto mode is not confined.
	Reason string `json:"reason,omitempty"`
	// Limits are the limits of each call ("512 processes, 8 GiB of
	// memory, 2 GiB of /tmp (cgroup v1)"), Unlimited when unconfined.
	Limits string `json:"limits,omitempty"`
}

// String is the record in one line: "bubblewrap 0.8.0", "off (unconfined,
// as asked)", "none (why)".
func (r Record) String() string {
	switch {
	case r.Confined:
		return r.Tool
	case r.Mode == Off:
		return "off (unconfined, as asked)"
	case r.Reason != "":
		return "none (" + r.Reason + ")"
	}
	return "none"
}

// Box confines the processes of one run.
type Box struct {
	cfg     Config
	bwrap   string
	home    string
	self    string   // jlgcli's executable, the network helper inside
	protect []string // kept read-only even inside a writable path
	control []string // git's control files (WithControl)
}

// WithControl is b whose calls cannot write git's control files of their
// working tree (git.ControlPaths): each is read-only to them, and a .git
// directory among them is pinned where it is (a mount point cannot be
// renamed or removed) while what it holds, but the listed files, stays
// writable, for the agent's own commits. Paths that do not exist are left
// to the check after the call.
func (b *Box) WithControl(paths []string) *Box {
	c := *b
	c.control = paths
	return &c
}

// unavailable is a sandbox asked for (mode on) that this machine cannot
// give: the user's to change (exit 64), hint saying how.
func unavailable(reason, hint string) error {
	return exit.Usagef(hint, "--sandbox on: no sandbox on this machine: %s", reason)
}

// New prepares the confinement of a run: nil and a record saying why for
// mode off, or for auto on a machine that cannot confine; an
// usage error (exit.UsageError) for on there. protect are paths a confined process may
// not write even when they lie in its working directory (jlgcli's own run
// records).
func New(cfg Config, protect ...string) (*Box, Record, error) {
	rec := Record{Mode: cfg.Mode, Limits: Unlimited}
	if cfg.Mode == "" {
		rec.Mode = Auto
	}
	if rec.Mode == Off {
		return nil, rec, nil
	}
	tool, path, reason := probe()
	if reason != "" {
		if rec.Mode == On {
			return nil, rec, unavailable(reason, installHint)
		}
		rec.Reason = reason
		return nil, rec, nil
	}
	home, _ := os.UserHomeDir()
	self, err := selfPath()
	if err != nil {
		if rec.Mode == On {
			return nil, rec, unavailable(err.Error(), "")
		}
		rec.Reason = err.Error()
		return nil, rec, nil
	}
	b := &Box{cfg: cfg, bwrap: path, home: home, self: self, protect: protect}
	rec.Confined, rec.Tool, rec.Limits = true, tool, b.limitsRecord()
	return b, rec, nil
}

const installHint = "install bubblewrap (Debian, Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap), " +
	"or run with --sandbox off to give agents the whole machine"

var (
	probeOnce                     sync.Once
	probeTool, probePath, probeNo string
)

// Available tells whether this machine can confine: the sandbox's name
// ("bubblewrap 0.8.0"), or why not.
func Available() (tool, reason string) {
	tool, _, reason = probe()
	return tool, reason
}

// probe finds bubblewrap and checks once that it can make the namespaces
// the sandbox needs (a kernel may forbid unprivileged user namespaces).
func probe() (tool, path, reason string) {
	probeOnce.Do(func() {
		if runtime.GOOS != "linux" {
			probeNo = "no sandbox for " + runtime.GOOS + " yet (jlgcli confines agents with bubblewrap on Linux)"
			return
		}
		p, err := exec.LookPath("bwrap")
		if err != nil {
			probeNo = "bubblewrap (bwrap) is not installed"
			return
		}
		out, err := exec.Command(p, "--version").Output()
		if err != nil {
			probeNo = fmt.Sprintf("%s --version failed: %v", p, err)
			return
		}
		tool := strings.TrimSpace(string(out))
		if msg, err := exec.Command(p, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "true").CombinedOutput(); err != nil {
			probeNo = fmt.Sprintf("bubblewrap cannot make its namespaces here: %s", firstLine(string(msg), err))
			return
		}
		probeTool, probePath = tool, p
	})
	return probeTool, probePath, probeNo
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return err.Error()
	}
	return s
}

// selfPath is the path jlgcli was started by: os.Args[0] looked up as the
// shell did, not the symbolic link's target, so that a multi-call binary
// (the test binary of testscript) sees the name it dispatches on.
func selfPath() (string, error) {
	p := os.Args[0]
	if !strings.Contains(p, string(os.PathSeparator)) {
		lp, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("cannot find jlgcli's own executable (%s) for the sandbox: %w", p, err)
		}
		p = lp
	}
	return filepath.Abs(p)
}
