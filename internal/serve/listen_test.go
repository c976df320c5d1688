package serve

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jlgcli/jlgcli/internal/exit"
)

// An address already taken is a usage error; a free one is served until
// the context ends, after the lines that say where and ask for the token.
func TestListenAndServe(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	src := &Runtime{Root: t.TempDir()}
	err = ListenAndServe(context.Background(), taken.Addr().String(), src, Options{}, func(string) {})
	if !exit.IsUsage(err) || !strings.HasPrefix(err.Error(), "--addr: ") {
		t.Errorf("ListenAndServe on a taken address: %v, want a usage error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	notices := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, "127.0.0.1:0", src, Options{Token: "s3cret"}, func(s string) { notices <- s })
	}()
	for _, want := range []string{"serving the runs of " + src.Root + " on http://127.0.0.1:", "every request needs the token"} {
		select {
		case got := <-notices:
			if !strings.HasPrefix(got, want) {
				t.Errorf("notice %q, want it to start with %q", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no notice %q", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe after its context ended: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ListenAndServe did not end with its context")
	}
}
