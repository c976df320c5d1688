package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/rpc/encryption"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jlgcli/jlgcli/internal/engine"
	"github.com/jlgcli/jlgcli/internal/exit"
	"github.com/jlgcli/jlgcli/internal/taskengine"
	"github.com/jlgcli/jlgcli/internal/testcert"
)

// apiKey is the API key of the secured server, in the variable
// JLGCLI_E2E_API_KEY of the commands.
const apiKey = "e2e-api-key-5f3a9c"

// securedWorld is a world whose server's frontend speaks TLS only and
// requires a client certificate signed by its CA (mutual TLS), and refuses
// a call that carries an API key other than apiKey. The server checks no
// key by itself without an authorizer: its keys counts the calls that
// carried the right one. Calls without a key pass: the server's own
// clients make some.
func securedWorld(t *testing.T) (*world, *testcert.Set, *atomic.Int64) {
	certs, err := testcert.New(t.TempDir())
	must(t, err)
	keys := &atomic.Int64{}
	checkKey := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		for _, a := range md.Get("authorization") {
			if a != "Bearer "+apiKey {
				return nil, status.Error(codes.Unauthenticated, "this API key is refused")
			}
			keys.Add(1)
		}
		return next(ctx, req)
	}
	tlsOf := &encryption.FixedTLSConfigProvider{FrontendServerConfig: certs.ServerTLS(true), FrontendClientConfig: certs.ClientTLS("127.0.0.1")}
	w := newWorldOn(t, []temporaltest.TestServerOption{
		temporaltest.WithBaseServerOptions(temporal.WithTLSConfigFactory(tlsOf), temporal.WithChainedFrontendGrpcInterceptors(checkKey)),
		temporaltest.WithBaseClientOptions(client.Options{ConnectionOptions: client.ConnectionOptions{TLS: certs.ClientTLS("127.0.0.1")}}),
	}, "JLGCLI_E2E_API_KEY="+apiKey, "JLGCLI_E2E_EMPTY=")
	return w, certs, keys
}

// TestTLSTaskOnWorkers: against a server with mutual TLS, a worker and a
// task given the CA, the client certificate and key and the API key's
// variable run the task to done, the key sent with the calls, and a batch
// too; a detached
// task's record keeps those settings (never the key), so that show and
// resume reach the server with no flag, and their flags override it.
// Without the CA, with another CA's certificate, with a wrong API key, the
// server cannot be reached (exit 68) and the error says what TLS said; an
// unreadable file or an empty key variable is refused (exit 64) naming the
// setting, before anything is dialled.
func TestTLSTaskOnWorkers(t *testing.T) {
	w, certs, keys := securedWorld(t)
	secured := []string{"--temporal-ca", certs.CA, "--temporal-cert", certs.ClientCert, "--temporal-key", certs.ClientKey,
		"--temporal-api-key-env", "JLGCLI_E2E_API_KEY"}
	w.worker("w1", secured...)

	stdout, stderr, code := w.run(w.submit(append(secured, "--json", "Fix the answer")...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res taskengine.Result
	must(t, json.Unmarshal([]byte(stdout), &res))
	if res.Status != engine.StatusDone {
		t.Fatalf("result: %s %s", res.Status, res.Details)
	}
	if got := w.git("", "--git-dir", w.remote, "show", res.Git.Branch+":answer.txt"); got != "right" {
		t.Errorf("the task branch has answer.txt %q", got)
	}
	if keys.Load() == 0 {
		t.Error("no call carried the API key")
	}
	// A batch, the same way.
	sheets := w.sheets("", map[string]string{"fix": "# Fix the answer\n"})
	stdout, stderr, code = w.run(w.batch(sheets, append(secured, "--check", "grep -q right answer.txt", "--json")...)...)
	var sum batchResult
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil || sum.Status != "done" {
		t.Errorf("batch: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Detached: show, then resume, with the record's settings.
	stdout, stderr, code = w.run(w.submit(append(secured, "--detach", "Fix the answer")...)...)
	if code != 0 {
		t.Fatalf("detach: exit %d\n%s\n%s", code, stdout, stderr)
	}
	id := strings.TrimSpace(stdout)
	stranger := []string{"--temporal-cert", certs.StrangerCert, "--temporal-key", certs.StrangerKey}
	if _, stderr, code := w.run(append([]string{"show", id}, stranger...)...); code != exit.Unreachable || !strings.Contains(stderr, "client certificate") {
		t.Errorf("show with another CA's certificate: exit %d, want %d\n%s", code, exit.Unreachable, stderr)
	}
	if out, stderr, code := w.run("show", id); code != 0 || !strings.Contains(out, id) {
		t.Errorf("show with the record's settings: exit %d\n%s\n%s", code, out, stderr)
	}
	stdout, stderr, code = w.run("resume", "--json", id)
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res.Status != engine.StatusDone {
		t.Errorf("resume with the record's settings: exit %d\n%s\n%s", code, stdout, stderr)
	}
	meta, err := os.ReadFile(filepath.Join(w.dir, "state", "jlgcli", "runs", id, "meta.json"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(w.dir, "state", "jlgcli", "*", id, "meta.json"))
		if len(matches) != 1 {
			t.Fatalf("no record of %s: %v", id, err)
		}
		meta, err = os.ReadFile(matches[0])
		must(t, err)
	}
	for _, want := range []string{`"tlsCa": "` + certs.CA, `"tlsCert": "` + certs.ClientCert, `"apiKeyEnv": "JLGCLI_E2E_API_KEY"`} {
		if !strings.Contains(string(meta), want) {
			t.Errorf("the record does not keep %s:\n%s", want, meta)
		}
	}
	must(t, filepath.WalkDir(filepath.Join(w.dir, "state"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), apiKey) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	}))

	for _, c := range []struct {
		name  string
		flags []string
		code  int
		want  []string
	}{
		{"without the CA", []string{"--temporal-cert", certs.ClientCert, "--temporal-key", certs.ClientKey},
			exit.Unreachable, []string{"no Temporal server at " + w.addr, "x509", "give the CA that signed it", "--temporal-ca"}},
		{"without TLS", nil, exit.Unreachable, []string{"no Temporal server at " + w.addr, "may require TLS"}},
		{"another CA's certificate", []string{"--temporal-ca", certs.CA, "--temporal-cert", certs.StrangerCert, "--temporal-key", certs.StrangerKey},
			exit.Unreachable, []string{"no Temporal server at " + w.addr, "TLS", "client certificate"}},
		{"no client certificate", []string{"--temporal-ca", certs.CA},
			exit.Unreachable, []string{"no Temporal server at " + w.addr, "TLS", "client certificate"}},
		{"a wrong API key", append(secured[:6:6], "--temporal-api-key-env", "JLGCLI_E2E_CALLS"),
			exit.Unreachable, []string{"no Temporal server at " + w.addr, "this API key is refused", "is the API key in JLGCLI_E2E_CALLS (temporal.apiKeyEnv) one of this namespace's?"}},
		{"an empty API key variable", append(secured[:6:6], "--temporal-api-key-env", "JLGCLI_E2E_EMPTY"),
			exit.Usage, []string{"command line: --temporal-api-key-env: the variable JLGCLI_E2E_EMPTY that should hold the Temporal API key is empty or not set"}},
		{"a CA file that is not there", []string{"--temporal-ca", filepath.Join(w.dir, "nowhere.pem")},
			exit.Usage, []string{"command line: --temporal-ca: the CA file cannot be read", filepath.Join(w.dir, "nowhere.pem")}},
	} {
		_, stderr, code := w.run(w.submit(append(c.flags, "Fix the answer")...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.name, code, c.code, stderr)
		}
		for _, want := range c.want {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr does not say %q:\n%s", c.name, want, stderr)
			}
		}
		if strings.Contains(stderr, apiKey) {
			t.Errorf("%s: stderr shows the API key:\n%s", c.name, stderr)
		}
	}
}
