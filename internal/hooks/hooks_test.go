package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCommandHookGetsTheEventOnStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "got.json")
	d := &Dispatcher{Hooks: []Hook{
		{On: []string{RunEnded}, Command: []string{"sh", "-c", "cat > " + out}},
		{On: []string{RunStarted}, Command: []string{"sh", "-c", "echo wrong > " + out + ".started"}},
	}}
	<-d.Notify(Event{Event: RunEnded, RunID: "r1", Command: "loop", Status: "done", ExitCode: Int(0), Text: "loop r1 done"}, nil)
	var got map[string]any
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got["event"] != RunEnded || got["runId"] != "r1" || got["status"] != "done" || got["exitCode"] != 0.0 || got["text"] != "loop r1 done" {
		t.Errorf("the hook got %s", b)
	}
	if _, err := os.Stat(out + ".started"); err == nil {
		t.Error("a hook got an event it does not take")
	}
}

// A hook gets the events in the order they came, even when it is slower
// on the first: the second waits for it (a follower that finds two attempts
// at once tells them in order).
func TestHookGetsTheEventsInOrder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "events")
	script := `read -r l; case "$l" in *'"run.started"'*) sleep 0.5;; esac; echo "$l" | grep -o '"event":"[^"]*"' >> ` + out
	d := &Dispatcher{Hooks: []Hook{{On: []string{"*"}, Command: []string{"sh", "-c", script}}}}
	first := d.Notify(Event{Event: RunStarted, RunID: "r1"}, nil)
	second := d.Notify(Event{Event: RunEnded, RunID: "r1"}, nil)
	<-first
	<-second
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "\"event\":\"run.started\"\n\"event\":\"run.ended\"\n"; got != want {
		t.Errorf("the hook got %q, want %q", got, want)
	}
}

func TestFailingAndHangingHooksAreBoundedAndSaidOnce(t *testing.T) {
	var warnings []string
	var mu sync.Mutex
	d := &Dispatcher{Timeout: 500 * time.Millisecond, Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() },
		Hooks: []Hook{
			{On: []string{"*"}, Command: []string{"sh", "-c", "echo broken; exit 3"}},
			{On: []string{"*"}, Command: []string{"sh", "-c", "sleep 300"}},
		}}
	began := time.Now()
	var failed []Answer
	for range 2 {
		<-d.Notify(Event{Event: RunEnded, RunID: "r"}, func(a Answer) { mu.Lock(); failed = append(failed, a); mu.Unlock() })
	}
	if el := time.Since(began); el > 5*time.Second {
		t.Errorf("the hooks held the caller %s", el)
	}
	if len(failed) != 4 {
		t.Fatalf("failures %+v", failed)
	}
	if len(warnings) != 2 {
		t.Errorf("warnings %q, want one for each hook", warnings)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "exit status 3: broken") || !strings.Contains(joined, "no answer within 500ms") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestWebhookIsRetried(t *testing.T) {
	var calls atomic.Int32
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		body, _ = io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			t.Errorf("%s %s", r.Method, r.Header.Get("Content-Type"))
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	d := &Dispatcher{Backoff: 10 * time.Millisecond, Hooks: []Hook{{On: []string{RunEnded}, URL: srv.URL + "/secret/path"}}}
	answers := d.Send(context.Background(), Event{Event: RunEnded, RunID: "r2", Text: "done"})
	if len(answers) != 1 || answers[0].Err != nil || answers[0].Tries != 3 || answers[0].Reply != "200 OK: ok" {
		t.Fatalf("answers %+v", answers)
	}
	if strings.Contains(answers[0].Name, "secret") {
		t.Errorf("the name shows the URL's path: %s", answers[0].Name)
	}
	var got Event
	if err := json.Unmarshal(body, &got); err != nil || got.RunID != "r2" || got.Text != "done" {
		t.Errorf("the webhook got %s", body)
	}

	// A 4xx is not tried again.
	calls.Store(-100)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); http.Error(w, "no", http.StatusNotFound) })
	answers = d.Send(context.Background(), Event{Event: RunEnded})
	if len(answers) != 1 || answers[0].Err == nil || answers[0].Tries != 1 {
		t.Errorf("answers %+v", answers)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		h   Hook
		key string
	}{
		{Hook{On: []string{"*"}, Command: []string{"x"}}, ""},
		{Hook{On: []string{RunEnded}, URL: "https://example.com/x"}, ""},
		{Hook{Command: []string{"x"}}, "on"},
		{Hook{On: []string{"run.finished"}, Command: []string{"x"}}, "on"},
		{Hook{On: []string{"*"}}, "command"},
		{Hook{On: []string{"*"}, Command: []string{"x"}, URL: "https://e"}, "command"},
		{Hook{On: []string{"*"}, URL: "ftp://e"}, "url"},
	} {
		if key, msg := c.h.Check(); key != c.key {
			t.Errorf("%+v: %s %s, want key %q", c.h, key, msg, c.key)
		}
	}
}

func TestFailedCountsTheFailures(t *testing.T) {
	answers := []Answer{{Hook: 0}, {Hook: 1, Err: io.EOF}, {Hook: 2, Err: io.ErrUnexpectedEOF}}
	if got := Failed(answers); got != 2 {
		t.Errorf("Failed = %d, want 2", got)
	}
	if got := Failed(nil); got != 0 {
		t.Errorf("Failed(nil) = %d", got)
	}
}

// A hook shown to be trusted is shown whole: every argument, quoted for a
// shell; a webhook without its path.
func TestWhole(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		h    Hook
		want string
	}{
		{Hook{Command: []string{"notify-send", "jlgcli"}}, "command notify-send jlgcli"},
		{Hook{Command: []string{"sh", "-c", "echo 'hi' > $HOME/x; " + long}}, `command sh -c 'echo '\''hi'\'' > $HOME/x; ` + long + `'`},
		{Hook{Command: []string{"a", ""}}, "command a ''"},
		{Hook{URL: "https://hooks.example/T0/secret"}, "url https://hooks.example/…"},
	} {
		if got := tc.h.Whole(); got != tc.want {
			t.Errorf("Whole() = %s, want %s", got, tc.want)
		}
	}
}
