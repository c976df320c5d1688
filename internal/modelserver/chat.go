package modelserver

import (
	"net/http"
	"time"
)

// chatCodec speaks OpenAI Chat Completions (POST /v1/chat/completions), which
// opencode and copilot (BYOK, type openai) use.
type chatCodec struct{}

func (chatCodec) tools(body map[string]any) []toolDef {
	var out []toolDef
	ts, _ := body["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		fn, _ := m["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if name == "" {
			continue
		}
		schema, _ := fn["parameters"].(map[string]any)
		out = append(out, toolDef{Name: name, Schema: schema})
	}
	return out
}

func (chatCodec) streaming(_ *http.Request, body map[string]any) bool {
	b, _ := body["stream"].(bool)
	return b
}

func chatUsage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens":             u.InputTokens,
		"completion_tokens":         u.OutputTokens,
		"total_tokens":              u.InputTokens + u.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
}

func (chatCodec) answer(s *Server, w http.ResponseWriter, a *answer) {
	id := s.id("chatcmpl-")
	created := time.Now().Unix()
	finish := "stop"
	var callID string
	if a.call != nil {
		finish = "tool_calls"
		callID = s.id("call_")
	}
	if !a.stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if a.text != "" {
			msg["content"] = a.text
		}
		if a.call != nil {
			msg["tool_calls"] = []any{map[string]any{"id": callID, "type": "function",
				"function": map[string]any{"name": a.call.Name, "arguments": a.call.ArgsJSON()}}}
		}
		writeJSON(w, 200, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": a.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   chatUsage(a.usage)})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": a.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	e.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i, c := range chunks(a.text) {
		e.event("", chunk(map[string]any{"content": c}, nil))
		if i == 0 && a.cut {
			e.cut()
		}
	}
	if a.call != nil {
		js := a.call.ArgsJSON()
		half := len(js) / 2
		e.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": a.call.Name, "arguments": js[:half]}}}}, nil))
		if a.cut {
			e.cut()
		}
		e.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": js[half:]}}}}, nil))
	}
	if a.cut {
		e.cut()
	}
	e.event("", chunk(map[string]any{}, finish))
	e.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": a.model,
		"choices": []any{}, "usage": chatUsage(a.usage)})
	e.event("", "[DONE]")
}

// fault writes an OpenAI error (see openAIFault).
func (chatCodec) fault(s *Server, w http.ResponseWriter, f *FaultSpec) {
	openAIFault(s, w, f, false)
}
