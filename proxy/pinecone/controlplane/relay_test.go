package controlplane

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The answers of a control plane that knows two indexes: docs, which the
// proxy is configured for, and other, which it is not.
const (
	docsModel = `{"name": "docs", "metric": "cosine", "dimension": 3, "host": "docs-abc123.svc.aped-1234.pinecone.io",` +
		` "private_host": "docs-abc123.svc.private.aped-1234.pinecone.io", "deletion_protection": "disabled",` +
		` "spec": {"serverless": {"cloud": "aws", "region": "us-east-1"}}, "status": {"ready": true, "state": "Ready"},` +
		` "tags": {"team": "a<b&c"}, "vector_type": "dense", "big": 12345678901234567890}`
	otherModel = `{"name": "other", "metric": "cosine", "host": "other-def456.svc.aped-1234.pinecone.io", "status": {"ready": true, "state": "Ready"}}`
	listAnswer = `{"indexes": [` + docsModel + `, ` + otherModel + `]}`
	advertised = "http://lethe.internal:5081"
	apiKey     = "pcsk_secret-key-123"
)

// fakeControlPlane answers GET /indexes and GET /indexes/{name} with the
// answers above, gzipped when asked, and records the last request.
type fakeControlPlane struct {
	last      *http.Request
	lastBody  []byte
	answer    func(w http.ResponseWriter, r *http.Request) // overrides the default
	forceGzip bool
}

func (f *fakeControlPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.last = r.Clone(r.Context())
	f.lastBody, _ = io.ReadAll(r.Body)
	if f.answer != nil {
		f.answer(w, r)
		return
	}
	var body string
	switch r.URL.Path {
	case "/indexes":
		body = listAnswer
	case "/indexes/docs":
		body = docsModel
	case "/indexes/other":
		body = otherModel
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"NOT_FOUND","message":"Resource missing not found"},"status":404}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if f.forceGzip || strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, body)
		_ = zw.Close()
		return
	}
	_, _ = io.WriteString(w, body)
}

// start runs a relay in front of upstream, configured for the index docs.
func start(t *testing.T, upstream http.Handler, logs io.Writer, tune func(*Config)) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	if logs == nil {
		logs = io.Discard
	}
	cfg := Config{Upstream: u, Hosts: map[string]string{"docs": advertised},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if tune != nil {
		tune(&cfg)
	}
	relay, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(relay.Close)
	srv := httptest.NewServer(relay)
	t.Cleanup(srv.Close)
	return srv
}

// get asks the relay as the Node SDK does: with its API key and an
// Accept-Encoding of its own (so Go's client does not decode for us).
func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Api-Key", apiKey)
	req.Header.Set("X-Pinecone-Api-Version", "2025-04")
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	require.NoError(t, d.Decode(&m), "%s", b)
	return m
}

func TestRelay_DescribeOfConfiguredIndexNamesTheProxy(t *testing.T) {
	upstream := &fakeControlPlane{}
	srv := start(t, upstream, nil, nil)
	resp, body := get(t, srv, "/indexes/docs")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	got, want := decode(t, body), decode(t, []byte(docsModel))
	assert.Equal(t, advertised, got["host"])
	assert.Equal(t, advertised, got["private_host"], "the 9.x SDK prefers private_host")
	delete(got, "host")
	delete(got, "private_host")
	delete(want, "host")
	delete(want, "private_host")
	assert.Equal(t, want, got, "every other member keeps its value, the big number its digits")
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Equal(t, apiKey, upstream.last.Header.Get("Api-Key"), "the application's key reaches the control plane")
	assert.Equal(t, "2025-04", upstream.last.Header.Get("X-Pinecone-Api-Version"))
	assert.Empty(t, upstream.last.Header.Get("X-Forwarded-For"))
}

func TestRelay_DescribeWithoutPrivateHostGainsNone(t *testing.T) {
	srv := start(t, &fakeControlPlane{answer: func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"name":"docs","host":"docs-abc123.svc.pinecone.io","private_host":null,"status":{"ready":true}}`)
	}}, nil, nil)
	_, body := get(t, srv, "/indexes/docs")
	got := decode(t, body)
	assert.Equal(t, advertised, got["host"])
	assert.Nil(t, got["private_host"])
	assert.Contains(t, got, "private_host", "null stays null")
}

func TestRelay_DescribeOfUnconfiguredIndexPassesByteForByte(t *testing.T) {
	srv := start(t, &fakeControlPlane{}, nil, nil)
	resp, body := get(t, srv, "/indexes/other")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"), "the client's own Accept-Encoding was forwarded")
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, otherModel, string(plain))
}

func TestRelay_ListRewritesConfiguredIndexesOnly(t *testing.T) {
	srv := start(t, &fakeControlPlane{}, nil, nil)
	resp, body := get(t, srv, "/indexes")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	indexes := decode(t, body)["indexes"].([]any)
	require.Len(t, indexes, 2)
	assert.Equal(t, advertised, indexes[0].(map[string]any)["host"])
	assert.Equal(t, advertised, indexes[0].(map[string]any)["private_host"])
	assert.Equal(t, decode(t, []byte(otherModel)), indexes[1], "the unconfigured index keeps its real host")
}

func TestRelay_ListWithoutConfiguredIndexPassesUnchanged(t *testing.T) {
	srv := start(t, &fakeControlPlane{answer: func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"indexes": [`+otherModel+`]}`)
	}}, nil, nil)
	_, body := get(t, srv, "/indexes")
	assert.Equal(t, `{"indexes": [`+otherModel+`]}`, string(body))
}

func TestRelay_GzipAnswerIsDecodedAndRewritten(t *testing.T) {
	// An upstream that gzips whatever it was asked: the rewritten answer
	// reaches the client decoded.
	srv := start(t, &fakeControlPlane{forceGzip: true}, nil, nil)
	resp, body := get(t, srv, "/indexes/docs")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Equal(t, advertised, decode(t, body)["host"])
}

func TestRelay_ChunkedAnswerIsRewritten(t *testing.T) {
	srv := start(t, &fakeControlPlane{answer: func(w http.ResponseWriter, r *http.Request) {
		half := len(listAnswer) / 2
		_, _ = io.WriteString(w, listAnswer[:half])
		w.(http.Flusher).Flush() // no Content-Length: chunked
		_, _ = io.WriteString(w, listAnswer[half:])
	}}, nil, nil)
	resp, body := get(t, srv, "/indexes")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, advertised, decode(t, body)["indexes"].([]any)[0].(map[string]any)["host"])
	assert.EqualValues(t, len(body), resp.ContentLength)
}

func TestRelay_AnswersItCannotRewriteAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, path, why string
		answer          func(w http.ResponseWriter, r *http.Request)
	}{
		{"oversized list", "/indexes", "larger than 512 bytes", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"indexes": [`+docsModel+`, `+otherModel+`, `+otherModel+`]}`)
		}},
		{"content coding not asked for", "/indexes/docs", `content coding "br"`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			_, _ = io.WriteString(w, "\x1b\x00")
		}},
		{"list not JSON", "/indexes", "not a JSON object", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `<html>maintenance</html>`)
		}},
		{"indexes not an array", "/indexes", `"indexes" is not an array`, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"indexes": {"docs": {}}}`)
		}},
		{"index without name", "/indexes", `no string "name"`, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"indexes": [{"host": "x.pinecone.io"}]}`)
		}},
		{"upgrade agreed", "/indexes/docs", "protocol upgrade", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", "websocket")
			w.WriteHeader(http.StatusSwitchingProtocols)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := start(t, &fakeControlPlane{answer: tc.answer}, &logs, func(c *Config) { c.MaxAnswerBytes = 512 })
			resp, body := get(t, srv, tc.path)
			assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
			var e struct {
				Error  struct{ Code, Message string }
				Status int
			}
			require.NoError(t, json.Unmarshal(body, &e), "%s", body)
			assert.Equal(t, "UNAVAILABLE", e.Error.Code)
			assert.Equal(t, http.StatusBadGateway, e.Status)
			assert.Contains(t, e.Error.Message, tc.why)
			assert.NotContains(t, string(body), "docs-abc123", "the real host never reaches the client")
			assert.NotContains(t, logs.String(), apiKey)
		})
	}
}

func TestRelay_EverythingElsePassesUntouched(t *testing.T) {
	upstream := &fakeControlPlane{answer: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"name":"new","host":"new-xyz.svc.pinecone.io"}`)
	}}
	srv := start(t, upstream, nil, func(c *Config) { c.Hosts["new"] = advertised })
	create := `{"name":"new","dimension":3,"metric":"cosine","spec":{"serverless":{"cloud":"aws","region":"us-east-1"}}}`
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/indexes?x=1", strings.NewReader(create))
	require.NoError(t, err)
	req.Header.Set("Api-Key", apiKey)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, `{"name":"new","host":"new-xyz.svc.pinecone.io"}`, string(body), "only GET list and describe are rewritten")
	assert.Equal(t, create, string(upstream.lastBody))
	assert.Equal(t, "/indexes", upstream.last.URL.Path)
	assert.Equal(t, "x=1", upstream.last.URL.RawQuery)

	notFound, body := get(t, start(t, &fakeControlPlane{}, nil, nil), "/indexes/missing")
	assert.Equal(t, http.StatusNotFound, notFound.StatusCode)
	assert.Contains(t, string(body), "NOT_FOUND")
}

func TestRelay_PassThroughAnswersStream(t *testing.T) {
	firstRead := make(chan struct{})
	srv := start(t, &fakeControlPlane{answer: func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"collections": [`)
		w.(http.Flusher).Flush()
		<-firstRead // the rest only once the client holds the start
		_, _ = io.WriteString(w, `]}`)
	}}, nil, nil)
	resp, err := srv.Client().Get(srv.URL + "/collections")
	require.NoError(t, err)
	defer resp.Body.Close()
	start := make([]byte, len(`{"collections": [`))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(resp.Body, start); read <- err }()
	select {
	case err := <-read:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		close(firstRead)
		t.Fatal("the start of a pass-through answer did not arrive before its end: the relay buffers it")
	}
	close(firstRead)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, `{"collections": []}`, string(start)+string(rest))
}

func TestRelay_UnreachableUpstreamAnswers502WithoutTheKey(t *testing.T) {
	var logs bytes.Buffer
	srv := start(t, &fakeControlPlane{}, &logs, func(c *Config) { c.Upstream = &url.URL{Scheme: "http", Host: "127.0.0.1:1"} })
	resp, body := get(t, srv, "/indexes/docs")
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Contains(t, string(body), "pinecone.control_plane.upstream")
	assert.Contains(t, logs.String(), "pinecone control plane unreachable")
	assert.NotContains(t, logs.String(), apiKey)
}

func TestRelay_WarnsWhenControlPlaneNamesAnotherHost(t *testing.T) {
	var logs bytes.Buffer
	srv := start(t, &fakeControlPlane{}, &logs, func(c *Config) {
		c.UpstreamHosts = map[string]string{"docs": "docs-old999.svc.aped-1234.pinecone.io"}
	})
	_, body := get(t, srv, "/indexes/docs")
	assert.Equal(t, advertised, decode(t, body)["host"])
	assert.Contains(t, logs.String(), "control_plane_host=docs-abc123.svc.aped-1234.pinecone.io")

	logs.Reset()
	srv = start(t, &fakeControlPlane{}, &logs, func(c *Config) {
		c.UpstreamHosts = map[string]string{"docs": "docs-abc123.svc.aped-1234.pinecone.io"}
	})
	get(t, srv, "/indexes/docs")
	assert.NotContains(t, logs.String(), "another host")
}

// The upstream is reached over TLS verified by Config.RootCAs; an
// upstream whose certificate they do not trust is answered 502.
func TestRelay_TLSUpstreamVerifiedByRootCAs(t *testing.T) {
	up := httptest.NewTLSServer(&fakeControlPlane{})
	t.Cleanup(up.Close)
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(up.Certificate())
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
		want  int
	}{{"trusted", pool, http.StatusOK}, {"untrusted", x509.NewCertPool(), http.StatusBadGateway}} {
		t.Run(tc.name, func(t *testing.T) {
			relay, err := New(Config{Upstream: u, RootCAs: tc.roots, Hosts: map[string]string{"docs": advertised}})
			require.NoError(t, err)
			t.Cleanup(relay.Close)
			srv := httptest.NewServer(relay)
			t.Cleanup(srv.Close)
			resp, body := get(t, srv, "/indexes/docs")
			require.Equal(t, tc.want, resp.StatusCode, "%s", body)
			if tc.want == http.StatusOK {
				assert.Equal(t, advertised, decode(t, body)["host"])
			} else {
				assert.Contains(t, string(body), "certificate")
			}
		})
	}
}

func TestNew_RefusesAnUpstreamWithAPath(t *testing.T) {
	_, err := New(Config{Upstream: &url.URL{Scheme: "https", Host: "api.pinecone.io", Path: "/v1"}})
	assert.ErrorContains(t, err, "has a path")
	_, err = New(Config{Upstream: &url.URL{Scheme: "ftp", Host: "api.pinecone.io"}})
	assert.ErrorContains(t, err, "not an https:// or http:// host")
}
