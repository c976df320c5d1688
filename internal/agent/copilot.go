package agent

import (
	"encoding/json"
	"time"
)

// copilotSpec drives the GitHub Copilot CLI:
//
//	copilot -s --allow-all-tools --output-format json [--model MODEL] [--resume=ID]
//
// with the prompt on standard input. Copilot runs a piped standard input as a
// prompt-mode (-p) session, so the prompt never goes on the command line,
// whatever its length. (Given both -p and a piped standard input, it ignores
// the standard input.) --resume takes an optional value, hence the "=".
func copilotSpec() cliSpec {
	return cliSpec{
		name: "copilot",
		bin:  "copilot",
		// --output-format json came in 0.0.422; 1.0 has the result event
		// with sessionId and the piped-stdin prompt mode.
		minVersion: version{1, 0, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"-s", "--allow-all-tools", "--output-format", "json"}
			if req.Model != "" {
				args = append(args, "--model", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--resume="+req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt}, nil
		},
		newParser: func() streamParser { return &copilotParser{text: newReply()} },
		activity:  copilotActivity,
		// No probe: Copilot authenticates from a stored login, GH_TOKEN /
		// GITHUB_TOKEN / COPILOT_GITHUB_TOKEN, gh's login, or a custom
		// provider (COPILOT_PROVIDER_BASE_URL) that needs none; no offline
		// command tells them all apart. The first call tells.
	}
}

// copilotParser reads the JSON lines of "copilot --output-format json".
type copilotParser struct {
	text    *reply
	session string
	result  *copilotResult
	err     *copilotError
	errAt   time.Time
	other   otherLines
}

type copilotResult struct {
	SessionID string `json:"sessionId"`
	ExitCode  *int   `json:"exitCode"`
}

type copilotError struct {
	ErrorType  string `json:"errorType"`
	Message    string `json:"message"`
	StatusCode int    `json:"statusCode"`
}

func (p *copilotParser) Line(line []byte, cut bool) {
	typ, ok := eventType(line)
	if !ok {
		p.other.add(line)
		return
	}
	var ev struct {
		Data      json.RawMessage `json:"data"`
		Timestamp json.RawMessage `json:"timestamp"`
		SessionID string          `json:"sessionId"`
	}
	if !decode(line, &ev) {
		return
	}
	switch typ {
	case "assistant.message":
		// One per model response; the final one holds the reply. Those
		// that only request tools have empty content.
		var d struct {
			Content string `json:"content"`
		}
		if decode(ev.Data, &d) && d.Content != "" {
			p.text.set(d.Content, cut)
		}
	case "session.error":
		var e copilotError
		if decode(ev.Data, &e) {
			p.err, p.errAt = &e, parseTime(ev.Timestamp)
		}
	case "result":
		var res copilotResult
		if decode(line, &res) {
			p.result = &res
		}
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
}

func (p *copilotParser) Finish(end callEnd) Response {
	// Copilot reports neither tokens nor cost in its JSON output.
	r := Response{SessionID: p.session}
	p.text.fill(&r)
	if end.Stopped {
		return r
	}
	failed := p.err != nil || end.ExitCode != 0 || p.result == nil ||
		(p.result.ExitCode != nil && *p.result.ExitCode != 0)
	if !failed {
		return r
	}
	if e := p.err; e != nil && e.Message != "" {
		now := orNow(p.errAt)
		switch {
		case e.StatusCode >= 400:
			r.Failure = classifyStatusAt(e.StatusCode, e.Message, now)
			r.Failure.Message = failureLine(e.Message)
		case e.ErrorType == "authentication":
			r.Failure = &Failure{Kind: FailAuth, Message: failureLine(e.Message)}
		case e.ErrorType == "rate_limit":
			r.Failure = &Failure{Kind: FailRateLimit, Message: failureLine(e.Message), ResetAt: resetTime(e.Message, now)}
		default:
			r.Failure = textFailure(e.Message, now, FailAPI)
		}
		return r
	}
	r.Failure = fallbackFailure(end, p.other)
	return r
}

// copilotActivity reads an event of copilot --output-format json: the
// content of the assistant's messages, and the tools it executes
// (tool.execution_start, then tool.execution_complete with success).
func copilotActivity(a *activityReader, line []byte) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			MessageID  string          `json:"messageId"`
			Content    string          `json:"content"`
			ToolCallID string          `json:"toolCallId"`
			ToolName   string          `json:"toolName"`
			Arguments  json.RawMessage `json:"arguments"`
			Success    *bool           `json:"success"`
		} `json:"data"`
	}
	if !decode(line, &ev) {
		return
	}
	d := ev.Data
	switch ev.Type {
	case "assistant.message":
		if d.Content != "" {
			a.text(d.MessageID, d.Content)
		}
	case "tool.execution_start":
		a.start(d.ToolCallID, d.ToolName, d.Arguments)
	case "tool.execution_complete":
		a.end(d.ToolCallID, d.Success != nil && !*d.Success)
	}
}
