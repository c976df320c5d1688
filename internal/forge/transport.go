package forge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// transport is the HTTP transport under every client of one forge: it
// sends the token to the forge's API host only (never to where a log
// download redirects), waits out rate limits and repeats the request, and
// makes repeated reads conditional on their ETag, answering a 304 with the
// body kept from before (GitHub does not count a 304 against the limit).
type transport struct {
	base    http.RoundTripper
	apiHost string
	token   string
	maxWait time.Duration
	onWait  func(time.Duration, string)
	sleep   func(context.Context, time.Duration) error
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]*cached
	order []string
}

// cached is a response kept for its ETag.
type cached struct {
	etag   string
	header http.Header
	body   []byte
}

// maxCached is how many responses the transport keeps for their ETags, and
// maxCachedBody the largest it keeps.
const (
	maxCached     = 256
	maxCachedBody = 1 << 20
)

// maxRetries is how many times one request is repeated after a rate limit.
const maxRetries = 3

// secondaryWait is the wait after a secondary rate limit that says no
// time: GitHub's documentation asks for at least a minute.
const secondaryWait = time.Minute

func newTransport(t Target, token string, o Options) *transport {
	base := o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	tr := &transport{base: base, apiHost: hostOf(t.API), token: token, maxWait: o.MaxWait, onWait: o.OnWait,
		sleep: o.Sleep, now: time.Now, cache: map[string]*cached{}}
	if tr.maxWait <= 0 {
		tr.maxWait = DefaultMaxWait
	}
	if tr.sleep == nil {
		tr.sleep = sleepCtx
	}
	return tr
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// client is an HTTP client over the transport.
func (t *transport) client() *http.Client { return &http.Client{Transport: t} }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.URL.Host == t.apiHost && t.token != "" {
		req.Header.Set("Authorization", "token "+t.token)
	} else {
		req.Header.Del("Authorization")
	}
	key := ""
	if req.Method == http.MethodGet && req.URL.Host == t.apiHost {
		key = req.URL.String() + "\x00" + req.Header.Get("Accept")
		if c := t.lookup(key); c != nil {
			req.Header.Set("If-None-Match", c.etag)
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		resp, err := t.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		wait, why, limited := t.rateLimited(req, resp)
		if limited {
			replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
			if attempt >= maxRetries || !replayable || wait > t.maxWait {
				return resp, nil
			}
			drain(resp)
			if t.onWait != nil {
				t.onWait(wait, why)
			}
			if err := t.sleep(req.Context(), wait); err != nil {
				return nil, err
			}
			continue
		}
		if key == "" {
			return resp, nil
		}
		return t.remember(key, resp)
	}
}

// rateLimited tells whether resp is a rate limit, how long to wait and
// why: a 429, or a 403 that says so (Retry-After, or no request left until
// X-RateLimit-Reset), or GitHub GraphQL's 200 whose error is RATE_LIMITED.
func (t *transport) rateLimited(req *http.Request, resp *http.Response) (time.Duration, string, bool) {
	h := resp.Header
	exhausted := h.Get("X-RateLimit-Remaining") == "0"
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusForbidden && (h.Get("Retry-After") != "" || exhausted):
	case resp.StatusCode == http.StatusOK && exhausted && strings.HasSuffix(req.URL.Path, "/graphql") && graphQLRateLimited(resp):
	case resp.StatusCode == http.StatusForbidden && t.secondary(resp):
		return secondaryWait, "a secondary rate limit of " + req.URL.Host, true
	default:
		return 0, "", false
	}
	if ra := h.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, "Retry-After of " + req.URL.Host, true
		}
		if at, err := http.ParseTime(ra); err == nil {
			return max(at.Sub(t.now()), 0), "Retry-After of " + req.URL.Host, true
		}
	}
	if exhausted {
		if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			// A second more: the reset is rounded down to the second.
			return max(time.Unix(s, 0).Sub(t.now()), 0) + time.Second, "the rate limit of " + req.URL.Host + " (reset " + time.Unix(s, 0).UTC().Format(time.TimeOnly) + " UTC)", true
		}
	}
	return secondaryWait, "a rate limit of " + req.URL.Host, true
}

// secondary tells whether a 403 without rate headers is GitHub's secondary
// rate limit, which says so in its message.
func (t *transport) secondary(resp *http.Response) bool {
	body := peek(resp)
	return bytes.Contains(bytes.ToLower(body), []byte("secondary rate limit"))
}

// graphQLRateLimited tells whether a GraphQL answer is the error
// RATE_LIMITED.
func graphQLRateLimited(resp *http.Response) bool {
	return bytes.Contains(peek(resp), []byte(`"RATE_LIMITED"`))
}

// peek reads resp's body (up to 64 KiB) and puts it back to be read again.
func peek(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

func (t *transport) lookup(key string) *cached {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cache[key]
}

// remember answers a 304 with the kept response, and keeps a 200 that has
// an ETag.
func (t *transport) remember(key string, resp *http.Response) (*http.Response, error) {
	switch {
	case resp.StatusCode == http.StatusNotModified:
		c := t.lookup(key)
		if c == nil {
			return resp, nil
		}
		drain(resp)
		out := &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor,
			ProtoMinor: resp.ProtoMinor, Header: c.header.Clone(), Body: io.NopCloser(bytes.NewReader(c.body)),
			ContentLength: int64(len(c.body)), Request: resp.Request}
		// The rate headers of the 304 are the current ones.
		for k, v := range resp.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
				out.Header[k] = v
			}
		}
		return out, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedBody+1))
		if err != nil {
			_ = resp.Body.Close()
			return nil, fmt.Errorf("read %s: %w", redactURL(resp.Request.URL), err)
		}
		if len(body) > maxCachedBody {
			// Too big to keep: passed on as it comes.
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			return resp, nil
		}
		_ = resp.Body.Close()
		t.store(key, &cached{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body})
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return resp, nil
}

func (t *transport) store(key string, c *cached) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.cache[key]; !ok {
		t.order = append(t.order, key)
		if len(t.order) > maxCached {
			delete(t.cache, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.cache[key] = c
}

// redactURL is u without its query (a signed log URL's signature).
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.User = "", nil
	return c.String()
}
