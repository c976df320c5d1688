package detect

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Embedder turns texts into vectors whose cosine similarity says how close
// their meanings are.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// OpenAIEmbedder calls an OpenAI-compatible embeddings endpoint: POST
// {BaseURL}/v1/embeddings with {"model", "input": [texts]} (OpenAI, and the
// servers that copy its API: Ollama, vLLM, llama.cpp, LM Studio, LiteLLM,
// ...).
type OpenAIEmbedder struct {
	// BaseURL is the server's address, e.g. "https://api.openai.com" or
	// "http://localhost:11434"; one ending in /v1 is taken as it is (the
	// OpenAI SDKs' convention) rather than given another /v1.
	BaseURL string
	// Model is the embedding model, e.g. "text-embedding-3-small".
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Client makes the request; nil: a client with a 30 s timeout.
	Client *http.Client
}

// maxEmbeddingResponse bounds the response read: far above two vectors of
// the largest models (3,072 floats as JSON text).
const maxEmbeddingResponse = 32 << 20

var defaultEmbeddingClient = &http.Client{Timeout: 30 * time.Second}

// Endpoint is the URL Embed posts to.
func (e OpenAIEmbedder) Endpoint() string {
	u := strings.TrimRight(e.BaseURL, "/")
	if strings.HasSuffix(u, "/v1") {
		return u + "/embeddings"
	}
	return u + "/v1/embeddings"
}

// Embed implements Embedder.
func (e OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if e.BaseURL == "" {
		return nil, errors.New("embeddings: no base URL")
	}
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{e.Model, texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	c := e.Client
	if c == nil {
		c = defaultEmbeddingClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingResponse+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: reading the response: %w", err)
	}
	if len(data) > maxEmbeddingResponse {
		return nil, fmt.Errorf("embeddings: response over %d bytes", maxEmbeddingResponse)
	}
	var r struct {
		Data  []embeddingDatum `json:"data"`
		Error json.RawMessage  `json:"error"`
	}
	jsonErr := json.Unmarshal(data, &r)
	if resp.StatusCode != http.StatusOK {
		msg := apiError(r.Error)
		if msg == "" {
			msg = oneLine(string(data), 200)
		}
		return nil, fmt.Errorf("embeddings: %s: %s", resp.Status, msg)
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("embeddings: reading the response: %w", jsonErr)
	}
	if msg := apiError(r.Error); msg != "" {
		return nil, fmt.Errorf("embeddings: %s", msg)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d texts", len(r.Data), len(texts))
	}
	slices.SortStableFunc(r.Data, func(a, b embeddingDatum) int { return cmp.Compare(a.Index, b.Index) })
	out := make([][]float64, len(r.Data))
	for i, d := range r.Data {
		if d.Index != i {
			return nil, fmt.Errorf("embeddings: vector indexes are not 0 to %d", len(texts)-1)
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embeddings: vector %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// embeddingDatum is one vector of an embeddings response.
type embeddingDatum struct {
	Index     int             `json:"index"`
	Embedding json.RawMessage `json:"embedding"`
}

// decodeVector reads an embedding as a JSON array of numbers or, as some
// servers send it, base64 of little-endian float32s.
func decodeVector(raw json.RawMessage) ([]float64, error) {
	var v []float64
	if err := json.Unmarshal(raw, &v); err == nil {
		if len(v) == 0 {
			return nil, errors.New("empty vector")
		}
		return v, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("neither an array of numbers nor base64")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || len(b)%4 != 0 {
		return nil, errors.New("bad base64 vector")
	}
	v = make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v, nil
}

// apiError is the message of an OpenAI-style error: {"message": ...} or a
// string.
func apiError(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return oneLine(o.Message, 300)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return oneLine(s, 300)
	}
	return oneLine(string(raw), 300)
}

// Cosine returns the cosine similarity of two vectors of the same length,
// from -1 to 1; 0 when one of them is zero.
func Cosine(a, b []float64) (float64, error) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, fmt.Errorf("vectors of lengths %d and %d", len(a), len(b))
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0, nil
	}
	c := dot / (math.Sqrt(na) * math.Sqrt(nb))
	if math.IsNaN(c) {
		return 0, errors.New("vector holds NaN or infinity")
	}
	return max(-1, min(1, c)), nil
}
