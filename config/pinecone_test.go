package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pineconeBase = "postgres: {upstream: 'db:5432'}\n"

// writeCAFile writes a self-signed certificate as PEM into dir.
func writeCAFile(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	path := filepath.Join(dir, "pinecone-ca.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return path
}

func TestParse_PineconeSectionIsOptional(t *testing.T) {
	cfg, err := Parse("cfg.yaml", []byte(pineconeBase))
	require.NoError(t, err)
	assert.Empty(t, cfg.Pinecone.Indexes)
	assert.Equal(t, "127.0.0.1:5081", cfg.Pinecone.Listen)
	assert.EqualValues(t, 4<<20, cfg.Pinecone.MaxRequestSize)
	assert.Equal(t, 60*time.Second, cfg.Pinecone.VerifyDeadline.D())
	assert.Equal(t, 60*time.Second, cfg.Pinecone.BodyTimeout.D())
}

func TestLoad_PineconeReadsEveryKey(t *testing.T) {
	dir := t.TempDir()
	writeCAFile(t, dir)
	src := pineconeBase + `pinecone:
  listen: 0.0.0.0:5443
  tls: {cert_file: cert.pem, key_file: key.pem}
  max_request_size: 8MiB
  max_buffered_size: 64MiB
  body_timeout: 20s
  verify_deadline: 45s
  scan_interval: 30m
  scan_rate: 2.5
  indexes:
    - name: docs
      host: https://docs-abc123.svc.aped-1234.pinecone.io
      upstream_ca_file: pinecone-ca.pem
      api_key_env: DOCS_PINECONE_KEY
      namespaces:
        - {namespace: "*", subjects: [user_id]}
        - {namespace: tenant-a, subjects: [owner, author]}
    - name: local
      host: http://127.0.0.1:5080
`
	for _, f := range []string{"cert.pem", "key.pem"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600))
	}
	path := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	cfg, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, Pinecone{
		Listen:          "0.0.0.0:5443",
		TLS:             ServerTLS{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")},
		MaxRequestSize:  8 << 20,
		MaxBufferedSize: 64 << 20,
		BodyTimeout:     Duration(20 * time.Second),
		VerifyDeadline:  Duration(45 * time.Second),
		ScanInterval:    Duration(30 * time.Minute),
		ScanRate:        2.5,
		Indexes: []PineconeIndex{
			{Name: "docs", Host: "https://docs-abc123.svc.aped-1234.pinecone.io", UpstreamCAFile: filepath.Join(dir, "pinecone-ca.pem"),
				Namespaces: []NamespaceRule{{Namespace: "*", Subjects: []string{"user_id"}}, {Namespace: "tenant-a", Subjects: []string{"owner", "author"}}},
				APIKeyEnv:  "DOCS_PINECONE_KEY"},
			{Name: "local", Host: "http://127.0.0.1:5080"},
		},
	}, cfg.Pinecone)
}

func TestParse_PineconeErrorsNameFileLineAndFix(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"no indexes":         {"pinecone: {listen: '127.0.0.1:5081'}\n", "cfg.yaml:2: pinecone: indexes is missing"},
		"bad listen":         {"pinecone:\n  listen: nope\n  indexes: [{name: a, host: 'http://h:1'}]\n", "cfg.yaml:3: pinecone.listen: \"nope\" is not host:port"},
		"unknown key":        {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', hots: x}]\n", "cfg.yaml:3: field hots not found"},
		"no name":            {"pinecone:\n  indexes:\n    - host: 'http://h:1'\n", "cfg.yaml:4: pinecone.indexes[0]: name is missing"},
		"bad name":           {"pinecone:\n  indexes: [{name: My_Index, host: 'http://h:1'}]\n", "is not an index name"},
		"twice":              {"pinecone:\n  indexes: [{name: a, host: 'http://h:1'}, {name: a, host: 'http://h:2'}]\n", `index "a" is configured twice`},
		"no host":            {"pinecone:\n  indexes: [{name: a}]\n", "host is missing"},
		"host not a URL":     {"pinecone:\n  indexes: [{name: a, host: 'docs.pinecone.io'}]\n", `host "docs.pinecone.io" is not an https:// or http:// URL`},
		"host with a path":   {"pinecone:\n  indexes: [{name: a, host: 'https://h/x'}]\n", "has a path"},
		"CA for http":        {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', upstream_ca_file: /nonexistent.pem}]\n", "is cleartext http://"},
		"CA unreadable":      {"pinecone:\n  indexes: [{name: a, host: 'https://h', upstream_ca_file: /nonexistent.pem}]\n", `upstream_ca_file: cannot read "/nonexistent.pem"`},
		"no subjects":        {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', namespaces: [{namespace: x}]}]\n", "namespaces[0]: subjects is missing"},
		"default twice":      {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', namespaces: [{namespace: '', subjects: [u]}, {namespace: __default__, subjects: [v]}]}]\n", "are the same namespace"},
		"bad subject":        {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', namespaces: [{namespace: '*', subjects: ['$eq']}]}]\n", `subject "$eq" is not a metadata field name`},
		"half TLS":           {"pinecone:\n  tls: {cert_file: c.pem}\n  indexes: [{name: a, host: 'http://h:1'}]\n", "pinecone.tls: set both cert_file and key_file"},
		"short verify":       {"pinecone:\n  verify_deadline: 10ms\n  indexes: [{name: a, host: 'http://h:1'}]\n", "cfg.yaml:3: pinecone.verify_deadline: 10ms is outside 1s..1m"},
		"short body timeout": {"pinecone:\n  body_timeout: 10ms\n  indexes: [{name: a, host: 'http://h:1'}]\n", "cfg.yaml:3: pinecone.body_timeout: 10ms is outside 1s..10m"},
		"long verify":        {"pinecone:\n  verify_deadline: 2m\n  indexes: [{name: a, host: 'http://h:1'}]\n", "pinecone.verify_deadline: 2m0s is outside 1s..1m"},
		"short scan":         {"pinecone:\n  scan_interval: 10ms\n  indexes: [{name: a, host: 'http://h:1'}]\n", "cfg.yaml:3: pinecone.scan_interval: 10ms is below 1s"},
		"zero scan rate":     {"pinecone:\n  scan_rate: 0\n  indexes: [{name: a, host: 'http://h:1'}]\n", "cfg.yaml:3: pinecone.scan_rate: 0 is outside (0, 1000]"},
		"key env":            {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', api_key_env: 'pcsk_123-abc'}]\n", `api_key_env "pcsk_123-abc" is not an environment variable name`},
		"tiny limit":         {"pinecone:\n  max_request_size: 1KiB\n  indexes: [{name: a, host: 'http://h:1'}]\n", "outside 64KiB..1GiB"},
		"buffer below one":   {"pinecone:\n  max_buffered_size: 1MiB\n  indexes: [{name: a, host: 'http://h:1'}]\n", "pinecone.max_buffered_size: 1048576 bytes must be larger than pinecone.max_request_size"},
		"unknown api":        {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', api: document}]\n", `cfg.yaml:3: pinecone.indexes[0]: api "document" is neither vectors nor documents`},
		"reserved field":     {"pinecone:\n  indexes: [{name: a, host: 'http://h:1', api: documents, namespaces: [{namespace: '*', subjects: [_id]}]}]\n", `subject "_id" starts with '_', a name a document index reserves`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(pineconeBase+tc.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A proxy for Pinecone alone needs no PostgreSQL upstream; rules for
// PostgreSQL tables still do.
func TestParse_PineconeAloneNeedsNoPostgresUpstream(t *testing.T) {
	cfg, err := Parse("cfg.yaml", []byte("pinecone:\n  indexes: [{name: a, host: 'http://h:1', namespaces: [{namespace: '*', subjects: [user_id]}]}]\n"))
	require.NoError(t, err)
	assert.Empty(t, cfg.Postgres.Upstream)

	_, err = Parse("cfg.yaml", []byte("pinecone:\n  indexes: [{name: a, host: 'http://h:1'}]\ncapture:\n  database: app\n  tables:\n    - {table: public.docs, id: id, subjects: [user_id]}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "capture.tables: rules for PostgreSQL tables need postgres.upstream")
}

func TestPineconeIndex_KeyEnvDefaultsToOneVariableForAllIndexes(t *testing.T) {
	assert.Equal(t, "LETHE_PINECONE_API_KEY", (&PineconeIndex{}).KeyEnv())
	assert.Equal(t, "DOCS_KEY", (&PineconeIndex{APIKeyEnv: "DOCS_KEY"}).KeyEnv())
}

// An index's api says which data plane forget, reconcile and sweep use:
// vectors unless it says documents.
func TestParse_PineconeIndexAPI(t *testing.T) {
	cfg, err := Parse("cfg.yaml", []byte("pinecone:\n  indexes:\n    - {name: a, host: 'http://h:1', api: documents, namespaces: [{namespace: '*', subjects: [user_id]}]}\n    - {name: b, host: 'http://h:2', namespaces: [{namespace: '*', subjects: [_owner]}]}\n"))
	require.NoError(t, err, "a vectors index may name a metadata field starting with '_'")
	assert.Equal(t, PineconeAPIDocuments, cfg.Pinecone.Indexes[0].DataPlane())
	assert.Equal(t, PineconeAPIVectors, cfg.Pinecone.Indexes[1].DataPlane())
}
