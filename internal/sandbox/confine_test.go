package sandbox

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// boxOf is a box of cfg (mode on) that protects protect.
func boxOf(t *testing.T, cfg Config, protect ...string) *Box {
	t.Helper()
	needBwrap(t)
	cfg.Mode = On
	b, _, err := New(cfg, protect...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sh runs script with bash in dir with env, confined by run (nil:
// unconfined), and returns its output.
func sh(t *testing.T, confine func(proc.Cmd) (proc.Cmd, func(), error), dir string, env []string, script string) string {
	t.Helper()
	var out, errs bytes.Buffer
	c := proc.Cmd{Argv: []string{"bash", "-c", script}, Dir: dir, Env: env, Stdout: &out, Stderr: &errs}
	release := func() {}
	if confine != nil {
		var err error
		if c, release, err = confine(c); err != nil {
			t.Fatal(err)
		}
	}
	_, err := proc.Run(context.Background(), c)
	release()
	if err != nil {
		t.Fatal(err)
	}
	return out.String() + errs.String()
}

func agentOf(b *Box, n Needs, explicit ...string) func(proc.Cmd) (proc.Cmd, func(), error) {
	return func(c proc.Cmd) (proc.Cmd, func(), error) { return b.Agent(c, n, explicit) }
}

func checkOf(b *Box, explicit ...string) func(proc.Cmd) (proc.Cmd, func(), error) {
	return func(c proc.Cmd) (proc.Cmd, func(), error) { return b.Check(c, explicit) }
}

func listenUnix(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func want(t *testing.T, what, got string, in, out []string) {
	t.Helper()
	for _, w := range in {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q missing from %q", what, w, got)
		}
	}
	for _, w := range out {
		if strings.Contains(got, w) {
			t.Errorf("%s: %q in %q", what, w, got)
		}
	}
}

// TestPrivateTmpAndSockets: a confined call has a /tmp of its own (what it
// writes there is not the host's; it does not see the host's files there)
// and reaches no Unix socket of the host — one in /tmp (a tmux server's),
// one in a directory it can read (its home) — while the same shell
// unconfined reaches both. bash's /dev/tcp has no Unix sockets: python3
// connects.
func TestPrivateTmpAndSockets(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	b := boxOf(t, Config{})
	home, work := t.TempDir(), t.TempDir()
	tmux, err := os.MkdirTemp("/tmp", "tmux-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmux)
	listenUnix(t, filepath.Join(tmux, "default"))
	listenUnix(t, filepath.Join(home, "editor.sock"))
	os.WriteFile(filepath.Join(tmux, "secret.txt"), []byte("HOST-TMP-FILE"), 0o600)
	marker := "/tmp/jlgcli-private-tmp-test-" + filepath.Base(work)
	defer os.Remove(marker)
	script := `
for s in ` + filepath.Join(tmux, "default") + ` "$HOME/editor.sock"; do
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected", sys.argv[1])' "$s" 2>/dev/null || echo "refused $s"
done
cat ` + filepath.Join(tmux, "secret.txt") + ` 2>/dev/null
echo mine > ` + marker + ` && echo wrote-tmp
echo "tmpdir=$TMPDIR"
`
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	got := sh(t, agentOf(b, Needs{}), work, env, script)
	want(t, "confined", got, []string{"refused " + filepath.Join(tmux, "default"), "refused " + home + "/editor.sock", "wrote-tmp", "tmpdir=/tmp"},
		[]string{"connected", "HOST-TMP-FILE"})
	if _, err := os.Stat(marker); err == nil {
		t.Error("confined: a file written in /tmp is in the host's /tmp")
	}
	got = sh(t, checkOf(b), work, env, script)
	want(t, "confined check", got, []string{"refused " + filepath.Join(tmux, "default")}, []string{"connected", "HOST-TMP-FILE"})
	got = sh(t, nil, work, env, script)
	want(t, "unconfined (the attack must work without the sandbox)", got,
		[]string{"connected " + filepath.Join(tmux, "default"), "connected " + home + "/editor.sock", "HOST-TMP-FILE"}, nil)
}

// TestEnvAllowList: a confined call gets what it needs of jlgcli's
// environment and what the user named, never the secrets beside them; a
// check gets no secret-looking variable the run gives unless passEnv
// names it. Unconfined, everything passes.
func TestEnvAllowList(t *testing.T) {
	b := boxOf(t, Config{PassEnv: []string{"MY_TOOL_*", "DB_PASSWORD"}})
	work := t.TempDir()
	env := []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "GOFLAGS=-mod=mod",
		"AWS_SECRET_ACCESS_KEY=aws-secret", "GITHUB_TOKEN=gh-token", "OPENAI_API_KEY=openai-key", "RANDOM_SETTING=random",
		"MY_TOOL_MODE=fast", "ANTHROPIC_API_KEY=anthropic-key", "RUN_EXTRA=extra", "DB_PASSWORD=db", "API_TOKEN_FOR_TESTS=tok"}
	got := sh(t, agentOf(b, Needs{Env: []string{"ANTHROPIC_*"}}, "RUN_EXTRA"), work, env, "env")
	want(t, "agent", got, []string{"LANG=C.UTF-8", "GOFLAGS=-mod=mod", "MY_TOOL_MODE=fast", "ANTHROPIC_API_KEY=anthropic-key", "RUN_EXTRA=extra", "DB_PASSWORD=db", "IS_SANDBOX=1"},
		[]string{"aws-secret", "gh-token", "openai-key", "RANDOM_SETTING", "tok"})
	got = sh(t, checkOf(b, "RUN_EXTRA", "API_TOKEN_FOR_TESTS"), work, env, "env")
	want(t, "check", got, []string{"RUN_EXTRA=extra", "DB_PASSWORD=db"}, []string{"aws-secret", "gh-token", "openai-key", "anthropic-key", "tok"})
	got = sh(t, nil, work, env, "env")
	want(t, "unconfined", got, []string{"aws-secret", "gh-token", "openai-key"}, nil)
}

// TestTrustedEnv: a variable a project's file set keeps its value for the
// call, but what the sandbox decides with reads jlgcli's own.
func TestTrustedEnv(t *testing.T) {
	b := &Box{cfg: Config{ProjectEnv: []string{"XDG_CACHE_HOME", "JLGCLI_TEST_UNSET_VAR"}}}
	t.Setenv("XDG_CACHE_HOME", "/home/user/.cache")
	got := b.Trusted([]string{"XDG_CACHE_HOME=/home/user", "JLGCLI_TEST_UNSET_VAR=/", "PATH=/bin"})
	if strings.Join(got, " ") != "PATH=/bin XDG_CACHE_HOME=/home/user/.cache" {
		t.Errorf("Trusted = %q", got)
	}
}

// TestReadOnlyNeeds: of a CLI's state directory, the call writes its
// sessions, not its configuration; a configuration file it creates is
// removed after the call. Unconfined, both stick.
func TestReadOnlyNeeds(t *testing.T) {
	b := boxOf(t, Config{})
	for _, confined := range []bool{true, false} {
		home, work := t.TempDir(), t.TempDir()
		os.MkdirAll(filepath.Join(home, ".cli"), 0o700)
		os.WriteFile(filepath.Join(home, ".cli", "settings.json"), []byte("{}"), 0o600)
		needs := Needs{Dirs: []string{"~/.cli"}, ReadOnly: []string{"~/.cli/settings.json", "~/.cli/hooks.json", "~/.cli/plugins"}}
		var confine func(proc.Cmd) (proc.Cmd, func(), error)
		if confined {
			confine = agentOf(b, needs)
		}
		got := sh(t, confine, work, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, `
echo session > ~/.cli/session.jsonl && echo wrote-session
echo '{"hooks":"evil"}' > ~/.cli/settings.json && echo wrote-settings
mv ~/.cli/settings.json ~/.cli/old.json 2>/dev/null && echo moved-settings
echo '{"evil":1}' > ~/.cli/hooks.json && echo wrote-hooks
mkdir -p ~/.cli/plugins && echo evil > ~/.cli/plugins/p.js && echo wrote-plugin
true`)
		settings, _ := os.ReadFile(filepath.Join(home, ".cli", "settings.json"))
		_, hooksErr := os.Stat(filepath.Join(home, ".cli", "hooks.json"))
		_, pluginErr := os.Stat(filepath.Join(home, ".cli", "plugins"))
		if confined {
			want(t, "confined", got, []string{"wrote-session", "removed " + filepath.Join(home, ".cli", "hooks.json")}, []string{"wrote-settings", "moved-settings"})
			if string(settings) != "{}" || hooksErr == nil || pluginErr == nil {
				t.Errorf("confined: settings %q, hooks.json kept: %v, plugins kept: %v", settings, hooksErr == nil, pluginErr == nil)
			}
		} else if hooksErr != nil || pluginErr != nil || !strings.Contains(got, "wrote-settings") {
			t.Errorf("unconfined: the writes must stick: %q", got)
		}
	}
}

// TestPathNotWritable: a directory of PATH is never writable to a call,
// even inside a writable one; a working directory on PATH is refused.
func TestPathNotWritable(t *testing.T) {
	b := boxOf(t, Config{})
	home, work := t.TempDir(), t.TempDir()
	bin := filepath.Join(work, "bin")
	os.MkdirAll(bin, 0o755)
	env := []string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin"}
	got := sh(t, agentOf(b, Needs{}), work, env, `echo x > bin/ls && echo wrote-bin; echo y > work.txt && echo wrote-work; true`)
	want(t, "confined", got, []string{"wrote-work"}, []string{"wrote-bin"})
	c := proc.Cmd{Argv: []string{"true"}, Dir: bin, Env: env}
	if _, _, err := b.Agent(c, Needs{}, nil); err == nil || !strings.Contains(err.Error(), "on PATH") {
		t.Errorf("a working directory on PATH: %v, want a refusal", err)
	}
	got = sh(t, nil, work, env, `echo x > bin/ls && echo wrote-bin`)
	want(t, "unconfined", got, []string{"wrote-bin"}, nil)
}

// TestChecksNetwork: by default a check reaches the package registries of
// its project's language through the proxy and nothing else (not a
// loopback port of the host); checksNetwork = true gives it the machine's
// network; false none.
func TestChecksNetwork(t *testing.T) {
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "host") }))
	defer host.Close()
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "go.mod"), []byte("module m\n"), 0o644)
	env := []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	script := `
exec 3<>/dev/tcp/127.0.0.1/` + port(host.URL) + ` 2>/dev/null && echo reached-host-port
[ -n "$HTTPS_PROXY" ] && for h in proxy.golang.org:443 example.com:443; do
  code=$(printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' $h $h | (exec 4<>/dev/tcp/127.0.0.1/${HTTPS_PROXY##*:}; cat >&4; head -c 12 <&4) | tail -c 3)
  echo "proxy $h $code"
done
true`
	got := sh(t, checkOf(boxOf(t, Config{})), work, env, script)
	want(t, "default", got, []string{"proxy example.com:443 403"}, []string{"reached-host-port", "proxy proxy.golang.org:443 403"})
	if !strings.Contains(got, "proxy proxy.golang.org:443 200") && !strings.Contains(got, "proxy proxy.golang.org:443 502") {
		t.Errorf("default: the Go proxy must be let through: %q", got)
	}
	got = sh(t, checkOf(boxOf(t, Config{ChecksHostNetwork: true})), work, env, script)
	want(t, "checksNetwork = true", got, []string{"reached-host-port"}, []string{"proxy"})
	got = sh(t, checkOf(boxOf(t, Config{ChecksOffline: true})), work, env, script)
	want(t, "checksNetwork = false", got, nil, []string{"reached-host-port", "proxy"})
}

// TestGoCaches: with the run's caches, a confined go gets a module the
// user has from their module cache (read-only, through the file://
// proxy, no network) into the run's own, and cannot write the user's;
// unconfined, the same go writes the user's.
func TestGoCaches(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	real, _ := exec.Command(goBin, "env", "GOMODCACHE").Output()
	src := filepath.Join(strings.TrimSpace(string(real)), "cache", "download", "github.com", "google", "go-cmp", "@v")
	if _, err := os.Stat(filepath.Join(src, "v0.7.0.zip")); err != nil {
		t.Skip("go-cmp v0.7.0 is not in this machine's module cache")
	}
	user := t.TempDir() // the user's module cache: a copy of that module's download
	dl := filepath.Join(user, "cache", "download", "github.com", "google", "go-cmp", "@v")
	os.MkdirAll(dl, 0o755)
	for _, f := range []string{"list", "v0.7.0.info", "v0.7.0.mod", "v0.7.0.zip", "v0.7.0.ziphash"} {
		if b, err := os.ReadFile(filepath.Join(src, f)); err == nil {
			os.WriteFile(filepath.Join(dl, f), b, 0o644)
		}
	}
	runCaches := filepath.Join(t.TempDir(), "run")
	b := boxOf(t, Config{CacheDir: runCaches})
	defer b.RemoveCaches()
	work := t.TempDir()
	env := []string{"HOME=" + t.TempDir(), "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "GOMODCACHE=" + user, "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local"}
	script := `go mod download github.com/google/go-cmp@v0.7.0 && echo downloaded
echo "modcache=$(go env GOMODCACHE)"
echo evil > ` + filepath.Join(user, "planted.go") + ` 2>/dev/null && echo wrote-user-cache
true`
	got := sh(t, agentOf(b, Needs{}), work, env, script)
	want(t, "confined", got, []string{"downloaded", "modcache=" + filepath.Join(runCaches, "agent", "go-mod")}, []string{"wrote-user-cache"})
	if _, err := os.Stat(filepath.Join(runCaches, "agent", "go-mod", "github.com", "google", "go-cmp@v0.7.0", "cmp", "compare.go")); err != nil {
		t.Errorf("the module is not in the run's cache: %v", err)
	}
	got = sh(t, checkOf(b), work, env, `echo "modcache=$(go env GOMODCACHE)"`)
	want(t, "check", got, []string{"modcache=" + filepath.Join(runCaches, "check", "go-mod")}, nil)
	if err := b.RemoveCaches(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(runCaches); err == nil {
		t.Error("the run's caches are still there")
	}
	got = sh(t, nil, work, env, script)
	want(t, "unconfined", got, []string{"wrote-user-cache"}, nil)
}

// TestControlReadOnly: with git's control files of a loop at a repository's
// top given (WithControl), a confined agent still commits (objects, refs,
// the index) but cannot write .git/config nor add a hook, nor move .git
// aside to plant another; unconfined it can do all of it.
func TestControlReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	box := boxOf(t, Config{})
	for _, confined := range []bool{true, false} {
		work := t.TempDir()
		gitIn := func(args ...string) {
			c := exec.Command("git", append([]string{"-C", work, "-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
		gitIn("init", "-q")
		os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644)
		gitIn("add", "-A")
		gitIn("commit", "-q", "-m", "first")
		g := filepath.Join(work, ".git")
		var confine func(proc.Cmd) (proc.Cmd, func(), error)
		if confined {
			confine = agentOf(box.WithControl([]string{g, filepath.Join(g, "config"), filepath.Join(g, "hooks")}), Needs{})
		}
		got := sh(t, confine, work, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, `
echo b > b.txt && git add b.txt && git -c user.name=A -c user.email=a@example.com commit -q -m second && echo committed
printf '[core]\n\tfsmonitor = /tmp/payload\n' >> .git/config 2>/dev/null && echo wrote-config
echo 'echo pwned' > .git/hooks/post-commit 2>/dev/null && echo wrote-hook
mv .git .git-aside 2>/dev/null && echo moved-git
true`)
		if confined {
			want(t, "confined", got, []string{"committed"}, []string{"wrote-config", "wrote-hook", "moved-git"})
		} else {
			want(t, "unconfined", got, []string{"committed", "wrote-config", "wrote-hook", "moved-git"}, nil)
		}
	}
}

// TestStateLinkNotFollowed: a CLI's state file that an earlier call turned
// into a link to the home is not followed into the next call's writable
// set; without that rule (a link the user made, outside what calls
// write), it is.
func TestStateLinkNotFollowed(t *testing.T) {
	b := boxOf(t, Config{})
	home, work := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cli"), 0o700)
	os.Symlink(home, filepath.Join(home, ".cli", "state.json")) // what a hostile call left
	needs := Needs{Dirs: []string{"~/.cli"}, Files: []string{"~/.cli/state.json"}}
	got := sh(t, agentOf(b, needs), work, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, `echo pwned > ~/.bashrc 2>/dev/null && echo wrote-bashrc; true`)
	want(t, "linked state", got, []string{"is a symbolic link where a confined call could have made it"}, []string{"wrote-bashrc"})
	// A link of the user's own (the directory itself, in the read-only
	// home) is followed: ~/.cli -> a dotfiles directory.
	dot := filepath.Join(home, "dotfiles", "cli")
	os.MkdirAll(dot, 0o700)
	os.RemoveAll(filepath.Join(home, ".cli"))
	os.Symlink(dot, filepath.Join(home, ".cli"))
	got = sh(t, agentOf(b, Needs{Dirs: []string{"~/.cli"}}), work, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, `echo s > ~/.cli/session && echo wrote-session; true`)
	want(t, "the user's link", got, []string{"wrote-session"}, nil)
}

// TestProgramReadOnly: the program a call runs, installed in the CLI's own
// state directory (~/.cli/local/node_modules/...), is read-only to the
// call while the rest of that directory is not; unconfined it is written.
func TestProgramReadOnly(t *testing.T) {
	b := boxOf(t, Config{})
	for _, confined := range []bool{true, false} {
		home, work := t.TempDir(), t.TempDir()
		pkg := filepath.Join(home, ".cli", "local", "node_modules", "cli")
		os.MkdirAll(pkg, 0o755)
		prog := filepath.Join(pkg, "cli.sh")
		os.WriteFile(prog, []byte("#!/bin/sh\necho 'echo replaced > $HOME/.cli/local/node_modules/cli/cli.sh' | sh 2>/dev/null && echo wrote-program\necho s > $HOME/.cli/session && echo wrote-session\n"), 0o755)
		c := proc.Cmd{Argv: []string{prog}, Dir: work, Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}}
		var out, errs bytes.Buffer
		c.Stdout, c.Stderr = &out, &errs
		release := func() {}
		if confined {
			var err error
			if c, release, err = b.Agent(c, Needs{Dirs: []string{"~/.cli"}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := proc.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		release()
		if confined {
			want(t, "confined", out.String(), []string{"wrote-session"}, []string{"wrote-program"})
		} else {
			want(t, "unconfined", out.String(), []string{"wrote-program"}, nil)
		}
	}
}

// TestAllowReadSocket: a socket of the host the user gives back with
// allowRead (Docker's, for testcontainers) is reachable; the others not.
func TestAllowReadSocket(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	home, work := t.TempDir(), t.TempDir()
	listenUnix(t, filepath.Join(home, "docker.sock"))
	listenUnix(t, filepath.Join(home, "other.sock"))
	b := boxOf(t, Config{AllowRead: []string{"~/docker.sock"}})
	got := sh(t, agentOf(b, Needs{}), work, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, `
for s in docker other; do
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected", sys.argv[1])' "$HOME/$s.sock" 2>/dev/null || echo "refused $s"
done`)
	want(t, "confined", got, []string{"connected " + home + "/docker.sock", "refused other"}, nil)
}
