package modelserver

// The conformance tests run the real agent CLIs headless against the scripted
// server, each in the isolated environment of AgentEnv. They skip when a CLI
// is not installed (set JLGCLI_REQUIRE_AGENTS=1 to make that a failure); see
// FindAgent for where the CLIs are looked up. The tests that drive the CLIs
// through jlgcli itself are in internal/conformance.
//
// With JLGCLI_RECORD=1 each run's stdout, stderr and exit code are saved as
// internal/agent/testdata/<backend>/rec-<case>.{stdout,stderr,exit} (see
// RECORDED.md there). JLGCLI_CONFORMANCE_ONLY=claude or claude/text runs one
// CLI or one case; -short skips them all (unless JLGCLI_REQUIRE_AGENTS=1).
// The whole suite takes about two minutes, most of it qwen, opencode, kilo
// and copilot waiting out their retries of the 500.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// run is one CLI run.
type run struct {
	stdout, stderr []byte
	exit           int
	workdir        string
	srv            *Server
}

// runAgent runs CLI name against a fresh server playing script, in the
// environment of AgentEnv.
func runAgent(t *testing.T, name string, argsOf agentArgs, script func(workdir string) Script, prompt string, auth EnvOption, timeout time.Duration) *run {
	t.Helper()
	bin := RequireAgent(t, name)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	workdir := filepath.Join(root, "work")
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := New(script(workdir))
	srv.Logf = t.Logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	env, err := AgentEnv(name, srv.URL(), home, auth, WithPathDir(filepath.Dir(bin)))
	if err != nil {
		t.Fatal(err)
	}
	args, stdin := argsOf(prompt)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = workdir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = strings.NewReader(*stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
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
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "internal", "agent", "testdata", backend)
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
