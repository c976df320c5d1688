package modelserver

// The conformance tests run the real agent CLIs headless against the scripted
// server, each with an isolated home. They skip when a CLI is not installed
// (set JLGCLI_REQUIRE_AGENTS=1 to make that a failure). The CLIs are looked up
// in JLGCLI_CONFORMANCE_DIR when set, else in <repo>/.cache/agents/node_modules/.bin
// (where .ci/run installs them), else on PATH.
//
// With JLGCLI_RECORD=1 each run's stdout, stderr and exit code are saved as
// internal/agent/testdata/<backend>/rec-<case>.{stdout,stderr,exit} (see
// RECORDED.md there). JLGCLI_CONFORMANCE_ONLY=claude or claude/text runs one
// CLI or one case; -short skips them all (unless JLGCLI_REQUIRE_AGENTS=1).
// The whole suite takes about two minutes, most of it opencode and copilot
// waiting out their retries of the 500.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// repoRoot is the module root, found above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// agentBinDirs are the directories searched for the CLIs, before PATH.
func agentBinDirs(t *testing.T) []string {
	if d := os.Getenv("JLGCLI_CONFORMANCE_DIR"); d != "" {
		return []string{d}
	}
	return []string{filepath.Join(repoRoot(t), ".cache", "agents", "node_modules", ".bin")}
}

// findAgent returns the CLI's path, skipping (or failing, with
// JLGCLI_REQUIRE_AGENTS=1) when it is not installed.
func findAgent(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("conformance tests run on unix only")
	}
	for _, d := range agentBinDirs(t) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("agent CLI %q not found (in %s or on PATH); install the agents (see .ci/run) or set JLGCLI_CONFORMANCE_DIR", name, strings.Join(agentBinDirs(t), ", "))
	if os.Getenv("JLGCLI_REQUIRE_AGENTS") == "1" {
		t.Fatal(msg + " (JLGCLI_REQUIRE_AGENTS=1)")
	}
	t.Skip(msg)
	return ""
}

// run is one CLI run.
type run struct {
	stdout, stderr []byte
	exit           int
	workdir        string
	srv            *Server
}

// agentSetup prepares one CLI's invocation against srvURL with an isolated
// home. It returns the extra environment, the arguments and the standard
// input (nil: none).
type agentSetup func(t *testing.T, sc setupCtx) (env, args []string, stdin *string)

// setupCtx is what an agentSetup is given.
type setupCtx struct {
	url     string // the server's base URL
	home    string // the isolated home directory
	workdir string // the CLI's working directory
	prompt  string
	variant string // a case's variant of the set-up, e.g. "subscription"
}

// baseEnv is the environment every CLI starts from: nothing of the caller's
// but PATH (with the CLI's own directory first).
func baseEnv(bin, home string) []string {
	path := filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return []string{
		"PATH=" + path,
		"HOME=" + home,
		"USER=tester",
		"LOGNAME=tester",
		"SHELL=/bin/bash",
		"TERM=dumb",
		"LANG=C.UTF-8",
		"TZ=UTC",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"NO_COLOR=1",
		"CI=true",
		"DO_NOT_TRACK=1",
	}
}

// runAgent runs CLI name against a fresh server playing script.
func runAgent(t *testing.T, name string, setup agentSetup, script func(workdir string) Script, prompt, variant string, timeout time.Duration) *run {
	t.Helper()
	bin := findAgent(t, name)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	workdir := filepath.Join(root, "work")
	for _, d := range []string{home, workdir, filepath.Join(home, "tmp"), filepath.Join(home, ".config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := New(script(workdir))
	srv.Logf = t.Logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	env, args, stdin := setup(t, setupCtx{url: srv.URL(), home: home, workdir: workdir, prompt: prompt, variant: variant})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = workdir
	cmd.Env = append(baseEnv(bin, home), env...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(*stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := &run{stdout: out.Bytes(), stderr: errb.Bytes(), workdir: workdir, srv: srv}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		t.Fatalf("%s: %v", name, err)
	}
	if ctx.Err() != nil {
		t.Errorf("%s: timed out after %v", name, timeout)
	}
	t.Logf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), r.exit, clip(r.stdout), clip(r.stderr))
	for i, q := range srv.Requests() {
		t.Logf("request %d: %s %s?%s protocol=%s turn=%d aux=%v tools=%v err=%s", i, q.Method, q.Path, q.RawQuery, q.Protocol, q.Turn, q.Aux, q.Tools, q.Error)
	}
	return r
}

func clip(b []byte) string {
	if len(b) > 6000 {
		return string(b[:3000]) + "\n...\n" + string(b[len(b)-3000:])
	}
	return string(b)
}

// record saves a run under internal/agent/testdata/<backend>/ when
// JLGCLI_RECORD=1.
func record(t *testing.T, backend, name string, r *run) {
	t.Helper()
	if os.Getenv("JLGCLI_RECORD") != "1" {
		return
	}
	dir := filepath.Join(repoRoot(t), "internal", "agent", "testdata", backend)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"rec-" + name + ".stdout": r.stdout,
		"rec-" + name + ".stderr": r.stderr,
		"rec-" + name + ".exit":   []byte(strconv.Itoa(r.exit) + "\n"),
	}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
