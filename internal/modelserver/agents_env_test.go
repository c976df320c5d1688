package modelserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastUserText(t *testing.T) {
	cases := []struct {
		name string
		p    Protocol
		body string
		want string
	}{
		{"anthropic blocks, tool result after", Anthropic, `{"messages":[
			{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"the prompt"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
			"<system-reminder>x</system-reminder>\nthe prompt"},
		{"anthropic string", Anthropic, `{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"},{"role":"user","content":"second"}]}`, "second"},
		{"responses items", Responses, `{"input":[
			{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"the prompt"}]},
			{"type":"function_call_output","call_id":"c1","output":"done"}]}`, "the prompt"},
		{"responses string", Responses, `{"input":"just this"}`, "just this"},
		{"chat", ChatComp, `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"the prompt"},{"role":"tool","content":"out"}]}`, "the prompt"},
		{"chat parts", ChatComp, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]}]}`, "a\nb"},
		{"gemini", Gemini, `{"contents":[{"role":"user","parts":[{"text":"ctx"},{"text":"the prompt"}]},
			{"role":"model","parts":[{"functionCall":{"name":"write_file"}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"write_file"}}]}]}`, "ctx\nthe prompt"},
		{"none", NoProtocol, `{"messages":[{"role":"user","content":"x"}]}`, ""},
	}
	for _, c := range cases {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.body), &m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := (Request{Protocol: c.p, JSON: m}).LastUserText(); got != c.want {
			t.Errorf("%s: LastUserText() = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAgentEnv(t *testing.T) {
	const url = "http://127.0.0.1:9"
	env := func(backend string, opts ...EnvOption) (map[string]string, string) {
		t.Helper()
		home := t.TempDir()
		kv, err := AgentEnv(backend, url, home, opts...)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, e := range kv {
			k, v, _ := strings.Cut(e, "=")
			m[k] = v
		}
		return m, home
	}
	m, home := env("claude", WithPathDir("/opt/agents"), WithBasePATH("/usr/bin"), WithEnv("EXTRA=1"))
	for k, want := range map[string]string{
		"PATH": "/opt/agents:/usr/bin", "HOME": home, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": ScriptedKey,
		"IS_SANDBOX": "1", "CLAUDE_CODE_MAX_RETRIES": "0", "TZ": "UTC", "EXTRA": "1",
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
	} {
		if m[k] != want {
			t.Errorf("claude: %s=%q, want %q", k, m[k], want)
		}
	}
	if m, _ := env("claude", WithAuth(AuthNone), WithTZ("")); m["ANTHROPIC_API_KEY"] != "" || m["CLAUDE_CODE_OAUTH_TOKEN"] != "" || m["TZ"] != "" {
		t.Errorf("claude AuthNone, no TZ: %v", m)
	}
	if m, _ := env("claude", WithAuth(AuthSubscription)); m["CLAUDE_CODE_OAUTH_TOKEN"] == "" || m["ANTHROPIC_API_KEY"] != "" {
		t.Errorf("claude AuthSubscription: %v", m)
	}

	m, home = env("codex")
	b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil || !strings.Contains(string(b), `base_url = "`+url+`/v1"`) || m["CODEX_HOME"] != filepath.Join(home, ".codex") || m["FAKE_API_KEY"] != ScriptedKey {
		t.Errorf("codex: %v, config.toml %q, %v", m, b, err)
	}
	if m, _ := env("codex", WithAuth(AuthNone)); m["FAKE_API_KEY"] != "" {
		t.Errorf("codex AuthNone: FAKE_API_KEY set")
	}

	m, home = env("gemini")
	if _, err := os.Stat(filepath.Join(home, ".gemini", "settings.json")); err != nil || m["GEMINI_CLI_HOME"] != home || m["GOOGLE_GEMINI_BASE_URL"] != url {
		t.Errorf("gemini: %v, settings.json: %v", m, err)
	}

	if m, _ := env("copilot"); m["COPILOT_PROVIDER_BASE_URL"] != url+"/v1" || m["COPILOT_OFFLINE"] != "true" {
		t.Errorf("copilot: %v", m)
	}
	if m, _ := env("copilot", WithAuth(AuthNone)); m["COPILOT_PROVIDER_BASE_URL"] != "" || m["COPILOT_OFFLINE"] != "" {
		t.Errorf("copilot AuthNone: %v", m)
	}

	m, _ = env("opencode", WithModelPrice(3, 15))
	var cfg struct {
		Model    string `json:"model"`
		Provider map[string]struct {
			NPM     string         `json:"npm"`
			Options map[string]any `json:"options"`
			Models  map[string]struct {
				Cost map[string]float64 `json:"cost"`
			} `json:"models"`
		} `json:"provider"`
	}
	if err := json.Unmarshal([]byte(m["OPENCODE_CONFIG_CONTENT"]), &cfg); err != nil {
		t.Fatalf("opencode config: %v", err)
	}
	p := cfg.Provider["fake"]
	if cfg.Model != "fake/m1" || p.Options["baseURL"] != url+"/v1" || p.Options["apiKey"] != ScriptedKey || p.Models["m1"].Cost["output"] != 15 {
		t.Errorf("opencode config: %+v", cfg)
	}

	if _, err := AgentEnv("aider", url, t.TempDir()); err == nil {
		t.Error("AgentEnv accepted an unknown CLI")
	}
	if _, err := AgentEnv("codex", url, t.TempDir(), WithAuth(AuthSubscription)); err == nil {
		t.Error("AgentEnv accepted AuthSubscription for codex")
	}
}
