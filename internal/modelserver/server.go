// Package modelserver is a scripted model server for tests: it speaks the
// wire protocols the agent CLIs use (Anthropic Messages, OpenAI Responses,
// OpenAI Chat Completions, Gemini generateContent) on 127.0.0.1 and answers
// each model request with the next turn of a Script: text, a call of one of
// the client's own tools, or a fault. It records every request so that a test
// can assert what the client sent.
//
// # Model turns and auxiliary requests
//
// Only model turns consume the script. A request is auxiliary, and is
// answered without consuming a turn, when it can be told apart:
//
//   - it is not a generation request (token counting, model lists, the
//     HEAD / probe of Claude Code, anything unknown: 404);
//   - it offers no tools: clients send their title, summary and quota
//     probes without tools, while their agent loop always offers tools;
//   - Gemini: it is a non-streaming generateContent call (gemini-cli makes
//     its JSON side calls — next-speaker check, loop detection, routing —
//     with generateContent, and its turns with streamGenerateContent).
//
// Auxiliary generations are answered with AuxText (or, when the client asks
// for JSON with a schema, a minimal object of that schema), usage 0.
package modelserver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Protocol names the wire protocol of a request.
type Protocol string

// The protocols.
const (
	// NoProtocol: a request that is not a generation (model lists, probes,
	// unknown paths).
	NoProtocol Protocol = ""
	// Anthropic Messages: POST /v1/messages.
	Anthropic Protocol = "anthropic"
	// Responses is OpenAI Responses: POST /v1/responses.
	Responses Protocol = "openai-responses"
	// ChatComp is OpenAI Chat Completions: POST /v1/chat/completions.
	ChatComp Protocol = "openai-chat"
	// Gemini generateContent: POST /v1beta/models/M:(stream)GenerateContent.
	Gemini Protocol = "gemini"
)

// defaultAux answers auxiliary generations when AuxText is empty.
const defaultAux = "Scripted session"

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	// Query is the parsed query string; RawQuery as sent.
	Query    url.Values
	RawQuery string
	Header   http.Header
	// Body is the raw (decompressed) body; JSON its parse, nil when it is
	// not JSON.
	Body []byte
	JSON map[string]any
	// Protocol is the protocol the request was answered in.
	Protocol Protocol
	// Turn is the index of the script turn that answered it, -1 for
	// auxiliary requests and requests after the script was exhausted.
	Turn int
	// Aux tells a request that did not consume a turn.
	Aux bool
	// Tools lists the names of the tools the request offered.
	Tools []string
	// Error is set when the server could not honour the turn (e.g. the
	// scripted tool is not offered) or the script was exhausted.
	Error string
	// Time is when the request arrived.
	Time time.Time
}

// Server is a scripted model server. Set its exported fields before Start.
type Server struct {
	// AuxText answers auxiliary generations; empty: "Scripted session".
	AuxText string
	// IsAux, when set, replaces the built-in test telling auxiliary
	// generation requests from model turns.
	IsAux func(r *Request) bool
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)

	mu       sync.Mutex
	script   Script
	next     int
	requests []Request
	ln       net.Listener
	srv      *http.Server
	seq      int
	closed   chan struct{}
	// stickySince is when the current StickyFor turn first answered.
	stickySince time.Time
	// stickyCount is how many requests it has answered.
	stickyCount int
}

// New returns a server that plays script. Start it with Start.
func New(script Script) *Server {
	return &Server{script: append(Script(nil), script...), closed: make(chan struct{})}
}

// Start listens on 127.0.0.1 on a free port and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// URL is the server's base URL, http://127.0.0.1:PORT, without a path.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops the server, ending open connections.
func (s *Server) Close() error {
	select {
	case <-s.closed:
		return nil
	default:
		close(s.closed)
	}
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TurnRequests returns the requests that consumed a turn (or found the script
// exhausted), in order.
func (s *Server) TurnRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if !r.Aux && r.Protocol != NoProtocol {
			out = append(out, r)
		}
	}
	return out
}

// Remaining is the number of turns not yet played (sticky turns count once).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Append adds turns to the end of the script.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%024d", prefix, s.seq)
}

// record stores r and returns its index.
func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	return len(s.requests) - 1
}

func (s *Server) update(i int, f func(r *Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.requests[i])
}

// take consumes the next turn; ok is false when the script is exhausted.
func (s *Server) take() (Turn, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeLocked()
}

func (s *Server) takeLocked() (Turn, int, bool) {
	if s.next >= len(s.script) {
		return Turn{}, -1, false
	}
	t, i := s.script[s.next], s.next
	if t.StickyFor > 0 {
		switch {
		case s.stickySince.IsZero():
			s.stickySince = time.Now()
		case time.Since(s.stickySince) >= t.StickyFor && s.stickyCount >= t.StickyMin:
			s.next++
			s.stickySince, s.stickyCount = time.Time{}, 0
			return s.takeLocked()
		}
		s.stickyCount++
		return t, i, true
	}
	if !t.Sticky {
		s.next++
	}
	return t, i, true
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// ServeHTTP routes a request to its protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := readBody(hr)
	req := Request{
		Method:   hr.Method,
		Path:     hr.URL.Path,
		Query:    hr.URL.Query(),
		RawQuery: hr.URL.RawQuery,
		Header:   hr.Header.Clone(),
		Body:     body,
		Turn:     -1,
		Time:     time.Now(),
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			req.JSON = m
		}
	}
	idx := s.record(req)
	s.logf("modelserver: %s %s", hr.Method, hr.URL.RequestURI())
	h := s.route(&req)
	h(w, hr, &req, idx)
}

func readBody(hr *http.Request) ([]byte, error) {
	var r io.Reader = hr.Body
	if strings.EqualFold(hr.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(hr.Body)
		if err != nil {
			return nil, err
		}
		r = zr
	}
	return io.ReadAll(io.LimitReader(r, 64<<20))
}

type handler func(w http.ResponseWriter, hr *http.Request, req *Request, idx int)

// route picks the handler of a request by its path.
func (s *Server) route(req *Request) handler {
	p := strings.TrimSuffix(req.Path, "/")
	switch {
	case p == "/v1/messages" || p == "/messages":
		return s.protocolHandler(Anthropic, anthropicCodec{})
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return s.anthropicCountTokens
	case strings.HasSuffix(p, "/responses"):
		return s.protocolHandler(Responses, responsesCodec{})
	case strings.HasSuffix(p, "/chat/completions"):
		return s.protocolHandler(ChatComp, chatCodec{})
	case strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		method := p[strings.LastIndex(p, ":")+1:]
		switch method {
		case "streamGenerateContent", "generateContent":
			return s.protocolHandler(Gemini, geminiCodec{})
		case "countTokens":
			return s.geminiCountTokens
		case "embedContent", "batchEmbedContents":
			return s.geminiEmbed
		}
	case p == "" && (req.Method == http.MethodHead || req.Method == http.MethodGet):
		// Claude Code probes the base URL with HEAD / at start-up.
		return s.root
	case strings.HasSuffix(p, "/models") && req.Method == http.MethodGet:
		return s.listModels
	case strings.Contains(p, "/models/") && req.Method == http.MethodGet:
		return s.getModel
	}
	return s.unknown
}

// codec is one protocol's wire format.
type codec interface {
	// tools lists the tools the request offers.
	tools(body map[string]any) []toolDef
	// streaming tells whether the request asks for a stream.
	streaming(hr *http.Request, body map[string]any) bool
	// answer writes a complete answer (text and optional call).
	answer(s *Server, w http.ResponseWriter, a *answer)
	// fault writes an HTTP error.
	fault(s *Server, w http.ResponseWriter, f *FaultSpec)
}

// answer is what a protocol writes for a turn.
type answer struct {
	model   string
	text    string
	call    *resolvedCall
	usage   Usage
	windows []Window
	stream  bool
	cut     bool
	body    map[string]any
	hr      *http.Request
}

func (s *Server) protocolHandler(p Protocol, c codec) handler {
	return func(w http.ResponseWriter, hr *http.Request, req *Request, idx int) {
		tools := c.tools(req.JSON)
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Name)
		}
		req.Protocol = p
		req.Tools = names
		aux := false
		if s.IsAux != nil {
			aux = s.IsAux(req)
		} else {
			aux = len(tools) == 0 || (p == Gemini && strings.HasSuffix(req.Path, ":generateContent"))
		}
		req.Aux = aux
		s.update(idx, func(r *Request) { r.Protocol, r.Tools, r.Aux = p, names, aux })

		a := &answer{model: modelOf(p, req), stream: c.streaming(hr, req.JSON), body: req.JSON, hr: hr}
		if aux {
			a.text = s.auxText(p, req.JSON)
			c.answer(s, w, a)
			return
		}
		t, ti, ok := s.take()
		if !ok {
			msg := fmt.Sprintf("modelserver: script exhausted: model request %d (%s %s) has no turn left", len(s.TurnRequests()), req.Method, req.Path)
			s.update(idx, func(r *Request) { r.Error = msg })
			s.logf("%s", msg)
			c.fault(s, w, &FaultSpec{Status: 500, Message: msg})
			return
		}
		s.update(idx, func(r *Request) { r.Turn = ti })
		s.logf("modelserver: turn %d: %s", ti, t)
		if t.Delay > 0 {
			select {
			case <-time.After(t.Delay):
			case <-hr.Context().Done():
				return
			case <-s.closed:
				return
			}
		}
		if t.Fault != nil {
			c.fault(s, w, t.Fault)
			return
		}
		a.text, a.usage, a.cut, a.windows = t.Text, t.Usage, t.Cut == CutMidStream, t.Windows
		if t.Tool != nil {
			call, err := resolveCall(t.Tool, tools)
			if err != nil {
				msg := fmt.Sprintf("modelserver: turn %d: %v", ti, err)
				s.update(idx, func(r *Request) { r.Error = msg })
				s.logf("%s", msg)
				c.fault(s, w, &FaultSpec{Status: 500, Message: msg})
				return
			}
			a.call = &call
		}
		c.answer(s, w, a)
	}
}

// auxText is the answer to an auxiliary generation: a minimal JSON object
// when the request asks for JSON with a schema, else AuxText.
func (s *Server) auxText(p Protocol, body map[string]any) string {
	if schema := jsonSchemaOf(p, body); schema != nil {
		b, _ := json.Marshal(sampleValue(schema, ""))
		return string(b)
	}
	if s.AuxText != "" {
		return s.AuxText
	}
	return defaultAux
}

func jsonSchemaOf(p Protocol, body map[string]any) map[string]any {
	switch p {
	case Gemini:
		gc, _ := body["generationConfig"].(map[string]any)
		for _, k := range []string{"responseJsonSchema", "responseSchema"} {
			if m, ok := gc[k].(map[string]any); ok {
				return m
			}
		}
	case ChatComp:
		rf, _ := body["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		if m, ok := js["schema"].(map[string]any); ok {
			return m
		}
	case Responses:
		tx, _ := body["text"].(map[string]any)
		f, _ := tx["format"].(map[string]any)
		if m, ok := f["schema"].(map[string]any); ok {
			return m
		}
	}
	return nil
}

func modelOf(p Protocol, req *Request) string {
	if p == Gemini {
		seg := req.Path[strings.LastIndex(req.Path, "/models/")+len("/models/"):]
		if i := strings.Index(seg, ":"); i >= 0 {
			seg = seg[:i]
		}
		return seg
	}
	if m, ok := req.JSON["model"].(string); ok && m != "" {
		return m
	}
	return "scripted-model"
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// event writes one event; name may be empty. data is marshalled unless it is
// a string.
func (e *sse) event(name string, data any) {
	var b []byte
	if s, ok := data.(string); ok {
		b = []byte(s)
	} else {
		b, _ = json.Marshal(data)
	}
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	_ = e.rc.Flush()
}

// cut drops the connection without ending the stream.
func (e *sse) cut() {
	_ = e.rc.Flush()
	panic(http.ErrAbortHandler)
}

// chunks splits text into a few deltas.
func chunks(text string) []string {
	if text == "" {
		return nil
	}
	var out []string
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		// split long lines on word boundaries
		for len(line) > 24 {
			i := strings.LastIndex(line[:24], " ")
			if i <= 0 {
				i = 23
			}
			out = append(out, line[:i+1])
			line = line[i+1:]
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

func (s *Server) anthropicCountTokens(w http.ResponseWriter, _ *http.Request, req *Request, idx int) {
	s.markAux(idx, Anthropic)
	writeJSON(w, 200, map[string]any{"input_tokens": estimateTokens(req.Body)})
}

func (s *Server) geminiCountTokens(w http.ResponseWriter, _ *http.Request, req *Request, idx int) {
	s.markAux(idx, Gemini)
	writeJSON(w, 200, map[string]any{"totalTokens": estimateTokens(req.Body)})
}

func (s *Server) geminiEmbed(w http.ResponseWriter, _ *http.Request, _ *Request, idx int) {
	s.markAux(idx, Gemini)
	writeJSON(w, 200, map[string]any{"embedding": map[string]any{"values": []float64{0.1, 0.2, 0.3}}})
}

func (s *Server) markAux(idx int, p Protocol) {
	s.update(idx, func(r *Request) { r.Aux, r.Protocol = true, p })
}

func estimateTokens(body []byte) int { return len(body)/4 + 1 }

// listModels answers GET .../models in the OpenAI, Anthropic and Gemini
// shapes at once.
func (s *Server) listModels(w http.ResponseWriter, _ *http.Request, _ *Request, idx int) {
	s.update(idx, func(r *Request) { r.Aux = true })
	models := []map[string]any{}
	for _, m := range []string{"scripted-model", "fake-model", "m1"} {
		models = append(models, map[string]any{
			"id": m, "object": "model", "created": 1700000000, "owned_by": "modelserver",
			"type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z",
			"name": "models/" + m, "supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"},
		})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": models, "models": models, "has_more": false})
}

func (s *Server) getModel(w http.ResponseWriter, _ *http.Request, req *Request, idx int) {
	s.update(idx, func(r *Request) { r.Aux = true })
	id := req.Path[strings.LastIndex(req.Path, "/")+1:]
	writeJSON(w, 200, map[string]any{"id": id, "object": "model", "type": "model", "display_name": id, "name": "models/" + id})
}

func (s *Server) root(w http.ResponseWriter, _ *http.Request, _ *Request, idx int) {
	s.update(idx, func(r *Request) { r.Aux = true })
	writeJSON(w, 200, map[string]any{"server": "modelserver"})
}

// unknown answers any other request with 404 and a JSON error; it never
// consumes a turn.
func (s *Server) unknown(w http.ResponseWriter, _ *http.Request, req *Request, idx int) {
	s.update(idx, func(r *Request) { r.Aux = true })
	msg := fmt.Sprintf("modelserver: no such endpoint: %s %s", req.Method, req.Path)
	writeJSON(w, 404, map[string]any{"error": map[string]any{"type": "not_found_error", "message": msg, "code": 404, "status": "NOT_FOUND"}})
}
