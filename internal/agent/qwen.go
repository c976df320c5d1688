package agent

import (
	"regexp"
	"strconv"
	"strings"
)

// qwenSpec drives Qwen Code:
//
//	qwen --output-format stream-json --approval-mode yolo [-m MODEL] [--resume SESSION_ID]
//
// with the prompt on standard input: like the Gemini CLI it comes from,
// Qwen Code runs one-shot when its standard input is not a terminal and
// takes that input as the prompt, so the prompt never goes on the command
// line. --approval-mode yolo approves every tool call (nobody is there to
// answer); QWEN_CODE_SUPPRESS_YOLO_WARNING=1 drops the notice it then prints
// on standard error at every start.
//
// Its stream-json output is Claude Code's format (system/init, assistant,
// user, result), without a cost.
func qwenSpec() cliSpec {
	return cliSpec{
		name: "qwen",
		bin:  "qwen",
		// stream-json output with the result event's usage, --approval-mode
		// and --resume SESSION_ID headless are all in 0.15; older ones are
		// not proven here.
		minVersion: version{0, 15, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"--output-format", "stream-json", "--approval-mode", "yolo"}
			if req.Model != "" {
				args = append(args, "-m", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--resume", req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt, Env: []string{"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}}, nil
		},
		newParser: func() streamParser { return &qwenParser{text: newReply(), usage: map[string]qwenUsage{}} },
		activity:  qwenActivity,
		// No probe: the key may come from OPENAI_API_KEY, a provider's own
		// envKey, settings.json or ~/.qwen/.env; a call without one fails
		// at once, before any request.
	}
}

// qwenParser reads the JSON lines of "qwen --output-format stream-json".
type qwenParser struct {
	text    *reply // text of the last assistant message
	session string
	// usage is each assistant message's own usage, by message id: the
	// result event's usage is the session's running total, which after
	// --resume counts the earlier calls too.
	usage  map[string]qwenUsage
	result *qwenResult
	other  otherLines
}

type qwenUsage struct {
	// InputTokens is the prompt's tokens, cached ones included (Qwen Code
	// copies the provider's prompt token count).
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type qwenResult struct {
	Subtype   string    `json:"subtype"`
	IsError   bool      `json:"is_error"`
	Result    *string   `json:"result"`
	SessionID string    `json:"session_id"`
	Usage     qwenUsage `json:"usage"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (p *qwenParser) Line(line []byte, cut bool) {
	typ, ok := eventType(line)
	if !ok {
		p.other.add(line)
		return
	}
	var ev struct {
		SessionID       string  `json:"session_id"`
		ParentToolUseID *string `json:"parent_tool_use_id"`
		Message         struct {
			ID      string `json:"id"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Usage *qwenUsage `json:"usage"`
		} `json:"message"`
	}
	if !decode(line, &ev) {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch typ {
	case "assistant":
		// A message is printed again as it grows: its last usage counts,
		// once. A subagent's messages cost too, but are not the reply.
		if u := ev.Message.Usage; u != nil && ev.Message.ID != "" {
			p.usage[ev.Message.ID] = *u
		}
		if ev.ParentToolUseID != nil && *ev.ParentToolUseID != "" {
			return
		}
		var parts []string
		for _, c := range ev.Message.Content {
			if c.Type == "text" && c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			p.text.set(strings.Join(parts, "\n"), cut)
		}
	case "result":
		var r qwenResult
		if decode(line, &r) {
			p.result = &r
		}
	}
}

func (p *qwenParser) Finish(end callEnd) Response {
	r := Response{SessionID: p.session}
	for _, u := range p.usage {
		r.Usage.InputTokens += u.InputTokens
		r.Usage.OutputTokens += u.OutputTokens
	}
	res := p.result
	switch {
	case res != nil && !res.IsError && res.Result != nil:
		p.text.set(*res.Result, p.text.cut)
		p.text.fill(&r)
	case res == nil:
		// Killed or crashed before its result: the last text it printed.
		p.text.fill(&r)
	}
	if res != nil && res.SessionID != "" {
		r.SessionID = res.SessionID
	}
	if end.Stopped {
		return r
	}
	if res != nil && !res.IsError && end.ExitCode == 0 {
		return r
	}
	if res != nil && res.IsError {
		msg := res.Subtype
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		r.Failure = qwenFailure(msg, res.Subtype, end.ExitCode)
		return r
	}
	if kind, _, why := geminiExit(end.ExitCode); kind != "" {
		// Qwen Code keeps the Gemini CLI's fatal exit codes (41 auth, 53
		// turn limit, ...).
		r.Failure = &Failure{Kind: kind, Message: why}
		if s := failureLine(end.Stderr + "\n" + p.other.String()); s != "" {
			r.Failure.Message = why + ": " + s
		}
		return r
	}
	r.Failure = fallbackFailure(end, p.other)
	return r
}

// qwenFailure classifies the error of a result event: "[API Error: 401
// Incorrect API key provided]", "[API Error: 429 ...]", "Missing API key for
// OpenAI-compatible auth. ..." (no key: no request was made), a turn limit.
func qwenFailure(msg, subtype string, exit int) *Failure {
	switch {
	case strings.Contains(strings.ToLower(msg), "missing api key"):
		return &Failure{Kind: FailAuth, Message: failureLine(msg)}
	case subtype == "error_max_turns" || exit == 53:
		return &Failure{Kind: FailContext, Message: failureLine(msg)}
	}
	if m := qwenAPIErrorRE.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		return classifyStatus(code, failureLine(msg))
	}
	return textFailure(msg, timeNow(), FailAPI)
}

// qwenAPIErrorRE finds the provider's status in Qwen Code's "[API Error: 429
// ...]".
var qwenAPIErrorRE = regexp.MustCompile(`\[API Error: ([45]\d\d)\b`)
