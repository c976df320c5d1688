package modelserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// scriptedKey is the API key every CLI is given; the server accepts any.
const scriptedKey = "sk-scripted-0000000000000000"

// agentCLI is one agent CLI as the conformance tests drive it.
type agentCLI struct {
	backend string // directory under internal/agent/testdata
	bin     string
	setup   agentSetup
}

func claudeSetup(t *testing.T, sc setupCtx) ([]string, []string, *string) {
	url, home, prompt := sc.url, sc.home, sc.prompt
	return []string{
			"ANTHROPIC_BASE_URL=" + url,
			claudeAuthEnv(sc.variant),
			"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"CLAUDE_CODE_MAX_RETRIES=0",
			"DISABLE_AUTOUPDATER=1",
			"IS_SANDBOX=1",
		},
		[]string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
		&prompt
}

// claudeAuthEnv is the key Claude Code sends. The "subscription" variant
// logs in with an OAuth token as a claude.ai subscriber does: only then does
// Claude Code read the unified rate-limit headers and print the reset time.
func claudeAuthEnv(variant string) string {
	if variant == "subscription" {
		return "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-scripted"
	}
	return "ANTHROPIC_API_KEY=" + scriptedKey
}

func codexSetup(t *testing.T, sc setupCtx) ([]string, []string, *string) {
	url, home, prompt := sc.url, sc.home, sc.prompt
	codexHome := filepath.Join(home, ".codex")
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url))
	return []string{"CODEX_HOME=" + codexHome, "FAKE_API_KEY=" + scriptedKey},
		[]string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-"},
		&prompt
}

func copilotSetup(t *testing.T, sc setupCtx) ([]string, []string, *string) {
	url, prompt := sc.url, sc.prompt
	return []string{
			"COPILOT_PROVIDER_BASE_URL=" + url + "/v1",
			"COPILOT_PROVIDER_TYPE=openai",
			"COPILOT_PROVIDER_API_KEY=" + scriptedKey,
			"COPILOT_MODEL=fake-model",
			"COPILOT_OFFLINE=true",
			"COPILOT_AUTO_UPDATE=false",
		},
		[]string{"-p", prompt, "-s", "--allow-all-tools", "--output-format", "json"},
		nil
}

func geminiSetup(t *testing.T, sc setupCtx) ([]string, []string, *string) {
	url, home, prompt := sc.url, sc.home, sc.prompt
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 1},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`)
	return []string{
			"GEMINI_CLI_HOME=" + home,
			"GOOGLE_GEMINI_BASE_URL=" + url,
			"GEMINI_API_KEY=" + scriptedKey,
		},
		[]string{"-o", "stream-json", "--approval-mode", "yolo", "-p", prompt},
		nil
}

func opencodeSetup(t *testing.T, sc setupCtx) ([]string, []string, *string) {
	url, prompt := sc.url, sc.prompt
	cfg := fmt.Sprintf(`{"$schema":"https://opencode.ai/config.json","autoupdate":false,"share":"disabled",`+
		`"model":"fake/m1","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"fake",`+
		`"options":{"baseURL":"%s/v1","apiKey":"%s"},"models":{"m1":{"name":"m1"}}}}}`, url, scriptedKey)
	return []string{
			"OPENCODE_CONFIG_CONTENT=" + cfg,
			"OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_MODELS_FETCH=1",
		},
		[]string{"run", "--format", "json", prompt},
		nil
}

var agentCLIs = []agentCLI{
	{"claude", "claude", claudeSetup},
	{"codex", "codex", codexSetup},
	{"copilot", "copilot", copilotSetup},
	{"gemini", "gemini", geminiSetup},
	{"opencode", "opencode", opencodeSetup},
}

// conformanceCase is one scripted session every CLI plays.
type conformanceCase struct {
	name string
	// only, when set, limits the case to these backends; variant is passed
	// to their set-up.
	only    []string
	variant string
	prompt  string
	script  func(workdir string) Script
	// scriptFor, when set, replaces script for some backends.
	scriptFor map[string]func(workdir string) Script
	check     func(t *testing.T, r *run)
}

// rateLimitReset is the reset time of the 429 case: a whole minute about
// 90 minutes ahead.
var rateLimitReset = time.Now().Add(90 * time.Minute).Truncate(time.Minute).UTC()

var conformanceCases = []conformanceCase{
	{
		name:   "text",
		prompt: "Say hello.",
		script: func(string) Script { return Script{Text("Hello from the script\nDONE", U(120, 7))} },
		check: func(t *testing.T, r *run) {
			wantExit(t, r, 0)
			if !strings.Contains(string(r.stdout), "Hello from the script") {
				t.Errorf("stdout lacks the scripted text")
			}
			wantTurns(t, r, 1)
		},
	},
	{
		name:   "write",
		prompt: "Create the file out.txt containing hello.",
		script: func(dir string) Script {
			return Script{
				WriteFile(filepath.Join(dir, "out.txt"), "hello\n").WithUsage(U(200, 20)),
				Text("wrote it\nDONE", U(300, 5)),
			}
		},
		check: func(t *testing.T, r *run) {
			wantExit(t, r, 0)
			b, err := os.ReadFile(filepath.Join(r.workdir, "out.txt"))
			if err != nil || string(b) != "hello\n" {
				t.Errorf("out.txt = %q, %v; want %q", b, err, "hello\n")
			}
			if !strings.Contains(string(r.stdout), "wrote it") {
				t.Errorf("stdout lacks the final text")
			}
			wantTurns(t, r, 2)
			// The second turn carries the tool's result back.
			if turns := r.srv.TurnRequests(); len(turns) == 2 {
				marker := map[Protocol]string{Anthropic: `"tool_result"`, Responses: `_call_output"`,
					ChatComp: `"role":"tool"`, Gemini: `"functionResponse"`}[turns[1].Protocol]
				if marker == "" || !bytes.Contains(turns[1].Body, []byte(marker)) {
					t.Errorf("second request (%s) carries no tool result %s", turns[1].Protocol, marker)
				}
			}
		},
	},
	{
		name:   "auth",
		prompt: "Say hello.",
		script: func(string) Script { return Script{Fault(401).Forever()} },
		check:  func(t *testing.T, r *run) { wantFailed(t, r) },
	},
	{
		name:   "ratelimit",
		prompt: "Say hello.",
		script: func(string) Script { return Script{rateLimitFault("")} },
		scriptFor: map[string]func(string) Script{
			"opencode": func(string) Script { return Script{rateLimitFault("opencode")} },
		},
		check: func(t *testing.T, r *run) { wantFailed(t, r) },
	},
	{
		name:    "ratelimit-subscription",
		only:    []string{"claude"},
		variant: "subscription",
		prompt:  "Say hello.",
		script:  func(string) Script { return Script{rateLimitFault("claude")} },
		check:   func(t *testing.T, r *run) { wantFailed(t, r) },
	},
	{
		name:   "server-error",
		prompt: "Say hello.",
		script: func(string) Script { return Script{Fault(500).Forever()} },
		check:  func(t *testing.T, r *run) { wantFailed(t, r) },
	},
}

// rateLimitFault is the 429 of the rate-limit cases: Retry-After up to the
// reset time, and the reset time in the provider's headers and body. opencode
// honours Retry-After for each of its 5 retries (it would sleep until the
// reset), so it is told to retry after 1s instead.
func rateLimitFault(backend string) Turn {
	retry := time.Until(rateLimitReset).Round(time.Second)
	if backend == "opencode" {
		retry = time.Second
	}
	return Fault(429, RetryAfter(retry), ResetAt(rateLimitReset)).Forever()
}

func wantExit(t *testing.T, r *run, code int) {
	t.Helper()
	if r.exit != code {
		t.Errorf("exit code %d, want %d", r.exit, code)
	}
}

// wantTurns checks that exactly n model turns were played and none failed.
func wantTurns(t *testing.T, r *run, n int) {
	t.Helper()
	turns := r.srv.TurnRequests()
	if len(turns) != n {
		t.Errorf("%d model requests, want %d", len(turns), n)
	}
	for _, q := range turns {
		if q.Error != "" {
			t.Errorf("request %s: %s", q.Path, q.Error)
		}
	}
}

// wantFailed checks that the CLI reached the server and reported failure
// somehow (exit code or an error in its output).
func wantFailed(t *testing.T, r *run) {
	t.Helper()
	if len(r.srv.TurnRequests()) == 0 {
		t.Errorf("the CLI made no model request")
	}
	if r.exit == 0 && !strings.Contains(strings.ToLower(string(r.stdout)+string(r.stderr)), "error") {
		t.Errorf("exit 0 and no error reported")
	}
}

// TestAgentConformance runs every CLI through every case.
func TestAgentConformance(t *testing.T) {
	if testing.Short() && os.Getenv("JLGCLI_REQUIRE_AGENTS") != "1" {
		t.Skip("conformance tests run the real agent CLIs; skipped with -short")
	}
	only := os.Getenv("JLGCLI_CONFORMANCE_ONLY") // e.g. "claude" or "claude/text"
	for _, a := range agentCLIs {
		t.Run(a.backend, func(t *testing.T) {
			findAgent(t, a.bin)
			t.Parallel() // the CLIs, not the cases: opencode and copilot spend most of their time waiting out retries
			for _, c := range conformanceCases {
				if c.only != nil && !slices.Contains(c.only, a.backend) {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					if only != "" && only != a.backend && only != a.backend+"/"+c.name {
						t.Skip("not selected by JLGCLI_CONFORMANCE_ONLY")
					}
					r := runAgentCase(t, a, c)
					record(t, a.backend, c.name, r)
					c.check(t, r)
				})
			}
		})
	}
}

func runAgentCase(t *testing.T, a agentCLI, c conformanceCase) *run {
	script := c.script
	if f, ok := c.scriptFor[a.backend]; ok {
		script = f
	}
	return runAgent(t, a.bin, a.setup, script, c.prompt, c.variant, 3*time.Minute)
}
