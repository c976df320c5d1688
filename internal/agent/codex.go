package agent

import "strings"

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
