package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proxyPort is the port of the proxy inside the sandbox's own loopback
// (the next free one when an endpoint takes it).
const proxyPort = 3128

// network is the way out of one call's sandbox: a Unix socket per loopback
// endpoint, relayed to that port of the machine, and one to an HTTP proxy
// that lets through only the allowed hosts. Inside, jlgcli's helper listens
// on the same loopback ports and relays to the sockets.
type network struct {
	listeners []net.Listener
	relays    []relay // inside port → socket
	proxy     int     // the proxy's port inside
	servers   []*http.Server
	wg        sync.WaitGroup
}

type relay struct {
	addr, socket string
}

// endpoint is a host and port a call may reach.
type endpoint struct {
	host string
	port int // 0: 80 and 443
}

// parseEndpoint reads "https://host:port/path", "host:port", "host" or
// "*.domain".
func parseEndpoint(s string) (endpoint, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return endpoint{}, false
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return endpoint{}, false
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443}[u.Scheme]
		}
		return endpoint{host: strings.ToLower(u.Hostname()), port: port}, true
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		port, err := strconv.Atoi(p)
		if err != nil {
			return endpoint{}, false
		}
		return endpoint{host: strings.ToLower(h), port: port}, true
	}
	return endpoint{host: strings.ToLower(strings.Trim(s, "[]"))}, true
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allows tells whether the proxy lets a request to host:port through.
func allows(eps []endpoint, host string, port int) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	for _, e := range eps {
		match := e.host == host
		if d, ok := strings.CutPrefix(e.host, "*."); ok {
			match = strings.HasSuffix(host, "."+d)
		}
		if match && (e.port == port || e.port == 0 && (port == 80 || port == 443)) {
			return true
		}
	}
	return false
}

// listen opens the way out of a call's sandbox in dir.
func (b *Box) listen(dir string, hosts []string) (*network, error) {
	n := &network{}
	var eps []endpoint
	ports := map[int]bool{}
	for _, h := range append(slices.Clone(hosts), b.cfg.AllowHosts...) {
		e, ok := parseEndpoint(h)
		if !ok {
			continue
		}
		if isLoopback(e.host) && e.port != 0 {
			if ports[e.port] {
				continue
			}
			ports[e.port] = true
			sock := filepath.Join(dir, "port-"+strconv.Itoa(e.port))
			ln, err := net.Listen("unix", sock)
			if err != nil {
				n.close()
				return nil, fmt.Errorf("sandbox network: %w", err)
			}
			n.listeners = append(n.listeners, ln)
			n.relays = append(n.relays, relay{addr: "127.0.0.1:" + strconv.Itoa(e.port), socket: sock})
			target := net.JoinHostPort("127.0.0.1", strconv.Itoa(e.port))
			n.wg.Add(1)
			go func() { defer n.wg.Done(); forward(ln, "tcp", target) }()
			continue
		}
		eps = append(eps, e)
	}
	n.proxy = proxyPort
	for ports[n.proxy] {
		n.proxy++
	}
	sock := filepath.Join(dir, "proxy")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		n.close()
		return nil, fmt.Errorf("sandbox network: %w", err)
	}
	n.listeners = append(n.listeners, ln)
	n.relays = append(n.relays, relay{addr: "127.0.0.1:" + strconv.Itoa(n.proxy), socket: sock})
	srv := &http.Server{Handler: &proxy{allowed: eps}, ReadHeaderTimeout: 30 * time.Second}
	n.servers = append(n.servers, srv)
	n.wg.Add(1)
	go func() { defer n.wg.Done(); _ = srv.Serve(ln) }()
	return n, nil
}

// helperArgs are the arguments of the helper that relays inside.
func (n *network) helperArgs() []string {
	var a []string
	for _, r := range n.relays {
		a = append(a, "--relay", r.addr+"="+r.socket)
	}
	return a
}

// proxyEnv points the CLIs' HTTP clients at the proxy; loopback goes
// direct (to the relayed ports).
func (n *network) proxyEnv(env []string) []string {
	p := "http://127.0.0.1:" + strconv.Itoa(n.proxy)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = setEnv(env, k, p)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		env = setEnv(env, k, "localhost,127.0.0.1,::1")
	}
	return env
}

func (n *network) close() {
	for _, s := range n.servers {
		_ = s.Close()
	}
	for _, l := range n.listeners {
		_ = l.Close()
	}
	n.wg.Wait()
}

// forward relays each connection of ln to target (of network "tcp" or
// "unix") until ln is closed.
func forward(ln net.Listener, network, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			t, err := net.DialTimeout(network, target, 10*time.Second)
			if err != nil {
				return
			}
			defer t.Close()
			pipe(c, t)
		}()
	}
}

// pipe copies both ways until either side ends.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// proxy is the allow-listing HTTP proxy: CONNECT tunnels and plain HTTP
// requests to the allowed hosts, 403 for any other.
type proxy struct {
	allowed []endpoint
	rp      *httputil.ReverseProxy
	once    sync.Once
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port := r.Host, 0
	if h, ps, err := net.SplitHostPort(r.Host); err == nil {
		host = h
		port, _ = strconv.Atoi(ps)
	}
	if r.Method != http.MethodConnect {
		if r.URL.Host == "" {
			http.Error(w, "jlgcli sandbox: this is a proxy", http.StatusBadRequest)
			return
		}
		host = r.URL.Hostname()
		port, _ = strconv.Atoi(r.URL.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[r.URL.Scheme]
		}
	}
	if !allows(p.allowed, host, port) {
		http.Error(w, fmt.Sprintf("jlgcli sandbox: %s is not an allowed host (add it to [sandbox] allowHosts)", net.JoinHostPort(host, strconv.Itoa(port))), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	p.once.Do(func() {
		p.rp = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.Out.URL = pr.In.URL; pr.Out.Host = pr.In.Host }}
	})
	p.rp.ServeHTTP(w, r)
}

func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	var d net.Dialer
	t, err := d.DialContext(ctx, "tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		t.Close()
		return
	}
	defer c.Close()
	defer t.Close()
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := t.Write(b); err != nil {
			return
		}
	}
	pipe(c, t)
}
