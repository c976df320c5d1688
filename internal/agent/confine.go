package agent

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/jlgcli/jlgcli/internal/proc"
	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// dirOf is the directory that the variable k of env names, else def in the
// home directory of env; "" when neither is known.
func dirOf(env []string, k, def string) string {
	if v := lookupEnv(env, k); k != "" && v != "" {
		return v
	}
	if home := lookupEnv(env, "HOME"); home != "" {
		return filepath.Join(home, def)
	}
	return ""
}

// urlVar are the variables that name an API endpoint (ANTHROPIC_BASE_URL,
// OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, COPILOT_PROVIDER_BASE_URL, ...).
var urlVar = regexp.MustCompile(`(_BASE_URL|_API_URL|_API_BASE|_ENDPOINT)$`)

// configURL finds the base URLs in a CLI's configuration text: opencode's
// and kilo's "baseURL" (JSON), codex's base_url (TOML).
var configURL = regexp.MustCompile(`(?:"baseURL"\s*:\s*"|base_url\s*=\s*")([^"]+)"`)

// endpoints are the API endpoints a call's environment and its CLI's
// configuration files name, for the sandbox's network.
func endpoints(name string, env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case urlVar.MatchString(k) && strings.Contains(v, "://"):
			out = append(out, v)
		case strings.HasSuffix(k, "_CONFIG_CONTENT"):
			out = append(out, configURLs(v)...)
		}
	}
	var files []string
	switch name {
	case "codex":
		if dir := dirOf(env, "CODEX_HOME", ".codex"); dir != "" {
			files = append(files, filepath.Join(dir, "config.toml"))
		}
	case "opencode", "kilo":
		dir := dirOf(env, "XDG_CONFIG_HOME", ".config")
		for _, f := range []string{name + ".json", name + ".jsonc", "config.json", "opencode.json", "opencode.jsonc"} {
			if dir != "" {
				files = append(files, filepath.Join(dir, name, f))
			}
		}
		if f := lookupEnv(env, strings.ToUpper(name)+"_CONFIG"); f != "" {
			files = append(files, f)
		}
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, configURLs(string(b))...)
		}
	}
	return out
}

func configURLs(text string) []string {
	var out []string
	for _, m := range configURL.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// lookupEnv is the value of k in env ("" when absent).
func lookupEnv(env []string, k string) string {
	v, _ := proc.LookupEnv(env, k)
	return v
}

// SandboxNeeds is what a call of the backend name ("" or a command
// backend: nothing beyond its working directory cwd) needs in a sandbox:
// its CLI's state and configuration, variables, and API endpoints as env
// (the trusted environment, sandbox.Box.Trusted) places them.
func SandboxNeeds(name string, env []string, cwd string) sandbox.Needs {
	n := needs(name, env, cwd)
	n.Hosts = append(n.Hosts, endpoints(name, env)...)
	return n
}
