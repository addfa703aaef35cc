package adminclient

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNew_SaysWhichFlagOrVariableToFix(t *testing.T) {
	t.Setenv(EnvToken, "")
	_, err := New("ftp://example.com", "")
	require.EqualError(t, err, `--admin "ftp://example.com" is not an http:// or https:// URL`)
	_, err = New("http://127.0.0.1:7070", "")
	require.ErrorContains(t, err, "set LETHE_ADMIN_TOKEN or pass --token-file FILE")
	_, err = New("http://127.0.0.1:7070", filepath.Join(t.TempDir(), "absent"))
	require.ErrorContains(t, err, "reading --token-file")

	t.Setenv(EnvToken, " from-env \n")
	c, err := New("http://127.0.0.1:7070/", "")
	require.NoError(t, err)
	assert.Equal(t, "from-env", c.token)
	assert.Equal(t, "http://127.0.0.1:7070", c.base, "no trailing slash")

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	c, err = New("http://127.0.0.1:7070", file)
	require.NoError(t, err)
	assert.Equal(t, "from-file", c.token, "the file wins over the environment")
}

func TestCall_SendsTheTokenAndReturnsTheServersError(t *testing.T) {
	var gotAuth, gotType, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotType, gotPath = r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.URL.EscapedPath()
		switch r.URL.Path {
		case "/v1/forget":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"a forget of this subject is running","request_id":"abc"}`))
		case "/v1/forget/preview":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>" + strings.Repeat("x", 300)))
		default:
			w.Write([]byte(`{"state":"done"}`))
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL, writeToken(t, "secret"))
	require.NoError(t, err)
	ctx := context.Background()

	body, err := c.Status(ctx, "a/b")
	require.NoError(t, err)
	assert.JSONEq(t, `{"state":"done"}`, string(body))
	assert.Equal(t, "Bearer secret", gotAuth)
	assert.Empty(t, gotType, "a GET sends no body")
	assert.Equal(t, "/v1/forget/a%2Fb", gotPath, "the id is one path segment")

	_, err = c.Confirm(ctx, "someone", "tok", false)
	var apiErr *APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusConflict, apiErr.Status)
	assert.Equal(t, "a forget of this subject is running (HTTP 409); existing request: abc", err.Error())
	assert.Equal(t, "application/json", gotType)

	_, err = c.Preview(ctx, "someone")
	require.ErrorAs(t, err, &apiErr)
	assert.Contains(t, err.Error(), `the admin API answered "<html>xxx`)
	assert.Contains(t, err.Error(), "…\" (HTTP 502)", "a long answer is cut")

	srv.Close()
	_, err = c.Status(ctx, "x")
	require.ErrorContains(t, err, "cannot reach the admin API at "+srv.URL)
}

func writeToken(t *testing.T, token string) string {
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(token), 0o600))
	return file
}

func TestSubjectLine_CutsOneLineEndingOnly(t *testing.T) {
	for in, want := range map[string]string{
		"alice\n":      "alice",
		"alice\r\n":    "alice",
		" alice \n":    " alice ",
		"alice":        "alice",
		"alice\nbob\n": "alice",
		"alice\n\n":    "alice",
		"":             "",
		"alice\r\r\n":  "alice\r",
	} {
		got, err := SubjectLine(strings.NewReader(in))
		require.NoError(t, err)
		assert.Equal(t, want, got, "%q", in)
	}
}

func TestReadSubject_RefusesWithoutQuotingTheSubject(t *testing.T) {
	_, err := ReadSubject(strings.NewReader("\n"))
	require.ErrorContains(t, err, "give the subject on stdin")
	_, err = ReadSubject(strings.NewReader("secret\x01person\n"))
	require.ErrorContains(t, err, "control character")
	assert.NotContains(t, err.Error(), "secret")
	got, err := ReadSubject(strings.NewReader("alice@example.com\n"))
	require.NoError(t, err)
	assert.Equal(t, "alice@example.com", got)
}

func TestPrintAnswer_IndentsAndSaysTheNextStep(t *testing.T) {
	var out, errOut bytes.Buffer
	PrintAnswer("preview", []byte(`{"confirm_token":"t","nothing_found":true,"warning":"0 records; 2 near misses"}`), &out, &errOut)
	assert.Contains(t, out.String(), "\n  \"confirm_token\": \"t\"")
	assert.Contains(t, errOut.String(), "WARNING: 0 records; 2 near misses\n")
	assert.Contains(t, errOut.String(), "--nothing-found")

	out.Reset()
	errOut.Reset()
	PrintAnswer("preview", []byte(`{"confirm_token":"t"}`), &out, &errOut)
	assert.Contains(t, errOut.String(), "To go ahead, run `lethe-proxy forget confirm --token CONFIRM_TOKEN`")

	out.Reset()
	errOut.Reset()
	PrintAnswer("status", []byte("not json"), &out, &errOut)
	assert.Equal(t, "not json", out.String(), "what is not JSON is printed as it came")
	assert.Empty(t, errOut.String())
}

// Each forget subcommand reaches its endpoint with what it takes; an
// unknown one reaches none.
func TestDo_EachForgetSubcommandReachesItsEndpoint(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.EscapedPath())
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	t.Setenv(EnvToken, "t")
	c, err := New(srv.URL, "")
	require.NoError(t, err)
	f := Forget{ID: "r/1", Subject: "alice", ConfirmToken: "tok"}
	for _, sub := range []string{"preview", "confirm", "lift", "reverify", "status", "certificate"} {
		_, err := c.Do(context.Background(), sub, f)
		require.NoError(t, err, sub)
	}
	assert.Equal(t, []string{"POST /v1/forget/preview", "POST /v1/forget", "POST /v1/tombstones/lift",
		"POST /v1/forget/r%2F1/reverify", "GET /v1/forget/r%2F1", "GET /v1/forget/r%2F1/certificate"}, got)
	_, err = c.Do(context.Background(), "erase", f)
	assert.ErrorContains(t, err, `unknown forget subcommand "erase"`)
	assert.Len(t, got, 6)
	assert.True(t, TakesSubject("reverify"))
	assert.False(t, TakesSubject("status"))
}

func TestWhoami_ReturnsTheTokensHolder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/v1/whoami", r.URL.Path)
		require.Equal(t, "Bearer agent-token", r.Header.Get("Authorization"))
		w.Write([]byte(`{"name":"agent-1","role":"auditor"}`))
	}))
	defer srv.Close()
	_, err := NewWithToken(srv.URL, " ")
	require.Error(t, err, "an empty token is refused")
	c, err := NewWithToken(srv.URL, "agent-token")
	require.NoError(t, err)
	who, err := c.Whoami(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "agent-1", who.Name)
	assert.Equal(t, "auditor", string(who.Role))
}

// log verify's keys file: one that cannot be read or parsed stops it
// before the server is asked, naming the file.
func TestVerifyLogFiles_KeysFileProblemsNameTheFile(t *testing.T) {
	asked := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked = true }))
	defer srv.Close()
	t.Setenv(EnvToken, "t")
	c, err := New(srv.URL, "")
	require.NoError(t, err)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	err = c.VerifyLogFiles(context.Background(), missing, "", "", &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorContains(t, err, missing)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{}"), 0o600))
	err = c.VerifyLogFiles(context.Background(), bad, "", "", &bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), bad+": "), err.Error())
	assert.False(t, asked)
}
