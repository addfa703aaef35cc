package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad_PineconeControlPlaneReadsEveryKey(t *testing.T) {
	dir := t.TempDir()
	writeCAFile(t, dir)
	for _, f := range []string{"cp-cert.pem", "cp-key.pem"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600))
	}
	src := pineconeBase + `pinecone:
  listen: 0.0.0.0:5081
  control_plane:
    listen: 0.0.0.0:5082
    tls: {cert_file: cp-cert.pem, key_file: cp-key.pem}
    upstream: https://api.pinecone.example
    upstream_ca_file: pinecone-ca.pem
    advertise_host: http://lethe.internal:5081
  indexes:
    - {name: docs, host: "https://docs-abc123.svc.aped-1234.pinecone.io"}
`
	path := filepath.Join(dir, "lethe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	cfg, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, &PineconeControlPlane{
		Listen:         "0.0.0.0:5082",
		TLS:            ServerTLS{CertFile: filepath.Join(dir, "cp-cert.pem"), KeyFile: filepath.Join(dir, "cp-key.pem")},
		Upstream:       "https://api.pinecone.example",
		UpstreamCAFile: filepath.Join(dir, "pinecone-ca.pem"),
		AdvertiseHost:  "http://lethe.internal:5081",
	}, cfg.Pinecone.ControlPlane)
	assert.Equal(t, map[string]string{"docs": "http://lethe.internal:5081"}, cfg.Pinecone.AdvertisedHosts(cfg.Pinecone.Listen))
}

func TestParse_PineconeControlPlaneDefaults(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want map[string]string
	}{
		"cleartext listen": {"pinecone:\n  control_plane: {listen: '127.0.0.1:5082'}\n  indexes: [{name: a, host: 'http://h:1'}]\n",
			map[string]string{"a": "http://127.0.0.1:5081"}},
		"TLS listen": {"pinecone:\n  tls: {cert_file: testdata/cert.pem, key_file: testdata/key.pem}\n  control_plane: {listen: '127.0.0.1:5082'}\n  indexes: [{name: a, host: 'http://h:1'}]\n",
			map[string]string{"a": "127.0.0.1:5081"}},
		"several indexes": {"pinecone:\n  control_plane: {listen: '127.0.0.1:5082', advertise_host: 'http://lethe.internal:5081'}\n  indexes: [{name: a, host: 'http://h:1'}, {name: b, host: 'http://h:2'}]\n",
			map[string]string{"a": "http://a.lethe.internal:5081", "b": "http://b.lethe.internal:5081"}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("cfg.yaml", []byte(pineconeBase+tc.src))
			require.NoError(t, err)
			assert.Equal(t, DefaultPineconeControlPlane, cfg.Pinecone.ControlPlane.UpstreamURL())
			assert.Equal(t, tc.want, cfg.Pinecone.AdvertisedHosts(cfg.Pinecone.Listen))
		})
	}
	cfg, err := Parse("cfg.yaml", []byte(pineconeBase+"pinecone:\n  indexes: [{name: a, host: 'http://h:1'}]\n"))
	require.NoError(t, err)
	assert.Nil(t, cfg.Pinecone.ControlPlane, "no control_plane block, no listener")

	cfg, err = Parse("cfg.yaml", []byte(pineconeBase+"pinecone:\n  listen: 127.0.0.1:0\n  control_plane: {listen: '127.0.0.1:0'}\n  indexes: [{name: a, host: 'http://h:1'}]\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "http://127.0.0.1:40123"}, cfg.Pinecone.AdvertisedHosts("127.0.0.1:40123"), "the bound port, not 0")
}

func TestParse_PineconeControlPlaneErrorsNameTheFix(t *testing.T) {
	const ix = "  indexes: [{name: a, host: 'http://h:1'}]\n"
	for name, tc := range map[string]struct{ src, want string }{
		"bad listen": {"pinecone:\n  control_plane:\n    listen: nope\n" + ix,
			`cfg.yaml:4: pinecone.control_plane.listen: "nope" is not host:port`},
		"same port as data plane": {"pinecone:\n  control_plane: {listen: '127.0.0.1:5081'}\n" + ix,
			"give the control plane a port of its own"},
		"upstream not a URL": {"pinecone:\n  control_plane: {listen: ':5082', upstream: api.pinecone.io, advertise_host: 'http://p:5081'}\n" + ix,
			`pinecone.control_plane.upstream: "api.pinecone.io" is not an https:// or http:// URL`},
		"upstream with path": {"pinecone:\n  control_plane: {listen: ':5082', upstream: 'https://api.pinecone.io/v1', advertise_host: 'http://p:5081'}\n" + ix,
			"has a path or query"},
		"CA for http": {"pinecone:\n  control_plane: {listen: ':5082', upstream: 'http://localhost:5080', upstream_ca_file: /nonexistent.pem, advertise_host: 'http://p:5081'}\n" + ix,
			"is cleartext http://"},
		"half TLS": {"pinecone:\n  control_plane: {listen: ':5082', tls: {cert_file: c.pem}, advertise_host: 'http://p:5081'}\n" + ix,
			"pinecone.control_plane.tls: set both cert_file and key_file"},
		"wildcard listen without advertise_host": {"pinecone:\n  listen: 0.0.0.0:5081\n  control_plane: {listen: ':5082'}\n" + ix,
			`advertise_host is missing and pinecone.listen "0.0.0.0:5081" is no address a client can reach`},
		"no scheme without TLS": {"pinecone:\n  control_plane: {listen: ':5082', advertise_host: 'lethe.internal:5081'}\n" + ix,
			`write "http://lethe.internal:5081"`},
		"cleartext with TLS": {"pinecone:\n  tls: {cert_file: testdata/cert.pem, key_file: testdata/key.pem}\n  control_plane: {listen: ':5082', advertise_host: 'http://lethe.internal:5081'}\n" + ix,
			`is cleartext but pinecone.tls is set; write "lethe.internal:5081"`},
		"path in advertise_host": {"pinecone:\n  control_plane: {listen: ':5082', advertise_host: 'http://lethe.internal:5081/x'}\n" + ix,
			"is not host:port or http(s)://host:port"},
		"IP with several indexes": {"pinecone:\n  control_plane: {listen: ':5082', advertise_host: 'http://10.0.0.5:5081'}\n  indexes: [{name: a, host: 'http://h:1'}, {name: b, host: 'http://h:2'}]\n",
			"write a DNS name whose subdomains resolve to the proxy"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(pineconeBase+tc.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
