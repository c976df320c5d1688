package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What a built-in CLI gets in the sandbox follows its environment: its
// state where the environment moves it, and the endpoints the environment
// and its configuration file name.
func TestNeedsAndEndpoints(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, "elsewhere")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("[model_providers.x]\nbase_url = \"http://127.0.0.1:9999/v1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "ANTHROPIC_BASE_URL=http://127.0.0.1:8888",
		`OPENCODE_CONFIG_CONTENT={"provider":{"f":{"options":{"baseURL":"http://127.0.0.1:7777/v1"}}}}`, "SOME_NAME=http://not-an-endpoint"}

	if n := needs("claude", env); !slices.Equal(n.Dirs, []string{filepath.Join(home, ".claude")}) ||
		!slices.Contains(n.Files, filepath.Join(home, ".claude.json")) || !slices.Contains(n.Hosts, "api.anthropic.com") {
		t.Errorf("claude: %+v", n)
	}
	if n := needs("codex", env); !slices.Equal(n.Dirs, []string{codexHome}) {
		t.Errorf("codex: %+v, want its state in CODEX_HOME", n)
	}
	if n := needs("kilo", append(env, "XDG_STATE_HOME=/state")); !slices.Contains(n.Dirs, "/state/kilo-sandbox-policy") ||
		!slices.Contains(n.Dirs, filepath.Join(home, ".local/share/kilo")) {
		t.Errorf("kilo: %+v", n)
	}
	if n := needs("mybot", env); len(n.Dirs)+len(n.Files)+len(n.Hosts) != 0 {
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
