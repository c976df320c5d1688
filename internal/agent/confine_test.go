package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a built-in CLI gets in the sandbox follows its environment: its
// state where the environment moves it, and the endpoints the environment
// and its configuration file name.
func TestNeedsAndEndpoints(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, "elsewhere")
	write(t, filepath.Join(codexHome, "config.toml"), "[model_providers.x]\nbase_url = \"http://127.0.0.1:9999/v1\"\n")
	env := []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "ANTHROPIC_BASE_URL=http://127.0.0.1:8888",
		`OPENCODE_CONFIG_CONTENT={"provider":{"f":{"options":{"baseURL":"http://127.0.0.1:7777/v1"}}}}`, "SOME_NAME=http://not-an-endpoint"}

	if n := needs("claude", env, ""); !slices.Equal(n.Dirs, []string{filepath.Join(home, ".claude")}) || !slices.Contains(n.Hosts, "api.anthropic.com") {
		t.Errorf("claude: %+v", n)
	}
	if n := needs("codex", env, ""); !slices.Equal(n.Dirs, []string{codexHome}) {
		t.Errorf("codex: %+v, want its state in CODEX_HOME", n)
	}
	if n := needs("kilo", append(env, "XDG_STATE_HOME=/state"), ""); !slices.Contains(n.Dirs, "/state/kilo-sandbox-policy") ||
		!slices.Contains(n.Dirs, filepath.Join(home, ".local/share/kilo")) {
		t.Errorf("kilo: %+v", n)
	}
	if n := needs("mybot", env, ""); len(n.Dirs)+len(n.Files)+len(n.Hosts)+len(n.ReadOnly)+len(n.Env) != 0 {
		t.Errorf("a command backend: %+v, want nothing", n)
	}

	got := endpoints("codex", env)
	for _, want := range []string{"http://127.0.0.1:9999/v1", "http://127.0.0.1:8888", "http://127.0.0.1:7777/v1"} {
		if !slices.Contains(got, want) {
			t.Errorf("endpoints %v: %s missing", got, want)
		}
	}
	if slices.Contains(got, "http://not-an-endpoint") {
		t.Errorf("endpoints %v: a variable that names no endpoint", got)
	}
}

// Each CLI's state stays writable where the environment puts it; its
// configuration that runs code or steers its next session (STATE.md) stays
// read-only, inside what it may write; it gets its own variables.
func TestNeedsPerCLI(t *testing.T) {
	home := t.TempDir()
	moved := filepath.Join(home, "moved")
	cases := []struct {
		name string
		env  []string
		dirs []string
		// ro are paths that must be read-only; writable, paths that must
		// not be.
		ro, writable []string
		vars         []string
	}{
		{name: "claude", env: []string{"HOME=" + home},
			dirs:     []string{"~/.claude"},
			ro:       []string{"~/.claude/settings.json", "~/.claude/settings.local.json", "~/.claude/.claude.json", "~/.claude/CLAUDE.md", "~/.claude/commands", "~/.claude/agents", "~/.claude/skills", "~/.claude/plugins", "~/.claude/hooks", "~/.claude/rules", "~/.claude/output-styles", "~/.claude/remote-settings.json", "~/.claude/session-env", "~/.claude/backups"},
			writable: []string{"~/.claude/projects", "~/.claude/.credentials.json", "~/.claude/sessions"},
			vars:     []string{"ANTHROPIC_*", "CLAUDE_*", "DISABLE_*"}},
		{name: "claude", env: []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + moved},
			dirs: []string{"$moved"},
			ro:   []string{"$moved/settings.json", "$moved/.claude.json", "$moved/CLAUDE.md"}},
		{name: "codex", env: []string{"HOME=" + home},
			dirs:     []string{"~/.codex"},
			ro:       []string{"~/.codex/config.toml", "~/.codex/hooks.json", "~/.codex/.env", "~/.codex/AGENTS.md", "~/.codex/AGENTS.override.md", "~/.codex/rules", "~/.codex/prompts", "~/.codex/skills", "~/.codex/plugins", "~/.codex/memories", "~/.codex/tmp"},
			writable: []string{"~/.codex/sessions", "~/.codex/auth.json"},
			vars:     []string{"CODEX_*", "OPENAI_*"}},
		{name: "codex", env: []string{"HOME=" + home, "CODEX_HOME=" + moved, "CODEX_SQLITE_HOME=/db"},
			dirs: []string{"$moved", "/db"}, ro: []string{"$moved/config.toml"}},
		{name: "copilot", env: []string{"HOME=" + home},
			dirs:     []string{"~/.copilot"},
			ro:       []string{"~/.copilot/settings.json", "~/.copilot/mcp-config.json", "~/.copilot/lsp-config.json", "~/.copilot/hooks", "~/.copilot/agents", "~/.copilot/skills", "~/.copilot/copilot-instructions.md", "~/.copilot/installed-plugins", "~/.copilot/pkg", "~/.cache/copilot/pkg"},
			writable: []string{"~/.copilot/session-state", "~/.copilot/config.json"},
			vars:     []string{"COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN"}},
		{name: "copilot", env: []string{"HOME=" + home, "COPILOT_HOME=" + moved, "XDG_CACHE_HOME=/c", "COPILOT_PKG_CACHE_HOME=/p"},
			dirs: []string{"$moved"}, ro: []string{"$moved/mcp-config.json", "/c/copilot/pkg", "/p/pkg"}},
		{name: "gemini", env: []string{"HOME=" + home},
			dirs:     []string{"~/.gemini"},
			ro:       []string{"~/.gemini/settings.json", "~/.gemini/.env", "~/.gemini/GEMINI.md", "~/.gemini/commands", "~/.gemini/extensions", "~/.gemini/policies", "~/.gemini/trustedFolders.json", "~/.gemini/trusted_hooks.json"},
			writable: []string{"~/.gemini/tmp", "~/.gemini/oauth_creds.json", "~/.gemini/projects.json"},
			vars:     []string{"GEMINI_*", "GOOGLE_*"}},
		{name: "gemini", env: []string{"HOME=" + home, "GEMINI_CLI_HOME=" + moved},
			dirs: []string{"$moved/.gemini"}, ro: []string{"$moved/.gemini/settings.json"}},
		{name: "qwen", env: []string{"HOME=" + home},
			dirs:     []string{"~/.qwen"},
			ro:       []string{"~/.qwen/settings.json", "~/.qwen/.env", "~/.qwen/QWEN.md", "~/.qwen/output-language.md", "~/.qwen/commands", "~/.qwen/extensions", "~/.qwen/skills", "~/.qwen/updates"},
			writable: []string{"~/.qwen/projects", "~/.qwen/tmp", "~/.qwen/oauth_creds.json"},
			vars:     []string{"QWEN_*", "OPENAI_*", "DASHSCOPE_*"}},
		{name: "qwen", env: []string{"HOME=" + home, "QWEN_HOME=" + moved, "QWEN_RUNTIME_DIR=/run/q"},
			dirs: []string{"$moved", "/run/q"}, ro: []string{"$moved/settings.json", "$moved/updates"}},
		{name: "opencode", env: []string{"HOME=" + home},
			dirs: []string{"~/.local/share/opencode", "~/.local/state/opencode", "~/.config/opencode", "~/.cache/opencode"},
			ro: []string{"~/.config/opencode/opencode.json", "~/.config/opencode/opencode.jsonc", "~/.config/opencode/config.json", "~/.config/opencode/AGENTS.md",
				"~/.config/opencode/plugin", "~/.config/opencode/plugins", "~/.config/opencode/agent", "~/.config/opencode/command", "~/.config/opencode/tool",
				"~/.config/opencode/node_modules", "~/.config/opencode/package.json", "~/.cache/opencode", "~/.local/share/opencode/bin",
				"~/.local/share/opencode/auth.json"},
			writable: []string{"~/.local/share/opencode/storage", "~/.local/share/opencode/opencode.db", "~/.local/state/opencode/locks", "~/.config/opencode/.gitignore"},
			vars:     []string{"OPENCODE_*", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"}},
		{name: "kilo", env: []string{"HOME=" + home, "XDG_CONFIG_HOME=/cfg", "XDG_CACHE_HOME=/cache", "XDG_STATE_HOME=/state"},
			dirs:     []string{"~/.local/share/kilo", "/state/kilo", "/cfg/kilo", "/cache/kilo", "/state/kilo-sandbox-policy"},
			ro:       []string{"/cfg/kilo/kilo.json", "/cfg/kilo/plugin", "/cache/kilo", "~/.local/share/kilo/memory", "~/.local/share/kilo/auth.json"},
			writable: []string{"~/.local/share/kilo/storage", "/state/kilo-sandbox-policy"},
			vars:     []string{"KILO_*", "KILOCODE_*"}},
	}
	abs := func(p string) string {
		p = strings.Replace(p, "$moved", moved, 1)
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return p
	}
	for _, c := range cases {
		n := needs(c.name, c.env, "")
		for _, d := range c.dirs {
			if !slices.Contains(n.Dirs, abs(d)) {
				t.Errorf("%s %v: Dirs %v, want %s", c.name, c.env[1:], n.Dirs, d)
			}
		}
		for _, p := range c.ro {
			if !slices.Contains(n.ReadOnly, abs(p)) {
				t.Errorf("%s %v: ReadOnly lacks %s", c.name, c.env[1:], p)
			}
		}
		for _, p := range c.writable {
			for _, r := range n.ReadOnly {
				if inside(abs(p), r) {
					t.Errorf("%s: %s is read-only (%s), want it writable", c.name, p, r)
				}
			}
			if !slices.ContainsFunc(n.Dirs, func(d string) bool { return inside(abs(p), d) }) {
				t.Errorf("%s: %s is in none of %v, want it writable", c.name, p, n.Dirs)
			}
		}
		for _, v := range c.vars {
			if !slices.Contains(n.Env, v) {
				t.Errorf("%s: Env %v lacks %s", c.name, n.Env, v)
			}
		}
		// Nothing read-only lies outside what the CLI may write (where
		// it would be read-only anyway), but for the build caches.
		for _, r := range n.ReadOnly {
			if !slices.ContainsFunc(n.Dirs, func(d string) bool { return inside(r, d) }) && !strings.Contains(r, "/copilot/pkg") && !strings.HasSuffix(r, "/pkg") {
				t.Errorf("%s: ReadOnly %s is in none of %v", c.name, r, n.Dirs)
			}
		}
		if len(n.Files) > 0 {
			t.Errorf("%s: Files %v, want none (a state file outside Dirs is configuration: ~/.claude.json)", c.name, n.Files)
		}
	}
}

func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// The clouds Claude Code may be routed through get their credentials only
// when chosen; a codex provider's env_key, a Qwen Code provider's envKey,
// opencode's {env:NAME} are given.
func TestNeedsEnvFromConfiguration(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home}
	if n := needs("claude", env, ""); slices.Contains(n.Env, "AWS_*") || slices.Contains(n.Env, "AZURE_*") {
		t.Errorf("claude without Bedrock or Foundry gets %v", n.Env)
	}
	if n := needs("claude", append(env, "CLAUDE_CODE_USE_BEDROCK=1"), ""); !slices.Contains(n.Env, "AWS_*") {
		t.Errorf("claude on Bedrock: Env %v lacks AWS_*", n.Env)
	}
	if n := needs("claude", append(env, "CLAUDE_CODE_USE_VERTEX=1"), ""); !slices.Contains(n.Env, "CLOUD_ML_REGION") {
		t.Errorf("claude on Vertex: Env %v lacks CLOUD_ML_REGION", n.Env)
	}
	write(t, filepath.Join(home, ".codex", "config.toml"), "[model_providers.fake]\nenv_key = \"FAKE_API_KEY\"\nenv_http_headers = { \"X-Org\" = \"FAKE_ORG\" }\n")
	if n := needs("codex", env, ""); !slices.Contains(n.Env, "FAKE_API_KEY") || !slices.Contains(n.Env, "FAKE_ORG") {
		t.Errorf("codex: Env %v lacks its provider's FAKE_API_KEY and FAKE_ORG", n.Env)
	}
	write(t, filepath.Join(home, ".qwen", "settings.json"), `{"modelProviders":{"openai":[{"id":"m","envKey":"MY_QWEN_KEY"}]}}`)
	if n := needs("qwen", env, ""); !slices.Contains(n.Env, "MY_QWEN_KEY") {
		t.Errorf("qwen: Env %v lacks MY_QWEN_KEY", n.Env)
	}
	write(t, filepath.Join(home, ".config", "opencode", "opencode.json"), `{"provider":{"x":{"options":{"apiKey":"{env:MY_X_KEY}"}}}}`)
	if n := needs("opencode", append(env, `OPENCODE_CONFIG_CONTENT={"provider":{"y":{"options":{"apiKey":"{env:MY_Y_KEY}"}}}}`), ""); !slices.Contains(n.Env, "MY_X_KEY") || !slices.Contains(n.Env, "MY_Y_KEY") {
		t.Errorf("opencode: Env %v lacks MY_X_KEY or MY_Y_KEY", n.Env)
	}
}

// opencode's auth.json names remote configurations the next session
// fetches (plugins included): read-only, unless it holds an OAuth login,
// which is refreshed.
func TestNeedsOpencodeAuth(t *testing.T) {
	home := t.TempDir()
	auth := filepath.Join(home, ".local", "share", "opencode", "auth.json")
	write(t, auth, `{"anthropic":{"type":"api","key":"sk"}}`)
	if n := needs("opencode", []string{"HOME=" + home}, ""); !slices.Contains(n.ReadOnly, auth) {
		t.Errorf("API keys only: ReadOnly %v lacks auth.json", n.ReadOnly)
	}
	write(t, auth, `{"anthropic":{"type": "oauth","refresh":"r","access":"a","expires":1}}`)
	if n := needs("opencode", []string{"HOME=" + home}, ""); slices.Contains(n.ReadOnly, auth) {
		t.Errorf("an OAuth login: auth.json is read-only, want it refreshed")
	}
}

// A script the user's configuration runs from inside the CLI's writable
// state (Claude Code's status line ~/.claude/statusline.sh, an MCP server's
// entry point) is read-only, with the directory of its modules; the state
// directories next to it are not.
func TestNeedsReferencedScripts(t *testing.T) {
	home := t.TempDir()
	d := filepath.Join(home, ".claude")
	write(t, filepath.Join(d, "statusline.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(d, "mcp", "srv", "index.js"), "")
	write(t, filepath.Join(d, "projects", "p", "x.jsonl"), "")
	write(t, filepath.Join(home, "bin", "tool"), "")
	write(t, filepath.Join(d, "settings.json"), `{"statusLine":{"type":"command","command":"~/.claude/statusline.sh --x"},
		"hooks":{"Stop":[{"hooks":[{"type":"command","command":"$HOME/bin/tool; cat `+d+`/projects/p/x.jsonl"}]}]}}`)
	write(t, filepath.Join(home, ".claude.json"), `{"mcpServers":{"s":{"command":"node","args":["${HOME}/.claude/mcp/srv/index.js"]}}}`)
	n := needs("claude", []string{"HOME=" + home}, "")
	for _, want := range []string{filepath.Join(d, "statusline.sh"), filepath.Join(d, "mcp", "srv", "index.js"), filepath.Join(d, "mcp", "srv"), filepath.Join(d, "projects", "p", "x.jsonl")} {
		if !slices.Contains(n.ReadOnly, want) {
			t.Errorf("ReadOnly lacks %s: %v", want, n.ReadOnly)
		}
	}
	for _, not := range []string{filepath.Join(d, "projects"), filepath.Join(d, "projects", "p"), d, filepath.Join(home, "bin", "tool")} {
		if slices.Contains(n.ReadOnly, not) {
			t.Errorf("ReadOnly holds %s", not)
		}
	}
}

// Claude Code's auto memory of the call's project and of every project that
// has one is read-only; the project's directory is named as Claude Code
// names it (checked against its own function, run with node).
func TestNeedsClaudeMemory(t *testing.T) {
	home := t.TempDir()
	d := filepath.Join(home, ".claude")
	write(t, filepath.Join(d, "projects", "-other-repo", "memory", "MEMORY.md"), "")
	repo := filepath.Join(home, "src", "my_repo.v2")
	write(t, filepath.Join(repo, ".git", "HEAD"), "")
	sub := filepath.Join(repo, "sub")
	n := needs("claude", []string{"HOME=" + home}, sub)
	for _, p := range []string{"-other-repo", claudeProjectKey(sub), claudeProjectKey(repo)} {
		if want := filepath.Join(d, "projects", p, "memory"); !slices.Contains(n.ReadOnly, want) {
			t.Errorf("ReadOnly lacks %s: %v", want, n.ReadOnly)
		}
	}
	long := "/home/user/" + strings.Repeat("very-long-directory-name/", 10) + "projét"
	for path, want := range map[string]string{
		"/home/me/src/my_repo.v2": "-home-me-src-my-repo-v2",
		"/tmp/é😀x":                "-tmp----x",
		long: "-home-user-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-" +
			"very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-dire-4f56h7",
	} {
		if got := claudeProjectKey(path); got != want {
			t.Errorf("claudeProjectKey(%q) = %q, want %q", path, got, want)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
