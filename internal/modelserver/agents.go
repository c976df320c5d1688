package modelserver

// Running the real agent CLIs against a Server: where to find them, and the
// isolated environment that points each one at the server.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/jlgcli/jlgcli/internal/agent"
)

// Agents lists the agent CLIs AgentEnv knows, by backend name (the name of
// the executable too): jlgcli's built-in backends (agent.Builtins, where
// each one's npm package is kept too: agent.Package).
var Agents = slices.Clone(agent.Builtins)

// ScriptedKey is the API key the CLIs are given; the server accepts any key.
const ScriptedKey = "sk-scripted-0000000000000000"

// Auth says which credentials AgentEnv gives a CLI.
type Auth int

// The credentials.
const (
	// AuthKey gives the CLI ScriptedKey as an API key (the default).
	AuthKey Auth = iota
	// AuthNone gives no credentials at all, the endpoint otherwise as with
	// AuthKey, so that the CLI fails for want of a key before it sends
	// anything:
	//   - claude: no ANTHROPIC_API_KEY ("Not logged in · Please run /login");
	//   - codex: the provider's env_key (FAKE_API_KEY) unset ("Missing
	//     environment variable");
	//   - gemini: no GEMINI_API_KEY (exit 41);
	//   - opencode: the provider is an @ai-sdk/openai one without apiKey
	//     (ProviderAuthError: "OpenAI API key is missing");
	//   - copilot: a BYOK provider needs no key (a local one may have none),
	//     so no provider and no GitHub token at all ("No authentication
	//     information found"); COPILOT_OFFLINE is then left unset, since
	//     offline mode without a provider fails for that reason instead.
	AuthNone
	// AuthSubscription (claude only) logs in with an OAuth token as a
	// claude.ai subscriber does: only then does Claude Code read the unified
	// rate-limit headers and report the reset time (rate_limit_event and
	// "resets 5:17am (UTC)").
	AuthSubscription
)

// EnvOption adjusts AgentEnv.
type EnvOption func(*envOptions)

type envOptions struct {
	auth      Auth
	pathDirs  []string
	tz        string
	extra     []string
	priceIn   float64
	priceOut  float64
	priceSet  bool
	basePATH  string
	pathGiven bool
}

// WithAuth selects the credentials (default AuthKey).
func WithAuth(a Auth) EnvOption { return func(o *envOptions) { o.auth = a } }

// WithPathDir puts dir first on PATH, e.g. the directory of the CLI found by
// FindAgent (its npm wrapper runs node found on PATH). Repeatable: the first
// given comes first.
func WithPathDir(dir string) EnvOption {
	return func(o *envOptions) { o.pathDirs = append(o.pathDirs, dir) }
}

// WithBasePATH sets the PATH that WithPathDir directories are put before;
// default: the caller's own PATH.
func WithBasePATH(path string) EnvOption {
	return func(o *envOptions) { o.basePATH, o.pathGiven = path, true }
}

// WithTZ sets TZ (default "UTC"); "" leaves TZ out, so that the CLI uses the
// system's zone as a caller without TZ does.
func WithTZ(tz string) EnvOption { return func(o *envOptions) { o.tz = tz } }

// WithEnv appends KEY=VALUE pairs after the rest (a later pair wins).
func WithEnv(kv ...string) EnvOption { return func(o *envOptions) { o.extra = append(o.extra, kv...) } }

// WithModelPrice gives the scripted model a price, in USD per million input
// and output tokens, for the CLIs whose cost comes from a price table the
// configuration can set (opencode, kilo). Without it they report a cost of 0.
// Claude Code prices by its own table; the others report no cost.
func WithModelPrice(inPerMillion, outPerMillion float64) EnvOption {
	return func(o *envOptions) { o.priceIn, o.priceOut, o.priceSet = inPerMillion, outPerMillion, true }
}

// AgentEnv returns the complete environment in which the agent CLI backend
// (one of Agents) talks to the scripted server at serverURL (Server.URL())
// with an isolated home directory home, which must exist. Nothing of the
// caller's environment is kept but PATH: HOME, TMPDIR and XDG_* point under
// home, TERM=dumb, LANG=C.UTF-8, TZ=UTC, NO_COLOR=1, CI=true. It writes the
// configuration files the CLI reads (under home) and turns off the CLIs'
// update checks, telemetry and, where they can be, retries:
//
//   - claude: ANTHROPIC_BASE_URL=serverURL, ANTHROPIC_API_KEY (or
//     CLAUDE_CODE_OAUTH_TOKEN), CLAUDE_CONFIG_DIR=home/.claude,
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, CLAUDE_CODE_MAX_RETRIES=0,
//     DISABLE_AUTOUPDATER=1, and IS_SANDBOX=1 (as root Claude Code refuses
//     --dangerously-skip-permissions without it).
//   - codex: CODEX_HOME=home/.codex with a config.toml whose model_provider
//     "fake" is serverURL/v1 over the Responses API, key in FAKE_API_KEY,
//     request_max_retries and stream_max_retries 0, model gpt-5.5 (a model
//     codex knows: it then offers apply_patch).
//   - copilot (BYOK): COPILOT_PROVIDER_BASE_URL=serverURL/v1,
//     COPILOT_PROVIDER_TYPE=openai (Chat Completions), COPILOT_PROVIDER_API_KEY,
//     COPILOT_MODEL=fake-model, COPILOT_OFFLINE=true, COPILOT_AUTO_UPDATE=false.
//     Copilot retries a 401 twice and a 5xx five times whatever it is told.
//   - gemini: GEMINI_CLI_HOME=home with .gemini/settings.json (API-key auth,
//     folder trust off, maxAttempts 1, no update checks or telemetry),
//     GOOGLE_GEMINI_BASE_URL=serverURL, GEMINI_API_KEY.
//   - opencode: OPENCODE_CONFIG_CONTENT with the provider "fake"
//     (@ai-sdk/openai-compatible, serverURL/v1) and its model fake/m1,
//     OPENCODE_DISABLE_AUTOUPDATE=1, OPENCODE_DISABLE_MODELS_FETCH=1.
//     opencode retries 429 and 5xx five times and obeys Retry-After without
//     bound: send Retry-After: 1 to keep a test short.
//   - qwen: OPENAI_BASE_URL=serverURL/v1, OPENAI_API_KEY, OPENAI_MODEL=fake-model
//     (Chat Completions), QWEN_HOME=home/.qwen with a settings.json that
//     selects the OpenAI-compatible auth and turns off the background memory
//     and skill agents (by default, after each answer, Qwen Code asks the
//     model again to extract "memories", with tools, retrying for minutes
//     when that fails), update checks and telemetry, and with
//     model.generationConfig.maxRetries 0, which stops its own rate-limit
//     retries (by default 10, the first after 60 s). The OpenAI client
//     inside still retries a 429 or 5xx 6 times (a 500 takes over a minute,
//     a 429 obeys Retry-After).
//   - kilo: as opencode, with KILO_CONFIG_CONTENT, KILO_DISABLE_AUTOUPDATE=1
//     and KILO_DISABLE_MODELS_FETCH=1 (Kilo is an opencode fork).
//
// Nothing here depends on how the CLI is invoked: the same environment serves
// a test running the CLI directly and one running it through jlgcli.
func AgentEnv(backend, serverURL, home string, opts ...EnvOption) ([]string, error) {
	o := envOptions{tz: "UTC"}
	for _, f := range opts {
		f(&o)
	}
	if serverURL == "" {
		return nil, errors.New("modelserver: AgentEnv: no server URL (start the server first)")
	}
	if !filepath.IsAbs(home) {
		return nil, fmt.Errorf("modelserver: AgentEnv: home %q is not an absolute path", home)
	}
	if o.auth == AuthSubscription && backend != "claude" {
		return nil, fmt.Errorf("modelserver: AgentEnv: AuthSubscription is for claude, not %s", backend)
	}
	for _, d := range []string{home, filepath.Join(home, "tmp"), filepath.Join(home, ".config")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var env []string
	var err error
	switch backend {
	case "claude":
		env = claudeEnv(serverURL, home, o)
	case "codex":
		env, err = codexEnv(serverURL, home, o)
	case "copilot":
		env = copilotEnv(serverURL, o)
	case "gemini":
		env, err = geminiEnv(serverURL, home, o)
	case "opencode":
		env = opencodeEnv("OPENCODE", serverURL, o)
	case "kilo":
		env = opencodeEnv("KILO", serverURL, o)
	case "qwen":
		env, err = qwenEnv(serverURL, home, o)
	default:
		return nil, fmt.Errorf("modelserver: AgentEnv: unknown agent CLI %q (known: %s)", backend, strings.Join(Agents, ", "))
	}
	if err != nil {
		return nil, err
	}
	out := append(baseEnv(home, o), env...)
	return append(out, o.extra...), nil
}

// baseEnv is the environment every CLI starts from.
func baseEnv(home string, o envOptions) []string {
	path := os.Getenv("PATH")
	if o.pathGiven {
		path = o.basePATH
	}
	if len(o.pathDirs) > 0 {
		dirs := strings.Join(o.pathDirs, string(os.PathListSeparator))
		if path == "" {
			path = dirs
		} else {
			path = dirs + string(os.PathListSeparator) + path
		}
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + home,
		"USER=tester",
		"LOGNAME=tester",
		"SHELL=/bin/bash",
		"TERM=dumb",
		"LANG=C.UTF-8",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"NO_COLOR=1",
		"CI=true",
		"DO_NOT_TRACK=1",
	}
	if o.tz != "" {
		env = append(env, "TZ="+o.tz)
	}
	return env
}

func claudeEnv(url, home string, o envOptions) []string {
	env := []string{
		"ANTHROPIC_BASE_URL=" + url,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1",
	}
	switch o.auth {
	case AuthKey:
		env = append(env, "ANTHROPIC_API_KEY="+ScriptedKey)
	case AuthSubscription:
		env = append(env, "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-scripted")
	}
	return env
}

func codexEnv(url, home string, o envOptions) ([]string, error) {
	codexHome := filepath.Join(home, ".codex")
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url)
	if err := writeFile(filepath.Join(codexHome, "config.toml"), cfg); err != nil {
		return nil, err
	}
	env := []string{"CODEX_HOME=" + codexHome}
	if o.auth == AuthKey {
		env = append(env, "FAKE_API_KEY="+ScriptedKey)
	}
	return env, nil
}

func copilotEnv(url string, o envOptions) []string {
	if o.auth == AuthNone {
		return []string{"COPILOT_AUTO_UPDATE=false"}
	}
	return []string{
		"COPILOT_PROVIDER_BASE_URL=" + url + "/v1",
		"COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=" + ScriptedKey,
		"COPILOT_MODEL=fake-model",
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
	}
}

func geminiEnv(url, home string, o envOptions) ([]string, error) {
	err := writeFile(filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 1},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`)
	if err != nil {
		return nil, err
	}
	env := []string{
		"GEMINI_CLI_HOME=" + home,
		"GOOGLE_GEMINI_BASE_URL=" + url,
	}
	if o.auth == AuthKey {
		env = append(env, "GEMINI_API_KEY="+ScriptedKey)
	}
	return env, nil
}

// opencodeEnv is the environment of opencode and of its fork kilo, whose
// variables are named with prefix (OPENCODE, KILO).
func opencodeEnv(prefix, url string, o envOptions) []string {
	npm, key := "@ai-sdk/openai-compatible", `,"apiKey":"`+ScriptedKey+`"`
	if o.auth == AuthNone {
		// The compatible provider sends no key when it has none; the
		// OpenAI one refuses to start without one.
		npm, key = "@ai-sdk/openai", ""
	}
	model := `"name":"m1"`
	if o.priceSet {
		model += `,"cost":{"input":` + strconv.FormatFloat(o.priceIn, 'f', -1, 64) +
			`,"output":` + strconv.FormatFloat(o.priceOut, 'f', -1, 64) + `}`
	}
	cfg := `{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled",` +
		`"model":"fake/m1","provider":{"fake":{"npm":"` + npm + `","name":"fake",` +
		`"options":{"baseURL":"` + url + `/v1"` + key + `},"models":{"m1":{` + model + `}}}}}`
	return []string{
		prefix + "_CONFIG_CONTENT=" + cfg,
		prefix + "_DISABLE_AUTOUPDATE=1",
		prefix + "_DISABLE_MODELS_FETCH=1",
	}
}

func qwenEnv(url, home string, o envOptions) ([]string, error) {
	qwenHome := filepath.Join(home, ".qwen")
	err := writeFile(filepath.Join(qwenHome, "settings.json"), `{
  "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false},
  "model": {"generationConfig": {"maxRetries": 0}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`)
	if err != nil {
		return nil, err
	}
	env := []string{
		"QWEN_HOME=" + qwenHome,
		"OPENAI_BASE_URL=" + url + "/v1",
		"OPENAI_MODEL=fake-model",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
	}
	if o.auth == AuthKey {
		env = append(env, "OPENAI_API_KEY="+ScriptedKey)
	}
	return env, nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// ErrAgentNotFound is returned (wrapped) by FindAgent for a CLI that is not
// installed.
var ErrAgentNotFound = errors.New("agent CLI not found")

// RequireAgentsEnv is the environment variable that, set to 1, makes a
// missing CLI a test failure instead of a skip (CI sets it: .ci/run).
const RequireAgentsEnv = "JLGCLI_REQUIRE_AGENTS"

// AgentDirs are the directories FindAgent searches, before PATH:
// $JLGCLI_CONFORMANCE_DIR when set, else <repo>/.cache/agents/node_modules/.bin
// (where `make agents` installs the pinned CLIs), the repository being the
// nearest directory above the working directory holding go.mod.
func AgentDirs() []string {
	if d := os.Getenv("JLGCLI_CONFORMANCE_DIR"); d != "" {
		return []string{d}
	}
	root, err := RepoRoot()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(root, ".cache", "agents", "node_modules", ".bin")}
}

// RepoRoot is the nearest directory above the working directory that holds
// go.mod (the module root when run by go test).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// FindAgent returns the absolute path of the agent CLI name: in AgentDirs,
// else on PATH. The error wraps ErrAgentNotFound and says where it looked.
func FindAgent(name string) (string, error) {
	dirs := AgentDirs()
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return filepath.Abs(p)
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	where := "PATH"
	if len(dirs) > 0 {
		where = strings.Join(dirs, ", ") + " or on PATH"
	}
	return "", fmt.Errorf("%w: %q is not in %s; install the pinned CLIs with `make agents` (see .ci/run; npm package %s) or set JLGCLI_CONFORMANCE_DIR", ErrAgentNotFound, name, where, agent.Package(name))
}

// TB is the part of testing.TB that RequireAgent uses.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// RequireAgent returns the path of the agent CLI name (see FindAgent). When
// it is not installed the test is skipped with a message saying so, or fails
// when JLGCLI_REQUIRE_AGENTS=1 (CI). The agent CLIs run on unix only: on
// Windows the test is skipped.
func RequireAgent(t TB, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the agent CLI conformance tests run on unix only")
	}
	p, err := FindAgent(name)
	if err == nil {
		return p
	}
	if os.Getenv(RequireAgentsEnv) == "1" {
		t.Fatal(err.Error() + " (" + RequireAgentsEnv + "=1: a missing agent CLI is a failure)")
	}
	t.Skip(err.Error())
	return ""
}
