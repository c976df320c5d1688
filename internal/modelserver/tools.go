package modelserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// toolDef is a tool the client offered, whatever its protocol.
type toolDef struct {
	Name string
	// Custom marks an OpenAI Responses "custom" (free-form) tool, whose
	// call carries a raw string input instead of JSON arguments.
	Custom bool
	Schema map[string]any // JSON schema of the arguments; may be nil
}

// resolvedCall is a tool call ready to be sent.
type resolvedCall struct {
	Name   string
	Custom bool
	Args   map[string]any // for function tools
	Input  string         // for custom tools
}

// ArgsJSON is the arguments as a JSON string.
func (c resolvedCall) ArgsJSON() string {
	b, _ := json.Marshal(c.Args)
	return string(b)
}

// roleCandidates lists, for each role, the tool names the clients offer for
// it, best first.
var roleCandidates = map[Role][]string{
	RoleWriteFile: {
		"Write",              // Claude Code
		"write_file",         // gemini-cli
		"write",              // opencode
		"create",             // copilot
		"apply_patch",        // codex
		"str_replace_editor", // older copilot
	},
	RoleRunCommand: {
		"Bash",              // Claude Code
		"run_shell_command", // gemini-cli
		"bash",              // opencode, copilot
		"exec_command",      // codex (unified exec)
		"shell",             // codex (classic)
		"shell_command",     // codex
	},
}

// writeFallbackRoles: when no file-writing tool is offered, a file is written
// with the shell.
func resolveCall(tc *ToolCall, tools []toolDef) (resolvedCall, error) {
	byName := map[string]toolDef{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	if tc.Name != "" {
		t, ok := byName[tc.Name]
		if !ok {
			return resolvedCall{}, fmt.Errorf("tool %q is not offered (offered: %s)", tc.Name, toolNames(tools))
		}
		args := tc.Args
		if args == nil {
			args = map[string]any{}
		}
		if t.Custom {
			s, _ := args["input"].(string)
			return resolvedCall{Name: t.Name, Custom: true, Input: s}, nil
		}
		return resolvedCall{Name: t.Name, Args: args}, nil
	}
	for _, name := range roleCandidates[tc.Role] {
		if t, ok := byName[name]; ok {
			return buildCall(tc, t)
		}
	}
	if tc.Role == RoleWriteFile {
		// No file tool: write it with the shell.
		sh := &ToolCall{Role: RoleRunCommand, Command: writeCommand(tc.Path, tc.Content)}
		for _, name := range roleCandidates[RoleRunCommand] {
			if t, ok := byName[name]; ok {
				return buildCall(sh, t)
			}
		}
	}
	return resolvedCall{}, fmt.Errorf("no tool for role %q is offered (offered: %s)", tc.Role, toolNames(tools))
}

func toolNames(tools []toolDef) string {
	if len(tools) == 0 {
		return "none"
	}
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

// writeCommand is a POSIX shell command writing content to path.
func writeCommand(path, content string) string {
	return "printf '%s' " + shellQuote(content) + " > " + shellQuote(path)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// applyPatch is the codex apply_patch text adding a file.
func applyPatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, line := range strings.SplitAfter(content, "\n") {
		if line == "" {
			continue
		}
		b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// buildCall fills the arguments of tool t for tc from t's schema.
func buildCall(tc *ToolCall, t toolDef) (resolvedCall, error) {
	if t.Name == "apply_patch" {
		patch := applyPatch(tc.Path, tc.Content)
		if t.Custom {
			return resolvedCall{Name: t.Name, Custom: true, Input: patch}, nil
		}
		key := firstProp(t.Schema, "input", "patch")
		if key == "" {
			key = "input"
		}
		return resolvedCall{Name: t.Name, Args: map[string]any{key: patch}}, nil
	}
	if t.Custom {
		return resolvedCall{}, fmt.Errorf("tool %q is free-form: name it with Call", t.Name)
	}
	props := properties(t.Schema)
	args := map[string]any{}
	switch tc.Role {
	case RoleWriteFile:
		pk := firstProp(t.Schema, "file_path", "filePath", "path", "absolute_path", "filename", "file")
		ck := firstProp(t.Schema, "content", "file_text", "contents", "text", "fileText")
		if pk == "" || ck == "" {
			return resolvedCall{}, fmt.Errorf("tool %q: no path/content parameters in its schema", t.Name)
		}
		args[pk] = tc.Path
		args[ck] = tc.Content
		if t.Name == "str_replace_editor" {
			args["command"] = "create"
		}
	case RoleRunCommand:
		ck := firstProp(t.Schema, "command", "cmd")
		if ck == "" {
			return resolvedCall{}, fmt.Errorf("tool %q: no command parameter in its schema", t.Name)
		}
		if typ, _ := props[ck]["type"].(string); typ == "array" {
			args[ck] = []string{"bash", "-lc", tc.Command}
		} else {
			args[ck] = tc.Command
		}
	}
	fillRequired(t.Schema, args)
	return resolvedCall{Name: t.Name, Args: args}, nil
}

func properties(schema map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	p, _ := schema["properties"].(map[string]any)
	for k, v := range p {
		m, _ := v.(map[string]any)
		out[k] = m
	}
	return out
}

func firstProp(schema map[string]any, keys ...string) string {
	props := properties(schema)
	for _, k := range keys {
		if _, ok := props[k]; ok {
			return k
		}
	}
	return ""
}

// fillRequired gives each required parameter not yet set a harmless value
// of its type.
func fillRequired(schema map[string]any, args map[string]any) {
	props := properties(schema)
	req, _ := schema["required"].([]any)
	var keys []string
	for _, r := range req {
		if k, ok := r.(string); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := args[k]; ok {
			continue
		}
		args[k] = sampleValue(props[k], k)
	}
}

// sampleValue is a minimal value valid for schema s (best effort).
func sampleValue(s map[string]any, name string) any {
	if s == nil {
		return "scripted"
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	switch strings.ToLower(fmt.Sprint(typ)) {
	case "string":
		if name == "description" {
			return "Scripted command"
		}
		return "scripted"
	case "integer", "number":
		for _, k := range []string{"minimum", "exclusiveMinimum"} {
			if m, ok := s[k].(float64); ok {
				if k == "exclusiveMinimum" {
					m++
				}
				return m
			}
		}
		return 1 // scores and counts are often 1-based
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		obj := map[string]any{}
		fillRequired(s, obj)
		return obj
	}
	if _, ok := s["properties"]; ok {
		obj := map[string]any{}
		fillRequired(s, obj)
		return obj
	}
	return "scripted"
}
