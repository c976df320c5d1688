package modelserver

import (
	"net/http"
	"strconv"
	"time"
)

// responsesCodec speaks the OpenAI Responses API (POST /v1/responses), which
// codex uses.
type responsesCodec struct{}

func (responsesCodec) tools(body map[string]any) []toolDef {
	var out []toolDef
	ts, _ := body["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		switch typ {
		case "function":
			schema, _ := m["parameters"].(map[string]any)
			out = append(out, toolDef{Name: name, Schema: schema})
		case "custom":
			out = append(out, toolDef{Name: name, Custom: true})
		default:
			// Built-in tools (web_search, local_shell, ...) are listed by
			// type; the server never calls them.
			if name == "" {
				name = typ
			}
			if name != "" {
				out = append(out, toolDef{Name: name, Custom: true})
			}
		}
	}
	return out
}

func (responsesCodec) streaming(_ *http.Request, body map[string]any) bool {
	b, _ := body["stream"].(bool)
	return b
}

func responsesUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": 0},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
}

// codexWindowHeaders sets the window headers Codex reads from an answer:
// x-codex-primary-* for the 5h window, x-codex-secondary-* for the 7d one
// (used-percent 0..100, window-minutes, reset-at in Unix seconds).
func codexWindowHeaders(h http.Header, ws []Window) {
	for _, w := range ws {
		which, minutes := "primary", 300
		if w.Claim == "7d" {
			which, minutes = "secondary", 7*24*60
		}
		p := "x-codex-" + which
		h.Set(p+"-used-percent", strconv.FormatFloat(w.Utilization*100, 'f', -1, 64))
		h.Set(p+"-window-minutes", strconv.Itoa(minutes))
		h.Set(p+"-reset-at", strconv.FormatInt(w.ResetAt.Unix(), 10))
		h.Set(p+"-reset-after-seconds", strconv.FormatInt(max(int64(time.Until(w.ResetAt).Seconds()), 0), 10))
	}
}

func (responsesCodec) answer(s *Server, w http.ResponseWriter, a *answer) {
	codexWindowHeaders(w.Header(), a.windows)
	respID := s.id("resp_")
	created := time.Now().Unix()
	var items []map[string]any
	var msgID, callItemID, callID string
	if a.text != "" {
		msgID = s.id("msg_")
		items = append(items, map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": a.text, "annotations": []any{}}}})
	}
	if a.call != nil {
		callItemID, callID = s.id("fc_"), s.id("call_")
		if a.call.Custom {
			items = append(items, map[string]any{"id": callItemID, "type": "custom_tool_call", "status": "completed",
				"call_id": callID, "name": a.call.Name, "input": a.call.Input})
		} else {
			items = append(items, map[string]any{"id": callItemID, "type": "function_call", "status": "completed",
				"call_id": callID, "name": a.call.Name, "arguments": a.call.ArgsJSON()})
		}
	}
	response := func(status string, output []map[string]any, usage any) map[string]any {
		if output == nil {
			output = []map[string]any{}
		}
		return map[string]any{"id": respID, "object": "response", "created_at": created, "status": status,
			"model": a.model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil}
	}
	if !a.stream {
		writeJSON(w, 200, response("completed", items, responsesUsage(a.usage)))
		return
	}
	e := startSSE(w)
	seq := 0
	ev := func(typ string, m map[string]any) {
		m["type"] = typ
		m["sequence_number"] = seq
		seq++
		e.event(typ, m)
	}
	ev("response.created", map[string]any{"response": response("in_progress", nil, nil)})
	ev("response.in_progress", map[string]any{"response": response("in_progress", nil, nil)})
	out := 0
	if a.text != "" {
		ev("response.output_item.added", map[string]any{"output_index": out, "item": map[string]any{
			"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": msgID, "output_index": out, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for i, c := range chunks(a.text) {
			ev("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": out, "content_index": 0, "delta": c})
			if i == 0 && a.cut {
				e.cut()
			}
		}
		ev("response.output_text.done", map[string]any{"item_id": msgID, "output_index": out, "content_index": 0, "text": a.text})
		ev("response.content_part.done", map[string]any{"item_id": msgID, "output_index": out, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": a.text, "annotations": []any{}}})
		ev("response.output_item.done", map[string]any{"output_index": out, "item": items[out]})
		out++
	}
	if a.call != nil {
		item := items[out]
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		if a.call.Custom {
			added["input"] = ""
		} else {
			added["arguments"] = ""
		}
		ev("response.output_item.added", map[string]any{"output_index": out, "item": added})
		if a.call.Custom {
			ev("response.custom_tool_call_input.delta", map[string]any{"item_id": callItemID, "output_index": out, "delta": a.call.Input})
			if a.cut {
				e.cut()
			}
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": callItemID, "output_index": out, "input": a.call.Input})
		} else {
			js := a.call.ArgsJSON()
			ev("response.function_call_arguments.delta", map[string]any{"item_id": callItemID, "output_index": out, "delta": js})
			if a.cut {
				e.cut()
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": callItemID, "output_index": out, "arguments": js})
		}
		ev("response.output_item.done", map[string]any{"output_index": out, "item": item})
	}
	if a.cut {
		e.cut()
	}
	ev("response.completed", map[string]any{"response": response("completed", items, responsesUsage(a.usage))})
}

// fault writes an OpenAI error. A 429 with a reset time also carries codex's
// usage-limit fields (error.type "usage_limit_reached", resets_at in Unix
// seconds, resets_in_seconds) and the x-ratelimit-reset-requests header.
func (responsesCodec) fault(s *Server, w http.ResponseWriter, f *FaultSpec) {
	openAIFault(s, w, f, true)
}

func openAIFault(s *Server, w http.ResponseWriter, f *FaultSpec, usageLimit bool) {
	typ, code := "server_error", any(nil)
	switch f.Status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ, code = "invalid_request_error", "invalid_api_key"
	case 403:
		typ = "permission_denied"
	case 429:
		typ, code = "rate_limit_exceeded", "rate_limit_exceeded"
	case 529, 503:
		typ, code = "server_error", "overloaded"
	}
	msg := f.Message
	if msg == "" {
		msg = defaultFaultMessage(f.Status)
		if f.Status == 401 {
			msg = "Incorrect API key provided (scripted server)."
		}
	}
	h := w.Header()
	h.Set("x-request-id", s.id("req_"))
	now := time.Now()
	h.Set("Date", now.UTC().Format(http.TimeFormat))
	if f.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(ceilSeconds(f.RetryAfter), 10))
		h.Set("retry-after-ms", strconv.FormatInt(f.RetryAfter.Milliseconds(), 10))
	}
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": code}
	if !f.ResetAt.IsZero() {
		// Relative to the Date header, so that Date + reset = ResetAt.
		in := max(ceilSeconds(f.ResetAt.Sub(now.Truncate(time.Second))), 0)
		h.Set("x-ratelimit-reset-requests", strconv.FormatInt(in, 10)+"s")
		h.Set("x-ratelimit-reset-tokens", strconv.FormatInt(in, 10)+"s")
		h.Set("x-ratelimit-remaining-requests", "0")
		if usageLimit && f.Status == 429 {
			e["type"] = "usage_limit_reached"
			e["code"] = "usage_limit_reached"
			e["plan_type"] = "plus"
			e["resets_at"] = f.ResetAt.Unix()
			e["resets_in_seconds"] = in
		}
	}
	writeJSON(w, f.Status, map[string]any{"error": e})
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
