package local

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/jlgcli/jlgcli/internal/forge"
)

// A round's thread as its journal keeps it can still be answered on
// GitHub, which answers a thread in reply to its first comment: the reply
// names that comment (in_reply_to), and the journal keeps neither the
// thread's words nor its hunk.
func TestJournaledThreadCanBeAnsweredOnGitHub(t *testing.T) {
	var mu sync.Mutex
	var asked map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/api/v3/repos/octo/hello/pulls/7/comments" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
			return
		}
		mu.Lock()
		_ = json.Unmarshal(body, &asked)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id": 99, "body": "Addressed", "user": {"login": "jlgcli-bot"}}`)
	}))
	defer srv.Close()
	f, err := forge.Open(context.Background(), "git@ghe.example:octo/hello.git", forge.Settings{Kind: forge.GitHub, URL: srv.URL, TokenEnv: "T"},
		forge.Options{Getenv: func(k string) string { return map[string]string{"T": "tok"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	thread := forge.Thread{ID: "PRRT_1", Path: "a.go", Line: 3, DiffHunk: "@@ -1 +1 @@", Comments: []forge.Comment{
		{ID: 55, Author: "reviewer", Body: "rename this"}, {ID: 56, Author: "reviewer", Body: "and this"}}}
	kept := journaledThread(thread)
	if len(kept.Comments) != 1 || kept.Comments[0].Body != "" || kept.DiffHunk != "" {
		t.Errorf("the journal keeps %+v", kept)
	}
	if _, err := f.Reply(context.Background(), 7, kept, "Addressed in abc"); err != nil {
		t.Fatalf("reply on the journaled thread: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["in_reply_to"] != float64(55) || asked["body"] != "Addressed in abc" {
		t.Errorf("the reply asked %v, want in reply to comment 55", asked)
	}
}
