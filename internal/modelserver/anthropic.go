package modelserver

import (
	"net/http"
	"strconv"
	"time"
)

// anthropicCodec speaks the Anthropic Messages API (POST /v1/messages).
type anthropicCodec struct{}

func (anthropicCodec) tools(body map[string]any) []toolDef {
	var out []toolDef
	ts, _ := body["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		name, _ := m["name"].(string)
		if name == "" {
			continue
		}
		schema, _ := m["input_schema"].(map[string]any)
		out = append(out, toolDef{Name: name, Schema: schema})
	}
	return out
}

func (anthropicCodec) streaming(_ *http.Request, body map[string]any) bool {
	b, _ := body["stream"].(bool)
	return b
}

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
}

// windowHeaders sets the subscription window headers Claude Code reads
// from an answer (anthropic-ratelimit-unified-*): the overall status
// (allowed_warning when a window passed a threshold), and for each window its
// utilization, reset (Unix seconds) and passed threshold. The first window is
// the representative claim.
func windowHeaders(h http.Header, ws []Window) {
	if len(ws) == 0 {
		return
	}
	status := "allowed"
	for _, w := range ws {
		p := "anthropic-ratelimit-unified-" + w.Claim
		h.Set(p+"-utilization", strconv.FormatFloat(w.Utilization, 'f', -1, 64))
		h.Set(p+"-reset", strconv.FormatInt(w.ResetAt.Unix(), 10))
		if w.SurpassedThreshold > 0 {
			h.Set(p+"-surpassed-threshold", strconv.FormatFloat(w.SurpassedThreshold, 'f', -1, 64))
			status = "allowed_warning"
		}
	}
	claims := map[string]string{"5h": "five_hour", "7d": "seven_day"}
	h.Set("anthropic-ratelimit-unified-status", status)
	h.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(ws[0].ResetAt.Unix(), 10))
	if c, ok := claims[ws[0].Claim]; ok {
		h.Set("anthropic-ratelimit-unified-representative-claim", c)
	}
}

func (anthropicCodec) answer(s *Server, w http.ResponseWriter, a *answer) {
	windowHeaders(w.Header(), a.windows)
	msgID := s.id("msg_")
	var toolID string
	if a.call != nil {
		toolID = s.id("toolu_")
	}
	stop := "end_turn"
	if a.call != nil {
		stop = "tool_use"
	}
	if !a.stream {
		content := []any{}
		if a.text != "" {
			content = append(content, map[string]any{"type": "text", "text": a.text})
		}
		if a.call != nil {
			content = append(content, map[string]any{"type": "tool_use", "id": toolID, "name": a.call.Name, "input": a.call.Args})
		}
		writeJSON(w, 200, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": a.model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(a.usage),
		})
		return
	}
	e := startSSE(w)
	start := anthropicUsage(Usage{InputTokens: a.usage.InputTokens, OutputTokens: 1})
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})
	e.event("ping", map[string]any{"type": "ping"})
	index := 0
	if a.text != "" {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for i, c := range chunks(a.text) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": c}})
			if i == 0 && a.cut {
				e.cut()
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if a.call != nil {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": a.call.Name, "input": map[string]any{}}})
		js := a.call.ArgsJSON()
		half := len(js) / 2
		for i, part := range []string{js[:half], js[half:]} {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			if i == 0 && a.cut && a.text == "" {
				e.cut()
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
	}
	if a.cut {
		e.cut()
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": anthropicUsage(a.usage)})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// fault writes an Anthropic error. A rate-limit reset time is sent as the
// anthropic-ratelimit-*-reset headers (RFC 3339) and as the unified
// subscription headers Claude Code reads (anthropic-ratelimit-unified-reset,
// Unix seconds, with status "rejected").
func (anthropicCodec) fault(s *Server, w http.ResponseWriter, f *FaultSpec) {
	typ := "api_error"
	switch f.Status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 403:
		typ = "permission_error"
	case 404:
		typ = "not_found_error"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	msg := f.Message
	if msg == "" {
		msg = defaultFaultMessage(f.Status)
	}
	h := w.Header()
	h.Set("request-id", s.id("req_"))
	if f.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(ceilSeconds(f.RetryAfter), 10))
	}
	if !f.ResetAt.IsZero() {
		r := f.ResetAt.UTC().Format(time.RFC3339)
		h.Set("anthropic-ratelimit-requests-reset", r)
		h.Set("anthropic-ratelimit-tokens-reset", r)
		h.Set("anthropic-ratelimit-input-tokens-reset", r)
		h.Set("anthropic-ratelimit-output-tokens-reset", r)
		h.Set("anthropic-ratelimit-unified-status", "rejected")
		h.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(f.ResetAt.Unix(), 10))
		h.Set("anthropic-ratelimit-unified-5h-status", "rejected")
		h.Set("anthropic-ratelimit-unified-5h-reset", strconv.FormatInt(f.ResetAt.Unix(), 10))
		h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
	}
	writeJSON(w, f.Status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
