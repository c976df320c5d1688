package agent

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// builtins are the built-in backends, in the order of Builtins: each one's
// name, the npm package that installs its CLI, and its spec.
var builtins = []struct {
	name, npm string
	spec      func() cliSpec
}{
	{"claude", "@anthropic-ai/claude-code", claudeSpec},
	{"codex", "@openai/codex", codexSpec},
	{"copilot", "@github/copilot", copilotSpec},
	{"gemini", "@google/gemini-cli", geminiSpec},
	{"opencode", "opencode-ai", opencodeSpec},
	{"qwen", "@qwen-code/qwen-code", qwenSpec},
	{"kilo", "@kilocode/cli", kiloSpec},
}

// Builtins lists the built-in backends in the order jlgcli picks the first
// installed one when none is configured: the five first proven, then the
// others in the order they were added, so that installing one more CLI never
// changes which one a user without a configured backend gets.
var Builtins = func() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}()

// Package is the npm package that installs the CLI of the built-in backend
// name; "" for any other name.
func Package(name string) string {
	if i := slices.Index(Builtins, name); i >= 0 {
		return builtins[i].npm
	}
	return ""
}

// InstallCommand is the command that installs the CLI of the built-in
// backend name ("npm install -g PACKAGE"); "" for any other name.
func InstallCommand(name string) string {
	if p := Package(name); p != "" {
		return "npm install -g " + p
	}
	return ""
}

// builtinSpec returns the spec of a built-in backend.
func builtinSpec(name string) (cliSpec, bool) {
	if i := slices.Index(Builtins, name); i >= 0 {
		return builtins[i].spec(), true
	}
	return cliSpec{}, false
}

// IsBuiltin reports whether name is a built-in backend.
func IsBuiltin(name string) bool { return slices.Contains(Builtins, name) }

// CommandSpec is a user-defined command backend as configured.
type CommandSpec struct {
	Command []string `json:"command"`
	Prompt  string   `json:"prompt,omitempty"`
}

// Registry resolves backend names to agents.
type Registry struct {
	// Commands are the user-defined backends, by name.
	Commands map[string]CommandSpec
	// Env is the base environment of every agent (nil: jlgcli's own).
	Env []string
	// Explicit are the names of the variables of Env the run gives its
	// agents (--env, [env], a tier's env): a confined agent gets them beside
	// what its CLI needs.
	Explicit []string
	// Untrusted are the names of the variables a project's file set: an
	// agent is looked for, and its version and login probed outside any
	// sandbox, with jlgcli's own values of them (proc.Trusted), so that a
	// repository's PATH never picks the program jlgcli runs.
	Untrusted []string
}

// UnknownError is returned for a backend name that is neither built in nor
// configured.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown backend %q; known backends: %s", e.Name, strings.Join(e.Known, ", "))
}

// Names lists every backend: the built-ins, then the configured commands in
// name order.
func (r *Registry) Names() []string {
	names := append([]string(nil), Builtins...)
	var cmds []string
	for n := range r.Commands {
		if !IsBuiltin(n) {
			cmds = append(cmds, n)
		}
	}
	sort.Strings(cmds)
	return append(names, cmds...)
}

// Get returns the agent named name.
func (r *Registry) Get(name string) (Agent, error) {
	if c, ok := r.Commands[name]; ok && len(c.Command) > 0 {
		mode := c.Prompt
		if mode == "" {
			mode = PromptStdin
		}
		return &Command{BackendName: name, Argv: c.Command, Prompt: mode, Env: r.Env, Explicit: r.Explicit, Untrusted: r.Untrusted}, nil
	}
	if spec, ok := builtinSpec(name); ok {
		return &cliAgent{spec: spec, env: r.Env, explicit: r.Explicit, untrusted: r.Untrusted}, nil
	}
	return nil, &UnknownError{Name: name, Known: r.Names()}
}
