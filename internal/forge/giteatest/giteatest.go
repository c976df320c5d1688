// Package giteatest starts a real Gitea server for tests: the binary that
// `make gitea` builds (module e2e/gitea: Gitea's dependencies never enter
// the main module), on a free loopback port, with an SQLite database in a
// directory of its own, an admin and two more users with tokens made by
// `gitea admin`, in its own process group, stopped and removed at the end.
//
// Starting one takes seconds: a test package starts one (Shared, from
// TestMain) and gives each test a repository of its own (Server.NewRepo).
// Without the binary the tests that need it skip, or fail when
// JLGCLI_REQUIRE_FORGE=1 (as in CI).
package giteatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
)

// EnvBinary names the Gitea binary; EnvRequire=1 makes a missing one a
// failure instead of a skip.
const (
	EnvBinary  = "JLGCLI_GITEA"
	EnvRequire = "JLGCLI_REQUIRE_FORGE"
)

// User is a user of the server, with an access token of every scope.
type User struct {
	Name, Password, Email, Token string
}

// The users every server has: Admin (a site admin, who owns the test
// repositories and acts as jlgcli), CI (posts commit statuses) and
// Reviewer (reviews); the last two are collaborators with write access on
// each repository NewRepo makes. Outsider is none of its collaborators:
// anyone with an account, who may read, comment and review a public
// repository's pull requests but not push.
const (
	AdminName    = "jlg"
	CIName       = "ci"
	ReviewerName = "reviewer"
	OutsiderName = "passerby"
)

// Server is a running Gitea.
type Server struct {
	// URL is its address (http://127.0.0.1:PORT); Dir its work directory.
	URL, Dir                      string
	Admin, CI, Reviewer, Outsider User
	// Started is how long it took from nothing to an API that answers.
	Started time.Duration

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	n    int
}

// Binary is the Gitea binary the tests use: $JLGCLI_GITEA, else
// .cache/gitea/gitea at the root of the main module (where `make gitea`
// puts it), "" when there is none.
func Binary() string {
	if b := os.Getenv(EnvBinary); b != "" {
		if _, err := os.Stat(b); err == nil {
			return b
		}
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			b := filepath.Join(dir, ".cache", "gitea", "gitea")
			if _, err := os.Stat(b); err == nil {
				return b
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Shared is one server for a test package, started by the first test that
// asks (Get) and stopped by Stop (from TestMain, after m.Run).
type Shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get is the package's server. Without a binary the test skips, or fails
// when JLGCLI_REQUIRE_FORGE=1; a server that does not start fails it.
func (s *Shared) Get(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "no Gitea binary: run make gitea, or set " + EnvBinary + " to one"
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s (%s=1)", msg, EnvRequire)
		}
		t.Skip(msg)
	}
	s.once.Do(func() { s.srv, s.err = Start(context.Background(), bin) })
	if s.err != nil {
		t.Fatalf("start gitea: %v", s.err)
	}
	return s.srv
}

// Stop stops the server if one was started.
func (s *Shared) Stop() {
	if s.srv != nil {
		_ = s.srv.Stop()
	}
}

// tokenLine is an access token as Gitea prints it.
var tokenLine = regexp.MustCompile(`^[0-9a-f]{40}$`)

// startTimeout is how long Start waits for the API to answer.
const startTimeout = 2 * time.Minute

// Start starts a server from binary bin (its options/ and templates/
// beside it, as `make gitea` leaves them) in a new temporary directory.
func Start(ctx context.Context, bin string) (*Server, error) {
	begin := time.Now()
	dir, err := os.MkdirTemp("", "jlgcli-gitea-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()
	for _, sub := range []string{"options", "templates"} {
		src := filepath.Join(filepath.Dir(bin), sub)
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("gitea's %s/ is not beside %s (make gitea puts it there): %w", sub, bin, err)
		}
		if err := copyTree(src, filepath.Join(dir, sub)); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	ini := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(ini, []byte(appIni(dir, port)), 0o600); err != nil {
		return nil, err
	}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--config", ini}, args...)...)
		cmd.Dir, cmd.Env = dir, env(dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("gitea %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()+out.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	if _, err := run("migrate"); err != nil {
		return nil, err
	}
	for _, u := range []struct {
		user  *User
		name  string
		admin bool
	}{{&s.Admin, AdminName, true}, {&s.CI, CIName, false}, {&s.Reviewer, ReviewerName, false}, {&s.Outsider, OutsiderName, false}} {
		*u.user = User{Name: u.name, Password: "pw-" + secret(8), Email: u.name + "@example.com"}
		args := []string{"admin", "user", "create", "--username", u.name, "--password", u.user.Password, "--email", u.user.Email, "--must-change-password=false"}
		if u.admin {
			args = append(args, "--admin")
		}
		if _, err := run(args...); err != nil {
			return nil, err
		}
		tok, err := run("admin", "user", "generate-access-token", "--username", u.name, "--token-name", "tests", "--scopes", "all", "--raw")
		if err != nil {
			return nil, err
		}
		// Gitea's own log lines (the warning about root) may come before
		// or after it: the token is the line of 40 hex digits.
		for _, l := range strings.Split(tok, "\n") {
			if l = strings.TrimSpace(l); tokenLine.MatchString(l) {
				u.user.Token = l
			}
		}
		if u.user.Token == "" {
			return nil, fmt.Errorf("gitea admin user generate-access-token printed no token: %q", tok)
		}
	}
	logf, err := os.Create(filepath.Join(dir, "web.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", ini, "web")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env(dir), logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, err
	}
	_ = logf.Close()
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	s.Started = time.Since(begin)
	ok = true
	return s, nil
}

// wait waits until the API answers, the server ends or startTimeout.
func (s *Server) wait(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/version", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("gitea web ended before it answered: %s", s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gitea web did not answer in %s: %s", startTimeout, s.logTail())
		}
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "web.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop ends the server's process group (TERM, then KILL after 10s) and
// removes its directory.
func (s *Server) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		pgid := s.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
	}
	if s.Dir != "" {
		return os.RemoveAll(s.Dir)
	}
	return nil
}

// Client is an API client acting as u.
func (s *Server) Client(u User) (*gitea.Client, error) {
	return gitea.NewClient(s.URL, gitea.SetToken(u.Token), gitea.SetGiteaVersion(""))
}

// errNoServer is the error of a Repo that Server.NewRepo did not make.
var errNoServer = errors.New("giteatest: not a repository Server.NewRepo made")

// client is an API client acting as u whose requests carry ctx.
func (s *Server) client(ctx context.Context, u User) (*gitea.Client, error) {
	if s == nil {
		return nil, errNoServer
	}
	return gitea.NewClient(s.URL, gitea.SetToken(u.Token), gitea.SetGiteaVersion(""), gitea.SetContext(ctx))
}

// Repo is a repository made for one test.
type Repo struct {
	Owner, Name string
	// CloneURL is its http address with the admin's token in it, to push.
	CloneURL string
	// URL is its http address without credentials, the origin a
	// checkout of jlgcli's has (Server.GitEnv authenticates to it).
	URL string
	// DefaultBranch is "main".
	DefaultBranch string

	srv *Server
}

// NewRepo makes a repository of the admin's for test t, named after it,
// with one commit on main (a README), CI and Reviewer collaborators with
// write access.
func (s *Server) NewRepo(t testing.TB) Repo {
	t.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("r%d-%s", s.n, sanitize(t.Name()))
	s.mu.Unlock()
	c, err := s.Client(s.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateRepo(gitea.CreateRepoOption{Name: name, AutoInit: true, DefaultBranch: "main", Readme: "Default"}); err != nil {
		t.Fatalf("create repository %s: %v", name, err)
	}
	w := gitea.AccessModeWrite
	for _, u := range []string{CIName, ReviewerName} {
		if _, err := c.AddCollaborator(s.Admin.Name, name, u, gitea.AddCollaboratorOption{Permission: &w}); err != nil {
			t.Fatalf("add %s to %s: %v", u, name, err)
		}
	}
	u, _ := url.Parse(s.URL)
	u.Path = "/" + s.Admin.Name + "/" + name + ".git"
	plain := u.String()
	u.User = url.UserPassword(s.Admin.Name, s.Admin.Token)
	return Repo{Owner: s.Admin.Name, Name: name, CloneURL: u.String(), URL: plain, DefaultBranch: "main", srv: s}
}

func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	if len(b) > 60 {
		b = b[:60]
	}
	return string(b)
}

// appIni is the configuration of a server in dir on port.
func appIni(dir string, port int) string {
	root := ""
	if os.Geteuid() == 0 {
		// Gitea refuses root without it; CI runs as root.
		root = "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true\n"
	}
	return root + fmt.Sprintf(`APP_NAME = jlgcli tests
RUN_MODE = prod
WORK_PATH = %[1]s

[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
ROOT_URL = http://127.0.0.1:%[2]d/
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
APP_DATA_PATH = %[1]s/data

[repository]
ROOT = %[1]s/repos

[security]
INSTALL_LOCK = true
SECRET_KEY = %[3]s
INTERNAL_TOKEN = %[4]s

[service]
DISABLE_REGISTRATION = true

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[actions]
ENABLED = false

[cron]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = %[1]s/log
`, dir, port, secret(32), secret(48))
}

// env is the environment of gitea's commands: the machine's, its HOME
// (where gitea's git reads its configuration) the server's directory.
func env(dir string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GITEA_") || k == "HOME" || strings.HasPrefix(k, "GIT_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+dir, "GITEA_WORK_DIR="+dir)
}

func secret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// copyTree copies directory src to dst, every file and directory writable
// by its owner (the module cache's are not).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New("copy " + p + ": not a regular file")
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = in.Close() }()
		out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return err
		}
		return out.Close()
	})
}
