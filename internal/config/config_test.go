package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jlgcli/jlgcli/internal/agent"
	"github.com/jlgcli/jlgcli/internal/completion"
	"github.com/jlgcli/jlgcli/internal/cost"
	"github.com/jlgcli/jlgcli/internal/hooks"
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxIterations != 10 || c.Timeout != 5*time.Minute || c.CompletionMode != completion.ModeMarker || c.Marker != "DONE" || c.NoProgressLimit != 3 || c.Backend != "" {
		t.Errorf("defaults %+v", c)
	}
	for _, k := range Keys {
		if c.Sources[k] != "default" {
			t.Errorf("%s from %q", k, c.Sources[k])
		}
	}
}

func TestLayersOverrideInOrder(t *testing.T) {
	dir := t.TempDir()
	user := write(t, filepath.Join(dir, "user.toml"), "backend = \"codex\"\nmaxIterations = 20\nnoProgressLimit = 5\ntimeoutMs = 1000\n[env]\nA = \"user\"\nB = \"user\"\n")
	project := write(t, filepath.Join(dir, "jlgcli.toml"), "maxIterations = 30\ncompletionMode = \"json\"\n[env]\nB = \"project\"\n[backends.bot]\ncommand = [\"/bin/bot\", \"--x\"]\nprompt = \"arg\"\n")
	ul, err := LoadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := LoadFile(project)
	if err != nil {
		t.Fatal(err)
	}
	el, err := EnvLayer(env(map[string]string{"JLGCLI_NO_PROGRESS_LIMIT": "0", "JLGCLI_TIMEOUT": "90s", "JLGCLI_BACKEND": "bot"}))
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	fl := &Layer{Name: "flag", NoProgressLimit: &two}
	c, err := Resolve(ul, pl, el, fl)
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend != "bot" || c.MaxIterations != 30 || c.CompletionMode != completion.ModeJSON || c.Timeout != 90*time.Second || c.NoProgressLimit != 2 {
		t.Errorf("resolved %+v", c)
	}
	if diff := cmp.Diff([]string{"A=user", "B=project"}, c.EnvList()); diff != "" {
		t.Errorf("env: %s", diff)
	}
	if diff := cmp.Diff(agent.CommandSpec{Command: []string{"/bin/bot", "--x"}, Prompt: "arg"}, c.Backends["bot"]); diff != "" {
		t.Errorf("backend: %s", diff)
	}
	wantSources := map[string]string{"backend": "environment", "maxIterations": project, "completionMode": project,
		"timeoutMs": "environment", "noProgressLimit": "flag", "marker": "default", "env": project}
	for k, v := range wantSources {
		if c.Sources[k] != v {
			t.Errorf("source of %s = %q, want %q", k, c.Sources[k], v)
		}
	}
}

func TestFileErrorsNameFileLineAndKey(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		line    int
		key     string
		msg     string
	}{
		{"backend = \"claude\"\nmaxIteration = 3\n", 2, "maxIteration", "unknown key"},
		{"maxIterations = \"ten\"\n", 1, "maxIterations", "string"},
		{"\n[backends.bot]\ncommand = [\"x\"]\nargs = 1\n", 4, "backends.bot.args", "unknown key"},
		{"[env]\nX = 1\n", 2, "env.X", "integer"},
		{"timeoutMs = 1.5\n", 1, "timeoutMs", "float"},
		{"backend = = 1\n", 1, "", "unexpected"},
	}
	for _, tt := range tests {
		p := write(t, filepath.Join(dir, "jlgcli.toml"), tt.content)
		_, err := LoadFile(p)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%q: err %v", tt.content, err)
		}
		if ce.Source != p || ce.Line != tt.line || ce.Key != tt.key || !strings.Contains(ce.Error(), tt.msg) {
			t.Errorf("%q: got %+v (%v)", tt.content, ce, err)
		}
		if !strings.HasPrefix(err.Error(), p+":") {
			t.Errorf("message %q does not start with the file", err)
		}
	}
}

func TestInvalidValues(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ content, key string }{
		{"maxIterations = 0\n", "maxIterations"},
		{"timeoutMs = -1\n", "timeoutMs"},
		{"completionMode = \"xml\"\n", "completionMode"},
		{"noProgressLimit = -2\n", "noProgressLimit"},
		{"noProgressLimit = 1\n", "noProgressLimit"},
		{"marker = \"  \"\n", "marker"},
		{"[backends.claude]\ncommand = [\"x\"]\n", "backends.claude"},
		{"[backends.bot]\ncommand = []\n", "backends.bot.command"},
		{"[backends.bot]\ncommand = [\"x\"]\nprompt = \"pipe\"\n", "backends.bot.prompt"},
	} {
		p := write(t, filepath.Join(dir, "c.toml"), tt.content)
		l, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tt.key || ce.Source != p {
			t.Errorf("%q: err %v", tt.content, err)
		}
	}
}

func TestEnvErrors(t *testing.T) {
	for _, name := range []string{"JLGCLI_MAX_ITERATIONS", "JLGCLI_NO_PROGRESS_LIMIT", "JLGCLI_TIMEOUT"} {
		_, err := EnvLayer(env(map[string]string{name: "abc"}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// One reading of a duration everywhere: a Go duration with its unit, or 0;
// a number without a unit is refused with what to write.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"90s": 90 * time.Second, "5m": 5 * time.Minute, " 1h30m ": 90 * time.Minute,
		"800ms": 800 * time.Millisecond, "0": 0, "0s": 0} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"5":     `"5" has no unit; write 5s, 5m or 5h`,
		"1500":  `"1500" has no unit; write 1500s, 1500m or 1500h`,
		"1.5":   `"1.5" has no unit; write 1.5s, 1.5m or 1.5h`,
		"-3":    `"-3" has no unit; write -3s, -3m or -3h`,
		"soon":  `"soon" is not a duration such as 90s, 5m or 1h30m`,
		"5 min": `"5 min" is not a duration such as 90s, 5m or 1h30m`,
		"":      `"" is not a duration such as 90s, 5m or 1h30m`,
	} {
		if _, err := ParseDuration(in); err == nil || err.Error() != msg {
			t.Errorf("ParseDuration(%q): error %v, want %s", in, err, msg)
		}
	}
}

// Every key of a duration refuses a number without a unit the same way, in
// the environment, in a file and as a flag's text; timeoutMs in a file stays
// a number of milliseconds.
func TestDurationKeysRefuseNoUnit(t *testing.T) {
	_, err := EnvLayer(env(map[string]string{"JLGCLI_TIMEOUT": "5"}))
	if err == nil || err.Error() != `environment: JLGCLI_TIMEOUT: "5" has no unit; write 5s, 5m or 5h` {
		t.Errorf("JLGCLI_TIMEOUT=5: %v", err)
	}
	for _, key := range []string{"stallTimeout", "maxWait"} {
		path := write(t, filepath.Join(t.TempDir(), "jlgcli.toml"), key+" = \"5\"\n")
		l, err := LoadFile(path)
		if err == nil {
			_, err = Resolve(l)
		}
		if want := path + ": " + key + `: "5" has no unit; write 5s, 5m or 5h`; err == nil || err.Error() != want {
			t.Errorf("%s = \"5\": %v, want %s", key, err, want)
		}
	}
	for _, f := range []string{"[temporal]\nworkerWait = \"5\"\n", "[[checks]]\nrun = [\"true\"]\ntimeout = \"5\"\n"} {
		l, err := LoadFile(write(t, filepath.Join(t.TempDir(), "jlgcli.toml"), f))
		if err == nil {
			_, err = Resolve(l)
		}
		if err == nil || !strings.Contains(err.Error(), `"5" has no unit; write 5s, 5m or 5h`) {
			t.Errorf("%q: %v", f, err)
		}
	}
	for _, k := range Table() {
		if k.Kind != "duration" {
			continue
		}
		l := &Layer{Name: "flag"}
		if err := k.Parse(l, "5"); err == nil || err.Error() != `"5" has no unit; write 5s, 5m or 5h` {
			t.Errorf("--%s 5: %v", k.Flag, err)
		}
	}
	l, err := LoadFile(write(t, filepath.Join(t.TempDir(), "jlgcli.toml"), "timeoutMs = 1500\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Resolve(l); err != nil || c.Timeout != 1500*time.Millisecond {
		t.Errorf("timeoutMs = 1500: %v, %v", c, err)
	}
}

func TestFindProjectFile(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// Above the repository root: never used.
	write(t, filepath.Join(root, ProjectFile), "")
	if got := FindProjectFile(deep); got != "" {
		t.Errorf("found %q above the repository root", got)
	}
	top := write(t, filepath.Join(repo, ProjectFile), "")
	if got := FindProjectFile(deep); got != top {
		t.Errorf("got %q, want %q", got, top)
	}
	near := write(t, filepath.Join(repo, "a", ProjectFile), "")
	if got := FindProjectFile(deep); got != near {
		t.Errorf("got %q, want the nearest %q", got, near)
	}
	// Outside a repository only the directory itself counts.
	plain := filepath.Join(root, "plain", "sub")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "plain", ProjectFile), "")
	if got := FindProjectFile(plain); got != "" {
		t.Errorf("outside a repository found %q", got)
	}
}

func TestUserFile(t *testing.T) {
	if got := UserFile(env(map[string]string{"XDG_CONFIG_HOME": "/x"})); got != "/x/jlgcli/config.toml" {
		t.Error(got)
	}
	if got := UserFile(env(map[string]string{"HOME": "/h"})); got != "/h/.config/jlgcli/config.toml" {
		t.Error(got)
	}
}

func TestRelativeCwdIsRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "jlgcli.toml"), "cwd = \"sub\"\n")
	l, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if *l.Cwd != filepath.Join(dir, "sub") {
		t.Error(*l.Cwd)
	}
}

func TestPersistenceKeys(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "jlgcli.toml"), `
stateDir = "state"
session = "continue"
stallTimeout = "2m"
maxWait = "0s"
baseline = true
checklist = "TODO.md"

[[checks]]
name = "unit"
run = ["go", "test", "./..."]
timeout = "3m"

[[checks]]
run = ["go", "vet", "./..."]

[prematureStop]
enabled = false
`)
	l, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	flags := &Layer{Name: "flag", ShellChecks: []string{"make lint"}}
	c, err := Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []Check{
		{Name: "unit", Run: []string{"go", "test", "./..."}, Timeout: 3 * time.Minute},
		{Name: "go vet ./...", Run: []string{"go", "vet", "./..."}, Timeout: DefaultCheckTimeout},
	}
	if diff := cmp.Diff(want, c.Checks); diff != "" {
		t.Errorf("checks: %s", diff)
	}
	if c.StateDir != filepath.Join(dir, "state") || c.Session != "continue" || c.StallTimeout != 2*time.Minute ||
		c.MaxWait != 0 || !c.Baseline || c.Checklist != filepath.Join(dir, "TODO.md") || c.Premature.Enabled {
		t.Errorf("config %+v", c)
	}
	// --check replaces the file's checks.
	c, err = Resolve(l, flags)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Checks) != 1 || c.Checks[0].Shell != "make lint" {
		t.Errorf("checks with --check: %+v", c.Checks)
	}
	for _, bad := range []struct{ content, key string }{
		{"session = \"sometimes\"\n", "session"},
		{"stallTimeout = \"soon\"\n", "stallTimeout"},
		{"[[checks]]\nname = \"x\"\n", "checks[0].run"},
		{"[[checks]]\nrun = [\"x\"]\ntimeout = \"-1s\"\n", "checks[0].timeout"},
	} {
		l, err := LoadFile(write(t, filepath.Join(dir, "bad.toml"), bad.content))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != bad.key {
			t.Errorf("%q: %v", bad.content, err)
		}
	}
	_, err = LoadFile(write(t, filepath.Join(dir, "bad.toml"), "[[checks]]\nrun = [\"x\"]\ncmd = 1\n"))
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "checks[0].cmd" || !strings.Contains(err.Error(), "name, run, timeout") {
		t.Errorf("unknown key in a check: %v", err)
	}
}

// load writes content to dir/name and loads it.
func load(t *testing.T, dir, name, content string) *Layer {
	t.Helper()
	l, err := LoadFile(write(t, filepath.Join(dir, name), content))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var taskKeys = []string{"tiers", "planner", "budgetUsd", "prices", "escalateFrom", "antiGaming", "loopDetection", "commit", "merge", "push", "pr"}

func TestTaskDefaults(t *testing.T) {
	c, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if c.Tiers != nil || c.Planner != nil || c.Prices != nil || c.Attempts != 3 || c.BudgetUSD != 1.00 ||
		c.EscalateFrom != "base" || c.AntiGaming != "refuse" || c.Commit != "branch" || c.Merge != "squash" || c.Push || c.PR {
		t.Errorf("defaults %+v", c)
	}
	if diff := cmp.Diff(LoopDetection{Similarity: 0.9, SameErrorCount: 3}, c.LoopDetection); diff != "" {
		t.Errorf("loopDetection: %s", diff)
	}
	for _, k := range taskKeys {
		if !slices.Contains(Keys, k) || c.Sources[k] != "default" {
			t.Errorf("%s: in Keys %v, from %q", k, slices.Contains(Keys, k), c.Sources[k])
		}
	}
}

const taskFile = `
backend = "claude"
budgetUsd = 2.5
escalateFrom = "last"
antiGaming = "warn"
commit = "direct"
merge = "none"
push = true
pr = true

[[tiers]]
name = "fast"
backend = "codex"
model = "gpt-5-mini"
attempts = 2
[tiers.env]
B = "2"
A = "1"

[[tiers]]
name = "smart:v2"
model = "sonnet"

[planner]
model = "opus"
env = { PLAN = "1" }

[prices."gpt-5.2"]
input = 1.75
output = 14

[prices]
local = { input = 0, output = 0.5 }

[loopDetection]
similarity = 0.8
sameErrorCount = 2

[loopDetection.embeddings]
url = "http://localhost:11434/v1/embeddings"
model = "nomic-embed-text"
apiKeyEnv = "EMBED_KEY"
`

func TestTaskKeysFromFile(t *testing.T) {
	dir := t.TempDir()
	l := load(t, dir, "jlgcli.toml", taskFile)
	c, err := Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	wantTiers := []Tier{
		{Name: "fast", Backend: "codex", Model: "gpt-5-mini", Env: map[string]string{"A": "1", "B": "2"}, Attempts: 2},
		{Name: "smart:v2", Backend: "claude", Model: "sonnet", Attempts: 3},
	}
	if diff := cmp.Diff(wantTiers, c.Tiers); diff != "" {
		t.Errorf("tiers: %s", diff)
	}
	if diff := cmp.Diff([]string{"A=1", "B=2"}, c.Tiers[0].EnvList()); diff != "" {
		t.Errorf("tier env: %s", diff)
	}
	if diff := cmp.Diff(&Tier{Name: "planner", Backend: "claude", Model: "opus", Env: map[string]string{"PLAN": "1"}, Attempts: 1}, c.Planner); diff != "" {
		t.Errorf("planner: %s", diff)
	}
	if diff := cmp.Diff(cost.Table{"gpt-5.2": {InputPerMTok: 1.75, OutputPerMTok: 14}, "local": {OutputPerMTok: 0.5}}, c.Prices); diff != "" {
		t.Errorf("prices: %s", diff)
	}
	wantLD := LoopDetection{Similarity: 0.8, SameErrorCount: 2, Embeddings: &Embeddings{
		URL: "http://localhost:11434/v1/embeddings", Model: "nomic-embed-text", APIKeyEnv: "EMBED_KEY", Threshold: 0.95}}
	if diff := cmp.Diff(wantLD, c.LoopDetection); diff != "" {
		t.Errorf("loopDetection: %s", diff)
	}
	if c.BudgetUSD != 2.5 || c.EscalateFrom != "last" || c.AntiGaming != "warn" || c.Commit != "direct" || c.Merge != "none" || !c.Push || !c.PR {
		t.Errorf("config %+v", c)
	}
	for _, k := range append(taskKeys, "prices.gpt-5.2", "prices.local") {
		if c.Sources[k] != l.Name {
			t.Errorf("source of %s = %q, want %q", k, c.Sources[k], l.Name)
		}
	}
	// What `jlgcli config` prints.
	for key, want := range map[string]string{
		"tiers":          "fast (codex gpt-5-mini env A=<redacted> B=<redacted>, 2 attempts), smart:v2 (claude sonnet, 3 attempts)",
		"planner":        "claude opus env PLAN=<redacted>",
		"budgetUsd":      "2.5",
		"prices":         "gpt-5.2, local",
		"prices.gpt-5.2": "input=1.75 output=14 (USD per million tokens)",
		"prices.local":   "input=0 output=0.5 (USD per million tokens)",
		"escalateFrom":   "last",
		"antiGaming":     "warn",
		"loopDetection":  "similarity=0.8 sameErrorCount=2 embeddings=nomic-embed-text url=http://localhost:11434/v1/embeddings threshold=0.95 apiKeyEnv=EMBED_KEY",
		"commit":         "direct",
		"merge":          "none",
		"push":           "true",
		"pr":             "true",
	} {
		if got := c.Value(key); got != want {
			t.Errorf("Value(%s) = %q, want %q", key, got, want)
		}
	}
	all := c.AllKeys()
	if !slices.Contains(all, "prices.gpt-5.2") || !slices.Contains(all, "prices.local") || all[len(all)-1] != "prices.local" {
		t.Errorf("AllKeys %v", all)
	}
}

func TestTaskValuesOfDefaults(t *testing.T) {
	c, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"tiers": "", "planner": "", "budgetUsd": "1", "prices": "", "escalateFrom": "base", "antiGaming": "refuse",
		"loopDetection": "similarity=0.9 sameErrorCount=3", "commit": "branch", "merge": "squash", "push": "false", "pr": "false",
	} {
		if got := c.Value(key); got != want {
			t.Errorf("Value(%s) = %q, want %q", key, got, want)
		}
	}
	zero := 0.0
	c, err = Resolve(&Layer{Name: "flag", BudgetUSD: &zero, Tiers: []TierLayer{{Name: "x"}}, Planner: &PlannerLayer{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Value("budgetUsd") != "0 (no budget)" || c.Value("tiers") != "x ((default backend), 3 attempts)" || c.Value("planner") != "(default backend)" {
		t.Errorf("values %q %q %q", c.Value("budgetUsd"), c.Value("tiers"), c.Value("planner"))
	}
}

func TestTaskLayers(t *testing.T) {
	dir := t.TempDir()
	user := load(t, dir, "user.toml", `
budgetUsd = 5
antiGaming = "warn"
[[tiers]]
name = "a"
backend = "codex"
[[tiers]]
name = "b"
[planner]
backend = "claude"
model = "opus"
[prices]
"gpt-5.2" = { input = 1, output = 2 }
mine = { input = 3, output = 4 }
[loopDetection]
similarity = 0.7
sameErrorCount = 5
[loopDetection.embeddings]
url = "https://api.example.com/v1/embeddings"
model = "e1"
threshold = 0.9
`)
	project := load(t, dir, "jlgcli.toml", `
budgetUsd = 3
push = true
[[tiers]]
name = "only"
model = "m"
attempts = 4
[planner]
model = "o3"
[prices]
"gpt-5-2" = { input = 5, output = 6 }
[loopDetection]
similarity = 0.6
[loopDetection.embeddings]
url = "http://127.0.0.1/e"
model = "e2"
`)
	env, err := EnvLayer(env(map[string]string{
		"JLGCLI_BUDGET_USD": "0.5", "JLGCLI_ESCALATE_FROM": "last", "JLGCLI_COMMIT": "direct", "JLGCLI_MERGE": "none",
		"JLGCLI_PUSH": "false", "JLGCLI_PR": "1", "JLGCLI_BACKEND": "gemini",
	}))
	if err != nil {
		t.Fatal(err)
	}

	// Project over user: tiers and planner replaced, prices merged per
	// model, loopDetection merged per key, its embeddings replaced.
	c, err := Resolve(user, project)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Tier{{Name: "only", Model: "m", Attempts: 4}}, c.Tiers); diff != "" {
		t.Errorf("tiers: %s", diff)
	}
	if diff := cmp.Diff(&Tier{Name: "planner", Model: "o3", Attempts: 1}, c.Planner); diff != "" {
		t.Errorf("planner: %s", diff)
	}
	if diff := cmp.Diff(cost.Table{"gpt-5-2": {InputPerMTok: 5, OutputPerMTok: 6}, "mine": {InputPerMTok: 3, OutputPerMTok: 4}}, c.Prices); diff != "" {
		t.Errorf("prices: %s", diff)
	}
	wantLD := LoopDetection{Similarity: 0.6, SameErrorCount: 5, Embeddings: &Embeddings{URL: "http://127.0.0.1/e", Model: "e2", Threshold: 0.95}}
	if diff := cmp.Diff(wantLD, c.LoopDetection); diff != "" {
		t.Errorf("loopDetection: %s", diff)
	}
	if c.BudgetUSD != 3 || c.AntiGaming != "warn" || !c.Push {
		t.Errorf("config %+v", c)
	}
	for k, v := range map[string]string{"tiers": project.Name, "planner": project.Name, "budgetUsd": project.Name, "antiGaming": user.Name,
		"prices": project.Name, "prices.gpt-5-2": project.Name, "prices.mine": user.Name, "loopDetection": project.Name, "push": project.Name, "merge": "default"} {
		if c.Sources[k] != v {
			t.Errorf("source of %s = %q, want %q", k, c.Sources[k], v)
		}
	}
	if _, ok := c.Sources["prices.gpt-5.2"]; ok || slices.Contains(c.AllKeys(), "prices.gpt-5.2") {
		t.Error("prices.gpt-5.2, replaced by gpt-5-2, is still listed")
	}

	// Environment over files; the tiers' and planner's backend is the
	// resolved top-level one, set by a later layer.
	c, err = Resolve(user, project, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.BudgetUSD != 0.5 || c.EscalateFrom != "last" || c.Commit != "direct" || c.Merge != "none" || c.Push || !c.PR {
		t.Errorf("config %+v", c)
	}
	if c.Tiers[0].Backend != "gemini" || c.Planner.Backend != "gemini" {
		t.Errorf("backends %+v %+v", c.Tiers, c.Planner)
	}
	for _, k := range []string{"budgetUsd", "escalateFrom", "commit", "merge", "push", "pr", "backend"} {
		if c.Sources[k] != "environment" {
			t.Errorf("source of %s = %q", k, c.Sources[k])
		}
	}

	// Flags over all: --tier replaces the tiers, --attempts overrides every
	// tier's attempts, --backend fills the tiers without one.
	backend, seven, budget := "claude", 7, 9.0
	flags := &Layer{Name: "flag", Backend: &backend, BudgetUSD: &budget, Attempts: &seven, Tiers: []TierLayer{
		{Name: "codex:gpt-5", Backend: "codex", Model: "gpt-5"},
		{Name: "claude", Backend: "claude"},
		{Name: "x", Attempts: &seven},
	}}
	c, err = Resolve(user, project, env, flags)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tier{
		{Name: "codex:gpt-5", Backend: "codex", Model: "gpt-5", Attempts: 7},
		{Name: "claude", Backend: "claude", Attempts: 7},
		{Name: "x", Backend: "claude", Attempts: 7},
	}
	if diff := cmp.Diff(want, c.Tiers); diff != "" {
		t.Errorf("tiers: %s", diff)
	}
	if c.BudgetUSD != 9 || c.Sources["tiers"] != "flag" || c.Sources["budgetUsd"] != "flag" || c.Attempts != 7 || c.Planner.Backend != "claude" {
		t.Errorf("config %+v", c)
	}
}

func TestAttemptsOverride(t *testing.T) {
	dir := t.TempDir()
	file := load(t, dir, "jlgcli.toml", "[[tiers]]\nname = \"a\"\nattempts = 5\n[[tiers]]\nname = \"b\"\n")
	c, err := Resolve(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tiers[0].Attempts != 5 || c.Tiers[1].Attempts != DefaultAttempts || c.Attempts != DefaultAttempts {
		t.Errorf("without --attempts: %+v %d", c.Tiers, c.Attempts)
	}
	// The override is the highest layer's, and holds for the tiers of any
	// layer, above it or below.
	one, two := 1, 2
	c, err = Resolve(&Layer{Name: "flag", Attempts: &one}, &Layer{Name: "flag", Attempts: &two}, file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tiers[0].Attempts != 2 || c.Tiers[1].Attempts != 2 || c.Attempts != 2 {
		t.Errorf("with --attempts 2: %+v %d", c.Tiers, c.Attempts)
	}
	// Without tiers, Attempts still carries it, for the default tier.
	c, err = Resolve(&Layer{Name: "flag", Attempts: &two})
	if err != nil || c.Attempts != 2 || c.Tiers != nil {
		t.Errorf("%v %+v", err, c)
	}
}

func TestTaskInvalidValues(t *testing.T) {
	dir := t.TempDir()
	tiers := "[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"b\"\n"
	for _, tt := range []struct {
		content, key string
		line         int
		msg          string
	}{
		{tiers + "attempts = 0\n", "tiers[1].attempts", 5, "at least 1"},
		{tiers + "[[tiers]]\nmodel = \"m\"\n", "tiers[2].name", 5, "required"},
		{tiers + "[[tiers]]\nname = \"a\"\n", "tiers[2].name", 6, `"a" is already the name of tiers[0]`},
		{"[[tiers]]\nname = \"a b\"\n", "tiers[0].name", 2, "letters, digits"},
		{"[[tiers]]\nname = \"" + strings.Repeat("x", 41) + "\"\n", "tiers[0].name", 2, "40 characters"},
		{"tiers = [{ name = \"a\" }, { name = \"b\", attempts = -1 }]\n", "tiers[1].attempts", 1, "at least 1"},
		{tiers + "[tiers.env]\n\"A=B\" = \"x\"\n", "tiers[1].env", 5, "not a valid variable name"},
		{"[planner]\nenv = { \"\" = \"x\" }\n", "planner.env", 2, "not a valid variable name"},
		{"\nbudgetUsd = -1\n", "budgetUsd", 2, "0 (no budget) or more"},
		{"budgetUsd = nan\n", "budgetUsd", 1, "NaN"},
		{"budgetUsd = inf\n", "budgetUsd", 1, "+Inf"},
		{"[prices.mine]\ninput = 1\n", "prices.mine", 1, `"mine": output is missing`},
		{"[prices.mine]\ninput = 1\noutput = -2\n", "prices.mine", 1, "zero or more"},
		{"[prices]\nok = { input = 1, output = 1 }\nbad = { input = 1, output = 1, cached = 1 }\n", "prices.bad", 3, `unknown key "cached"`},
		{"[prices]\n\"gpt-5.2\" = { input = 1, output = 1 }\n\"gpt-5-2\" = { input = 1, output = 1 }\n", "prices", 1, "name the same model"},
		{"escalateFrom = \"first\"\n", "escalateFrom", 1, `"base" or "last"`},
		{"antiGaming = \"allow\"\n", "antiGaming", 1, `"refuse" or "warn"`},
		{"commit = \"amend\"\n", "commit", 1, `"branch" or "direct"`},
		{"merge = \"rebase\"\n", "merge", 1, `"squash" or "none"`},
		{"[loopDetection]\nsimilarity = 1.5\n", "loopDetection.similarity", 2, "at most 1"},
		{"[loopDetection]\nsimilarity = 0\n", "loopDetection.similarity", 2, "more than 0"},
		{"[loopDetection]\nsameErrorCount = 1\n", "loopDetection.sameErrorCount", 2, "at least 2"},
		{"[loopDetection.embeddings]\nmodel = \"e\"\n", "loopDetection.embeddings.url", 1, "required"},
		{"[loopDetection.embeddings]\nurl = \"ftp://x/e\"\nmodel = \"e\"\n", "loopDetection.embeddings.url", 2, "not an http or https URL"},
		{"[loopDetection.embeddings]\nurl = \"localhost:8080\"\nmodel = \"e\"\n", "loopDetection.embeddings.url", 2, "not an http or https URL"},
		{"[loopDetection.embeddings]\nurl = \"http://x/e\"\n", "loopDetection.embeddings.model", 1, "required"},
		{"[loopDetection.embeddings]\nurl = \"http://x/e\"\nmodel = \"e\"\napiKeyEnv = \"MY-KEY\"\n", "loopDetection.embeddings.apiKeyEnv", 4, "not an environment variable name"},
		{"[loopDetection.embeddings]\nurl = \"http://x/e\"\nmodel = \"e\"\nthreshold = 1.01\n", "loopDetection.embeddings.threshold", 4, "at most 1"},
		{"loopDetection.embeddings = { url = \"http://x/e\", model = \"e\", threshold = -0.5 }\n", "loopDetection.embeddings.threshold", 1, "more than 0"},
	} {
		p := write(t, filepath.Join(dir, "jlgcli.toml"), tt.content)
		l, err := LoadFile(p)
		if err != nil {
			t.Fatalf("%q: %v", tt.content, err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Source != p || ce.Key != tt.key || ce.Line != tt.line || !strings.Contains(ce.Msg, tt.msg) {
			t.Errorf("%q: got %+v (%v), want key %s line %d", tt.content, ce, err, tt.key, tt.line)
			continue
		}
		if !strings.HasPrefix(err.Error(), p+":"+strconv.Itoa(tt.line)+": "+tt.key+": ") {
			t.Errorf("message %q does not name the file, line and key", err)
		}
	}
}

func TestTaskDecodeErrors(t *testing.T) {
	dir := t.TempDir()
	tiers := "[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"b\"\n"
	for _, tt := range []struct {
		content, key string
		line         int
		msg          string
	}{
		{tiers + "attempts = \"x\"\n", "tiers[1].attempts", 5, "want int"},
		{tiers + "retries = 2\n", "tiers[1].retries", 5, "unknown key (a tier has: name, backend, model, env, attempts)"},
		{tiers + "[tiers.env]\nA = 1\n", "tiers[1].env.A", 6, "integer"},
		{"[planner]\nbackend = \"claude\"\ntiers = 1\n", "planner.tiers", 3, "unknown key (planner has: backend, model, env)"},
		{"budgetUsd = \"1\"\n", "budgetUsd", 1, "want float64"},
		{"[prices.mine]\ninput = \"1\"\n", "prices.mine.input", 2, "string"},
		{"[loopDetection]\nsimilarity = \"high\"\n", "loopDetection.similarity", 2, "want float64"},
		{"[loopDetection]\nwindow = 3\n", "loopDetection.window", 2, "unknown key (loopDetection has: similarity, sameErrorCount, embeddings)"},
		{"[loopDetection.embeddings]\nkey = \"x\"\n", "loopDetection.embeddings.key", 2, "unknown key (loopDetection.embeddings has: url, model, apiKeyEnv, threshold)"},
		{"push = \"yes\"\n", "push", 1, "want bool"},
		{"attempts = 3\n", "attempts", 1, "unknown key"},
	} {
		p := write(t, filepath.Join(dir, "jlgcli.toml"), tt.content)
		_, err := LoadFile(p)
		var ce *Error
		if !errors.As(err, &ce) || ce.Source != p || ce.Key != tt.key || ce.Line != tt.line || !strings.Contains(ce.Msg, tt.msg) {
			t.Errorf("%q: got %+v (%v), want key %s line %d", tt.content, ce, err, tt.key, tt.line)
		}
	}
}

func TestTaskFlagAndEnvErrors(t *testing.T) {
	zero := 0
	for _, tt := range []struct {
		layer *Layer
		key   string
	}{
		{&Layer{Name: "flag", Attempts: &zero}, "attempts"},
		{&Layer{Name: "flag", Tiers: []TierLayer{{Name: "opencode:anthropic/claude"}}}, "tiers[0].name"},
		{&Layer{Name: "flag", Tiers: []TierLayer{{Name: "a"}, {Name: "a"}}}, "tiers[1].name"},
	} {
		_, err := Resolve(tt.layer)
		var ce *Error
		if !errors.As(err, &ce) || ce.Source != "flag" || ce.Key != tt.key || ce.Line != 0 {
			t.Errorf("%+v: %v", tt.layer, err)
		}
	}
	for _, tt := range []struct{ name, value string }{
		{"JLGCLI_BUDGET_USD", "lots"}, {"JLGCLI_BUDGET_USD", "NaN"}, {"JLGCLI_BUDGET_USD", "Inf"},
		{"JLGCLI_PUSH", "yes"}, {"JLGCLI_PR", "maybe"},
	} {
		_, err := EnvLayer(env(map[string]string{tt.name: tt.value}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Source != "environment" || ce.Key != tt.name {
			t.Errorf("%s=%s: %v", tt.name, tt.value, err)
		}
	}
	for _, tt := range []struct{ name, value, key string }{
		{"JLGCLI_BUDGET_USD", "-1", "budgetUsd"}, {"JLGCLI_ESCALATE_FROM", "top", "escalateFrom"},
		{"JLGCLI_COMMIT", "amend", "commit"}, {"JLGCLI_MERGE", "ff", "merge"},
	} {
		l, err := EnvLayer(env(map[string]string{tt.name: tt.value}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(l)
		var ce *Error
		if !errors.As(err, &ce) || ce.Source != "environment" || ce.Key != tt.key {
			t.Errorf("%s=%s: %v", tt.name, tt.value, err)
		}
	}
}

func TestKeyLines(t *testing.T) {
	got := keyLines([]byte(`a = 1
[t]
b.c = 2
[[arr]]
x = 1
[arr.sub]
y = 2
[[arr]]
x = [1,
  { z = 3 }]
inline = { k = "v" }
`))
	want := map[string]int{"a": 1, "t": 2, "t.b.c": 3, "arr[0]": 4, "arr[0].x": 5, "arr[0].sub": 6, "arr[0].sub.y": 7,
		"arr[1]": 8, "arr[1].x": 9, "arr[1].x[0]": 9, "arr[1].x[1]": 10, "arr[1].x[1].z": 10, "arr[1].inline": 11, "arr[1].inline.k": 11}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	// A document that does not parse has the lines before the error.
	if got := keyLines([]byte("a = 1\nb = = 2\n")); got["a"] != 1 || len(got) != 1 {
		t.Error(got)
	}
}

// The [temporal] connection keys: files relative to their file's directory
// (flags: to the current one), the environment's, flags over both; the
// API key's variable is a name, refused without echoing what was given
// (it may be the key); OverTemporal keeps what a run recorded unless a
// layer set it.
func TestTemporalConnectionKeys(t *testing.T) {
	dir := t.TempDir()
	p := write(t, filepath.Join(dir, "jlgcli.toml"), "[temporal]\ntlsCa = \"certs/ca.pem\"\ntlsCert = \"/abs/client.pem\"\ntlsKey = \"certs/key.pem\"\napiKeyEnv = \"TEMPORAL_API_KEY\"\n")
	file, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := EnvLayer(env(map[string]string{"JLGCLI_TEMPORAL_SERVER_NAME": "temporal.internal", "JLGCLI_TEMPORAL_KEY": "/env/key.pem"}))
	if err != nil {
		t.Fatal(err)
	}
	flags := &Layer{Name: "flag"}
	for _, k := range Table() {
		if k.Flag == "temporal-api-key-env" {
			if err := k.Parse(flags, "CLOUD_KEY"); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := Resolve(file, e, flags)
	if err != nil {
		t.Fatal(err)
	}
	want := Temporal{Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTaskQueue, WorkerWait: DefaultWorkerWait,
		TLSCA: filepath.Join(dir, "certs", "ca.pem"), TLSCert: "/abs/client.pem", TLSKey: "/env/key.pem", TLSServerName: "temporal.internal", APIKeyEnv: "CLOUD_KEY"}
	if diff := cmp.Diff(want, c.Temporal); diff != "" {
		t.Errorf("temporal (-want +got):\n%s", diff)
	}
	for key, src := range map[string]string{"temporal.tlsCa": p, "temporal.tlsKey": "environment", "temporal.tlsServerName": "environment", "temporal.apiKeyEnv": "flag"} {
		if c.Sources[key] != src {
			t.Errorf("%s from %q, want %q", key, c.Sources[key], src)
		}
	}
	if v := c.Value("temporal.apiKeyEnv"); v != "CLOUD_KEY" {
		t.Errorf("config prints apiKeyEnv %q", v)
	}

	// A run's record, under this configuration: what a layer set wins.
	rec := Temporal{Address: "a:7233", Namespace: "ns", TaskQueue: "q", TLSCA: "/run/ca.pem", TLSCert: "/run/c.pem", TLSKey: "/run/k.pem"}
	o := c.OverTemporal(rec, "run r1")
	want = Temporal{Address: "a:7233", Namespace: "ns", TaskQueue: "q", TLSCA: filepath.Join(dir, "certs", "ca.pem"), TLSCert: "/abs/client.pem",
		TLSKey: "/env/key.pem", TLSServerName: "temporal.internal", APIKeyEnv: "CLOUD_KEY"}
	if diff := cmp.Diff(want, o.Temporal); diff != "" {
		t.Errorf("over a record (-want +got):\n%s", diff)
	}
	d, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	o = d.OverTemporal(rec, "run r1")
	if diff := cmp.Diff(rec, o.Temporal); diff != "" || o.Sources["temporal.tlsCa"] != "run r1" || d.Sources["temporal.tlsCa"] != "default" {
		t.Errorf("a record under the defaults (-want +got):\n%s\nsources %q, %q", diff, o.Sources["temporal.tlsCa"], d.Sources["temporal.tlsCa"])
	}

	for _, bad := range []string{"sk-live-1234.abcd", "1KEY", "MY-KEY"} {
		_, err := Resolve(&Layer{Name: "flag", Temporal: &TemporalLayer{APIKeyEnv: &bad}})
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Key != "temporal.apiKeyEnv" || strings.Contains(err.Error(), bad) {
			t.Errorf("apiKeyEnv %q: %v", bad, err)
		}
	}
	_, err = LoadFile(write(t, filepath.Join(dir, "bad.toml"), "[temporal]\ntlsFile = \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "tlsCa, tlsCert, tlsKey, tlsServerName, apiKeyEnv") {
		t.Errorf("an unknown key of [temporal]: %v", err)
	}
}

// The configuration's hooks dispatch with the desktop notification only
// on a terminal and unless notify = false; with neither, there is none.
func TestDispatcher(t *testing.T) {
	var term strings.Builder
	c := &Config{Notify: true}
	if d := c.Dispatcher(nil, nil, nil); d != nil {
		t.Errorf("no hook, no terminal: %+v, want none", d)
	}
	if d := c.Dispatcher(nil, nil, &term); d == nil || d.Desktop == nil || d.Desktop.Bell != &term {
		t.Errorf("notify on a terminal: %+v, want the desktop notification", d)
	}
	c.Notify = false
	if d := c.Dispatcher(nil, nil, &term); d != nil {
		t.Errorf("notify = false: %+v, want none", d)
	}
	c.Hooks = []hooks.Hook{{On: []string{"*"}, Command: []string{"true"}}}
	c.HookTimeout = time.Second
	if d := c.Dispatcher([]string{"A=1"}, nil, &term); d == nil || d.Desktop != nil || len(d.Hooks) != 1 || d.Timeout != time.Second || d.Environ[0] != "A=1" {
		t.Errorf("hooks: %+v", d)
	}
}

func TestWindowLimitKeys(t *testing.T) {
	dir := t.TempDir()
	l := load(t, dir, "jlgcli.toml", "windowLimit = 80\n[backends.claude]\nwindowLimit = 95\n")
	c, err := Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	got := c.WindowLimitsOf()
	if got.Of("claude") != 95 || got.Of("codex") != 80 || len(c.Backends) != 0 {
		t.Errorf("limits %v, command backends %v", got, c.Backends)
	}
	if v := c.Value("windowLimit"); v != "80%, claude 95%" {
		t.Errorf("value %q", v)
	}
	c, err = Resolve(&Layer{Name: "default"})
	if err != nil || c.WindowLimitsOf() != nil {
		t.Errorf("default limits %v (%v)", c.WindowLimitsOf(), err)
	}
	for _, bad := range []string{"windowLimit = 120\n", "windowLimit = -1\n", "[backends.claude]\nwindowLimit = 101\n",
		"[backends.claude]\nwindowLimit = 90\nprompt = \"arg\"\n"} {
		l := load(t, dir, "bad.toml", bad)
		if _, err := Resolve(l); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	var fl Layer
	for _, k := range keyTable {
		if k.Name == "windowLimit" {
			if err := k.parse(&fl, "85%"); err != nil || *fl.WindowLimit != 85 {
				t.Errorf("--window-limit 85%%: %v", err)
			}
			if err := k.parse(&fl, "lots"); err == nil {
				t.Error("--window-limit lots: no error")
			}
		}
	}
}
