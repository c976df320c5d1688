package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["webhook"] = cmdWebhook }

// webhook [-fail N] FILE
//
// starts a webhook receiver for the rest of the script, sets $WEBHOOK to
// its URL, and appends the body of each POST it takes to FILE, one a line.
// With -fail, it answers the first N requests 503 (and keeps nothing of
// them).
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	fail := 0
	if len(args) == 3 && args[0] == "-fail" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		fail, args = n, args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: webhook [-fail N] FILE")
	}
	file := ts.MkAbs(args[0])
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail > 0 {
			fail--
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		f.Write(append(b, '\n'))
		io.WriteString(w, "ok")
	}))
	ts.Defer(srv.Close)
	ts.Setenv("WEBHOOK", srv.URL+"/services/T0/B0/secret")
}
