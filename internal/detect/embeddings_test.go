package detect

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// embeddingServer answers POST /v1/embeddings with handle's vectors, after
// checking the request.
func embeddingServer(t *testing.T, handle func(w http.ResponseWriter, model string, input []string)) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("content type %q", ct)
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		handle(w, req.Model, req.Input)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestOpenAIEmbedder(t *testing.T) {
	var gotModel string
	var gotInput []string
	s := embeddingServer(t, func(w http.ResponseWriter, model string, input []string) {
		gotModel, gotInput = model, input
		// Out of order, as the API allows.
		io.WriteString(w, `{"object":"list","model":"text-embedding-3-small","data":[
			{"object":"embedding","index":1,"embedding":[0.6,0.8,0]},
			{"object":"embedding","index":0,"embedding":[1,0,0]}],
			"usage":{"prompt_tokens":12,"total_tokens":12}}`)
	})
	for _, base := range []string{s.URL, s.URL + "/", s.URL + "/v1", s.URL + "/v1/"} {
		e := OpenAIEmbedder{BaseURL: base, Model: "text-embedding-3-small", APIKey: "sk-test", Client: s.Client()}
		v, err := e.Embed(context.Background(), []string{"first", "second"})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if gotModel != "text-embedding-3-small" || strings.Join(gotInput, ",") != "first,second" {
			t.Errorf("request model %q input %q", gotModel, gotInput)
		}
		if len(v) != 2 || v[0][0] != 1 || v[1][1] != 0.8 {
			t.Errorf("vectors %v", v)
		}
		c, err := Cosine(v[0], v[1])
		if err != nil || math.Abs(c-0.6) > 1e-12 {
			t.Errorf("cosine %v, %v", c, err)
		}
	}
}

func TestOpenAIEmbedderBase64(t *testing.T) {
	s := embeddingServer(t, func(w http.ResponseWriter, _ string, input []string) {
		var data []map[string]any
		for i := range input {
			b := make([]byte, 8)
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(i)+0.5))
			binary.LittleEndian.PutUint32(b[4:], math.Float32bits(2))
			data = append(data, map[string]any{"index": i, "embedding": base64.StdEncoding.EncodeToString(b)})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	})
	v, err := OpenAIEmbedder{BaseURL: s.URL, APIKey: "sk-test", Client: s.Client()}.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || v[0][0] != 0.5 || v[1][0] != 1.5 || v[1][1] != 2 {
		t.Errorf("vectors %v", v)
	}
}

func TestOpenAIEmbedderErrors(t *testing.T) {
	s := embeddingServer(t, func(w http.ResponseWriter, model string, input []string) {
		switch model {
		case "short":
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2]}]}`)
		case "garbage":
			io.WriteString(w, `<html>oops</html>`)
		case "overloaded":
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"The server is overloaded"}}`)
		case "plain":
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "bad gateway\n")
		case "empty":
			io.WriteString(w, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`)
		case "dup":
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`)
		}
	})
	for model, want := range map[string]string{
		"short":      "1 vectors for 2 texts",
		"garbage":    "reading the response",
		"overloaded": "503 Service Unavailable: The server is overloaded",
		"plain":      "502 Bad Gateway: bad gateway",
		"empty":      "vector 0: empty vector",
		"dup":        "vector indexes",
	} {
		_, err := OpenAIEmbedder{BaseURL: s.URL, Model: model, APIKey: "sk-test", Client: s.Client()}.Embed(context.Background(), []string{"a", "b"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", model, err, want)
		}
	}

	_, err := OpenAIEmbedder{BaseURL: s.URL, APIKey: "sk-wrong-secret", Client: s.Client()}.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: Incorrect API key provided") || strings.Contains(err.Error(), "sk-wrong") {
		t.Errorf("bad key: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (OpenAIEmbedder{BaseURL: s.URL, APIKey: "sk-test", Client: s.Client()}).Embed(ctx, []string{"a"}); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := (OpenAIEmbedder{}).Embed(context.Background(), []string{"a"}); err == nil {
		t.Error("no base URL: no error")
	}
	if v, err := (OpenAIEmbedder{}).Embed(context.Background(), nil); v != nil || err != nil {
		t.Errorf("no texts: %v, %v", v, err)
	}
}

// TestLoopWithOpenAIEmbedder runs the similar-diff rule through the HTTP
// embedder, then with the server down.
func TestLoopWithOpenAIEmbedder(t *testing.T) {
	var inputs []string
	s := embeddingServer(t, func(w http.ResponseWriter, _ string, input []string) {
		inputs = input
		io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0.1]},{"index":1,"embedding":[1,0.12]}]}`)
	})
	e := OpenAIEmbedder{BaseURL: s.URL, Model: "m", APIKey: "sk-test", Client: s.Client()}
	h := hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyOther, err: "fp2"})
	det, ok := LoopDetector{Embedder: e}.Check(context.Background(), h)
	if !ok || det.Rule != RuleSimilarDiff || !strings.Contains(det.Details, "embedding cosine") {
		t.Fatalf("%+v, %v", det, ok)
	}
	// The changed lines are embedded, not the hunk headers or context.
	if len(inputs) != 2 || !strings.HasPrefix(inputs[0], "file app/users.py\n-    return [User(") || strings.Contains(inputs[0], "@@") || strings.Contains(inputs[0], "json.load") {
		t.Errorf("embedded %q", inputs)
	}

	s.Close()
	h = hist(at{hash: "A", diff: pyA, err: "fp1"}, at{hash: "B", diff: pyABlack, err: "fp2"})
	det, ok = LoopDetector{Embedder: e}.Check(context.Background(), h)
	if !ok || !strings.Contains(det.Details, "embeddings failed (embeddings: Post ") || !strings.Contains(det.Details, "lexical similarity 1.000") {
		t.Errorf("server down: %+v, %v", det, ok)
	}
}

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
		err  bool
	}{
		{[]float64{1, 0}, []float64{1, 0}, 1, false},
		{[]float64{1, 0}, []float64{0, 1}, 0, false},
		{[]float64{1, 2}, []float64{-1, -2}, -1, false},
		{[]float64{3, 4}, []float64{6, 8}, 1, false},
		{[]float64{0, 0}, []float64{1, 1}, 0, false},
		{[]float64{1}, []float64{1, 2}, 0, true},
		{nil, nil, 0, true},
		{[]float64{math.NaN(), 1}, []float64{1, 1}, 0, true},
	} {
		got, err := Cosine(c.a, c.b)
		if (err != nil) != c.err || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, %v; want %v, error %v", c.a, c.b, got, err, c.want, c.err)
		}
	}
}
