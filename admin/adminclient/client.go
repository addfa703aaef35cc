package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/admin"
)

// Environment variables a client is configured by.
const (
	EnvURL   = "LETHE_ADMIN_URL"
	EnvToken = "LETHE_ADMIN_TOKEN"
)

// DefaultURL is the admin API where the proxy serves it unless told
// otherwise.
const DefaultURL = "http://" + admin.DefaultAddr

// Client calls the admin API with a bearer token.
type Client struct {
	base   string // scheme://host[:port], no trailing slash
	token  string
	client *http.Client
}

// New is a client of the API at adminURL (an http:// or https:// URL)
// with the token held in tokenFile or, when tokenFile is empty, in
// $LETHE_ADMIN_TOKEN. Its errors name the flag or variable to fix.
func New(adminURL, tokenFile string) (*Client, error) {
	if err := checkURL(adminURL); err != nil {
		return nil, err
	}
	token := os.Getenv(EnvToken)
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading --token-file: %w", err)
		}
		token = string(b)
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, errors.New("no admin API token: set LETHE_ADMIN_TOKEN or pass --token-file FILE (an operator creates tokens with `lethe-proxy admin-token`)")
	}
	return NewWithToken(adminURL, token)
}

// NewWithToken is a client of the API at adminURL that presents token, for
// a server that passes on its own callers' tokens (lethe-proxy mcp over
// HTTP).
func NewWithToken(adminURL, token string) (*Client, error) {
	if err := checkURL(adminURL); err != nil {
		return nil, err
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, errors.New("no admin API token given")
	}
	return &Client{base: strings.TrimRight(adminURL, "/"), token: token, client: &http.Client{Timeout: time.Minute}}, nil
}

func checkURL(adminURL string) error {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--admin %q is not an http:// or https:// URL", adminURL)
	}
	return nil
}

// APIError is an error answer of the admin API.
type APIError struct {
	Status int
	Body   admin.ErrorBody
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s (HTTP %d)", e.Body.Error, e.Status)
	if e.Body.RequestID != "" {
		msg += "; existing request: " + e.Body.RequestID
	}
	return msg
}

// maxAnswer bounds what is read of an answer: certificates are the
// largest, at most 1 MiB.
const maxAnswer = 8 << 20

// call sends in (JSON, if not nil) and returns the body of a 2xx answer;
// any other answer is an *APIError carrying the server's message.
func (c *Client) call(ctx context.Context, method, path string, in any) ([]byte, error) {
	if in == nil {
		return c.send(ctx, method, path, nil)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return c.send(ctx, method, path, b)
}

// send is call with a body sent byte for byte (JSON when not nil).
func (c *Client) send(ctx context.Context, method, path string, in []byte) ([]byte, error) {
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the admin API at %s: %w (is the proxy running with the admin API on? set --admin or LETHE_ADMIN_URL)", c.base, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("reading the admin API's answer: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return out, nil
	}
	e := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(out, &e.Body) != nil || e.Body.Error == "" {
		e.Body.Error = fmt.Sprintf("the admin API answered %q", excerpt(string(out), 200))
	}
	return nil, e
}

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
