package forge

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock records the waits a transport asks for instead of sleeping.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return nil
}

func newTestTransport(t *testing.T, srv *httptest.Server, maxWait time.Duration) (*transport, *fakeClock, *[]string) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	var told []string
	tr := newTransport(Target{API: srv.URL + "/api/v3/"}, "tok", Options{MaxWait: maxWait, Sleep: clock.sleep,
		OnWait: func(d time.Duration, why string) { told = append(told, d.String()+" "+why) }})
	tr.now = func() time.Time { return clock.now }
	return tr, clock, &told
}

// Each kind of rate limit is waited out as its headers say, then the
// request is sent again, its body whole; a limit longer than MaxWait is
// returned to the client as it came.
func TestTransportRateLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  func(w http.ResponseWriter)
		path   string
		waited time.Duration
	}{
		{"Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"You have exceeded a secondary rate limit"}`)
		}, "/api/v3/repos/o/r/pulls", 30 * time.Second},
		{"429", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
		}, "/api/v3/repos/o/r/pulls", 2 * time.Second},
		{"primary reset", func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.Itoa(1_700_000_000+90))
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"API rate limit exceeded for user ID 1."}`)
		}, "/api/v3/repos/o/r/pulls", 91 * time.Second},
		{"secondary without headers", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`)
		}, "/api/v3/repos/o/r/pulls", time.Minute},
		{"graphql", func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.Itoa(1_700_000_000+10))
			_, _ = io.WriteString(w, `{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}`)
		}, "/api/graphql", 11 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bodies []string
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, string(b))
				calls++
				if calls == 1 {
					tc.first(w)
					return
				}
				_, _ = io.WriteString(w, `{"ok":true}`)
			}))
			defer srv.Close()
			tr, clock, told := newTestTransport(t, srv, time.Hour)
			resp, err := tr.client().Post(srv.URL+tc.path, "application/json", strings.NewReader(`{"q":1}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(b) != `{"ok":true}` {
				t.Errorf("answer %d %s", resp.StatusCode, b)
			}
			if len(clock.waits) != 1 || clock.waits[0] != tc.waited {
				t.Errorf("waited %v, want [%v]", clock.waits, tc.waited)
			}
			if len(bodies) != 2 || bodies[1] != `{"q":1}` {
				t.Errorf("bodies sent %q, want the same twice", bodies)
			}
			if len(*told) != 1 {
				t.Errorf("told %v, want one wait", *told)
			}
		})
	}

	// Longer than MaxWait: the client gets the limit.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	tr, clock, _ := newTestTransport(t, srv, time.Hour)
	resp, err := tr.client().Get(srv.URL + "/api/v3/x")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || len(clock.waits) != 0 {
		t.Errorf("status %d after waits %v, want 429 at once", resp.StatusCode, clock.waits)
	}

	// A limit that does not lift: tried maxRetries times more, then given.
	calls := 0
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv2.Close()
	tr, _, _ = newTestTransport(t, srv2, time.Hour)
	resp, err = tr.client().Get(srv2.URL + "/api/v3/x")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || calls != maxRetries+1 {
		t.Errorf("status %d after %d calls, want 429 after %d", resp.StatusCode, calls, maxRetries+1)
	}

	// A 403 that is no rate limit is no wait.
	srv3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
	}))
	defer srv3.Close()
	tr, clock, _ = newTestTransport(t, srv3, time.Hour)
	resp, err = tr.client().Get(srv3.URL + "/api/v3/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(clock.waits) != 0 || !strings.Contains(string(b), "not accessible") {
		t.Errorf("status %d, waits %v, body %s", resp.StatusCode, clock.waits, b)
	}
}

// A repeated GET carries the ETag of the last answer; a 304 is answered
// with the body kept; the token goes to the API's host only.
func TestTransportETagAndToken(t *testing.T) {
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "other auth="+r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, "log line\n")
	}))
	defer other.Close()
	version := 1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := `"v` + strconv.Itoa(version) + `"`
		seen = append(seen, "api auth="+r.Header.Get("Authorization")+" inm="+r.Header.Get("If-None-Match"))
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(100-len(seen)))
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		_, _ = io.WriteString(w, `{"version":`+strconv.Itoa(version)+`}`)
	}))
	defer srv.Close()
	tr, _, _ := newTestTransport(t, srv, time.Hour)
	get := func(u string) (int, string, string) {
		t.Helper()
		resp, err := tr.client().Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("X-RateLimit-Remaining")
	}
	for i, want := range []string{`{"version":1}`, `{"version":1}`, `{"version":2}`} {
		if i == 2 {
			version = 2
		}
		code, body, _ := get(srv.URL + "/api/v3/repos/o/r/pulls/1")
		if code != http.StatusOK || body != want {
			t.Errorf("read %d: %d %s, want 200 %s", i, code, body, want)
		}
	}
	if _, body, remaining := get(srv.URL + "/api/v3/repos/o/r/pulls/1"); body != `{"version":2}` || remaining != "96" {
		t.Errorf("a 304 answered %s with remaining %s, want the kept body and the 304's remaining 96", body, remaining)
	}
	if _, body, _ := get(other.URL + "/logs/1?sig=abc"); body != "log line\n" {
		t.Errorf("other host: %q", body)
	}
	want := []string{
		`api auth=token tok inm=`,
		`api auth=token tok inm="v1"`,
		`api auth=token tok inm="v1"`,
		`api auth=token tok inm="v2"`,
		`other auth=`,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// A wait for a rate limit ends with the caller's context.
func TestTransportWaitEndsWithContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	tr := newTransport(Target{API: srv.URL + "/"}, "tok", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
	start := time.Now()
	_, err := tr.client().Do(req)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %s, want the context's end at once", err, time.Since(start))
	}
}

// An answer larger than the transport keeps is passed on whole, and asked
// again without a condition.
func TestTransportBigAnswerNotKept(t *testing.T) {
	big := strings.Repeat("x", maxCachedBody+10)
	var conds []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conds = append(conds, r.Header.Get("If-None-Match"))
		w.Header().Set("ETag", `"big"`)
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	tr, _, _ := newTestTransport(t, srv, time.Hour)
	for i := 0; i < 2; i++ {
		resp, err := tr.client().Get(srv.URL + "/api/v3/big")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != big {
			t.Errorf("read %d: %d bytes, want %d", i, len(b), len(big))
		}
	}
	if len(conds) != 2 || conds[1] != "" {
		t.Errorf("conditions sent %q, want none", conds)
	}
}
