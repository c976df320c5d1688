package agent

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// A CLI that says on stderr that it retries, then waits, then answers: the
// line reaches Request.Notice while the call still runs, not after it; a
// line of stderr that says nothing of a retry or an error is not shown.
func TestNoticeComesAsTheLinesCome(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	c := &Command{BackendName: "x", Argv: []string{"sh", "-c", `cat >/dev/null; echo "loading config" >&2; echo "retrying in 1s (attempt 1/5): connect ECONNREFUSED 127.0.0.1:443" >&2; sleep 1; echo DONE`}, Prompt: PromptStdin}
	var mu sync.Mutex
	var got []string
	var at time.Time
	start := time.Now()
	resp, err := c.Run(context.Background(), Request{Prompt: "go", Notice: func(line string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, line)
		at = time.Now()
	}})
	end := time.Now()
	if err != nil || resp.Text != "DONE" {
		t.Fatalf("Run: %q, %v", resp.Text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "retrying in 1s (attempt 1/5): connect ECONNREFUSED 127.0.0.1:443" {
		t.Fatalf("notices %q", got)
	}
	if end.Sub(at) < 500*time.Millisecond {
		t.Errorf("the notice came %s after the start, the call ended %s after: not as it came", at.Sub(start), end.Sub(start))
	}
}

func TestEventNotice(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1200,"error_status":529,"error":"overloaded_error"}`,
			"API retry 2/10 in 1.2s: 529 overloaded_error"},
		{`{"type":"system","subtype":"api_retry","attempt":1,"error":{"type":"api_error","message":"Connection error."}}`, "API retry 1: Connection error."},
		{`{"type":"error","message":"stream error: error sending request; retrying 1/5 in 211ms…"}`, "stream error: error sending request; retrying 1/5 in 211ms…"},
		{`{"type":"item.completed","item":{"id":"i","type":"error","message":"Reconnecting... 2/5"}}`, "Reconnecting... 2/5"},
		{`{"type":"system","subtype":"init","session_id":"s"}`, ""},
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"an error in the code"}]}}`, ""},
		{`not json, retrying`, ""},
	} {
		got, ok := eventNotice([]byte(c.line))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("eventNotice(%s) = %q, %v; want %q", c.line, got, ok, c.want)
		}
	}
}
