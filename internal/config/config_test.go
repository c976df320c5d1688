package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxIterations != 10 || c.Timeout != 5*time.Minute || c.CompletionMode != completion.ModeMarker || c.Marker != "DONE" || c.NoProgressLimit != 3 || c.Backend != "" {
		t.Errorf("defaults %+v", c)
	}
	for _, k := range Keys {
		if c.Sources[k] != "default" {
			t.Errorf("%s from %q", k, c.Sources[k])
		}
	}
}

func TestLayersOverrideInOrder(t *testing.T) {
	dir := t.TempDir()
	user := write(t, filepath.Join(dir, "user.toml"), "backend = \"codex\"\nmaxIterations = 20\nnoProgressLimit = 5\ntimeoutMs = 1000\n[env]\nA = \"user\"\nB = \"user\"\n")
	project := write(t, filepath.Join(dir, "jlgcli.toml"), "maxIterations = 30\ncompletionMode = \"json\"\n[env]\nB = \"project\"\n[backends.bot]\ncommand = [\"/bin/bot\", \"--x\"]\nprompt = \"arg\"\n")
	ul, err := LoadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := LoadFile(project)
	if err != nil {
		t.Fatal(err)
	}
	el, err := EnvLayer(env(map[string]string{"JLGCLI_NO_PROGRESS_LIMIT": "0", "JLGCLI_TIMEOUT": "90s", "JLGCLI_BACKEND": "bot"}))
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	fl := &Layer{Name: "flag", NoProgressLimit: &two}
	c, err := Resolve(ul, pl, el, fl)
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend != "bot" || c.MaxIterations != 30 || c.CompletionMode != completion.ModeJSON || c.Timeout != 90*time.Second || c.NoProgressLimit != 2 {
		t.Errorf("resolved %+v", c)
	}
	if diff := cmp.Diff([]string{"A=user", "B=project"}, c.EnvList()); diff != "" {
		t.Errorf("env: %s", diff)
	}
	if diff := cmp.Diff(agent.CommandSpec{Command: []string{"/bin/bot", "--x"}, Prompt: "arg"}, c.Backends["bot"]); diff != "" {
		t.Errorf("backend: %s", diff)
	}
	wantSources := map[string]string{"backend": "environment", "maxIterations": project, "completionMode": project,
		"timeoutMs": "environment", "noProgressLimit": "flag", "marker": "default", "env": project}
	for k, v := range wantSources {
		if c.Sources[k] != v {
			t.Errorf("source of %s = %q, want %q", k, c.Sources[k], v)
		}
	}
}

func TestFileErrorsNameFileLineAndKey(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		line    int
		key     string
		msg     string
	}{
		{"backend = \"claude\"\nmaxIteration = 3\n", 2, "maxIteration", "unknown key"},
		{"maxIterations = \"ten\"\n", 1, "maxIterations", "string"},
		{"\n[backends.bot]\ncommand = [\"x\"]\nargs = 1\n", 4, "backends.bot.args", "unknown key"},
		{"[env]\nX = 1\n", 2, "env.X", "integer"},
		{"timeoutMs = 1.5\n", 1, "timeoutMs", "float"},
		{"backend = = 1\n", 1, "", "unexpected"},
	}
	for _, tt := range tests {
		p := write(t, filepath.Join(dir, "jlgcli.toml"), tt.content)
		_, err := LoadFile(p)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%q: err %v", tt.content, err)
		}
		if ce.Source != p || ce.Line != tt.line || ce.Key != tt.key || !strings.Contains(ce.Error(), tt.msg) {
			t.Errorf("%q: got %+v (%v)", tt.content, ce, err)
		}
		if !strings.HasPrefix(err.Error(), p+":") {
			t.Errorf("message %q does not start with the file", err)
		}
	}
}

func TestInvalidValues(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ content, key string }{
		{"maxIterations = 0\n", "maxIterations"},
		{"timeoutMs = -1\n", "timeoutMs"},
		{"completionMode = \"xml\"\n", "completionMode"},
		{"noProgressLimit = -2\n", "noProgressLimit"},
		{"noProgressLimit = 1\n", "noProgressLimit"},
		{"marker = \"  \"\n", "marker"},
		{"[backends.claude]\ncommand = [\"x\"]\n", "backends.claude"},
		{"[backends.bot]\ncommand = []\n", "backends.bot.command"},
		{"[backends.bot]\ncommand = [\"x\"]\nprompt = \"pipe\"\n", "backends.bot.prompt"},
	} {
		p := write(t, filepath.Join(dir, "c.toml"), tt.content)
		l, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tt.key || ce.Source != p {
			t.Errorf("%q: err %v", tt.content, err)
		}
	}
}

func TestEnvErrors(t *testing.T) {
	for _, name := range []string{"JLGCLI_MAX_ITERATIONS", "JLGCLI_NO_PROGRESS_LIMIT", "JLGCLI_TIMEOUT"} {
		_, err := EnvLayer(env(map[string]string{name: "abc"}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"90s": 90 * time.Second, "5m": 5 * time.Minute, "1500": 1500 * time.Millisecond, "1h30m": 90 * time.Minute} {
		if got, err := ParseTimeout(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseTimeout("soon"); err == nil {
		t.Error("soon parsed")
	}
}

func TestFindProjectFile(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// Above the repository root: never used.
	write(t, filepath.Join(root, ProjectFile), "")
	if got := FindProjectFile(deep); got != "" {
		t.Errorf("found %q above the repository root", got)
	}
	top := write(t, filepath.Join(repo, ProjectFile), "")
	if got := FindProjectFile(deep); got != top {
		t.Errorf("got %q, want %q", got, top)
	}
	near := write(t, filepath.Join(repo, "a", ProjectFile), "")
	if got := FindProjectFile(deep); got != near {
		t.Errorf("got %q, want the nearest %q", got, near)
	}
	// Outside a repository only the directory itself counts.
	plain := filepath.Join(root, "plain", "sub")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "plain", ProjectFile), "")
	if got := FindProjectFile(plain); got != "" {
		t.Errorf("outside a repository found %q", got)
	}
}

func TestUserFile(t *testing.T) {
	if got := UserFile(env(map[string]string{"XDG_CONFIG_HOME": "/x"})); got != "/x/jlgcli/config.toml" {
		t.Error(got)
	}
	if got := UserFile(env(map[string]string{"HOME": "/h"})); got != "/h/.config/jlgcli/config.toml" {
		t.Error(got)
	}
}

func TestRelativeCwdIsRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "jlgcli.toml"), "cwd = \"sub\"\n")
	l, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if *l.Cwd != filepath.Join(dir, "sub") {
		t.Error(*l.Cwd)
	}
}

func TestPersistenceKeys(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "jlgcli.toml"), `
stateDir = "state"
session = "continue"
stallTimeout = "2m"
maxWait = "0s"
baseline = true
checklist = "TODO.md"

[[checks]]
name = "unit"
run = ["go", "test", "./..."]
timeout = "3m"

[[checks]]
run = ["go", "vet", "./..."]

[prematureStop]
enabled = false
`)
	l, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	flags := &Layer{Name: "flag", ShellChecks: []string{"make lint"}}
	c, err := Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []Check{
		{Name: "unit", Run: []string{"go", "test", "./..."}, Timeout: 3 * time.Minute},
		{Name: "go vet ./...", Run: []string{"go", "vet", "./..."}, Timeout: DefaultCheckTimeout},
	}
	if diff := cmp.Diff(want, c.Checks); diff != "" {
		t.Errorf("checks: %s", diff)
	}
	if c.StateDir != filepath.Join(dir, "state") || c.Session != "continue" || c.StallTimeout != 2*time.Minute ||
		c.MaxWait != 0 || !c.Baseline || c.Checklist != filepath.Join(dir, "TODO.md") || c.Premature.Enabled {
		t.Errorf("config %+v", c)
	}
	// --check replaces the file's checks.
	c, err = Resolve(l, flags)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Checks) != 1 || c.Checks[0].Shell != "make lint" {
		t.Errorf("checks with --check: %+v", c.Checks)
	}
	for _, bad := range []struct{ content, key string }{
		{"session = \"sometimes\"\n", "session"},
		{"stallTimeout = \"soon\"\n", "stallTimeout"},
		{"[[checks]]\nname = \"x\"\n", "checks[0].run"},
		{"[[checks]]\nrun = [\"x\"]\ntimeout = \"-1s\"\n", "checks[0].timeout"},
	} {
		l, err := LoadFile(write(t, filepath.Join(dir, "bad.toml"), bad.content))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != bad.key {
			t.Errorf("%q: %v", bad.content, err)
		}
	}
	_, err = LoadFile(write(t, filepath.Join(dir, "bad.toml"), "[[checks]]\nrun = [\"x\"]\ncmd = 1\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "checks.cmd" || !strings.Contains(err.Error(), "name, run, timeout") {
		t.Errorf("unknown key in a check: %v", err)
	}
}
