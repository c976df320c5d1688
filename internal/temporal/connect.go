package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/jlgcli/jlgcli/internal/config"
	"github.com/jlgcli/jlgcli/internal/store"
)

// DialTimeout bounds the connection to the server.
const DialTimeout = 5 * time.Second

// ErrNoServer is a Temporal server that cannot be reached.
var ErrNoServer = errors.New("no Temporal server")

// Connection is what a client needs to reach a Temporal server: its
// address and namespace and, for a secured server (Temporal Cloud, or one
// that requires TLS), TLS and an API key.
type Connection struct {
	Address, Namespace string
	// CA, Cert and Key are PEM files: the CA that signed the server's
	// certificate ("": the system's roots), and the client's certificate
	// and key for mutual TLS. ServerName is the name the server's
	// certificate must have ("": the address's host). Any of them, or an
	// API key, makes the connection TLS.
	CA, Cert, Key, ServerName string
	// APIKeyEnv names the environment variable APIKey was read from;
	// APIKey is sent with every call as a bearer token. It is never
	// recorded.
	APIKeyEnv, APIKey string
	// Bad is the error of a setting, given by its configuration key: it
	// names where the setting came from (config.Config.KeyError); nil: a
	// config.Error naming the key.
	Bad func(key, msg string) error
}

// ConnectionOf is the connection to the Temporal server of c's [temporal]
// table, its API key read with getenv from the variable it names.
func ConnectionOf(c *config.Config, getenv func(string) string) Connection {
	t := c.Temporal
	conn := Connection{Address: t.Address, Namespace: t.Namespace, CA: t.TLSCA, Cert: t.TLSCert, Key: t.TLSKey,
		ServerName: t.TLSServerName, APIKeyEnv: t.APIKeyEnv, Bad: func(key, msg string) error { return c.KeyError(key, msg) }}
	if t.APIKeyEnv != "" {
		conn.APIKey = getenv(t.APIKeyEnv)
	}
	return conn
}

// RunConnection is the connection to the server that run id was
// submitted to, as rec, its record, keeps it: the address and namespace,
// and each of the TLS files, the server name and the API key's variable
// unless c's files, environment or flags set it.
func RunConnection(rec *store.Temporal, id string, c *config.Config, getenv func(string) string) Connection {
	if rec == nil {
		rec = &store.Temporal{}
	}
	t := config.Temporal{Address: rec.Address, Namespace: rec.Namespace, TaskQueue: rec.Queue, TLSCA: rec.TLSCA, TLSCert: rec.TLSCert,
		TLSKey: rec.TLSKey, TLSServerName: rec.TLSServerName, APIKeyEnv: rec.APIKeyEnv}
	return ConnectionOf(c.OverTemporal(t, "run "+id), getenv)
}

// Recorded is what a run's record keeps of the server t and of how to
// connect to it: no secret (the API key's variable, never the key).
func Recorded(t config.Temporal) *store.Temporal {
	return &store.Temporal{Address: t.Address, Namespace: t.Namespace, Queue: t.TaskQueue, TLSCA: t.TLSCA, TLSCert: t.TLSCert,
		TLSKey: t.TLSKey, TLSServerName: t.TLSServerName, APIKeyEnv: t.APIKeyEnv}
}

// secure reports whether the connection is TLS.
func (c Connection) secure() bool {
	return c.CA != "" || c.Cert != "" || c.Key != "" || c.ServerName != "" || c.APIKeyEnv != "" || c.APIKey != ""
}

func (c Connection) bad(key, msg string) error {
	if c.Bad != nil {
		return c.Bad(key, msg)
	}
	return &config.Error{Source: "temporal", Key: key, Msg: msg}
}

// options are the Temporal SDK's client options of the connection: its TLS
// configuration made of the files, its API key as the SDK's credentials.
// A file that cannot be read or holds no certificate or key, a certificate
// without its key, an API key's variable that is empty, are errors of the
// setting (exit 64).
func (c Connection) options() (client.Options, error) {
	opts := client.Options{HostPort: c.Address, Namespace: c.Namespace}
	if c.APIKeyEnv != "" && c.APIKey == "" {
		return opts, c.bad("temporal.apiKeyEnv", fmt.Sprintf("the variable %s that should hold the Temporal API key is empty or not set", c.APIKeyEnv))
	}
	if !c.secure() {
		return opts, nil
	}
	cfg := &tls.Config{ServerName: c.ServerName, MinVersion: tls.VersionTLS12}
	if c.CA != "" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return opts, c.bad("temporal.tlsCa", fmt.Sprintf("the CA file cannot be read: %v", err))
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return opts, c.bad("temporal.tlsCa", fmt.Sprintf("%s holds no PEM certificate", c.CA))
		}
	}
	switch {
	case c.Cert != "" && c.Key == "":
		return opts, c.bad("temporal.tlsCert", fmt.Sprintf("%s has no key: give its key file too (temporal.tlsKey, --temporal-key)", c.Cert))
	case c.Key != "" && c.Cert == "":
		return opts, c.bad("temporal.tlsKey", fmt.Sprintf("%s has no certificate: give the certificate file too (temporal.tlsCert, --temporal-cert)", c.Key))
	case c.Cert != "":
		cert, err := os.ReadFile(c.Cert)
		if err != nil {
			return opts, c.bad("temporal.tlsCert", fmt.Sprintf("the client certificate file cannot be read: %v", err))
		}
		key, err := os.ReadFile(c.Key)
		if err != nil {
			return opts, c.bad("temporal.tlsKey", fmt.Sprintf("the client key file cannot be read: %v", err))
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return opts, c.bad("temporal.tlsCert", fmt.Sprintf("%s and %s are not a certificate and its key: %v", c.Cert, c.Key, err))
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	opts.ConnectionOptions.TLS = cfg
	if c.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	return opts, nil
}

// Dial connects to the Temporal server of conn, or says within DialTimeout
// that there is none there (ErrNoServer, with what TLS said when it
// failed).
func Dial(ctx context.Context, conn Connection, logger *slog.Logger) (client.Client, error) {
	address, namespace := conn.Address, conn.Namespace
	if address == "" {
		return nil, fmt.Errorf("%w: no address (--temporal HOST:PORT, or temporal.address in the configuration)", ErrNoServer)
	}
	if _, _, err := net.SplitHostPort(address); err != nil {
		return nil, fmt.Errorf("%w at %q: the address is not HOST:PORT", ErrNoServer, address)
	}
	if namespace == "" {
		conn.Namespace, namespace = "default", "default"
	}
	opts, err := conn.options()
	if err != nil {
		return nil, err
	}
	if logger != nil {
		opts.Logger = log.NewStructuredLogger(logger)
	}
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		msg := strings.TrimSpace(err.Error())
		if hint := conn.hint(msg); hint != "" {
			msg += "; " + hint
		} else if ctx.Err() != nil {
			msg = fmt.Sprintf("nothing answered within %s", DialTimeout)
		}
		return nil, fmt.Errorf("%w at %s (namespace %s): %s", ErrNoServer, address, namespace, msg)
	}
	return c, nil
}

// hint says what to check when msg, a failed dial's error, is TLS's, or a
// connection that the server cut as one that does not speak the same TLS
// does, or credentials that the server refused; "" otherwise.
func (c Connection) hint(msg string) string {
	const refused = "TLS: the server refused the client certificate: give one signed by a CA it trusts (temporal.tlsCert and tlsKey, --temporal-cert and --temporal-key)"
	const required = "TLS: the server may require a client certificate (temporal.tlsCert and tlsKey, --temporal-cert and --temporal-key)"
	cut := false
	for _, s := range []string{"server preface", "frame too large", "connection reset", "broken pipe", "EOF"} {
		cut = cut || strings.Contains(msg, s)
	}
	switch {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the server does not speak TLS: drop the TLS settings (temporal.tlsCa, tlsCert, tlsKey, tlsServerName, apiKeyEnv)"
	case strings.Contains(msg, "remote error: tls:") && c.Cert == "":
		return required
	case strings.Contains(msg, "remote error: tls:"):
		return refused
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:") || strings.Contains(msg, "handshake"):
		if c.CA == "" {
			return "TLS: the server's certificate could not be verified: give the CA that signed it (temporal.tlsCa, --temporal-ca), and its name if it is not the address's (temporal.tlsServerName)"
		}
		return fmt.Sprintf("TLS: the server's certificate could not be verified with the CA %s: is it the CA that signed it, and is its name the address's (else temporal.tlsServerName)?", c.CA)
	case cut && !c.secure():
		return "the server may require TLS: give its CA (temporal.tlsCa, --temporal-ca), a client certificate or an API key"
	case cut && c.Cert == "":
		return required
	case cut:
		return refused
	case strings.Contains(msg, "code = Unauthenticated") || strings.Contains(msg, "code = PermissionDenied"):
		if c.APIKeyEnv != "" {
			return fmt.Sprintf("the server refused the credentials: is the API key in %s (temporal.apiKeyEnv) one of this namespace's?", c.APIKeyEnv)
		}
		return "the server refused the credentials: it may want an API key (temporal.apiKeyEnv, --temporal-api-key-env) or a client certificate"
	}
	return ""
}
