package sandbox

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/proc"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "on": On, " off ": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("yes"); err == nil || !strings.Contains(err.Error(), `"yes"`) {
		t.Errorf("ParseMode(yes) = %v; want an error naming the value", err)
	}
}

func TestAllows(t *testing.T) {
	var eps []endpoint
	for _, h := range []string{"api.anthropic.com", "https://example.com:8443/v1", "*.githubcopilot.com", "10.0.0.5:9000"} {
		e, ok := parseEndpoint(h)
		if !ok {
			t.Fatalf("parseEndpoint(%q) failed", h)
		}
		eps = append(eps, e)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"api.anthropic.com", 443, true},
		{"API.Anthropic.com", 80, true},
		{"api.anthropic.com", 22, false},
		{"evil.com", 443, false},
		{"anthropic.com", 443, false},
		{"example.com", 8443, true},
		{"example.com", 443, false},
		{"api.individual.githubcopilot.com", 443, true},
		{"githubcopilot.com.evil.com", 443, false},
		{"10.0.0.5", 9000, true},
		{"10.0.0.5", 9001, false},
	} {
		if got := allows(eps, c.host, c.port); got != c.want {
			t.Errorf("allows(%s:%d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"", "a b", "ftp://"} {
		if CheckHost(bad) == nil {
			t.Errorf("CheckHost(%q) accepted it", bad)
		}
	}
	if CheckPath("relative/dir") == nil || CheckPath("~/ok") != nil || CheckPath("/abs") != nil {
		t.Error("CheckPath: want ~/ and absolute paths only")
	}
}

// TestProxy: the proxy passes plain HTTP and CONNECT to an allowed host
// and answers 403 for any other.
func TestProxy(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer target.Close()
	u, _ := url.Parse(target.URL)
	e, _ := parseEndpoint(u.Host)
	px := httptest.NewServer(&proxy{allowed: []endpoint{e}})
	defer px.Close()
	pu, _ := url.Parse(px.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}

	resp, err := client.Get(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello" {
		t.Fatalf("allowed host: %d %q", resp.StatusCode, b)
	}
	resp, err = client.Get("http://not-allowed.example:" + u.Port() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "allowHosts") {
		t.Fatalf("other host: %d %q; want 403 naming allowHosts", resp.StatusCode, b)
	}

	// CONNECT: the tunnel carries bytes both ways.
	c, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT "+u.Host+" HTTP/1.1\r\nHost: "+u.Host+"\r\n\r\nGET / HTTP/1.1\r\nHost: "+u.Host+"\r\nConnection: close\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	all, _ := io.ReadAll(c)
	if !bytes.Contains(all, []byte("200 Connection established")) || !bytes.HasSuffix(all, []byte("hello")) {
		t.Fatalf("CONNECT: %q", all)
	}
}

func needBwrap(t *testing.T) *Box {
	t.Helper()
	if _, why := Available(); why != "" {
		if os.Getenv("JLGCLI_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("JLGCLI_REQUIRE_SANDBOX=1 but %s", why)
		}
		t.Skip(why)
	}
	b, rec, err := New(Config{Mode: On})
	if err != nil || b == nil || !rec.Confined {
		t.Fatalf("New(on) = %v, %+v, %v", b, rec, err)
	}
	return b
}

// TestAgentConfined runs a shell in the sandbox, for real: it writes its
// working directory, not its home; it does not see a planted key; it
// reaches the allowed loopback port and not another; and the same shell
// unconfined does all of it.
func TestAgentConfined(t *testing.T) {
	box := needBwrap(t)
	home, work, runtime := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(runtime, "bus"), nil, 0o600)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("KEY"), 0o600)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api") }))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	defer other.Close()
	script := `echo in > in.txt && echo wrote-work
echo x > "$HOME/x" 2>/dev/null && echo wrote-home
cat "$HOME/.ssh/id_rsa" 2>/dev/null && echo
exec 3<>/dev/tcp/127.0.0.1/` + port(allowed.URL) + ` && echo reached-api
exec 4<>/dev/tcp/127.0.0.1/` + port(other.URL) + ` 2>/dev/null && echo reached-other
test -e "$XDG_RUNTIME_DIR/bus" && echo saw-bus
touch "$XDG_RUNTIME_DIR/mine" && echo wrote-runtime
true`
	run := func(confined bool) string {
		var out, errs bytes.Buffer // one each: proc copies them from two goroutines
		c := proc.Cmd{Argv: []string{"bash", "-c", script}, Dir: work, Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin", "API_BASE_URL=" + allowed.URL, "XDG_RUNTIME_DIR=" + runtime},
			Stdout: &out, Stderr: &errs}
		if confined {
			var release func()
			var err error
			c, release, err = box.Agent(c, Needs{Hosts: []string{allowed.URL}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
		}
		if _, err := proc.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		return out.String() + errs.String()
	}
	got := run(true)
	for _, want := range []string{"wrote-work", "reached-api", "wrote-runtime"} {
		if !strings.Contains(got, want) {
			t.Errorf("confined: %q missing from %q", want, got)
		}
	}
	for _, not := range []string{"wrote-home", "KEY", "reached-other", "saw-bus"} {
		if strings.Contains(got, not) {
			t.Errorf("confined: %q in %q", not, got)
		}
	}
	if _, err := os.Stat(filepath.Join(runtime, "mine")); err == nil {
		t.Error("confined: a file written in the private runtime directory is in the user's")
	}
	got = run(false)
	for _, want := range []string{"wrote-work", "wrote-home", "KEY", "reached-api", "reached-other", "saw-bus"} {
		if !strings.Contains(got, want) {
			t.Errorf("unconfined: %q missing from %q (the attack must work without the sandbox)", want, got)
		}
	}
}

func port(u string) string {
	p, _ := url.Parse(u)
	return p.Port()
}

// BenchmarkConfinedCall measures what confinement adds to one call: the
// same short command, unconfined and confined (bubblewrap, the network
// helper, the relays).
func BenchmarkConfinedCall(b *testing.B) {
	if _, why := Available(); why != "" {
		b.Skip(why)
	}
	box, _, _ := New(Config{Mode: On})
	dir := b.TempDir()
	for _, confined := range []bool{false, true} {
		name := "unconfined"
		if confined {
			name = "confined"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c := proc.Cmd{Argv: []string{"true"}, Dir: dir}
				release := func() {}
				if confined {
					var err error
					if c, release, err = box.Agent(c, Needs{Hosts: []string{"http://127.0.0.1:1"}}, nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := proc.Run(context.Background(), c); err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
