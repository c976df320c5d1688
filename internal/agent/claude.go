package agent

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/jlgcli/jlgcli/internal/proc"
)

// geteuid is the effective user id; tests replace it.
var geteuid = os.Geteuid

// rootNote warns that Claude Code will refuse to run when jlgcli runs as
// root and the agent's environment env lacks IS_SANDBOX=1.
func rootNote(env []string) string {
	if geteuid() != 0 {
		return ""
	}
	if v, _ := proc.LookupEnv(env, "IS_SANDBOX"); v == "1" {
		return ""
	}
	return RootHint
}

// claudeSpec drives Claude Code: `claude -p --output-format stream-json
// --verbose`, the prompt on standard input.
func claudeSpec() cliSpec {
	return cliSpec{
		name:       "claude",
		bin:        "claude",
		minVersion: version{1, 0, 0},
		build: func(req Request, _ func() (string, error)) (invocation, error) {
			args := []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
			if req.Model != "" {
				args = append(args, "--model", req.Model)
			}
			if req.SessionID != "" {
				args = append(args, "--resume", req.SessionID)
			}
			return invocation{Args: args, Stdin: &req.Prompt}, nil
		},
		newParser: func() streamParser { return &claudeParser{text: newReply()} },
		activity:  claudeActivity,
		note:      rootNote,
	}
}

// claudeParser reads Claude Code's stream-json events.
type claudeParser struct {
	text      *reply // text of the last assistant message, as a fallback
	session   string
	result    *claudeResult
	rateLimit *Failure
	windows   []Window
	other     otherLines // non-JSON lines, for classification
}

type claudeResult struct {
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	Result         *string  `json:"result"`
	SessionID      string   `json:"session_id"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	APIErrorStatus *int     `json:"api_error_status"`
	Usage          struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Errors []string `json:"errors"`
}

func (p *claudeParser) Line(line []byte, cut bool) {
	var ev struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		Message   struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
		RateLimitInfo struct {
			Status        string          `json:"status"`
			ResetsAt      json.RawMessage `json:"resetsAt"`
			RateLimitType string          `json:"rateLimitType"`
			Utilization   *float64        `json:"utilization"`
		} `json:"rate_limit_info"`
	}
	if _, ok := eventType(line); !ok {
		p.other.add(line)
		return
	}
	if !decode(line, &ev) {
		return
	}
	if ev.SessionID != "" {
		p.session = ev.SessionID
	}
	switch ev.Type {
	case "assistant":
		var parts []string
		for _, c := range ev.Message.Content {
			if c.Type == "text" && c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		if len(parts) > 0 {
			p.text.set(strings.Join(parts, "\n"), cut)
		}
	case "rate_limit_event":
		info := ev.RateLimitInfo
		if w, ok := claudeWindow(info.Status, info.RateLimitType, info.Utilization, info.ResetsAt); ok {
			p.windows = SetWindow(p.windows, w)
		}
		if st := strings.ToLower(ev.RateLimitInfo.Status); st == "rejected" || st == "exceeded" {
			p.rateLimit = &Failure{Kind: FailRateLimit, Message: "rate limit " + st, HTTPStatus: 429, ResetAt: parseTime(ev.RateLimitInfo.ResetsAt)}
		}
	case "result":
		var r claudeResult
		if decode(line, &r) {
			p.result = &r
		}
		p.text.cut = p.text.cut || cut
	}
}

func (p *claudeParser) Finish(end callEnd) Response {
	r := Response{SessionID: p.session, Windows: p.windows}
	p.text.fill(&r)
	res := p.result
	if res != nil {
		if res.Result != nil {
			r.Text = *res.Result
			if len(r.Text) > MaxReplyBytes {
				r.Text, r.Truncated = r.Text[len(r.Text)-MaxReplyBytes:], true
			}
		}
		if res.SessionID != "" {
			r.SessionID = res.SessionID
		}
		u := res.Usage
		r.Usage = Usage{
			InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens: u.OutputTokens,
		}
		if res.TotalCostUSD != nil {
			r.Usage.CostUSD, r.Usage.CostKnown = *res.TotalCostUSD, true
		}
	}
	if end.Stopped {
		return r
	}
	// Key on is_error and api_error_status, never on subtype (agents.md).
	failed := res == nil || res.IsError || end.ExitCode != 0
	if !failed {
		return r
	}
	msg := r.Text
	if res != nil && len(res.Errors) > 0 {
		msg = strings.Join(res.Errors, "; ")
	}
	all := msg + "\n" + p.other.String() + "\n" + end.Stderr
	switch {
	case res != nil && res.Subtype == "error_max_turns":
		r.Failure = &Failure{Kind: FailContext, Message: "claude reached its turn limit (error_max_turns)"}
	case res != nil && res.APIErrorStatus != nil && *res.APIErrorStatus > 0:
		r.Failure = classifyStatus(*res.APIErrorStatus, failureLine(all))
		if r.Failure.Kind == FailRateLimit && r.Failure.ResetAt.IsZero() && p.rateLimit != nil {
			r.Failure.ResetAt = p.rateLimit.ResetAt
		}
	case p.rateLimit != nil:
		r.Failure = p.rateLimit
	default:
		r.Failure = classifyText(all)
	}
	if r.Failure == nil {
		if res != nil && res.IsError {
			r.Failure = &Failure{Kind: FailAPI, Message: failureLine(all)}
		} else {
			r.Failure = &Failure{Kind: FailCrash, Message: crashMessage(end)}
		}
	}
	r.Failure.Hint = hintFor(all)
	return r
}

// claudeActivity reads a stream-json event of Claude Code: the text blocks
// of the assistant's messages (a subagent's left out), its tool_use blocks,
// and the tool_result blocks that end them. Claude Code writes each block of
// a message as an event of its own, under the message's id.
func claudeActivity(a *activityReader, line []byte) { messageActivity(a, line, false) }

// qwenActivity reads an event of Qwen Code's stream-json, Claude Code's
// format, in which a message is printed again, whole, as it grows.
func qwenActivity(a *activityReader, line []byte) { messageActivity(a, line, true) }

// messageActivity reads an event of the stream-json format of Claude Code
// and Qwen Code; grows: a message printed again under its id replaces the
// earlier print.
func messageActivity(a *activityReader, line []byte, grows bool) {
	var ev struct {
		Type            string  `json:"type"`
		ParentToolUseID *string `json:"parent_tool_use_id"`
		Message         struct {
			ID      string `json:"id"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				IsError   bool            `json:"is_error"`
			} `json:"content"`
		} `json:"message"`
	}
	if !decode(line, &ev) {
		return
	}
	sub := ev.ParentToolUseID != nil && *ev.ParentToolUseID != ""
	switch ev.Type {
	case "assistant":
		var parts []string
		for _, c := range ev.Message.Content {
			switch c.Type {
			case "text":
				if c.Text != "" && !sub {
					parts = append(parts, c.Text)
				}
			case "tool_use":
				a.start(c.ID, c.Name, c.Input)
			}
		}
		if len(parts) > 0 {
			id := ""
			if grows {
				id = ev.Message.ID
			}
			a.text(id, strings.Join(parts, "\n"))
		}
	case "user":
		for _, c := range ev.Message.Content {
			if c.Type == "tool_result" {
				a.end(c.ToolUseID, c.IsError)
			}
		}
	}
}
