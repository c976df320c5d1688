package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// What a call is doing now, read from the raw output the CLI wrote so far
// (or its tail): the last lines of text the agent wrote, and the tools it
// called where its stream reports them. The text is kept as the agent wrote
// it (valid UTF-8, one line per entry): whoever shows it makes it safe for
// where it goes (html/template on the web, termsafe on a terminal).

// ToolCall is one tool call an agent CLI reported in its output.
type ToolCall struct {
	// Name is the tool's name as the CLI gives it (Bash, write_file,
	// command_execution…).
	Name string `json:"name"`
	// Input is its input in one line: the command, the file's path, the
	// pattern…; "" when the CLI gave none.
	Input string `json:"input,omitempty"`
	// Done: the CLI reported its end; Error: it failed. Neither: it runs,
	// or the stream says nothing of its end.
	Done  bool `json:"done,omitempty"`
	Error bool `json:"error,omitempty"`
}

// Activity is what a call's output shows it doing.
type Activity struct {
	// Lines are the last lines of the text the agent wrote (its messages;
	// a command backend's output), oldest first, blank lines left out.
	Lines []string `json:"lines"`
	// Tools are its last tool calls, oldest first (at most MaxTools).
	Tools []ToolCall `json:"tools"`
}

// MaxTools bounds the tool calls an Activity keeps.
const MaxTools = 10

// Bounds of the text kept.
const (
	maxLineRunes  = 300 // a line is cut beyond this
	maxInputRunes = 200 // a tool's input likewise
	maxBlocks     = 64  // the text blocks (messages) kept while reading
)

// ActivityOf reads what the raw output out of one call of backend shows:
// its last lines (at most lines) of text and its last tool calls. out may be
// the tail of the output: a first line that is not whole is skipped by the
// caller. dir, when not "", is the agent's working directory: paths under it
// are shown relative to it. A backend that is not a built-in CLI (a command
// backend) has no stream to parse: its last lines of output are its text.
func ActivityOf(backend string, out []byte, dir string, lines int) Activity {
	a := &activityReader{}
	read := plainActivity
	if spec, ok := builtinSpec(backend); ok && spec.activity != nil {
		read = spec.activity
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		read(a, line)
	}
	return a.result(dir, lines)
}

// activityReader gathers an Activity from a stream's events, one parser per
// CLI (cliSpec.activity) telling it what each line holds.
type activityReader struct {
	blocks []textBlock // text, newest last
	delta  bool        // the last block is a message still growing
	tools  []toolEntry // newest last
}

// textBlock is one message of the agent (or a line of plain output); id,
// when the CLI gives one, tells a message printed again as it grows.
type textBlock struct {
	id, text string
}

type toolEntry struct {
	id string
	ToolCall
}

// text adds a message. A message with the id of the last one replaces it
// (printed again as it grew).
func (a *activityReader) text(id, s string) {
	a.delta = false
	if id != "" && len(a.blocks) > 0 && a.blocks[len(a.blocks)-1].id == id {
		a.blocks[len(a.blocks)-1].text = s
		return
	}
	a.addBlock(textBlock{id: id, text: s})
}

// more adds a piece of a message that arrives in pieces (deltas): it goes on
// the message before it unless a tool call came in between.
func (a *activityReader) more(s string) {
	if a.delta && len(a.blocks) > 0 {
		b := &a.blocks[len(a.blocks)-1]
		b.text = tailString(b.text+s, 64<<10)
		return
	}
	a.addBlock(textBlock{text: s})
	a.delta = true
}

func (a *activityReader) addBlock(b textBlock) {
	if len(a.blocks) == maxBlocks {
		a.blocks = slices.Delete(a.blocks, 0, 1)
	}
	a.blocks = append(a.blocks, b)
}

// start records a tool call; a call of the same id as one already seen is
// updated instead (reported again with its end).
func (a *activityReader) start(id, name string, input json.RawMessage) {
	a.delta = false
	t := a.tool(id)
	if t == nil {
		if len(a.tools) == 4*MaxTools {
			a.tools = slices.Delete(a.tools, 0, len(a.tools)-MaxTools)
		}
		a.tools = append(a.tools, toolEntry{id: id})
		t = &a.tools[len(a.tools)-1]
	}
	t.Name = name
	if s := inputSummary(input); s != "" {
		t.Input = s
	}
}

// end records the end of tool call id, failed or not; a call not seen (it
// started before the tail that is read) is left out.
func (a *activityReader) end(id string, failed bool) {
	a.delta = false
	if t := a.tool(id); t != nil {
		t.Done, t.Error = true, failed
	}
}

// tool is the call of id, nil when none; calls without an id are never
// found again.
func (a *activityReader) tool(id string) *toolEntry {
	if id == "" {
		return nil
	}
	for i := len(a.tools) - 1; i >= 0; i-- {
		if a.tools[i].id == id {
			return &a.tools[i]
		}
	}
	return nil
}

// result is the activity gathered: the last n lines, the last MaxTools
// calls, paths under dir made relative.
func (a *activityReader) result(dir string, n int) Activity {
	act := Activity{Lines: []string{}, Tools: []ToolCall{}}
	rel := func(s string) string {
		if dir == "" || dir == "/" {
			return s
		}
		dir = strings.TrimSuffix(dir, "/")
		s = strings.ReplaceAll(s, dir+"/", "")
		return strings.ReplaceAll(s, dir, ".")
	}
	for i := len(a.blocks) - 1; i >= 0 && len(act.Lines) < n; i-- {
		ls := strings.Split(a.blocks[i].text, "\n")
		for j := len(ls) - 1; j >= 0 && len(act.Lines) < n; j-- {
			if l := strings.TrimRight(ls[j], " \t\r"); strings.TrimSpace(l) != "" {
				act.Lines = append(act.Lines, cutRunes(validText(l), maxLineRunes))
			}
		}
	}
	slices.Reverse(act.Lines)
	tools := a.tools[max(0, len(a.tools)-MaxTools):]
	for _, t := range tools {
		c := t.ToolCall
		c.Name = cutRunes(oneLineText(c.Name), 60)
		c.Input = cutRunes(rel(c.Input), maxInputRunes)
		act.Tools = append(act.Tools, c)
	}
	return act
}

// inputKeys are the fields of a tool's input that say best what it does, in
// the order they are looked for (the CLIs' names for a command, a path, a
// pattern, a query, an address, a description).
var inputKeys = []string{"command", "cmd", "file_path", "filePath", "path", "notebook_path", "absolute_path",
	"pattern", "query", "url", "description", "prompt"}

// inputSummary is a tool's input in one line: the value of the first of
// inputKeys it has, else its JSON.
func inputSummary(input json.RawMessage) string {
	if len(input) == 0 || string(input) == "null" {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) == nil {
		for _, k := range inputKeys {
			if s := valueText(fields[k]); s != "" {
				return cutRunes(oneLineText(s), maxInputRunes)
			}
		}
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		return cutRunes(oneLineText(s), maxInputRunes)
	}
	var b bytes.Buffer
	if json.Compact(&b, input) != nil {
		return ""
	}
	return cutRunes(oneLineText(b.String()), maxInputRunes)
}

// valueText is a JSON string's text, or the words of an array of strings
// (a command given as argv); "" for anything else.
func valueText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// oneLineText is s with its runs of white space (newlines included) made one
// space.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(validText(s)), " ")
}

// validText is s with invalid UTF-8 replaced.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// cutRunes cuts s to at most n runes, ending it with … when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// tailString is the last n bytes of s, from a rune's start.
func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// plainActivity reads a plain output line: it is text.
func plainActivity(a *activityReader, line []byte) {
	a.text("", string(line))
}
