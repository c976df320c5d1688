package agent

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// What each built-in CLI needs in the sandbox, from the evidence of
// testdata/STATE.md (each CLI traced on real calls, its code read): where it
// writes its sessions, logs and credentials (Dirs, Files), what inside them
// is configuration that runs code or steers its next session and so stays
// read-only (ReadOnly), and the variables it reads (Env). Whatever a
// confined agent can write, the user's next unconfined session of that CLI
// reads: a hook, an MCP server, a notify command, a plugin, an instruction
// file, a binary it runs from its cache must never be writable.

// needs is what the built-in CLI name needs in a sandbox, as its environment
// env places its state, for a call in the working directory cwd; its API
// hosts too. Endpoints the environment or the CLI's configuration name are
// added by endpoints.
func needs(name string, env []string, cwd string) sandbox.Needs {
	var n sandbox.Needs
	switch name {
	case "claude":
		n = claudeNeeds(env, cwd)
	case "codex":
		n = codexNeeds(env)
	case "copilot":
		n = copilotNeeds(env)
	case "gemini":
		n = geminiNeeds(env)
	case "qwen":
		n = qwenNeeds(env)
	case "opencode", "kilo":
		n = opencodeNeeds(name, env)
	default:
		return n
	}
	n.Dirs = compact(n.Dirs)
	n.ReadOnly = compact(n.ReadOnly)
	n.Env = compact(n.Env)
	return n
}

// claudeNeeds: Claude Code keeps everything in its configuration directory
// ($CLAUDE_CONFIG_DIR, else ~/.claude): sessions (projects/*/<id>.jsonl,
// what --resume reads), sessions/, todos, shell snapshots, and its
// credentials (.credentials.json, refreshed by a temporary file renamed over
// it), so the directory stays writable. Its global configuration
// (~/.claude.json, or .claude.json in $CLAUDE_CONFIG_DIR: MCP servers,
// per-project settings), which it replaces by renaming a new file over it at
// every call, stays read-only: the rename fails (EROFS in the home
// directory, EBUSY on a read-only file), so does its fallback of a write in
// place, and Claude Code goes on without a word (STATE.md).
func claudeNeeds(env []string, cwd string) sandbox.Needs {
	d := dirOf(env, "CLAUDE_CONFIG_DIR", ".claude")
	if d == "" {
		return sandbox.Needs{}
	}
	ro := under(d,
		// Settings: hooks, MCP servers, apiKeyHelper, statusLine, env,
		// permissions (user, local, cowork, managed from the server).
		"settings.json", "settings.local.json", "cowork_settings.json", "remote-settings.json", "policy-limits.json",
		// The global configuration (MCP servers, per-project settings), its
		// legacy name, and the copies of it Claude Code keeps to restore.
		".claude.json", ".config.json", "backups",
		// Instructions and what the next session loads and runs.
		"CLAUDE.md", "rules", "commands", "agents", "skills", "output-styles", "workflows", "hooks",
		"plugins", "cowork_plugins", "loop.md", "teams", "jobs", "daemon.json",
		// The environment files of SessionStart hooks, sourced before
		// each command of that session, again when it is resumed.
		"session-env")
	// Auto memory (projects/<project>/memory/MEMORY.md, loaded into every
	// session of that project): the ones that exist, and the call's own.
	if mem, err := filepath.Glob(filepath.Join(d, "projects", "*", "memory")); err == nil {
		ro = append(ro, mem...)
	}
	for _, p := range projectRoots(cwd) {
		ro = append(ro, filepath.Join(d, "projects", claudeProjectKey(p), "memory"))
	}
	if p := lookupEnv(env, "CLAUDE_CODE_PLUGIN_CACHE_DIR"); p != "" {
		ro = append(ro, p)
	}
	home := lookupEnv(env, "HOME")
	cfg := []string{filepath.Join(d, "settings.json"), filepath.Join(d, "settings.local.json"),
		filepath.Join(d, ".claude.json"), filepath.Join(home, ".claude.json")}
	ro = append(ro, referenced(home, cfg, []string{d})...)

	e := []string{"ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "MAX_THINKING_TOKENS", "MAX_MCP_OUTPUT_TOKENS",
		"MCP_TIMEOUT", "MCP_TOOL_TIMEOUT", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "BASH_MAX_OUTPUT_LENGTH",
		"API_TIMEOUT_MS", "ENABLE_PROMPT_CACHING_1H", "USE_BUILTIN_RIPGREP", "SLASH_COMMAND_TOOL_CHAR_BUDGET", "IS_SANDBOX"}
	// The cloud a user routes Claude Code through brings its own
	// credentials: only when that cloud is chosen.
	if lookupEnv(env, "CLAUDE_CODE_USE_BEDROCK") != "" {
		e = append(e, "AWS_*")
	}
	if lookupEnv(env, "CLAUDE_CODE_USE_VERTEX") != "" {
		e = append(e, "CLOUD_ML_REGION", "VERTEX_REGION_*", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CONFIG")
	}
	if lookupEnv(env, "CLAUDE_CODE_USE_FOUNDRY") != "" {
		e = append(e, "AZURE_*")
	}
	return sandbox.Needs{Dirs: []string{d}, ReadOnly: ro, Env: e,
		Hosts: []string{"api.anthropic.com", "console.anthropic.com", "claude.ai", "platform.claude.com"}}
}

// claudeProjectKey is the name of a project's directory under
// ~/.claude/projects: its path with every character but letters and digits
// made "-", cut at 200 characters and then followed by a hash of the path
// (Claude Code 2.1's $E and jCe).
func claudeProjectKey(path string) string {
	// A character of more than one byte becomes one "-" per UTF-16 unit,
	// as in JavaScript.
	var key strings.Builder
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			key.WriteRune(r)
		case r >= 0x10000:
			key.WriteString("--")
		default:
			key.WriteByte('-')
		}
	}
	k := key.String()
	if len(k) <= 200 {
		return k
	}
	var h int32
	for _, u := range utf16.Encode([]rune(path)) {
		h = h*31 + int32(u)
	}
	n := int64(h)
	if n < 0 {
		n = -n
	}
	return k[:200] + "-" + strconv.FormatInt(n, 36)
}

// projectRoots are the directories a CLI may take for the project of a call
// in cwd: cwd itself and the nearest directory above it holding .git.
func projectRoots(cwd string) []string {
	if cwd == "" {
		return nil
	}
	out := []string{cwd}
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d != cwd {
				out = append(out, d)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return out
}

// codexNeeds: Codex keeps its sessions (sessions/YYYY/MM/DD/rollout-*.jsonl,
// what `exec resume` reads), its SQLite state and logs, its shell
// snapshots and its credentials (auth.json) in $CODEX_HOME (else ~/.codex);
// its databases move to $CODEX_SQLITE_HOME when set.
func codexNeeds(env []string) sandbox.Needs {
	c := dirOf(env, "CODEX_HOME", ".codex")
	if c == "" {
		return sandbox.Needs{}
	}
	dirs := []string{c}
	if s := lookupEnv(env, "CODEX_SQLITE_HOME"); s != "" {
		dirs = append(dirs, s)
	}
	ro := under(c,
		// config.toml: notify, mcp_servers, model providers, profiles;
		// hooks.json: hooks; the managed and required layers.
		"config.toml", "hooks.json", "managed_config.toml", "requirements.toml",
		// .env: variables Codex loads into itself at start (LD_PRELOAD,
		// NODE_OPTIONS, PATH, ...).
		".env",
		// Instructions, exec-policy rules, custom agents and prompts,
		// skills (their scripts run), plugins, memories (loaded into the
		// next session), the models' cached instructions.
		"AGENTS.md", "AGENTS.override.md", "rules", "agents", "prompts", "skills", "plugins", "memories",
		"models_cache.json",
		// The helper directory Codex puts first on its commands' PATH
		// (tmp/arg0*/apply_patch, ...), and the plugin marketplace it
		// syncs (.tmp/plugins).
		"tmp", ".tmp")
	ro = append(ro, referenced(lookupEnv(env, "HOME"), []string{filepath.Join(c, "config.toml"), filepath.Join(c, "hooks.json")}, dirs)...)
	e := []string{"CODEX_*", "OPENAI_*", "AZURE_OPENAI_*"}
	e = append(e, codexKeyVars(filepath.Join(c, "config.toml"))...)
	return sandbox.Needs{Dirs: dirs, ReadOnly: ro, Env: e,
		Hosts: []string{"api.openai.com", "chatgpt.com", "auth.openai.com"}}
}

// codexKeyVar finds the variables a codex config.toml names for its model
// providers' keys and headers: env_key = "NAME", env_http_headers = {
// "Header" = "NAME" }.
var codexKeyVar = regexp.MustCompile(`(?m)^\s*env_key\s*=\s*"([A-Za-z_][A-Za-z0-9_]*)"`)
var codexHeaderVars = regexp.MustCompile(`(?m)^\s*env_http_headers\s*=\s*\{([^}]*)\}`)
var tomlValue = regexp.MustCompile(`=\s*"([A-Za-z_][A-Za-z0-9_]*)"`)

func codexKeyVars(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range codexKeyVar.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	for _, m := range codexHeaderVars.FindAllStringSubmatch(string(b), -1) {
		for _, v := range tomlValue.FindAllStringSubmatch(m[1], -1) {
			out = append(out, v[1])
		}
	}
	return out
}

// copilotNeeds: Copilot keeps its sessions (session-state/<id>/, what
// --resume reads), session-store.db, logs and config.json (its own state,
// replaced by a rename at every call) in $COPILOT_HOME (else ~/.copilot).
// It runs itself from the package it extracts into its cache
// ($COPILOT_PKG_CACHE_HOME/pkg, $COPILOT_CACHE_HOME/pkg,
// $XDG_CACHE_HOME/copilot/pkg, ~/.copilot/pkg): it takes the newest version
// found there, so none of them may be writable.
func copilotNeeds(env []string) sandbox.Needs {
	p := dirOf(env, "COPILOT_HOME", ".copilot")
	if p == "" {
		return sandbox.Needs{}
	}
	ro := under(p,
		// Settings (hooks, trusted folders, permissions), MCP and LSP
		// servers, BYOK providers.
		"settings.json", "mcp-config.json", "mcp-config", "lsp-config.json", "permissions-config.json",
		"providers.json", "mcp-installations.json", "mcp-activations.json",
		// Hooks, custom agents, skills, instructions, plugins, and the
		// packages it runs.
		"hooks", "agents", "skills", "instructions", "copilot-instructions.md", "installed-plugins", "plugins",
		"extensions", "pkg")
	ro = append(ro, copilotPackages(env)...)
	ro = append(ro, referenced(lookupEnv(env, "HOME"), []string{filepath.Join(p, "settings.json"), filepath.Join(p, "mcp-config.json"),
		filepath.Join(p, "lsp-config.json")}, []string{p})...)
	return sandbox.Needs{Dirs: []string{p}, ReadOnly: ro,
		// A GitHub token given to Copilot is good on api.github.com,
		// one of its hosts: it reaches whatever the token may do there.
		Env: []string{"COPILOT_*", "GITHUB_COPILOT_*", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST",
			"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"},
		Hosts: []string{"api.githubcopilot.com", "*.githubcopilot.com", "api.github.com", "github.com", "copilot-proxy.githubusercontent.com"}}
}

// copilotPackages are the directories Copilot's loader runs a version of
// itself from (its pkg roots), where the build caches make them writable.
func copilotPackages(env []string) []string {
	var out []string
	for _, k := range []string{"COPILOT_PKG_CACHE_HOME", "COPILOT_CACHE_HOME"} {
		if v := lookupEnv(env, k); v != "" {
			out = append(out, filepath.Join(v, "pkg"))
		}
	}
	if c := dirOf(env, "XDG_CACHE_HOME", ".cache"); c != "" {
		out = append(out, filepath.Join(c, "copilot", "pkg"))
	}
	return out
}

// geminiNeeds: Gemini CLI keeps its sessions (tmp/<project>/chats, what
// --resume reads), history, projects.json (replaced by a rename at each
// call) and its credentials (oauth_creds.json) in ~/.gemini, the home being
// $GEMINI_CLI_HOME when set. It rewrites settings.json in place only to
// migrate settings of an older version; read-only, the migration is skipped
// and the call goes on (STATE.md).
func geminiNeeds(env []string) sandbox.Needs {
	g := filepath.Join(dirOf(env, "GEMINI_CLI_HOME", ""), ".gemini")
	if g == ".gemini" {
		return sandbox.Needs{}
	}
	ro := under(g,
		// Settings (hooks, MCP servers, tools), trusted folders and hooks,
		// policies, and .env, loaded into the CLI's environment.
		"settings.json", "trustedFolders.json", "trusted_hooks.json", "policies", ".env",
		// Instructions (save_memory appends to GEMINI.md), commands,
		// agents, skills, extensions (MCP servers, hooks, commands).
		"GEMINI.md", "AGENTS.md", "commands", "agents", "skills", "extensions", "hooks")
	if p := lookupEnv(env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		ro = append(ro, p)
	}
	ro = append(ro, referenced(lookupEnv(env, "HOME"), []string{filepath.Join(g, "settings.json")}, []string{g})...)
	return sandbox.Needs{Dirs: []string{g}, ReadOnly: ro,
		Env:   []string{"GEMINI_*", "GOOGLE_*", "CLOUDSDK_CONFIG"},
		Hosts: []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com", "www.googleapis.com"}}
}

// qwenNeeds: Qwen Code keeps its sessions (projects/<project>/chats, what
// --resume reads), tmp/<project>/, usage records and its credentials
// (oauth_creds.json) in $QWEN_HOME (else ~/.qwen); its runtime files move to
// $QWEN_RUNTIME_DIR when set. Its launcher runs the version of itself that
// updates/npm/<hash>/active.json names, so that stays read-only.
func qwenNeeds(env []string) sandbox.Needs {
	q := dirOf(env, "QWEN_HOME", ".qwen")
	if q == "" {
		return sandbox.Needs{}
	}
	dirs := []string{q}
	if r := lookupEnv(env, "QWEN_RUNTIME_DIR"); r != "" {
		dirs = append(dirs, r)
	}
	ro := under(q,
		// Settings (hooks, MCP servers, model providers), trust, .env
		// (loaded into the CLI's environment; it may even move QWEN_HOME),
		// MCP approvals.
		"settings.json", "trustedFolders.json", ".env", "mcp-approvals.json",
		// Instructions (output-language.md is one, written once), rules,
		// memory, commands, agents, skills, extensions, output styles.
		"QWEN.md", "AGENTS.md", "output-language.md", "rules", "memory", "commands", "agents", "skills",
		"extensions", "extension-store", "output-styles", "hooks", "policies", "locales",
		// The versions of itself the launcher runs.
		"updates")
	for _, k := range []string{"QWEN_CODE_MEMORY_BASE_DIR", "QWEN_CODE_TRUSTED_FOLDERS_PATH", "QWEN_CODE_MCP_APPROVALS_PATH"} {
		if p := lookupEnv(env, k); p != "" {
			ro = append(ro, p)
		}
	}
	settings := filepath.Join(q, "settings.json")
	ro = append(ro, referenced(lookupEnv(env, "HOME"), []string{settings}, dirs)...)
	e := []string{"QWEN_*", "OPENAI_*", "DASHSCOPE_*", "ANTHROPIC_*", "GEMINI_API_KEY", "GEMINI_MODEL", "GOOGLE_API_KEY",
		"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS"}
	e = append(e, jsonKeyVars(settings)...)
	return sandbox.Needs{Dirs: dirs, ReadOnly: ro, Env: e,
		Hosts: []string{"dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "chat.qwen.ai", "portal.qwen.ai"}}
}

// jsonEnvKey finds the variables a Qwen Code settings.json names for its
// model providers' keys ("envKey": "NAME").
var jsonEnvKey = regexp.MustCompile(`"envKey"\s*:\s*"([A-Za-z_][A-Za-z0-9_]*)"`)

func jsonKeyVars(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range jsonEnvKey.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// opencodeNeeds: opencode and its fork Kilo keep their sessions (opencode.db
// or kilo.db, storage/, snapshot/) in $XDG_DATA_HOME/<name> and their locks
// and recent models in $XDG_STATE_HOME/<name>; Kilo writes its command
// policy at every run. At start they make their configuration directory
// ($XDG_CONFIG_HOME/<name>), write a .gitignore there when it has none (and
// stop when that fails), and make bin/ in their cache ($XDG_CACHE_HOME/<name>),
// so both are made when missing; what the configuration directory holds
// (config, plugins, tools, agents, commands, AGENTS.md, node_modules) and the
// whole cache (the provider packages they install and import, the tools they
// download into bin/, the models catalog) stay read-only: a provider
// package or tool not yet installed cannot be installed by a confined call
// (STATE.md). auth.json names remote configurations (a "wellknown" entry:
// the next session fetches its config, plugins included): read-only unless
// it holds an OAuth login, whose tokens are refreshed.
func opencodeNeeds(name string, env []string) sandbox.Needs {
	dir := func(k, def string) string {
		if d := dirOf(env, k, def); d != "" {
			return filepath.Join(d, name)
		}
		return ""
	}
	data, state := dir("XDG_DATA_HOME", ".local/share"), dir("XDG_STATE_HOME", ".local/state")
	config, cache := dir("XDG_CONFIG_HOME", ".config"), dir("XDG_CACHE_HOME", ".cache")
	if data == "" {
		return sandbox.Needs{}
	}
	prefix := strings.ToUpper(name)
	dirs := []string{data, state, config, cache, filepath.Join(cache, "bin")}
	ro := under(config, name+".json", name+".jsonc", "opencode.json", "opencode.jsonc", "config.json", "config",
		"AGENTS.md", "CLAUDE.md", "agent", "agents", "command", "commands", "mode", "modes", "plugin", "plugins",
		"skill", "skills", "tool", "tools", "rules", "workflows", "themes", "package.json", "package-lock.json",
		"bun.lock", "bun.lockb", "npm-shrinkwrap.json", "yarn.lock", ".npmrc", "node_modules")
	ro = append(ro, cache)
	// Tools and plugins kept with the data, and Kilo's memory (loaded into
	// the next session of a project).
	ro = append(ro, under(data, "bin", "plugin", "plugins", "memory")...)
	for _, f := range []string{"auth.json", "auth-v2.json"} {
		if f = filepath.Join(data, f); !refreshes(f) {
			ro = append(ro, f)
		}
	}
	for _, k := range []string{prefix + "_CONFIG_DIR", prefix + "_MODELS_PATH"} {
		if p := lookupEnv(env, k); p != "" {
			ro = append(ro, p)
		}
	}
	e := []string{prefix + "_*", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"}
	hosts := []string{"opencode.ai", "models.dev"}
	if name == "kilo" {
		e = append(e, "KILOCODE_*")
		hosts = []string{"kilo.ai", "*.kilo.ai", "api.kilocode.ai", "models.dev"}
		// Kilo's command policy, which it writes at every run.
		dirs = append(dirs, filepath.Join(filepath.Dir(state), "kilo-sandbox-policy"))
	}
	// The providers' keys: the usual ones, and those the configuration
	// names ({env:NAME}).
	e = append(e, providerKeys...)
	var cfg []string
	for _, f := range []string{name + ".json", name + ".jsonc", "config.json", "opencode.json", "opencode.jsonc"} {
		cfg = append(cfg, filepath.Join(config, f))
	}
	if f := lookupEnv(env, prefix+"_CONFIG"); f != "" {
		cfg = append(cfg, f)
	}
	for _, f := range cfg {
		if b, err := os.ReadFile(f); err == nil {
			e = append(e, envRefs(string(b))...)
		}
	}
	e = append(e, envRefs(lookupEnv(env, prefix+"_CONFIG_CONTENT"))...)
	ro = append(ro, referenced(lookupEnv(env, "HOME"), cfg, []string{data, state})...)
	return sandbox.Needs{Dirs: dirs, ReadOnly: ro, Env: e, Hosts: hosts}
}

// oauthEntry finds an OAuth login in opencode's auth.json.
var oauthEntry = regexp.MustCompile(`"type"\s*:\s*"oauth"`)

// refreshes tells whether the credentials file f holds an OAuth login,
// whose tokens the CLI refreshes (so it must stay writable).
func refreshes(f string) bool {
	b, err := os.ReadFile(f)
	return err == nil && oauthEntry.Match(b)
}

// providerKeys are the variables opencode and Kilo read for the keys of the
// usual providers (models.dev's "env" of each).
var providerKeys = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
	"GEMINI_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "TOGETHER_AI_API_KEY",
	"FIREWORKS_API_KEY", "CEREBRAS_API_KEY", "DEEPINFRA_API_KEY", "PERPLEXITY_API_KEY", "AZURE_API_KEY",
	"AZURE_RESOURCE_NAME", "MOONSHOT_API_KEY", "ZHIPU_API_KEY", "DASHSCOPE_API_KEY", "KILO_API_KEY"}

// envRef finds opencode's {env:NAME} substitutions.
var envRef = regexp.MustCompile(`\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

func envRefs(text string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// under joins each name to dir.
func under(dir string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// pathToken finds what looks like a path in a configuration file: a hook's
// or MCP server's command, a notify program, a status line script.
var pathToken = regexp.MustCompile(`(?:~|\$HOME|\$\{HOME\}|/)[^\s"'\x60,;|&<>(){}\[\]\\=]*`)

// referenced are the existing files that the configuration files cfg name
// inside the writable directories within (a status line script in
// ~/.claude, a hook's script, an MCP server's entry point); for a program,
// its directory too (its siblings are its modules) unless that is one of
// within or directly in one (which may be the CLI's state). "~" and $HOME
// are home.
func referenced(home string, cfg, within []string) []string {
	var out []string
	for _, f := range cfg {
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 4<<20 {
			continue
		}
		for _, tok := range pathToken.FindAllString(string(b), -1) {
			p := tok
			for _, pre := range []string{"~", "$HOME", "${HOME}"} {
				if rest, ok := strings.CutPrefix(tok, pre); ok && (rest == "" || rest[0] == '/') {
					if home == "" {
						p = ""
					} else {
						p = home + rest
					}
				}
			}
			if p == "" || !filepath.IsAbs(p) {
				continue
			}
			p = filepath.Clean(p)
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			for _, w := range within {
				if w == "" || !strings.HasPrefix(p, w+string(filepath.Separator)) {
					continue
				}
				out = append(out, p)
				if parent := filepath.Dir(p); parent != w && filepath.Dir(parent) != w && isCode(p, fi) {
					out = append(out, parent)
				}
			}
		}
	}
	return out
}

// isCode tells whether the file p looks like a program: executable, or a
// script by its extension.
func isCode(p string, fi os.FileInfo) bool {
	switch filepath.Ext(p) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".sh", ".bash", ".zsh", ".rb", ".pl", ".php", ".lua", ".jar":
		return true
	}
	return fi.Mode()&0o111 != 0
}

// compact drops empty and repeated entries, keeping the first of each.
func compact(s []string) []string {
	var out []string
	for _, v := range s {
		if v != "" && v != "." && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
