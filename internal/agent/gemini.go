package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// geminiSpec drives the Gemini CLI:
//
//	gemini --output-format stream-json --approval-mode yolo [-m MODEL] [--resume SESSION_ID]
//
// with the prompt on standard input: Gemini runs headless whenever its
// standard input is not a terminal, and reads the prompt from it (-p would
// only be appended to it), so the prompt never goes on the command line.
//
// Headless, Gemini refuses to run in a folder it does not trust (exit 55),
// and in an untrusted folder it overrides --approval-mode yolo with
// "default". GEMINI_CLI_TRUST_WORKSPACE=true trusts the working directory for
// this run only; it is what --skip-trust sets, but unlike that flag it cannot
// make an older version fail on an unknown argument.
func geminiSpec() cliSpec {
	return cliSpec{
		name: "gemini",
		bin:  "gemini",
		// stream-json and --approval-mode are older; 0.39 fixed resuming a
		// session by its id (the id in the init event) headless.
		minVersion: version{0, 39, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"--output-format", "stream-json", "--approval-mode", "yolo"}
			if req.Model != "" {
				args = append(args, "-m", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--resume", req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt, Env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}}, nil
		},
		newParser: func() streamParser { return &geminiParser{text: newReply()} },
		activity:  geminiActivity,
		// No probe: auth may come from GEMINI_API_KEY, Vertex AI variables,
		// a cached Google login or settings.json; an offline check would
		// miss some of them. A call without auth exits 41 at once.
	}
}

// geminiParser reads the JSON lines of "gemini --output-format stream-json".
type geminiParser struct {
	text       *reply
	newSegment bool // a tool ran since the last assistant text
	session    string
	result     *geminiResult
	resultAt   time.Time
	lastError  string // last error event (warnings, non-fatal)
	other      otherLines
}

type geminiResult struct {
	Status string `json:"status"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"stats"`
}

func (p *geminiParser) Line(line []byte, cut bool) {
	typ, ok := eventType(line)
	if !ok {
		p.other.add(line)
		return
	}
	var ev struct {
		SessionID string          `json:"session_id"`
		Role      string          `json:"role"`
		Content   string          `json:"content"`
		Delta     bool            `json:"delta"`
		Message   string          `json:"message"`
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if !decode(line, &ev) {
		return
	}
	switch typ {
	case "init":
		if ev.SessionID != "" {
			p.session = ev.SessionID
		}
	case "message":
		if ev.Role != "assistant" {
			return
		}
		// The reply is the assistant's text after the last tool call; the
		// deltas of one message concatenate.
		if p.newSegment || !ev.Delta {
			p.text.set(ev.Content, cut)
			p.newSegment = false
		} else {
			p.text.add(ev.Content, cut)
		}
	case "tool_use", "tool_result":
		if !p.text.empty() {
			p.newSegment = true
		}
	case "error":
		p.lastError = ev.Message
	case "result":
		var res geminiResult
		if decode(line, &res) {
			p.result, p.resultAt = &res, parseTime(ev.Timestamp)
		}
	}
}

func (p *geminiParser) Finish(end callEnd) Response {
	r := Response{SessionID: p.session}
	p.text.fill(&r)
	res := p.result
	if res != nil {
		// input_tokens is the prompt tokens, cached ones included.
		r.Usage = Usage{InputTokens: res.Stats.InputTokens, OutputTokens: res.Stats.OutputTokens}
	}
	if end.Stopped {
		return r
	}
	if res != nil && res.Status == "success" && end.ExitCode == 0 {
		return r
	}
	exitKind, exitStatus, exitWhy := geminiExit(end.ExitCode)
	switch {
	case res != nil && res.Error != nil && res.Error.Message != "":
		msg := res.Error.Message
		f := classifyTextAt(msg, orNow(p.resultAt))
		if f == nil {
			kind := FailAPI
			if exitKind != "" {
				kind = exitKind
			} else if strings.HasPrefix(res.Error.Type, "Fatal") {
				kind = FailCrash
			}
			f = &Failure{Kind: kind, Message: failureLine(msg), HTTPStatus: httpStatus(msg)}
		}
		if f.HTTPStatus == 0 {
			f.HTTPStatus = exitStatus
		}
		r.Failure = f
	case exitKind != "":
		r.Failure = &Failure{Kind: exitKind, HTTPStatus: exitStatus, Message: exitWhy}
		if s := failureLine(end.Stderr + "\n" + p.other.String()); s != "" {
			r.Failure.Message = exitWhy + ": " + s
		}
	default:
		if p.lastError != "" {
			p.other = append(p.other, p.lastError)
		}
		r.Failure = fallbackFailure(end, p.other)
	}
	return r
}

// geminiExit reads Gemini's exit codes: its own fatal codes, and the HTTP
// status of an API error, which it uses as its exit code (so 401 exits
// 401&255 = 145, 429 exits 173, 500 exits 244).
func geminiExit(code int) (FailureKind, int, string) {
	switch code {
	case 41:
		return FailAuth, 0, "gemini is not authenticated (exit 41)"
	case 42:
		return FailCrash, 0, "gemini rejected its input (exit 42)"
	case 44:
		return FailCrash, 0, "gemini sandbox error (exit 44)"
	case 52:
		return FailCrash, 0, "gemini configuration error (exit 52)"
	case 53:
		return FailContext, 0, "gemini reached its session turn limit (exit 53)"
	case 54:
		return FailCrash, 0, "gemini tool execution failed (exit 54)"
	case 55:
		return FailCrash, 0, "gemini does not trust the working directory (exit 55)"
	}
	for _, st := range []int{401, 403, 429, 500, 502, 503, 504} {
		if code == st&255 {
			f := classifyStatus(st, "")
			return f.Kind, st, fmt.Sprintf("gemini exited with status %d (HTTP %d)", code, st)
		}
	}
	return "", 0, ""
}

// geminiActivity reads an event of gemini --output-format stream-json: the
// assistant's messages (deltas that make one message), tool_use and the
// tool_result that ends it.
func geminiActivity(a *activityReader, line []byte) {
	var ev struct {
		Type       string          `json:"type"`
		Role       string          `json:"role"`
		Content    string          `json:"content"`
		Delta      bool            `json:"delta"`
		ToolName   string          `json:"tool_name"`
		ToolID     string          `json:"tool_id"`
		Parameters json.RawMessage `json:"parameters"`
		Status     string          `json:"status"`
	}
	if !decode(line, &ev) {
		return
	}
	switch ev.Type {
	case "message":
		switch {
		case ev.Role != "assistant":
		case ev.Delta:
			a.more(ev.Content)
		default:
			a.text("", ev.Content)
		}
	case "tool_use":
		a.start(ev.ToolID, ev.ToolName, ev.Parameters)
	case "tool_result":
		a.end(ev.ToolID, ev.Status != "" && ev.Status != "success")
	}
}
