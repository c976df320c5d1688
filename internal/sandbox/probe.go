package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// probeCommand is the hidden first argument with which jlgcli runs as the
// probe inside a sandbox (Probe).
const probeCommand = "__sandbox-probe"

// Finding is one thing a confined call tried on this machine, and how it
// went.
type Finding struct {
	// Area groups the findings: files, secrets, sockets, network,
	// environment.
	Area string `json:"area"`
	// What was tried ("write ~/.bashrc", "read ~/.ssh/id_rsa").
	What string `json:"what"`
	// Result is what happened ("denied", "done", "hidden", "refused").
	Result string `json:"result"`
	// OK is true when the result is what the sandbox promises.
	OK bool `json:"ok"`
}

// Probe is what a real confined call could and could not reach on this
// machine (jlgcli sandbox check).
type Probe struct {
	// Record is the confinement ("bubblewrap 0.8.0", or why none).
	Record Record `json:"sandbox"`
	// Dir is the working directory the probe ran in.
	Dir string `json:"dir"`
	// Findings are what the probe tried, in order.
	Findings []Finding `json:"findings"`
	// Limits say how each call's limits are enforced here, and what is not.
	Limits []string `json:"limits,omitempty"`
}

// OK tells whether every finding is as the sandbox promises.
func (p Probe) OK() bool {
	return !slices.ContainsFunc(p.Findings, func(f Finding) bool { return !f.OK })
}

// plan is what the probe inside tries.
type plan struct {
	Read    []string `json:"read"`    // must not be readable
	Write   []string `json:"write"`   // must not be writable (a new file in a directory, or the file)
	Path    []string `json:"path"`    // the directories of PATH: must not be writable
	Writes  []string `json:"writes"`  // must be writable
	Sockets []string `json:"sockets"` // Unix sockets of the host: must not connect
	Ports   []string `json:"ports"`   // loopback ports of the host: must not connect
	Hosts   []string `json:"hosts"`   // must be refused by the proxy
	Allowed []string `json:"allowed"` // must be let through by the proxy
}

// outcome is what the probe inside saw.
type outcome struct {
	Read    map[string]string `json:"read"`
	Write   map[string]string `json:"write"`
	Sockets map[string]string `json:"sockets"`
	Ports   map[string]string `json:"ports"`
	Hosts   map[string]string `json:"hosts"`
	Env     []string          `json:"env"`
	Tmp     []string          `json:"tmp"`
}

// ProbeAgent confines a probe as an agent call of a CLI with needs in dir
// (a new temporary directory when ""), and reports what it could reach:
// the secrets, the user's home, caches and PATH, the host's sockets and
// loopback ports, hosts through the proxy, the environment. env is the
// call's environment (nil: jlgcli's own).
func (b *Box) ProbeAgent(ctx context.Context, dir string, env []string, needs Needs) (Probe, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "jlgcli-probe-")
		if err != nil {
			return Probe{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if env == nil {
		env = os.Environ()
	}
	home := lookup(env, "HOME")
	if home == "" {
		home = b.home
	}
	p := plan{Writes: []string{dir}, Hosts: []string{"example.com:443", "github.com:443"}}
	for _, d := range b.denied(nil, home, env) {
		p.Read = append(p.Read, d)
	}
	p.Write = append(p.Write, home, filepath.Join(home, ".bashrc"), filepath.Join(home, ".config"))
	for _, c := range []string{"~/.cache", "~/go/pkg/mod", "~/.npm", "$GOMODCACHE", "$GOCACHE"} {
		if d := expand(c, home, env); d != "" && isDir(d) && !slices.Contains(p.Write, d) {
			p.Write = append(p.Write, d)
		}
	}
	for _, d := range filepath.SplitList(lookup(env, "PATH")) {
		if filepath.IsAbs(d) && isDir(d) && !slices.Contains(p.Path, d) {
			p.Path = append(p.Path, d)
		}
	}
	for _, pr := range b.protect {
		if d := expand(pr, home, env); d != "" && exists(d) {
			p.Write = append(p.Write, d)
		}
	}
	p.Sockets = listSockets()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		p.Ports = append(p.Ports, ln.Addr().String())
	}
	for _, h := range needs.Hosts {
		if e, ok := parseEndpoint(h); ok && !isLoopback(e.host) && !strings.HasPrefix(e.host, "*.") {
			port := e.port
			if port == 0 {
				port = 443
			}
			p.Allowed = append(p.Allowed, net.JoinHostPort(e.host, strconv.Itoa(port)))
		}
	}
	in, _ := json.Marshal(p)
	var out, errs bytes.Buffer
	c := proc.Cmd{Argv: []string{b.self, probeCommand}, Dir: dir, Env: env, Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errs, Grace: time.Second}
	c, release, err := b.Agent(c, needs, nil)
	if err != nil {
		return Probe{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := proc.Run(ctx, c)
	release()
	if err != nil {
		return Probe{}, err
	}
	var o outcome
	if res.ExitCode != 0 || json.Unmarshal(out.Bytes(), &o) != nil {
		return Probe{}, fmt.Errorf("the confined probe failed (exit %d): %s", res.ExitCode, strings.TrimSpace(errs.String()))
	}
	return b.judge(p, o, env, home, dir), nil
}

// judge turns what the probe saw into findings.
func (b *Box) judge(p plan, o outcome, env []string, home, dir string) Probe {
	pr := Probe{Dir: dir}
	short := func(s string) string {
		if rest, ok := strings.CutPrefix(s, home+"/"); ok && home != "" {
			return "~/" + rest
		}
		return s
	}
	add := func(area, what, result string, ok bool) {
		pr.Findings = append(pr.Findings, Finding{Area: area, What: what, Result: result, OK: ok})
	}
	for _, d := range p.Writes {
		r := o.Write[d]
		add("files", "write in the working directory", r, r == "done")
	}
	for _, d := range p.Write {
		r := o.Write[d]
		add("files", "write "+short(d), r, r != "done")
	}
	var onPath []string
	for _, d := range p.Path {
		if o.Write[d] == "done" {
			onPath = append(onPath, d)
			add("files", "write "+short(d)+", on PATH", "done", false)
		}
	}
	add("files", fmt.Sprintf("write the %d directories of PATH", len(p.Path)), fmt.Sprintf("%d denied", len(p.Path)-len(onPath)), len(onPath) == 0)
	for _, d := range p.Read {
		r := o.Read[d]
		add("secrets", "read "+short(d), r, r != "read")
	}
	// What the call sees of /tmp: its own network's directory and what it
	// needs of the host's (its home, PATH, program, working directory).
	need := map[string]bool{}
	for _, d := range hostTmp(append([]string{home, b.self, dir}, filepath.SplitList(lookup(env, "PATH"))...)) {
		if rest, ok := strings.CutPrefix(d, "/tmp/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			need[first] = true
		}
	}
	var extra []string
	own := 0
	for _, e := range o.Tmp {
		switch {
		case need[e]:
		case strings.HasPrefix(e, "jlgcli-sandbox-") && own == 0:
			own++
		default:
			extra = append(extra, e)
		}
	}
	add("files", "see the host's /tmp", fmt.Sprintf("%d entries beyond its own and what it needs", len(extra)), len(extra) == 0)
	refused := 0
	for _, s := range p.Sockets {
		if o.Sockets[s] == "connected" {
			add("sockets", "connect "+s, "connected", false)
		} else {
			refused++
		}
	}
	add("sockets", fmt.Sprintf("connect to the host's %d Unix sockets", len(p.Sockets)), fmt.Sprintf("%d refused", refused), refused == len(p.Sockets))
	for _, a := range p.Ports {
		r := o.Ports[a]
		add("network", "connect to a loopback port of the host ("+a+")", r, r != "connected")
	}
	for _, h := range p.Hosts {
		r := o.Hosts[h]
		add("network", "reach "+h+" through the proxy", r, r != "allowed")
	}
	for _, h := range p.Allowed {
		r := o.Hosts[h]
		add("network", "reach "+h+" (the CLI's API)", r, r == "allowed")
	}
	var withheld, secrets []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(o.Env, name) {
			withheld = append(withheld, name)
			if secretName(name) {
				secrets = append(secrets, name)
			}
		}
	}
	var leaked []string
	for _, name := range o.Env {
		if secretName(name) && !matchName(b.cfg.PassEnv, name) {
			leaked = append(leaked, name)
		}
	}
	sort.Strings(secrets)
	add("environment", fmt.Sprintf("variables passed: %d of %d", len(o.Env), len(env)), "withheld: "+listOrNone(secrets, "no secret-looking name"), len(leaked) == 0)
	if len(leaked) > 0 {
		add("environment", "secret-looking variables passed", strings.Join(leaked, ", "), false)
	}
	return pr
}

func listOrNone(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ", ")
}

// runProbe is the probe inside a sandbox: it reads its plan on stdin, tries
// each thing and writes what it saw on stdout.
func runProbe(stdin io.Reader, stdout io.Writer) int {
	var p plan
	if err := json.NewDecoder(stdin).Decode(&p); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	o := outcome{Read: map[string]string{}, Write: map[string]string{}, Sockets: map[string]string{}, Ports: map[string]string{}, Hosts: map[string]string{}}
	for _, f := range p.Read {
		o.Read[f] = tryRead(f)
	}
	for _, d := range slices.Concat(p.Writes, p.Write, p.Path) {
		o.Write[d] = tryWrite(d)
	}
	for _, s := range p.Sockets {
		o.Sockets[s] = tryConnect("unix", s)
	}
	for _, a := range p.Ports {
		o.Ports[a] = tryConnect("tcp", a)
	}
	for _, h := range append(slices.Clone(p.Hosts), p.Allowed...) {
		o.Hosts[h] = tryProxy(h)
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		o.Env = append(o.Env, name)
	}
	if ents, err := os.ReadDir("/tmp"); err == nil {
		for _, e := range ents {
			o.Tmp = append(o.Tmp, e.Name())
		}
	}
	_ = json.NewEncoder(stdout).Encode(o)
	return 0
}

func tryRead(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "hidden"
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil {
			return "denied"
		}
		if len(ents) == 0 {
			return "hidden (empty)"
		}
		return "read"
	}
	b, err := os.ReadFile(p)
	switch {
	case err != nil:
		return "denied"
	case len(b) == 0:
		return "hidden (empty)"
	}
	return "read"
}

func tryWrite(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "denied"
		}
		f.Close()
		os.Remove(p)
		return "done"
	}
	if fi.IsDir() {
		f := filepath.Join(p, ".jlgcli-probe-"+strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(f, []byte("probe"), 0o600); err != nil {
			return "denied"
		}
		os.Remove(f)
		return "done"
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return "denied"
	}
	f.Close()
	return "done"
}

func tryConnect(network, addr string) string {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return "refused"
	}
	c.Close()
	return "connected"
}

// tryProxy asks the sandbox's proxy for a tunnel to host:port: "allowed"
// when the proxy lets it through (even if the host cannot be reached from
// here), "refused" otherwise.
func tryProxy(hostport string) string {
	px := os.Getenv("HTTPS_PROXY")
	u, err := url.Parse(px)
	if px == "" || err != nil {
		return "no proxy"
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return "no proxy"
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(40 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "refused"
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusBadGateway:
		return "allowed"
	}
	return "refused"
}
