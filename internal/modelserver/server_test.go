package modelserver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// start runs a server for one test.
func start(t *testing.T, script ...Turn) *Server {
	t.Helper()
	s := New(script)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends body as JSON.
func post(t *testing.T, rawURL string, body any, header ...string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, rawURL, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Event string
	Data  string
	JSON  map[string]any
}

// readSSE reads every event of resp; err is the read error that ended the
// stream early, if any.
func readSSE(t *testing.T, resp *http.Response) ([]sseEvent, error) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != "" || cur.Event != "" {
				_ = json.Unmarshal([]byte(cur.Data), &cur.JSON)
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return evs, sc.Err()
}

func decodeJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// get walks m along a path of keys and indexes.
func get(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := m.(map[string]any)
			m = mm[k]
		case int:
			a, _ := m.([]any)
			if k >= len(a) {
				return nil
			}
			m = a[k]
		}
	}
	return m
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func eventNames(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		if e.Event != "" {
			out = append(out, e.Event)
		} else if typ, ok := e.JSON["type"].(string); ok {
			out = append(out, typ)
		}
	}
	return out
}

// The tools each CLI offers, as it describes them (abridged).
var (
	claudeTools = []any{
		map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
			"required":   []any{"command"}}},
		map[string]any{"name": "Write", "input_schema": map[string]any{"type": "object",
			"properties": map[string]any{"file_path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
			"required":   []any{"file_path", "content"}}},
	}
	codexTools = []any{
		map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"cmd": map[string]any{"type": "string"}, "yield_time_ms": map[string]any{"type": "number"}},
			"required":   []any{"cmd"}}},
		map[string]any{"type": "custom", "name": "apply_patch", "format": map[string]any{"type": "grammar"}},
		map[string]any{"type": "web_search"},
	}
	chatTools = []any{ // opencode
		map[string]any{"type": "function", "function": map[string]any{"name": "bash", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
			"required":   []any{"command", "description"}}}},
		map[string]any{"type": "function", "function": map[string]any{"name": "write", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"filePath": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
			"required":   []any{"filePath", "content"}}}},
	}
	geminiTools = []any{map[string]any{"functionDeclarations": []any{
		map[string]any{"name": "run_shell_command", "parametersJsonSchema": map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"}}},
		map[string]any{"name": "write_file", "parametersJsonSchema": map[string]any{"type": "object",
			"properties": map[string]any{"file_path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
			"required":   []any{"file_path", "content"}}},
	}}}
)

func TestListensOnLoopbackOnly(t *testing.T) {
	s := start(t)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" {
		t.Fatalf("URL %q: want http://127.0.0.1:PORT", s.URL())
	}
}

func TestAnthropicStreamText(t *testing.T) {
	s := start(t, Text("Hello from the script\nDONE", U(120, 7)))
	resp := post(t, s.URL()+"/v1/messages?beta=true",
		map[string]any{"model": "claude-x", "stream": true, "max_tokens": 100, "tools": claudeTools,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		"x-api-key", "k1", "anthropic-version", "2023-06-01")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	evs, err := readSSE(t, resp)
	if err != nil {
		t.Fatal(err)
	}
	names := eventNames(evs)
	want := []string{"message_start", "ping", "content_block_start"}
	for range chunks("Hello from the script\nDONE") {
		want = append(want, "content_block_delta")
	}
	want = append(want, "content_block_stop", "message_delta", "message_stop")
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant %v", names, want)
	}
	var text strings.Builder
	for _, e := range evs {
		if e.JSON["type"] != e.Event {
			t.Errorf("event %q carries type %v", e.Event, e.JSON["type"])
		}
		if e.Event == "content_block_delta" {
			if get(e.JSON, "delta", "type") != "text_delta" {
				t.Errorf("delta %v", e.JSON)
			}
			text.WriteString(get(e.JSON, "delta", "text").(string))
		}
	}
	if text.String() != "Hello from the script\nDONE" {
		t.Errorf("text %q", text.String())
	}
	start := evs[0].JSON
	if get(start, "message", "model") != "claude-x" || get(start, "message", "role") != "assistant" {
		t.Errorf("message_start %v", start)
	}
	if num(get(start, "message", "usage", "input_tokens")) != 120 {
		t.Errorf("message_start usage %v", get(start, "message", "usage"))
	}
	md := evs[len(evs)-2].JSON
	if get(md, "delta", "stop_reason") != "end_turn" || num(get(md, "usage", "output_tokens")) != 7 {
		t.Errorf("message_delta %v", md)
	}

	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages" || r.Query.Get("beta") != "true" || r.RawQuery != "beta=true" {
		t.Errorf("recorded %s %s ? %s", r.Method, r.Path, r.RawQuery)
	}
	if r.Header.Get("x-api-key") != "k1" || r.JSON["model"] != "claude-x" || r.Protocol != Anthropic {
		t.Errorf("recorded header/body/protocol: %v %v %v", r.Header, r.JSON["model"], r.Protocol)
	}
	if r.Turn != 0 || r.Aux || !reflect.DeepEqual(r.Tools, []string{"Bash", "Write"}) {
		t.Errorf("recorded turn %d aux %v tools %v", r.Turn, r.Aux, r.Tools)
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d", s.Remaining())
	}
}

func TestAnthropicStreamToolUse(t *testing.T) {
	s := start(t, WriteFile("/w/out.txt", "hello\n").WithText("Writing."))
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools})
	evs, err := readSSE(t, resp)
	if err != nil {
		t.Fatal(err)
	}
	var partial strings.Builder
	var toolStart map[string]any
	for _, e := range evs {
		if e.Event == "content_block_start" && get(e.JSON, "content_block", "type") == "tool_use" {
			toolStart = e.JSON
		}
		if e.Event == "content_block_delta" && get(e.JSON, "delta", "type") == "input_json_delta" {
			partial.WriteString(get(e.JSON, "delta", "partial_json").(string))
		}
	}
	if toolStart == nil || get(toolStart, "content_block", "name") != "Write" || num(toolStart["index"]) != 1 {
		t.Fatalf("tool_use block start %v", toolStart)
	}
	if id, _ := get(toolStart, "content_block", "id").(string); !strings.HasPrefix(id, "toolu_") {
		t.Errorf("tool id %q", id)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(partial.String()), &input); err != nil {
		t.Fatalf("partial_json %q: %v", partial.String(), err)
	}
	if !reflect.DeepEqual(input, map[string]any{"file_path": "/w/out.txt", "content": "hello\n"}) {
		t.Errorf("input %v", input)
	}
	md := evs[len(evs)-2].JSON
	if get(md, "delta", "stop_reason") != "tool_use" {
		t.Errorf("stop_reason %v", md)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	s := start(t, RunCommand("ls -l").WithUsage(U(3, 4)))
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	m := decodeJSON(t, resp)
	if m["type"] != "message" || m["stop_reason"] != "tool_use" || num(get(m, "usage", "input_tokens")) != 3 || num(get(m, "usage", "output_tokens")) != 4 {
		t.Errorf("message %v", m)
	}
	if get(m, "content", 0, "name") != "Bash" || get(m, "content", 0, "input", "command") != "ls -l" {
		t.Errorf("content %v", m["content"])
	}
}

func TestAnthropicWindowHeaders(t *testing.T) {
	reset := time.Date(2026, 11, 22, 14, 5, 0, 0, time.UTC)
	week := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	s := start(t, Text("hi", U(1, 1)).WithWindows(
		Window{Claim: "5h", Utilization: 0.92, ResetAt: reset, SurpassedThreshold: 0.75},
		Window{Claim: "7d", Utilization: 0.4, ResetAt: week}), Text("plain", U(1, 1)))
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	want := map[string]string{
		"anthropic-ratelimit-unified-status":                 "allowed_warning",
		"anthropic-ratelimit-unified-reset":                  strconv.FormatInt(reset.Unix(), 10),
		"anthropic-ratelimit-unified-representative-claim":   "five_hour",
		"anthropic-ratelimit-unified-5h-utilization":         "0.92",
		"anthropic-ratelimit-unified-5h-reset":               strconv.FormatInt(reset.Unix(), 10),
		"anthropic-ratelimit-unified-5h-surpassed-threshold": "0.75",
		"anthropic-ratelimit-unified-7d-utilization":         "0.4",
		"anthropic-ratelimit-unified-7d-reset":               strconv.FormatInt(week.Unix(), 10),
		"anthropic-ratelimit-unified-7d-surpassed-threshold": "",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	resp = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	if got := resp.Header.Get("anthropic-ratelimit-unified-status"); got != "" {
		t.Errorf("a turn without windows sent status %q", got)
	}
}

func TestResponsesWindowHeaders(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s := start(t, Text("hi", U(1, 1)).WithWindows(Window{Claim: "5h", Utilization: 0.92, ResetAt: reset},
		Window{Claim: "7d", Utilization: 0.5, ResetAt: reset.Add(48 * time.Hour)}))
	resp := post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "input": "hi", "tools": codexTools})
	want := map[string]string{
		"x-codex-primary-used-percent":     "92",
		"x-codex-primary-window-minutes":   "300",
		"x-codex-primary-reset-at":         strconv.FormatInt(reset.Unix(), 10),
		"x-codex-secondary-used-percent":   "50",
		"x-codex-secondary-window-minutes": "10080",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if n, err := strconv.Atoi(resp.Header.Get("x-codex-primary-reset-after-seconds")); err != nil || n < 3590 || n > 3600 {
		t.Errorf("x-codex-primary-reset-after-seconds: %q", resp.Header.Get("x-codex-primary-reset-after-seconds"))
	}
}

func TestAuxiliaryRequestsDoNotConsumeTurns(t *testing.T) {
	s := start(t, Text("turn one", U(1, 1)))
	// Token counting, a request without tools (a title or quota probe),
	// model lists, the root probe and an unknown path.
	m := decodeJSON(t, post(t, s.URL()+"/v1/messages/count_tokens?beta=true", map[string]any{"model": "m", "messages": []any{}}))
	if num(m["input_tokens"]) <= 0 {
		t.Errorf("count_tokens %v", m)
	}
	m = decodeJSON(t, post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "max_tokens": 1}))
	if get(m, "content", 0, "text") != "Scripted session" {
		t.Errorf("aux answer %v", m)
	}
	for _, p := range []string{"/v1/models", "/"} {
		resp, err := http.Get(s.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
	}
	resp := post(t, s.URL()+"/nowhere", map[string]any{})
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if s.Remaining() != 1 {
		t.Fatalf("auxiliary requests consumed turns: %d left", s.Remaining())
	}
	for _, r := range s.Requests() {
		if !r.Aux || r.Turn != -1 {
			t.Errorf("%s %s: aux %v turn %d", r.Method, r.Path, r.Aux, r.Turn)
		}
	}
	if len(s.TurnRequests()) != 0 {
		t.Errorf("TurnRequests %v", s.TurnRequests())
	}
}

func TestCustomAuxiliaryTest(t *testing.T) {
	s := New(Script{Text("turn one", U(1, 1))})
	s.IsAux = func(r *Request) bool { return r.JSON["purpose"] == "title" }
	s.AuxText = "A title"
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := decodeJSON(t, post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "purpose": "title", "tools": claudeTools}))
	if s.Remaining() != 1 || get(m, "content", 0, "text") != "A title" {
		t.Fatalf("IsAux not honoured: %v", m)
	}
	// Without tools, but not auxiliary by IsAux: a turn.
	m = decodeJSON(t, post(t, s.URL()+"/v1/messages", map[string]any{"model": "m"}))
	if get(m, "content", 0, "text") != "turn one" {
		t.Errorf("answer %v", m)
	}
}

func TestResponsesStreamText(t *testing.T) {
	s := start(t, Text("Hello\nDONE", U(120, 7)))
	resp := post(t, s.URL()+"/v1/responses", map[string]any{"model": "gpt-x", "stream": true, "tools": codexTools},
		"Authorization", "Bearer k2")
	evs, err := readSSE(t, resp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}
	if names := eventNames(evs); !reflect.DeepEqual(names, want) {
		t.Fatalf("events %v\nwant %v", names, want)
	}
	var text string
	for i, e := range evs {
		if e.JSON["type"] != e.Event || num(e.JSON["sequence_number"]) != i {
			t.Errorf("event %d %q: type %v seq %v", i, e.Event, e.JSON["type"], e.JSON["sequence_number"])
		}
		if e.Event == "response.output_text.delta" {
			text += e.JSON["delta"].(string)
		}
	}
	if text != "Hello\nDONE" {
		t.Errorf("text %q", text)
	}
	done := evs[8].JSON
	if get(done, "item", "type") != "message" || get(done, "item", "content", 0, "text") != "Hello\nDONE" {
		t.Errorf("output_item.done %v", done)
	}
	c := evs[len(evs)-1].JSON
	if get(c, "response", "status") != "completed" || num(get(c, "response", "usage", "input_tokens")) != 120 ||
		num(get(c, "response", "usage", "output_tokens")) != 7 || num(get(c, "response", "usage", "total_tokens")) != 127 {
		t.Errorf("response.completed %v", c)
	}
	if r := s.Requests()[0]; r.Header.Get("Authorization") != "Bearer k2" || r.Protocol != Responses {
		t.Errorf("recorded %v %v", r.Header, r.Protocol)
	}
}

func TestResponsesToolCalls(t *testing.T) {
	s := start(t, RunCommand("echo hi"), WriteFile("out.txt", "a\nb\n"))
	// exec_command: a function_call with JSON arguments.
	evs, err := readSSE(t, post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools}))
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	for _, e := range evs {
		if e.Event == "response.output_item.done" {
			item = e.JSON["item"].(map[string]any)
		}
	}
	if item["type"] != "function_call" || item["name"] != "exec_command" || !strings.HasPrefix(item["call_id"].(string), "call_") {
		t.Fatalf("item %v", item)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(item["arguments"].(string)), &args); err != nil || args["cmd"] != "echo hi" {
		t.Errorf("arguments %v (%v)", item["arguments"], err)
	}
	// apply_patch, a custom (free-form) tool: a custom_tool_call.
	evs, err = readSSE(t, post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools}))
	if err != nil {
		t.Fatal(err)
	}
	names := eventNames(evs)
	if !strings.Contains(strings.Join(names, " "), "response.custom_tool_call_input.delta") {
		t.Errorf("events %v", names)
	}
	for _, e := range evs {
		if e.Event == "response.output_item.done" {
			item = e.JSON["item"].(map[string]any)
		}
	}
	wantPatch := "*** Begin Patch\n*** Add File: out.txt\n+a\n+b\n*** End Patch\n"
	if item["type"] != "custom_tool_call" || item["name"] != "apply_patch" || item["input"] != wantPatch {
		t.Errorf("item %v", item)
	}
}

func TestResponsesNonStreaming(t *testing.T) {
	s := start(t, Text("plain", U(5, 6)))
	m := decodeJSON(t, post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "tools": codexTools}))
	if m["object"] != "response" || get(m, "output", 0, "content", 0, "text") != "plain" || num(get(m, "usage", "output_tokens")) != 6 {
		t.Errorf("response %v", m)
	}
}

func TestChatStream(t *testing.T) {
	s := start(t, WriteFile("/w/f.txt", "x"), Text("ok\nDONE", U(120, 7)))
	body := map[string]any{"model": "m1", "stream": true, "tools": chatTools, "stream_options": map[string]any{"include_usage": true}}
	resp := post(t, s.URL()+"/v1/chat/completions", body)
	evs, err := readSSE(t, resp)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; last.Data != "[DONE]" {
		t.Fatalf("last event %q", last.Data)
	}
	var name, args, finish string
	for _, e := range evs[:len(evs)-1] {
		if e.JSON["object"] != "chat.completion.chunk" {
			t.Errorf("chunk %v", e.JSON)
		}
		tc := get(e.JSON, "choices", 0, "delta", "tool_calls", 0)
		if tc != nil {
			if n, ok := get(tc, "function", "name").(string); ok {
				name = n
			}
			args += get(tc, "function", "arguments").(string)
		}
		if f, ok := get(e.JSON, "choices", 0, "finish_reason").(string); ok {
			finish = f
		}
	}
	if name != "write" || finish != "tool_calls" {
		t.Errorf("tool %q finish %q", name, finish)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil || a["filePath"] != "/w/f.txt" || a["content"] != "x" {
		t.Errorf("arguments %q: %v", args, err)
	}

	evs, err = readSSE(t, post(t, s.URL()+"/v1/chat/completions", body))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, e := range evs {
		if c, ok := get(e.JSON, "choices", 0, "delta", "content").(string); ok {
			text += c
		}
	}
	usage := evs[len(evs)-2].JSON
	if text != "ok\nDONE" || num(get(usage, "usage", "prompt_tokens")) != 120 || num(get(usage, "usage", "completion_tokens")) != 7 {
		t.Errorf("text %q usage chunk %v", text, usage)
	}
	if n := len(get(usage, "choices").([]any)); n != 0 {
		t.Errorf("usage chunk has %d choices", n)
	}
}

func TestChatNonStreamingAndModels(t *testing.T) {
	s := start(t, RunCommand("pwd"))
	m := decodeJSON(t, post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m1", "tools": chatTools}))
	tc := get(m, "choices", 0, "message", "tool_calls", 0)
	if get(tc, "function", "name") != "bash" || get(m, "choices", 0, "finish_reason") != "tool_calls" {
		t.Fatalf("completion %v", m)
	}
	var a map[string]any
	_ = json.Unmarshal([]byte(get(tc, "function", "arguments").(string)), &a)
	// opencode's bash requires a description too: it is filled.
	if a["command"] != "pwd" || a["description"] == nil {
		t.Errorf("arguments %v", a)
	}
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lm := decodeJSON(t, resp)
	if lm["object"] != "list" || get(lm, "data", 0, "id") == nil {
		t.Errorf("models %v", lm)
	}
}

func TestGeminiStream(t *testing.T) {
	s := start(t, WriteFile("/w/g.txt", "G"), Text("Hi there\nDONE", U(120, 7)))
	u := s.URL() + "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
	body := map[string]any{"contents": []any{}, "tools": geminiTools}
	evs, err := readSSE(t, post(t, u, body, "x-goog-api-key", "k3"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	fc := get(evs[0].JSON, "candidates", 0, "content", "parts", 0, "functionCall")
	if get(fc, "name") != "write_file" || get(fc, "args", "file_path") != "/w/g.txt" || get(fc, "args", "content") != "G" {
		t.Errorf("functionCall %v", fc)
	}
	if get(evs[0].JSON, "candidates", 0, "finishReason") != "STOP" || get(evs[0].JSON, "modelVersion") != "gemini-x" {
		t.Errorf("chunk %v", evs[0].JSON)
	}

	evs, err = readSSE(t, post(t, u, body))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for i, e := range evs {
		text += get(e.JSON, "candidates", 0, "content", "parts", 0, "text").(string)
		_, hasFinish := get(e.JSON, "candidates", 0).(map[string]any)["finishReason"]
		if hasFinish != (i == len(evs)-1) {
			t.Errorf("event %d: finishReason present %v", i, hasFinish)
		}
	}
	last := evs[len(evs)-1].JSON
	if text != "Hi there\nDONE" || num(get(last, "usageMetadata", "promptTokenCount")) != 120 || num(get(last, "usageMetadata", "candidatesTokenCount")) != 7 {
		t.Errorf("text %q last %v", text, last)
	}
	r := s.Requests()[0]
	if r.Header.Get("x-goog-api-key") != "k3" || r.Query.Get("alt") != "sse" || r.Protocol != Gemini || r.Turn != 0 {
		t.Errorf("recorded %v %v %v %d", r.Header, r.Query, r.Protocol, r.Turn)
	}
}

func TestGeminiArrayAndAuxiliary(t *testing.T) {
	s := start(t, Text("arr", U(1, 2)))
	// generateContent with a JSON schema (gemini-cli's routing and
	// next-speaker checks): auxiliary, answered with a schema-valid object.
	schema := map[string]any{"type": "OBJECT", "required": []any{"reasoning", "next_speaker", "score"},
		"properties": map[string]any{
			"reasoning":    map[string]any{"type": "STRING"},
			"next_speaker": map[string]any{"type": "STRING", "enum": []any{"user", "model"}},
			"score":        map[string]any{"type": "INTEGER"},
		}}
	m := decodeJSON(t, post(t, s.URL()+"/v1beta/models/flash:generateContent",
		map[string]any{"generationConfig": map[string]any{"responseMimeType": "application/json", "responseJsonSchema": schema}}))
	var obj map[string]any
	if err := json.Unmarshal([]byte(get(m, "candidates", 0, "content", "parts", 0, "text").(string)), &obj); err != nil {
		t.Fatalf("aux answer %v: %v", m, err)
	}
	if obj["next_speaker"] != "user" || obj["reasoning"] == nil || num(obj["score"]) < 1 {
		t.Errorf("aux object %v", obj)
	}
	m = decodeJSON(t, post(t, s.URL()+"/v1beta/models/flash:countTokens", map[string]any{"contents": []any{}}))
	if num(m["totalTokens"]) <= 0 {
		t.Errorf("countTokens %v", m)
	}
	if s.Remaining() != 1 {
		t.Fatal("auxiliary Gemini requests consumed a turn")
	}
	// streamGenerateContent without alt=sse: a JSON array.
	resp := post(t, s.URL()+"/v1beta/models/pro:streamGenerateContent", map[string]any{"tools": geminiTools})
	var arr []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&arr); err != nil {
		t.Fatal(err)
	}
	if len(arr) != 1 || get(arr[0], "candidates", 0, "content", "parts", 0, "text") != "arr" {
		t.Errorf("array %v", arr)
	}
}

func TestFaults(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second).UTC()
	type proto struct {
		name, path string
		body       map[string]any
	}
	protos := []proto{
		{"anthropic", "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools}},
		{"responses", "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools}},
		{"chat", "/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": chatTools}},
		{"gemini", "/v1beta/models/g:streamGenerateContent?alt=sse", map[string]any{"tools": geminiTools}},
	}
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			s := start(t,
				Fault(401),
				Fault(429, RetryAfter(30*time.Second), ResetAt(reset)),
				Fault(500, Message("boom")),
				Fault(529),
			)
			for _, status := range []int{401, 429, 500, 529} {
				resp := post(t, s.URL()+p.path, p.body)
				if resp.StatusCode != status {
					t.Fatalf("status %d, want %d", resp.StatusCode, status)
				}
				m := decodeJSON(t, resp)
				msg, _ := get(m, "error", "message").(string)
				if msg == "" {
					t.Errorf("%d: no error.message in %v", status, m)
				}
				switch p.name {
				case "anthropic":
					wantType := map[int]string{401: "authentication_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status]
					if m["type"] != "error" || get(m, "error", "type") != wantType {
						t.Errorf("%d: body %v", status, m)
					}
				case "gemini":
					if num(get(m, "error", "code")) != status || get(m, "error", "status") == nil {
						t.Errorf("%d: body %v", status, m)
					}
				default:
					if get(m, "error", "type") == nil {
						t.Errorf("%d: body %v", status, m)
					}
				}
				if status == 500 && msg != "boom" {
					t.Errorf("message %q", msg)
				}
				if status != 429 {
					continue
				}
				if p.name != "gemini" && resp.Header.Get("Retry-After") != "30" {
					t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
				}
				switch p.name {
				case "anthropic":
					if resp.Header.Get("anthropic-ratelimit-unified-reset") != strconv.FormatInt(reset.Unix(), 10) ||
						resp.Header.Get("anthropic-ratelimit-requests-reset") != reset.Format(time.RFC3339) {
						t.Errorf("reset headers %v", resp.Header)
					}
				case "responses":
					if num(get(m, "error", "resets_at")) != int(reset.Unix()) || get(m, "error", "type") != "usage_limit_reached" {
						t.Errorf("usage limit body %v", m)
					}
					fallthrough
				case "chat":
					date, err := http.ParseTime(resp.Header.Get("Date"))
					secs, _ := strconv.Atoi(strings.TrimSuffix(resp.Header.Get("x-ratelimit-reset-requests"), "s"))
					if err != nil || !date.Add(time.Duration(secs)*time.Second).Equal(reset) {
						t.Errorf("Date %q + x-ratelimit-reset-requests %q != %v", resp.Header.Get("Date"), resp.Header.Get("x-ratelimit-reset-requests"), reset)
					}
				case "gemini":
					details, _ := get(m, "error", "details").([]any)
					var delay string
					for _, d := range details {
						if get(d, "@type") == "type.googleapis.com/google.rpc.RetryInfo" {
							delay, _ = get(d, "retryDelay").(string)
						}
					}
					if delay != "30s" || get(m, "error", "status") != "RESOURCE_EXHAUSTED" {
						t.Errorf("details %v", details)
					}
				}
			}
		})
	}
}

func TestScriptExhausted(t *testing.T) {
	s := start(t, Text("only", U(1, 1)))
	post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m := decodeJSON(t, resp)
	if msg, _ := get(m, "error", "message").(string); !strings.Contains(msg, "script exhausted") {
		t.Errorf("message %q", msg)
	}
	reqs := s.TurnRequests()
	if len(reqs) != 2 || reqs[1].Turn != -1 || !strings.Contains(reqs[1].Error, "script exhausted") {
		t.Errorf("requests %+v", reqs)
	}
	// More turns can be appended.
	s.Append(Text("more", U(1, 1)))
	m = decodeJSON(t, post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools}))
	if get(m, "content", 0, "text") != "more" {
		t.Errorf("after Append: %v", m)
	}
}

func TestToolNotOffered(t *testing.T) {
	s := start(t, WriteFile("/x", "y"), Call("Nope", nil))
	// Only web_search is offered: no tool to write a file with.
	resp := post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "tools": []any{map[string]any{"type": "web_search"}}})
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": claudeTools})
	m := decodeJSON(t, resp)
	if msg, _ := get(m, "error", "message").(string); resp.StatusCode != 500 || !strings.Contains(msg, `"Nope" is not offered`) {
		t.Errorf("status %d message %q", resp.StatusCode, msg)
	}
	for _, r := range s.TurnRequests() {
		if r.Error == "" {
			t.Errorf("request %s: no Error recorded", r.Path)
		}
	}
}

func TestForever(t *testing.T) {
	s := start(t, Fault(503).Forever())
	for range 3 {
		if resp := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "tools": chatTools}); resp.StatusCode != 503 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if s.Remaining() != 1 {
		t.Errorf("remaining %d", s.Remaining())
	}
}

func TestFor(t *testing.T) {
	const window = 200 * time.Millisecond
	s := start(t, Fault(429).For(window), Text("after", U(1, 1)))
	first := time.Now()
	for range 3 {
		if resp := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "tools": chatTools}); resp.StatusCode != 429 && time.Since(first) < window {
			t.Fatalf("status %d within the window, want 429", resp.StatusCode)
		}
	}
	// The window started when the server answered the first request, which
	// was before now: it is over after window from now.
	time.Sleep(window)
	if resp := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "tools": chatTools}); resp.StatusCode != 200 {
		t.Fatalf("status %d after the window, want 200", resp.StatusCode)
	}
	if s.Remaining() != 0 {
		t.Errorf("remaining %d, want 0", s.Remaining())
	}
}

// AtLeast keeps the fault past its window until it has answered n requests.
func TestForAtLeast(t *testing.T) {
	const window = 50 * time.Millisecond
	s := start(t, Fault(429).For(window).AtLeast(3), Text("after", U(1, 1)))
	var got []int
	for range 4 {
		resp := post(t, s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "tools": chatTools})
		got = append(got, resp.StatusCode)
		time.Sleep(2 * window)
	}
	if want := []int{429, 429, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func TestSlow(t *testing.T) {
	s := start(t, Slow(300*time.Millisecond, Text("late", U(1, 1))), Slow(10*time.Second, Text("never", U(1, 1))))
	begin := time.Now()
	resp := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools})
	if d := time.Since(begin); d < 300*time.Millisecond {
		t.Errorf("headers after %v, want >= 300ms", d)
	}
	if _, err := readSSE(t, resp); err != nil {
		t.Fatal(err)
	}
	// A client that gives up ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(`{"model":"m","tools":[{"name":"Bash"}]}`))
	_, err := http.DefaultClient.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want deadline exceeded", err)
	}
}

func TestCutStream(t *testing.T) {
	bodies := map[string]map[string]any{
		"/v1/messages":         {"model": "m", "stream": true, "tools": claudeTools},
		"/v1/responses":        {"model": "m", "stream": true, "tools": codexTools},
		"/v1/chat/completions": {"model": "m", "stream": true, "tools": chatTools},
		"/v1beta/models/g:streamGenerateContent?alt=sse": {"tools": geminiTools},
	}
	for path, body := range bodies {
		t.Run(strings.Trim(path, "/"), func(t *testing.T) {
			s := start(t, CutStream(Text("first line\nsecond line\nDONE", U(1, 1))))
			resp := post(t, s.URL()+path, body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			evs, err := readSSE(t, resp)
			if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error %v, want unexpected EOF", err)
			}
			if len(evs) == 0 {
				t.Fatal("nothing before the cut")
			}
			all := ""
			for _, e := range evs {
				all += e.Data
			}
			if !strings.Contains(all, "first line") || strings.Contains(all, "DONE") {
				t.Errorf("stream before the cut: %s", all)
			}
		})
	}
}

func TestConcurrentRequests(t *testing.T) {
	const n = 20
	var script Script
	for range n {
		script = append(script, Text("x", U(1, 1)))
	}
	s := start(t, script...)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"bash"}}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	turns := map[int]bool{}
	for _, r := range s.Requests() {
		turns[r.Turn] = true
	}
	if len(turns) != n || s.Remaining() != 0 {
		t.Errorf("%d distinct turns played, %d remaining", len(turns), s.Remaining())
	}
}

func TestGzipBody(t *testing.T) {
	s := start(t, Text("z", U(1, 1)))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(`{"model":"zipped","tools":[{"name":"Bash"}]}`))
	_ = zw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", &buf)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := s.Requests()[0]; r.JSON["model"] != "zipped" {
		t.Errorf("recorded body %q", r.Body)
	}
}

func TestResolveCallForEachCLI(t *testing.T) {
	obj := func(req []any, props ...string) map[string]any {
		p := map[string]any{}
		for _, k := range props {
			p[k] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p, "required": req}
	}
	cases := []struct {
		name  string
		tools []toolDef
		call  ToolCall
		want  resolvedCall
	}{
		{"claude write", []toolDef{{Name: "Bash"}, {Name: "Write", Schema: obj(nil, "file_path", "content")}},
			ToolCall{Role: RoleWriteFile, Path: "/a", Content: "c"},
			resolvedCall{Name: "Write", Args: map[string]any{"file_path": "/a", "content": "c"}}},
		{"gemini shell", []toolDef{{Name: "run_shell_command", Schema: obj([]any{"command"}, "command", "description", "dir_path")}},
			ToolCall{Role: RoleRunCommand, Command: "ls"},
			resolvedCall{Name: "run_shell_command", Args: map[string]any{"command": "ls"}}},
		{"copilot create", []toolDef{{Name: "bash"}, {Name: "create", Schema: obj([]any{"path", "file_text"}, "path", "file_text")}},
			ToolCall{Role: RoleWriteFile, Path: "/p", Content: "t"},
			resolvedCall{Name: "create", Args: map[string]any{"path": "/p", "file_text": "t"}}},
		{"codex classic shell", []toolDef{{Name: "shell", Schema: map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "array"}}, "required": []any{"command"}}}},
			ToolCall{Role: RoleRunCommand, Command: "ls"},
			resolvedCall{Name: "shell", Args: map[string]any{"command": []string{"bash", "-lc", "ls"}}}},
		{"codex function apply_patch", []toolDef{{Name: "apply_patch", Schema: obj([]any{"input"}, "input")}},
			ToolCall{Role: RoleWriteFile, Path: "f", Content: "x"},
			resolvedCall{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: f\n+x\n*** End Patch\n"}}},
		{"write through the shell", []toolDef{{Name: "exec_command", Schema: obj([]any{"cmd"}, "cmd")}},
			ToolCall{Role: RoleWriteFile, Path: "/o'k", Content: "it's"},
			resolvedCall{Name: "exec_command", Args: map[string]any{"cmd": `printf '%s' 'it'\''s' > '/o'\''k'`}}},
		{"by name", []toolDef{{Name: "todowrite"}},
			ToolCall{Name: "todowrite", Args: map[string]any{"todos": []any{}}},
			resolvedCall{Name: "todowrite", Args: map[string]any{"todos": []any{}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := resolveCall(&c.call, c.tools)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v\nwant %#v", got, c.want)
			}
		})
	}
}
