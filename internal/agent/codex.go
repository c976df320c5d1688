package agent

import (
	"encoding/json"
	"strings"
)

// codexSpec drives the Codex CLI:
//
//	codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox [-m MODEL] [resume THREAD_ID] -
//
// with the prompt on standard input ("-": read the prompt from stdin). The
// options go before "resume": they are options of "exec", accepted there by
// every version, while after "resume" some versions reject some of them
// (--json, --sandbox, --color have all been reported). --skip-git-repo-check
// lets it run outside a Git repository, which it otherwise refuses.
func codexSpec() cliSpec {
	return cliSpec{
		name: "codex",
		bin:  "codex",
		// The thread.started/item.*/turn.* event schema, "exec resume" and
		// "-" for the prompt on standard input are all in 0.58.
		minVersion: version{0, 58, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}
			if req.Model != "" {
				args = append(args, "-m", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "resume", req.SessionID)
			}
			args = append(args, "-")
			return invocation{Args: args, Stdin: &req.Prompt}, nil
		},
		newParser: func() streamParser { return &codexParser{text: newReply()} },
		activity:  codexActivity,
		// No probe: "codex login status" knows nothing of a custom
		// model_provider with an env_key in $CODEX_HOME/config.toml, so it
		// would report such users unauthenticated. The first call tells.
	}
}

// codexParser reads the JSON lines of "codex exec --json".
type codexParser struct {
	text      *reply
	thread    string
	usage     *codexUsage
	completed bool   // a turn.completed came
	failed    string // message of the last turn.failed
	turnFail  bool
	lastError string // last top-level error event (often a transient "Reconnecting...")
	other     otherLines
}

type codexUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

func (p *codexParser) Line(line []byte, cut bool) {
	typ, ok := eventType(line)
	if !ok {
		p.other.add(line)
		return
	}
	var ev struct {
		ThreadID string `json:"thread_id"`
		Item     struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Message string `json:"message"`
		} `json:"item"`
		Usage *codexUsage `json:"usage"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if !decode(line, &ev) {
		return
	}
	switch typ {
	case "thread.started":
		if ev.ThreadID != "" {
			p.thread = ev.ThreadID
		}
	case "item.completed":
		// Final text = the last agent_message. Items of type "error" are
		// warnings (e.g. unknown model metadata), not failures.
		if ev.Item.Type == "agent_message" {
			p.text.set(ev.Item.Text, cut)
		}
	case "turn.completed":
		// The usage is the thread's running total, not the turn's: keep the
		// last one, never sum them.
		if ev.Usage != nil {
			p.usage = ev.Usage
		}
		p.completed = true
		p.turnFail = false
	case "turn.failed":
		p.turnFail = true
		p.failed = ev.Error.Message
	case "error":
		p.lastError = ev.Message
	}
}

func (p *codexParser) Finish(end callEnd) Response {
	r := Response{SessionID: p.thread}
	p.text.fill(&r)
	if p.usage != nil {
		// input_tokens already counts cached_input_tokens; output_tokens
		// counts reasoning tokens.
		r.Usage = Usage{InputTokens: p.usage.InputTokens, OutputTokens: p.usage.OutputTokens}
	}
	if end.Stopped {
		return r
	}
	if !p.turnFail && p.completed && end.ExitCode == 0 {
		return r
	}
	switch msg := p.failureMessage(); {
	case msg != "":
		r.Failure = textFailure(msg, timeNow(), FailAPI)
	default:
		r.Failure = fallbackFailure(end, p.other)
	}
	return r
}

// failureMessage is the structured error of a failed run: the turn.failed
// message, else the last error event that is not a retry notice.
func (p *codexParser) failureMessage() string {
	if p.turnFail && p.failed != "" {
		return p.failed
	}
	msg := p.lastError
	if rest, ok := strings.CutPrefix(msg, "Reconnecting..."); ok {
		// "Reconnecting... 2/5 (stream disconnected ...)": the cause.
		rest = strings.TrimSpace(rest)
		if i := strings.IndexByte(rest, '('); i >= 0 {
			rest = strings.TrimSuffix(rest[i+1:], ")")
		}
		msg = rest
	}
	return msg
}

// codexActivity reads an event of codex exec --json: agent messages are
// text; command executions, file changes, MCP tool calls and web searches
// are its tool calls, started and completed (or failed) as items.
func codexActivity(a *activityReader, line []byte) {
	var ev struct {
		Type string `json:"type"`
		Item struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Text     string `json:"text"`
			Command  string `json:"command"`
			Status   string `json:"status"`
			ExitCode *int   `json:"exit_code"`
			Changes  []struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
			} `json:"changes"`
			Server string          `json:"server"`
			Tool   string          `json:"tool"`
			Args   json.RawMessage `json:"arguments"`
			Query  string          `json:"query"`
		} `json:"item"`
	}
	if !decode(line, &ev) || (ev.Type != "item.started" && ev.Type != "item.updated" && ev.Type != "item.completed") {
		return
	}
	it := ev.Item
	var name string
	var input json.RawMessage
	switch it.Type {
	case "agent_message":
		if it.Text != "" {
			a.text(it.ID, it.Text)
		}
		return
	case "command_execution":
		name, input = it.Type, jsonString(unwrapShell(it.Command))
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, strings.TrimSpace(c.Kind+" "+c.Path))
		}
		name, input = it.Type, jsonString(strings.Join(paths, ", "))
	case "mcp_tool_call":
		name, input = it.Server+"."+it.Tool, it.Args
	case "web_search":
		name, input = it.Type, jsonString(it.Query)
	default:
		return
	}
	a.start(it.ID, name, input)
	failed := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
	if ev.Type == "item.completed" || failed {
		a.end(it.ID, failed)
	}
}

// unwrapShell is a command codex ran through a login shell
// (/bin/bash -lc 'CMD') as the command itself.
func unwrapShell(cmd string) string {
	for _, sh := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -lc ", "/bin/zsh -lc ", "/bin/sh -c ", "bash -c "} {
		rest, ok := strings.CutPrefix(cmd, sh)
		if !ok {
			continue
		}
		if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' && !strings.Contains(rest[1:len(rest)-1], "'") {
			return rest[1 : len(rest)-1]
		}
		return rest
	}
	return cmd
}

// jsonString is s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
