package pcstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"google.golang.org/grpc/metadata"
)

// documentsVersion is the API version whose document indexes the
// documents endpoints belong to (docs/pinecone.md, "Documents").
const documentsVersion = "2026-07"

// maxAnswerBytes bounds one answer read from a documents endpoint: a page
// of 10,000 documents' subject fields fits well within it.
const maxAnswerBytes = 64 << 20

// documentsAPI is a document index's data plane, API version 2026-07:
// every operation is POST /namespaces/{namespace}/documents/{op} with a
// JSON body. go-pinecone v5 has no documents API, so the calls are plain
// REST with the Api-Key header, over the TLS settings the vectors
// connection uses (RootCAs, TLS 1.2 at least). The key is sent in a
// header only, never logged or put in an error.
type documentsAPI struct {
	base   *url.URL // the index host, scheme and authority only
	key    string
	client *http.Client
}

func newDocumentsAPI(host *url.URL, key string, roots *x509.CertPool) *documentsAPI {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	transport.ForceAttemptHTTP2 = true
	return &documentsAPI{
		base:   &url.URL{Scheme: host.Scheme, Host: host.Host},
		key:    key,
		client: &http.Client{Transport: transport, Timeout: 2 * time.Minute},
	}
}

func (d *documentsAPI) close() { d.client.CloseIdleConnections() }

// errDocumentsAnswer marks an answer the documents API should not give: a
// 2xx whose body is not the operation's JSON.
var errDocumentsAnswer = errors.New("unexpected answer from the documents API")

// post sends POST /namespaces/{ns}/documents/{op} with body and decodes
// a 2xx answer into out. index names the index in errors.
func (d *documentsAPI) post(ctx context.Context, index, ns, op string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("pinecone: index %q: encoding a documents %s: %w", index, op, err)
	}
	target := *d.base
	target.Path = "/namespaces/" + ns + "/documents/" + op
	target.RawPath = "/namespaces/" + url.PathEscape(ns) + "/documents/" + op
	return d.do(ctx, index, ns, "documents "+op, http.MethodPost, &target, b, out)
}

// do sends one request and decodes a 2xx answer into out. Its LSN
// headers go to the lsnSeen of ctx (withLSN), as the gRPC interceptor
// does for the vectors API. ns ("" for none) and op name the call in
// errors.
func (d *documentsAPI) do(ctx context.Context, index, ns, op, method string, target *url.URL, body []byte, out any) error {
	var payload io.Reader
	if body != nil {
		payload = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), payload)
	if err != nil {
		return fmt.Errorf("pinecone: index %q: %s: %w", index, op, err)
	}
	req.Header.Set("Api-Key", d.key)
	req.Header.Set("X-Pinecone-Api-Version", documentsVersion)
	req.Header.Set("User-Agent", "lethe")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		// url.Error quotes the URL: the host and the namespace, no record data.
		return fmt.Errorf("pinecone: index %q: %s failed: %w; the request resumes later", index, op, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("pinecone: index %q: %s: reading the answer: %w", index, op, err)
	}
	if err := documentsStatus(index, ns, op, resp.StatusCode); err != nil {
		return err
	}
	if len(answer) > maxAnswerBytes {
		return fmt.Errorf("pinecone: index %q: %s answered more than %d bytes", index, op, maxAnswerBytes)
	}
	if seen, _ := ctx.Value(lsnKey{}).(*lsnSeen); seen != nil {
		seen.record(headerMD(resp.Header))
	}
	if err := json.Unmarshal(answer, out); err != nil {
		// The decoder's message may quote the body: keep only that it failed.
		return fmt.Errorf("pinecone: index %q: %s: %w (not the JSON API version %s answers: is the index's api setting right?)", index, op, errDocumentsAnswer, documentsVersion)
	}
	return nil
}

// documentsStatus turns a non-2xx status into an error with a next step.
// Pinecone's error bodies may quote the request (ids, fields), so they are
// never kept.
func documentsStatus(index, ns, op string, status int) error {
	if status >= 200 && status < 300 {
		return nil
	}
	where := fmt.Sprintf("pinecone: index %q", index)
	if ns != "" {
		where += fmt.Sprintf(" namespace %q", ns)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s: %s refused (HTTP %d): check the API key in the index's api_key_env variable", where, op, status)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return fmt.Errorf("%s: %s answered HTTP %d: the host serves no document index (API version %s) here; set the index's api to vectors if it is a vectors index", where, op, status, documentsVersion)
	case status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("%s: %s failed (HTTP %d); the request resumes later", where, op, status)
	}
	return fmt.Errorf("%s: %s failed with HTTP %d (message withheld: it may quote record data)", where, op, status)
}

// headerMD is h as gRPC metadata (lower-case keys), which lsnSeen reads.
func headerMD(h http.Header) metadata.MD {
	md := metadata.MD{}
	for _, name := range []string{headerRequestLSN, headerMaxIndexedLSN} {
		if v := h.Values(name); len(v) > 0 {
			md[name] = v
		}
	}
	return md
}
