package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// geminiCodec speaks the Gemini API (POST /v1beta/models/M:generateContent and
// :streamGenerateContent, SSE with ?alt=sse, else a JSON array).
type geminiCodec struct{}

func (geminiCodec) tools(body map[string]any) []toolDef {
	var out []toolDef
	ts, _ := body["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		decls, _ := m["functionDeclarations"].([]any)
		for _, d := range decls {
			dm, _ := d.(map[string]any)
			name, _ := dm["name"].(string)
			if name == "" {
				continue
			}
			schema, _ := dm["parametersJsonSchema"].(map[string]any)
			if schema == nil {
				schema, _ = dm["parameters"].(map[string]any)
			}
			out = append(out, toolDef{Name: name, Schema: schema})
		}
	}
	return out
}

func (geminiCodec) streaming(hr *http.Request, _ map[string]any) bool {
	return strings.HasSuffix(hr.URL.Path, ":streamGenerateContent")
}

func geminiUsage(u Usage) map[string]any {
	return map[string]any{
		"promptTokenCount":     u.InputTokens,
		"candidatesTokenCount": u.OutputTokens,
		"totalTokenCount":      u.InputTokens + u.OutputTokens,
	}
}

func (geminiCodec) answer(s *Server, w http.ResponseWriter, a *answer) {
	respID := s.id("resp")
	chunk := func(parts []any, finish string, usage Usage) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{cand}, "usageMetadata": geminiUsage(usage),
			"modelVersion": a.model, "responseId": respID}
	}
	var callPart map[string]any
	if a.call != nil {
		callPart = map[string]any{"functionCall": map[string]any{"name": a.call.Name, "args": a.call.Args}}
	}
	if !a.stream {
		parts := []any{}
		if a.text != "" {
			parts = append(parts, map[string]any{"text": a.text})
		}
		if callPart != nil {
			parts = append(parts, callPart)
		}
		writeJSON(w, 200, chunk(parts, "STOP", a.usage))
		return
	}
	var events []map[string]any
	pieces := chunks(a.text)
	partial := Usage{InputTokens: a.usage.InputTokens}
	for _, c := range pieces {
		events = append(events, chunk([]any{map[string]any{"text": c}}, "", partial))
	}
	if callPart != nil {
		events = append(events, chunk([]any{callPart}, "STOP", a.usage))
	} else if len(events) > 0 {
		last := pieces[len(pieces)-1]
		events[len(events)-1] = chunk([]any{map[string]any{"text": last}}, "STOP", a.usage)
	} else {
		events = append(events, chunk([]any{map[string]any{"text": ""}}, "STOP", a.usage))
	}
	if a.hr.URL.Query().Get("alt") != "sse" {
		// A JSON array, streamed element by element.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		fmt.Fprint(w, "[")
		for i, ev := range events {
			if i > 0 {
				fmt.Fprint(w, ",\n")
			}
			writeJSONValue(w, ev)
			_ = rc.Flush()
			if a.cut {
				panic(http.ErrAbortHandler)
			}
		}
		fmt.Fprint(w, "]")
		return
	}
	e := startSSE(w)
	for _, ev := range events {
		e.event("", ev)
		if a.cut {
			e.cut()
		}
	}
}

// fault writes a Google API error. A 429 carries RESOURCE_EXHAUSTED with a
// QuotaFailure and, with RetryAfter or ResetAt, a RetryInfo retryDelay.
func (geminiCodec) fault(s *Server, w http.ResponseWriter, f *FaultSpec) {
	status := "INTERNAL"
	switch f.Status {
	case 400:
		status = "INVALID_ARGUMENT"
	case 401:
		status = "UNAUTHENTICATED"
	case 403:
		status = "PERMISSION_DENIED"
	case 404:
		status = "NOT_FOUND"
	case 429:
		status = "RESOURCE_EXHAUSTED"
	case 503, 529:
		status = "UNAVAILABLE"
	}
	msg := f.Message
	if msg == "" {
		msg = defaultFaultMessage(f.Status)
		if f.Status == 401 {
			msg = "API key not valid. Please pass a valid API key. (scripted server)"
		}
	}
	details := []any{}
	now := time.Now()
	w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
	delay := f.RetryAfter
	if !f.ResetAt.IsZero() && delay <= 0 {
		delay = f.ResetAt.Sub(now.Truncate(time.Second))
	}
	if f.Status == 429 {
		details = append(details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{
				"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
			}},
		})
	}
	if delay > 0 {
		details = append(details, map[string]any{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": strconv.FormatInt(ceilSeconds(delay), 10) + "s",
		})
	}
	h := w.Header()
	if f.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(ceilSeconds(f.RetryAfter), 10))
	}
	_ = s
	writeJSON(w, f.Status, map[string]any{"error": map[string]any{"code": f.Status, "message": msg, "status": status, "details": details}})
}

func writeJSONValue(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}
