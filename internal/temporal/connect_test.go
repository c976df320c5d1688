package temporal

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/store"
	"github.com/jlgcli/jlgcli/internal/testcert"
)

// A setting that cannot be used is a configuration error naming the
// setting, where it came from and the file, before anything is dialled.
func TestConnectionErrors(t *testing.T) {
	dir := t.TempDir()
	certs, err := testcert.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	flags := func(args ...string) *config.Layer {
		l := &config.Layer{Name: "flag"}
		for i := 0; i < len(args); i += 2 {
			for _, k := range config.Table() {
				if k.Flag == args[i] {
					if err := k.Parse(l, args[i+1]); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return l
	}
	getenv := func(name string) string { return map[string]string{"KEY": "s3cret"}[name] }
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"temporal-ca", missing}, []string{"command line: --temporal-ca: the CA file cannot be read", missing}},
		{[]string{"temporal-ca", junk}, []string{"--temporal-ca:", junk + " holds no PEM certificate"}},
		{[]string{"temporal-cert", certs.ClientCert}, []string{"--temporal-cert:", certs.ClientCert + " has no key"}},
		{[]string{"temporal-key", certs.ClientKey}, []string{"--temporal-key:", certs.ClientKey + " has no certificate"}},
		{[]string{"temporal-cert", missing, "temporal-key", certs.ClientKey}, []string{"--temporal-cert: the client certificate file cannot be read", missing}},
		{[]string{"temporal-cert", certs.ClientCert, "temporal-key", missing}, []string{"--temporal-key: the client key file cannot be read", missing}},
		{[]string{"temporal-cert", certs.ClientCert, "temporal-key", certs.ServerKey}, []string{"--temporal-cert:", "are not a certificate and its key"}},
		{[]string{"temporal-api-key-env", "NO_SUCH_VARIABLE"}, []string{"--temporal-api-key-env: the variable NO_SUCH_VARIABLE that should hold the Temporal API key is empty or not set"}},
	} {
		cfg, err := config.Resolve(flags(append([]string{"temporal", "127.0.0.1:1"}, c.args...)...))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Dial(context.Background(), ConnectionOf(cfg, getenv), nil)
		var cerr *config.Error
		if !errors.As(err, &cerr) {
			t.Errorf("%v: %v, want a configuration error", c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", c.args, err, w)
			}
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: the error shows the key: %v", c.args, err)
		}
	}
	// A setting of a file names the file; one a run's record kept names
	// the run.
	file := filepath.Join(dir, "jlgcli.toml")
	if err := os.WriteFile(file, []byte("[temporal]\ntlsCa = \"missing.pem\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := config.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Resolve(l, flags("temporal", "127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(context.Background(), ConnectionOf(cfg, getenv), nil); err == nil || !strings.Contains(err.Error(), file+": temporal.tlsCa: the CA file cannot be read: open "+missing) {
		t.Errorf("a CA of a file: %v", err)
	}
	cfg, err = config.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	rec := &store.Temporal{Address: "127.0.0.1:1", Namespace: "ns", TLSCA: missing}
	if _, err := Dial(context.Background(), RunConnection(rec, "20261125-x", cfg, getenv), nil); err == nil || !strings.Contains(err.Error(), "run 20261125-x: temporal.tlsCa: the CA file cannot be read") {
		t.Errorf("a CA of a run's record: %v", err)
	}
}

// A run's record keeps how it was submitted, no secret; what the
// configuration or flags set overrides it, setting by setting.
func TestRunConnection(t *testing.T) {
	env, err := config.EnvLayer(func(name string) string {
		return map[string]string{"JLGCLI_TEMPORAL_SERVER_NAME": "temporal.internal"}[name]
	})
	if err != nil {
		t.Fatal(err)
	}
	ca := "/etc/new-ca.pem"
	cfg, err := config.Resolve(env, &config.Layer{Name: "flag", Temporal: &config.TemporalLayer{TLSCA: &ca}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Temporal.Address = "elsewhere:7233" // the configuration's server is not the run's
	rec := Recorded(config.Temporal{Address: "a:7233", Namespace: "ns", TaskQueue: "q", TLSCA: "/old-ca.pem", TLSCert: "/c.pem", TLSKey: "/k.pem",
		TLSServerName: "old", APIKeyEnv: "KEY"})
	got := RunConnection(rec, "r1", cfg, func(name string) string { return map[string]string{"KEY": "s3cret"}[name] })
	want := Connection{Address: "a:7233", Namespace: "ns", CA: ca, Cert: "/c.pem", Key: "/k.pem", ServerName: "temporal.internal", APIKeyEnv: "KEY", APIKey: "s3cret"}
	got.Bad = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("connection\n got %+v\nwant %+v", got, want)
	}
}

// server is a gRPC server with TLS that answers every call "unknown
// method" (the SDK then dials on) and keeps the authorization header of
// each call.
type server struct {
	addr string
	mu   sync.Mutex
	auth []string
}

func newServer(t *testing.T, certs *testcert.Set, mutual bool) *server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: l.Addr().String()}
	g := grpc.NewServer(grpc.Creds(credentials.NewTLS(certs.ServerTLS(mutual))),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			md, _ := metadata.FromIncomingContext(stream.Context())
			s.mu.Lock()
			s.auth = append(s.auth, md.Get("authorization")...)
			s.mu.Unlock()
			return status.Error(codes.Unimplemented, "unknown method")
		}))
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s
}

// Dial speaks TLS with the CA given, shows the client certificate to a
// server that requires one, and sends the API key as a bearer token; a
// server whose certificate the CA did not sign, or that refuses the client
// certificate, cannot be reached (ErrNoServer), and the error says what
// TLS said and what to check.
func TestDialTLS(t *testing.T) {
	dir := t.TempDir()
	certs, err := testcert.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plain := newServer(t, certs, false)
	c, err := Dial(ctx, Connection{Address: plain.addr, CA: certs.CA, APIKeyEnv: "KEY", APIKey: "s3cret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	plain.mu.Lock()
	if len(plain.auth) == 0 || plain.auth[0] != "Bearer s3cret" {
		t.Errorf("authorization headers %q, want the API key as a bearer token", plain.auth)
	}
	plain.mu.Unlock()

	_, err = Dial(ctx, Connection{Address: plain.addr}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "may require TLS") {
		t.Errorf("plain text to a TLS server: %v", err)
	}
	_, err = Dial(ctx, Connection{Address: plain.addr, ServerName: "localhost"}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "give the CA that signed it (temporal.tlsCa, --temporal-ca)") {
		t.Errorf("without the CA: %v", err)
	}

	mutual := newServer(t, certs, true)
	c, err = Dial(ctx, Connection{Address: mutual.addr, CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}, nil)
	if err != nil {
		t.Fatalf("mutual TLS: %v", err)
	}
	c.Close()
	_, err = Dial(ctx, Connection{Address: mutual.addr, CA: certs.CA}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "client certificate") {
		t.Errorf("no client certificate: %v", err)
	}
	_, err = Dial(ctx, Connection{Address: mutual.addr, CA: certs.CA, Cert: certs.StrangerCert, Key: certs.StrangerKey}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "the server refused the client certificate") {
		t.Errorf("a client certificate of another CA: %v", err)
	}
	// A client of TLS to a server without.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	go func() { _ = g.Serve(l) }()
	defer g.Stop()
	_, err = Dial(ctx, Connection{Address: l.Addr().String(), CA: certs.CA}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Errorf("TLS to a plain server: %v", err)
	}
}
