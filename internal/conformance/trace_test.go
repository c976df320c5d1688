//go:build clistate_trace

package conformance

// A harness that gathers the evidence of internal/agent/testdata/STATE.md:
// a loop of two iterations of one real CLI (the second resumes the session
// of the first, the model writes a file with the CLI's tool in between), run
// by a jlgcli binary under strace, unconfined or confined, with the CLI's
// state where AgentEnv puts it or in the default places of a bare HOME.
//
//	go build -o /tmp/clistate/jlgcli ./cmd/jlgcli
//	CLISTATE_OUT=/tmp/clistate CLISTATE_CLI=claude CLISTATE_SANDBOX=off \
//	  go test -tags clistate_trace -run TestTraceState ./internal/conformance -v
//
// CLISTATE_BARE=1 drops the variables that move the CLI's state
// (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, QWEN_HOME, XDG_*); the CLI
// then keeps it under HOME as a user's does.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ms "github.com/jlgcli/jlgcli/internal/modelserver"
)

func TestTraceState(t *testing.T) {
	name, out := os.Getenv("CLISTATE_CLI"), os.Getenv("CLISTATE_OUT")
	if name == "" || out == "" {
		t.Skip("CLISTATE_CLI and CLISTATE_OUT unset")
	}
	mode := os.Getenv("CLISTATE_SANDBOX")
	if mode == "" {
		mode = "off"
	}
	tag := name + "-" + mode + os.Getenv("CLISTATE_TAG")
	if os.Getenv("CLISTATE_BARE") == "1" {
		tag += "-bare"
	}
	bin := ms.RequireAgent(t, name)
	root := filepath.Join(out, tag)
	_ = os.RemoveAll(root)
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// CLISTATE_SEED="rel/path=content;...": files made under home first
	// (a user's existing configuration).
	for _, kv := range strings.Split(os.Getenv("CLISTATE_SEED"), ";") {
		if rel, content, ok := strings.Cut(kv, "="); ok {
			f := filepath.Join(home, rel)
			_ = os.MkdirAll(filepath.Dir(f), 0o755)
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv := ms.New(ms.Script{
		ms.Text("Part one is done.", ms.U(100, 10)),
		ms.WriteFile(filepath.Join(work, "out.txt"), "written\n").WithUsage(ms.U(200, 20)),
		ms.Text("Part two is done.\nDONE", ms.U(300, 30)),
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env, err := ms.AgentEnv(name, srv.URL(), home, ms.WithPathDir(filepath.Dir(bin)), ms.WithModelPrice(priceIn, priceOut))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CLISTATE_BARE") == "1" {
		var kept []string
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			switch {
			case k == "CLAUDE_CONFIG_DIR", k == "GEMINI_CLI_HOME", k == "QWEN_HOME", strings.HasPrefix(k, "XDG_"):
			case k == "CODEX_HOME":
				// codex's endpoint is in its config.toml: move it home.
				_ = os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
			default:
				kept = append(kept, kv)
			}
		}
		env = kept
	}
	jl := filepath.Join(out, "jlgcli")
	args := []string{"-f", "-s", "200", "-e", "trace=%file,rename,renameat,renameat2,openat,unlink,unlinkat,mkdir,mkdirat,write", "-e", "signal=none",
		"-o", filepath.Join(root, "strace.log"), jl, "loop", "--json", "-b", name, "--cwd", work, "--session", "continue",
		"--max-iterations", "3", "--timeout", "5m", "--sandbox", mode, "Do part one, then part two. End with DONE."}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "strace", args...)
	cmd.Env, cmd.Dir = env, work
	b, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(root, "output.txt"), b, 0o644)
	_ = os.WriteFile(filepath.Join(root, "env.txt"), []byte(strings.Join(env, "\n")+"\n"), 0o644)
	t.Logf("%s: %v\n%s", tag, err, clip(string(b), 3000))
	for i, q := range srv.Requests() {
		t.Logf("request %d: %s %s turn=%d err=%q", i, q.Method, q.Path, q.Turn, q.Error)
	}
}
