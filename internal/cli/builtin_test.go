package cli_test

// In-process tests of what testscript cannot reach: built-in backends found
// on PATH under their own names (claude, codex, ...), here fake executables
// written to a temporary directory.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/cli"
)

// fakeCLI writes an executable shell script named name into dir.
func fakeCLI(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// runCLI runs jlgcli in-process with PATH = bin:/usr/bin:/bin and an empty
// configuration, and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	work := t.TempDir()
	env := map[string]string{
		"PATH":            bin + ":/usr/bin:/bin",
		"HOME":            work,
		"XDG_CONFIG_HOME": filepath.Join(work, "xdg"),
	}
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, cli.Stdio{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv:  func(k string) string { return env[k] },
		Environ: environ,
		Dir:     work,
	})
	return code, out.String(), errb.String()
}

// A Claude Code stand-in: answers --version, and for -p prints a
// stream-json session whose result echoes the first line of the prompt read
// on stdin.
const fakeClaude = `
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
prompt=$(head -n 1; cat >/dev/null)
echo '{"type":"system","subtype":"init","session_id":"sess-1"}'
echo '{"type":"mystery","whatever":true}'
printf '{"type":"result","subtype":"success","is_error":false,"result":"got: %s\\nDONE","session_id":"sess-1","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":5}}\n' "$prompt"
`

func TestNoBackendConfiguredPicksFirstInstalled(t *testing.T) {
	bin := t.TempDir()
	fakeCLI(t, bin, "gemini", `echo "0.61.0"`)
	fakeCLI(t, bin, "claude", fakeClaude)
	code, out, errOut := runCLI(t, bin, "run", "--json", "hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "using claude, the first installed of claude, codex, copilot, gemini, opencode") {
		t.Errorf("stderr does not say which backend was picked:\n%s", errOut)
	}
	var res struct {
		Backend      string  `json:"backend"`
		Text         string  `json:"text"`
		SessionID    string  `json:"sessionId"`
		CostUSD      float64 `json:"costUsd"`
		InputTokens  int64   `json:"inputTokens"`
		OutputTokens int64   `json:"outputTokens"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Backend != "claude" || res.Text != "got: hello\nDONE" || res.SessionID != "sess-1" || res.CostUSD != 0.01 || res.InputTokens != 100 || res.OutputTokens != 5 {
		t.Errorf("result %+v", res)
	}
}

func TestBuiltinLoopThroughAdapter(t *testing.T) {
	bin := t.TempDir()
	fakeCLI(t, bin, "claude", fakeClaude)
	code, out, errOut := runCLI(t, bin, "loop", "-b", "claude", "do it")
	if code != 0 || out != "got: do it\nDONE\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, out, errOut)
	}
}

func TestUnsupportedVersionExits64(t *testing.T) {
	bin := t.TempDir()
	fakeCLI(t, bin, "codex", `echo "codex-cli 0.1.0"`)
	code, _, errOut := runCLI(t, bin, "run", "-b", "codex", "hello")
	if code != 64 || !strings.Contains(errOut, "backend-unsupported") || !strings.Contains(errOut, "older than 0.58.0") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

func TestUnauthenticatedFirstCallExits6(t *testing.T) {
	bin := t.TempDir()
	fakeCLI(t, bin, "claude", `
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
cat >/dev/null
echo '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"s"}'
exit 1
`)
	code, _, errOut := runCLI(t, bin, "loop", "-b", "claude", "hello")
	if code != 6 || !strings.Contains(errOut, "backend-unauthenticated") || !strings.Contains(errOut, "Not logged in") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
}

func TestBackendsListsBuiltinsWithVersions(t *testing.T) {
	bin := t.TempDir()
	fakeCLI(t, bin, "claude", fakeClaude)
	fakeCLI(t, bin, "codex", `echo "codex-cli 0.1.0"`)
	fakeCLI(t, bin, "qwen", `echo "0.24.4"`)
	fakeCLI(t, bin, "kilo", `echo "7.7.7"`)
	code, out, errOut := runCLI(t, bin, "backends", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rows []struct {
		Name      string `json:"name"`
		Installed bool   `json:"installed"`
		Path      string `json:"path"`
		Version   string `json:"version"`
		Status    string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Status + " " + r.Version
		if r.Installed != (r.Path != "") {
			t.Errorf("%s: installed=%v path=%q", r.Name, r.Installed, r.Path)
		}
	}
	want := map[string]string{
		"claude": "available 2.1.197", "codex": "unsupported 0.1.0",
		"copilot": "missing ", "gemini": "missing ", "opencode": "missing ",
		"qwen": "available 0.24.4", "kilo": "available 7.7.7",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}
