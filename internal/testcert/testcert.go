// Package testcert makes throwaway certificates for tests of TLS: a CA, a
// server certificate for 127.0.0.1 and localhost signed by it, a client
// certificate signed by it, and a client certificate signed by another CA,
// which a server of the first CA refuses. They are written as PEM files, as
// a user gives them to jlgcli.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Set is the certificates of one test, and their files.
type Set struct {
	// CA is the CA's certificate (PEM file); ServerCert and ServerKey the
	// server's certificate and key; ClientCert and ClientKey the client's;
	// StrangerCert and StrangerKey a client's signed by another CA.
	CA, ServerCert, ServerKey, ClientCert, ClientKey, StrangerCert, StrangerKey string

	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

// New makes a set of certificates in dir.
func New(dir string) (*Set, error) {
	s := &Set{}
	ca, caKey, err := authority("jlgcli test CA")
	if err != nil {
		return nil, err
	}
	other, otherKey, err := authority("another CA")
	if err != nil {
		return nil, err
	}
	s.pool = x509.NewCertPool()
	s.pool.AddCert(ca)
	s.CA = filepath.Join(dir, "ca.pem")
	if err := writePEM(s.CA, "CERTIFICATE", ca.Raw); err != nil {
		return nil, err
	}
	server := &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	client := &x509.Certificate{Subject: pkix.Name{CommonName: "jlgcli"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	stranger := &x509.Certificate{Subject: pkix.Name{CommonName: "stranger"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range []struct {
		tmpl, ca  *x509.Certificate
		caKey     *ecdsa.PrivateKey
		cert, key *string // where the files' paths go
		name      string
		keep      *tls.Certificate // where the certificate goes, for ServerTLS and ClientTLS
		serial    int64
	}{
		{server, ca, caKey, &s.ServerCert, &s.ServerKey, "server", &s.server, 2},
		{client, ca, caKey, &s.ClientCert, &s.ClientKey, "client", &s.client, 3},
		{stranger, other, otherKey, &s.StrangerCert, &s.StrangerKey, "stranger", nil, 4},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		c.tmpl.SerialNumber = big.NewInt(c.serial)
		c.tmpl.NotBefore, c.tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		c.tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, c.tmpl, c.ca, &key.PublicKey, c.caKey)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		*c.cert, *c.key = filepath.Join(dir, c.name+".pem"), filepath.Join(dir, c.name+"-key.pem")
		if err := writePEM(*c.cert, "CERTIFICATE", der); err != nil {
			return nil, err
		}
		if err := writePEM(*c.key, "PRIVATE KEY", keyDER); err != nil {
			return nil, err
		}
		if c.keep != nil {
			*c.keep = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
		}
	}
	return s, nil
}

// authority makes a self-signed CA.
func authority(name string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// ServerTLS is the TLS configuration of a server that shows the server
// certificate; mutual: it requires a client certificate signed by the CA.
func (s *Set) ServerTLS(mutual bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{s.server}, MinVersion: tls.VersionTLS12}
	if mutual {
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, s.pool
	}
	return c
}

// ClientTLS is the TLS configuration of a client that trusts the CA and
// shows the client certificate, for the name host.
func (s *Set) ClientTLS(host string) *tls.Config {
	return &tls.Config{RootCAs: s.pool, Certificates: []tls.Certificate{s.client}, ServerName: host, MinVersion: tls.VersionTLS12}
}
