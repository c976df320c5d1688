package modelserver

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// agentCLI is one agent CLI as the conformance tests drive it.
type agentCLI struct {
	backend string // directory under internal/agent/testdata; also the executable's name
	args    agentArgs
}

// agentArgs is the command line of one CLI run, and its standard input (nil:
// none). The environment comes from AgentEnv.
type agentArgs func(prompt string) (args []string, stdin *string)

func claudeArgs(prompt string) ([]string, *string) {
	return []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}, &prompt
}

func codexArgs(prompt string) ([]string, *string) {
	return []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-"}, &prompt
}

func copilotArgs(prompt string) ([]string, *string) {
	return []string{"-p", prompt, "-s", "--allow-all-tools", "--output-format", "json"}, nil
}

func geminiArgs(prompt string) ([]string, *string) {
	return []string{"-o", "stream-json", "--approval-mode", "yolo", "-p", prompt}, nil
}

func opencodeArgs(prompt string) ([]string, *string) {
	return []string{"run", "--format", "json", prompt}, nil
}

func qwenArgs(prompt string) ([]string, *string) {
	return []string{"--output-format", "stream-json", "--approval-mode", "yolo"}, &prompt
}

func kiloArgs(prompt string) ([]string, *string) {
	return []string{"run", "--format", "json", "--auto"}, &prompt
}

var agentCLIs = []agentCLI{
	{"claude", claudeArgs},
	{"codex", codexArgs},
	{"copilot", copilotArgs},
	{"gemini", geminiArgs},
	{"opencode", opencodeArgs},
	{"qwen", qwenArgs},
	{"kilo", kiloArgs},
}

// conformanceCase is one scripted session every CLI plays.
type conformanceCase struct {
	name string
	// only, when set, limits the case to these backends; auth is the
	// credentials they are given.
	only   []string
	auth   Auth
	prompt string
	script func(workdir string) Script
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
			"kilo":     func(string) Script { return Script{rateLimitFault("kilo")} },
			"qwen":     func(string) Script { return Script{rateLimitFault("qwen")} },
		},
		check: func(t *testing.T, r *run) { wantFailed(t, r) },
	},
	{
		name:   "ratelimit-subscription",
		only:   []string{"claude"},
		auth:   AuthSubscription,
		prompt: "Say hello.",
		script: func(string) Script { return Script{rateLimitFault("claude")} },
		check:  func(t *testing.T, r *run) { wantFailed(t, r) },
	},
	{
		name:   "server-error",
		prompt: "Say hello.",
		// Retry-After 1s: opencode and kilo sleep it out before each of
		// their 5 retries; without it they back off 2+4+8+16+32 s, which
		// on a loaded machine (kilo alone takes 20 s to start) outlasted the
		// case's 3 minutes.
		script: func(string) Script { return Script{Fault(500, RetryAfter(time.Second)).Forever()} },
		check:  func(t *testing.T, r *run) { wantFailed(t, r) },
	},
}

// rateLimitFault is the 429 of the rate-limit cases: Retry-After up to the
// reset time, and the reset time in the provider's headers and body.
// opencode and kilo honour Retry-After for each of their 5 retries, and qwen
// for each of its 6 (they would sleep until the reset), so they are told to
// retry after 1s instead.
func rateLimitFault(backend string) Turn {
	retry := time.Until(rateLimitReset).Round(time.Second)
	if backend == "opencode" || backend == "kilo" || backend == "qwen" {
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
			RequireAgent(t, a.backend)
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
	return runAgent(t, a.backend, a.args, script, c.prompt, WithAuth(c.auth), 3*time.Minute)
}
