package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jlgcli/jlgcli/internal/sandbox"
)

// resolveFiles resolves a user file, a project file and the environment
// (env), each given by its content ("": none).
func resolveFiles(t *testing.T, user, project string, environ map[string]string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	var layers []*Layer
	for _, f := range []struct{ name, content string }{{"config.toml", user}, {ProjectFile, project}} {
		if f.content == "" {
			continue
		}
		l, err := LoadFile(write(t, filepath.Join(dir, f.name), f.content))
		if err != nil {
			return nil, err
		}
		l.Project = f.name == ProjectFile
		layers = append(layers, l)
	}
	el, err := EnvLayer(env(environ))
	if err != nil {
		return nil, err
	}
	return Resolve(append(layers, el)...)
}

// checksNetwork has three values: unset, the checks go through the
// allow-listing proxy; true, the machine's network, which only the user
// gives; false, none, which a project may ask.
func TestChecksNetwork(t *testing.T) {
	for _, tc := range []struct {
		name, user, project string
		host, offline       bool
		print               string
	}{
		{"default", "", "", false, false, "through the proxy (the package registries of the project's language, allowHosts)"},
		{"user true", "[sandbox]\nchecksNetwork = true\n", "", true, false, "true (the machine's network)"},
		{"user false", "[sandbox]\nchecksNetwork = false\n", "", false, true, "false (no network)"},
		{"project false", "", "[sandbox]\nchecksNetwork = false\n", false, true, "false (no network)"},
		{"project false over user true", "[sandbox]\nchecksNetwork = true\n", "[sandbox]\nchecksNetwork = false\n", false, true, "false (no network)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolveFiles(t, tc.user, tc.project, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Sandbox.ChecksHostNetwork != tc.host || c.Sandbox.ChecksOffline != tc.offline || c.Value("sandbox.checksNetwork") != tc.print {
				t.Errorf("host %v, offline %v, print %q", c.Sandbox.ChecksHostNetwork, c.Sandbox.ChecksOffline, c.Value("sandbox.checksNetwork"))
			}
		})
	}
	_, err := resolveFiles(t, "", "backend = \"x\"\n[sandbox]\nchecksNetwork = true\n", nil)
	if err == nil || !strings.Contains(err.Error(), ProjectFile+":3: sandbox.checksNetwork: a project's jlgcli.toml may tighten the sandbox, not loosen it") {
		t.Errorf("project true: %v", err)
	}
}

// passEnv names the variables that agents and checks get beyond what they
// need: the user's file and the environment add up, a project file may not
// name any, and a name is checked.
func TestPassEnv(t *testing.T) {
	c, err := resolveFiles(t, "[sandbox]\npassEnv = [\"GOFLAGS\", \"MY_*\"]\n", "", map[string]string{"JLGCLI_SANDBOX_PASS_ENV": " NPM_CONFIG_REGISTRY, ,LC_*"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GOFLAGS", "MY_*", "NPM_CONFIG_REGISTRY", "LC_*"}; !slices.Equal(c.Sandbox.PassEnv, want) {
		t.Errorf("passEnv %q, want %q", c.Sandbox.PassEnv, want)
	}
	if v := c.Value("sandbox.passEnv"); v != "GOFLAGS, MY_*, NPM_CONFIG_REGISTRY, LC_*" || c.Sources["sandbox.passEnv"] != "environment" {
		t.Errorf("print %q from %q", v, c.Sources["sandbox.passEnv"])
	}
	if c, err := resolveFiles(t, "[sandbox]\npassEnv = [\"*\"]\n", "", nil); err != nil || !slices.Equal(c.Sandbox.PassEnv, []string{"*"}) {
		t.Errorf("*: %v, %v", c, err)
	}
	for _, tc := range []struct {
		user, project string
		environ       map[string]string
		want          string
	}{
		{"", "[sandbox]\npassEnv = [\"GITHUB_TOKEN\"]\n", nil, ProjectFile + ":2: sandbox.passEnv: a project's jlgcli.toml may tighten the sandbox"},
		{"\n[sandbox]\npassEnv = [\"OK\", \"NOT-A-NAME\"]\n", "", nil, "config.toml:3: sandbox.passEnv: \"NOT-A-NAME\" is not a variable name"},
		{"[sandbox]\npassEnv = [\"A*B\"]\n", "", nil, "sandbox.passEnv: \"A*B\" is not a variable name"},
		{"[sandbox]\npassEnv = [\"\"]\n", "", nil, "sandbox.passEnv: \"\" is not a variable name"},
		{"", "", map[string]string{"JLGCLI_SANDBOX_PASS_ENV": "A,B C"}, "environment: sandbox.passEnv: \"B C\" is not a variable name"},
		{"[sandbox]\npassEnv = \"A\"\n", "", nil, "config.toml:2: sandbox.passEnv: cannot decode TOML string, want []string"},
	} {
		if _, err := resolveFiles(t, tc.user, tc.project, tc.environ); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q %v: %v, want %q", tc.user, tc.project, tc.environ, err, tc.want)
		}
	}
}

// The limits of a call: their defaults, the user's file and the
// environment set them, a project file may lower them and never raise them
// above what the layers below give (else the default).
func TestLimits(t *testing.T) {
	c, err := resolveFiles(t, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.MaxProcesses != 0 || c.Sandbox.MaxMemory != 0 || c.Sandbox.MaxTmp != 0 {
		t.Errorf("defaults are set: %+v (0 is the default, left out of the runs' records)", c.Sandbox)
	}
	for key, want := range map[string]string{"sandbox.maxProcesses": "512", "sandbox.maxMemory": "8GiB", "sandbox.maxTmp": "2GiB"} {
		if got := c.Value(key); got != want || c.Sources[key] != "default" {
			t.Errorf("%s = %q from %q, want %q", key, got, c.Sources[key], want)
		}
	}
	if sandbox.DefaultLimits.Memory != 8<<30 || sandbox.DefaultLimits.Tmp != 2<<30 || sandbox.DefaultLimits.Processes != 512 {
		t.Fatalf("the defaults changed (%+v): change the test's printed values", sandbox.DefaultLimits)
	}

	c, err = resolveFiles(t, "[sandbox]\nmaxProcesses = 1000\nmaxMemory = \"16GiB\"\nmaxTmp = \"512MiB\"\n",
		"[sandbox]\nmaxProcesses = 64\nmaxMemory = \"2G\"\n", map[string]string{"JLGCLI_SANDBOX_MAX_TMP": "256M"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.MaxProcesses != 64 || c.Sandbox.MaxMemory != 2<<30 || c.Sandbox.MaxTmp != 256<<20 {
		t.Errorf("limits %+v", c.Sandbox)
	}
	if c.Value("sandbox.maxMemory") != "2GiB" || c.Value("sandbox.maxTmp") != "256MiB" || c.Sources["sandbox.maxTmp"] != "environment" {
		t.Errorf("print %q %q from %q", c.Value("sandbox.maxMemory"), c.Value("sandbox.maxTmp"), c.Sources["sandbox.maxTmp"])
	}
	// The user may raise them; the environment too, over a project file.
	c, err = resolveFiles(t, "[sandbox]\nmaxMemory = \"32GiB\"\n", "[sandbox]\nmaxMemory = \"12GiB\"\n", map[string]string{"JLGCLI_SANDBOX_MAX_PROCESSES": "4096"})
	if err != nil || c.Sandbox.MaxMemory != 12<<30 || c.Sandbox.MaxProcesses != 4096 {
		t.Errorf("raised by the user: %+v, %v", c.Sandbox, err)
	}

	for _, tc := range []struct {
		user, project string
		environ       map[string]string
		want          string
	}{
		{"", "[sandbox]\nmaxProcesses = 513\n", nil, ProjectFile + ":2: sandbox.maxProcesses: 513 is above 512, the limit your own configuration gives (or the default): a project's jlgcli.toml may lower a limit of the sandbox, not raise it"},
		{"[sandbox]\nmaxMemory = \"1GiB\"\n", "\n[sandbox]\nmaxMemory = \"2GiB\"\n", nil, ProjectFile + ":3: sandbox.maxMemory: 2GiB is above 1GiB, the limit your own configuration gives"},
		{"", "[sandbox]\nmaxTmp = \"3GiB\"\n", nil, "sandbox.maxTmp: 3GiB is above 2GiB"},
		{"[sandbox]\nmaxProcesses = 15\n", "", nil, "config.toml:2: sandbox.maxProcesses: must be at least 16, not 15"},
		{"[sandbox]\nmaxMemory = \"1MiB\"\n", "", nil, "sandbox.maxMemory: must be at least 64MiB, not 1MiB"},
		{"[sandbox]\nmaxTmp = \"512\"\n", "", nil, "config.toml:2: sandbox.maxTmp: \"512\" has no unit; write 512MiB or 512GiB"},
		{"[sandbox]\nmaxTmp = \"lots\"\n", "", nil, "sandbox.maxTmp: \"lots\" is not a size such as 512MiB, 8GiB or 2G"},
		{"[sandbox]\nmaxMemory = 8\n", "", nil, "config.toml:2: sandbox.maxMemory: cannot decode TOML integer, want string"},
		{"", "", map[string]string{"JLGCLI_SANDBOX_MAX_MEMORY": "8 gigs"}, "environment: JLGCLI_SANDBOX_MAX_MEMORY: \"8 gigs\" is not a size"},
		{"", "", map[string]string{"JLGCLI_SANDBOX_MAX_PROCESSES": "many"}, "environment: JLGCLI_SANDBOX_MAX_PROCESSES: \"many\" is not an integer"},
		{"", "", map[string]string{"JLGCLI_SANDBOX_MAX_PROCESSES": "2"}, "environment: sandbox.maxProcesses: must be at least 16, not 2"},
	} {
		if _, err := resolveFiles(t, tc.user, tc.project, tc.environ); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q %v: %v, want %q", tc.user, tc.project, tc.environ, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"512MiB": 512 << 20, "8GiB": 8 << 30, "2G": 2 << 30, "2g": 2 << 30, "1.5GiB": 3 << 29, "100KB": 100e3, "1TB": 1e12,
		" 64M ": 64 << 20, "1024B": 1024, "1k": 1024, "0.5KiB": 512, "3T": 3 << 40, "1.0000000001B": 1,
	} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "512", "G", "-1G", "+1G", "1e9B", "0x10M", "8 GiB", "8GiBs", "8GiB8", ".5G", "5.G", "1.2.3G", "9999999999TiB", "8Gi"} {
		if n, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, n)
		}
	}
	for n, want := range map[int64]string{8 << 30: "8GiB", 1536 << 20: "1536MiB", 1000: "1000B", 0: "0B", 3 << 40: "3TiB", 1024: "1KiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
