package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubject_NeverAppearsInLogs(t *testing.T) {
	// The engine's error quotes the subject, as a store's error message
	// might; the server must still keep it out of the log.
	failing := cannedEngine()
	failing.err = fmt.Errorf("pgvector: invalid input syntax for type uuid: %q", testSubject)
	for _, eng := range []*fakeEngine{cannedEngine(), failing} {
		h := newHarness(t, eng)
		h.do("POST", "/v1/forget/preview", operatorToken, `{"subject":"`+testSubject+`"}`)
		h.do("POST", "/v1/forget", operatorToken, `{"subject":"`+testSubject+`","confirm_token":"tok-123"}`)
		h.do("POST", "/v1/tombstones/lift", operatorToken, `{"subject":"`+testSubject+`"}`)
		h.do("POST", "/v1/forget/"+testID+"/reverify", operatorToken, `{"subject":"`+testSubject+`"}`)
		h.do("POST", "/v1/forget/preview", auditorToken, `{"subject":"`+testSubject+`"}`)
		h.do("POST", "/v1/forget/preview", operatorToken, `{"subject":"`+testSubject+`","extra":1}`)
		h.do("POST", "/v1/forget/preview?subject="+url.QueryEscape(testSubject), operatorToken, "")
		h.do("GET", "/v1/forget/"+testSubject, operatorToken, "")
		h.do("GET", "/v1/forget/"+testSubject+"/certificate", operatorToken, "")

		logs := h.logs.String()
		require.Contains(t, logs, `"route":"/v1/forget/preview"`, "the access log ran")
		assert.NotContains(t, logs, testSubject)
		assert.NotContains(t, logs, "alice")
		if eng.err != nil {
			assert.Contains(t, logs, "[subject]", "the engine error is logged with the subject blanked")
		}
	}
}

func TestSubject_NotAcceptedFromTheURL(t *testing.T) {
	tests := []struct {
		name, method, target, body string
	}{
		{"preview with subject in query", "POST", "/v1/forget/preview?subject=" + url.QueryEscape(testSubject), ""},
		{"preview with subject in query and body", "POST", "/v1/forget/preview?subject=bob", `{"subject":"` + testSubject + `"}`},
		{"forget with subject in query", "POST", "/v1/forget?subject=" + url.QueryEscape(testSubject) + "&confirm_token=t", ""},
		{"lift with subject in query", "POST", "/v1/tombstones/lift?subject=" + url.QueryEscape(testSubject), ""},
		{"status with a subject for an id", "GET", "/v1/forget/" + testSubject, ""},
		{"certificate with a subject for an id", "GET", "/v1/forget/" + url.PathEscape("alice smith") + "/certificate", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, cannedEngine())
			w := h.do(tt.method, tt.target, operatorToken, tt.body)
			require.Equal(t, http.StatusBadRequest, w.Code, "body: %s", w.Body)
			assert.Empty(t, h.engine.Calls(), "the engine must not see a subject from the URL")
		})
	}
}

func TestBody_LimitsAndStrictDecoding(t *testing.T) {
	big := strings.Repeat("a", maxSubjectBody)
	tests := []struct {
		name, target, body string
		wantStatus         int
		wantCode           string
	}{
		{"oversized subject request", "/v1/forget/preview", `{"subject":"` + big + `"}`, 413, "too_large"},
		{"oversized forget request", "/v1/forget", `{"subject":"a","confirm_token":"` + big + `"}`, 413, "too_large"},
		{"oversized certificate", "/v1/verify", `"` + strings.Repeat("a", maxCertificateBody) + `"`, 413, "too_large"},
		{"unknown field", "/v1/forget/preview", `{"subject":"a","email":"a@example.com"}`, 400, "bad_request"},
		{"empty subject", "/v1/forget/preview", `{"subject":""}`, 400, "bad_request"},
		{"blank subject", "/v1/tombstones/lift", `{"subject":"  "}`, 400, "bad_request"},
		{"no subject", "/v1/forget/preview", `{}`, 400, "bad_request"},
		{"empty body", "/v1/forget/preview", ``, 400, "bad_request"},
		{"two JSON values", "/v1/forget/preview", `{"subject":"a"}{"subject":"b"}`, 400, "bad_request"},
		{"subject not a string", "/v1/forget/preview", `{"subject":42}`, 400, "bad_request"},
		{"missing confirm token", "/v1/forget", `{"subject":"a"}`, 400, "bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, cannedEngine())
			w := h.do("POST", tt.target, operatorToken, tt.body)
			require.Equal(t, tt.wantStatus, w.Code, "body: %.200s", w.Body)
			assert.Equal(t, tt.wantCode, errorBody(t, w).Code)
			assert.Empty(t, h.engine.Calls())
		})
	}
}

func TestVerify_CertificateUpToTheLimitReachesTheEngine(t *testing.T) {
	h := newHarness(t, cannedEngine())
	w := h.do("POST", "/v1/verify", auditorToken, strings.Repeat(" ", maxCertificateBody))
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, []string{"Verify"}, h.engine.Calls())
}

// TestSubject_UnstorableTextIsABadRequest sends subjects that cannot be a
// stored user id or e-mail address to every route that takes one: each is
// a 400 saying what is wrong, and the engine never sees it.
func TestSubject_UnstorableTextIsABadRequest(t *testing.T) {
	routes := []struct{ target, extra string }{
		{"/v1/forget/preview", ""},
		{"/v1/forget", `,"confirm_token":"tok-123"`},
		{"/v1/tombstones/lift", ""},
		{"/v1/forget/" + testID + "/reverify", ""},
	}
	cases := []struct {
		name, subject string // subject as it appears inside the JSON string
		want          string
	}{
		{"NUL", `al\u0000ice@example.com`, "NUL character (U+0000) at byte 2"},
		{"NUL alone", `\u0000`, "NUL character"},
		{"newline", `alice@example.com\n`, "control character (U+000A) at byte 17"},
		{"tab", `alice\t@example.com`, "control character (U+0009)"},
		{"DEL", `alice\u007f`, "control character (U+007F)"},
		{"C1 control", `alice\u0085`, "control character (U+0085)"},
		{"lone surrogate", `alice\ud800`, "U+FFFD"},
		{"invalid UTF-8", "alice\xff", "not valid UTF-8"},
		{"too long", strings.Repeat("a", MaxSubjectLen+1), fmt.Sprintf("%d bytes long, over the limit of %d", MaxSubjectLen+1, MaxSubjectLen)},
		{"empty", ``, "the subject is empty"},
	}
	for _, rt := range routes {
		for _, tc := range cases {
			t.Run(rt.target+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, cannedEngine())
				w := h.do("POST", rt.target, operatorToken, `{"subject":"`+tc.subject+`"`+rt.extra+`}`)
				require.Equal(t, http.StatusBadRequest, w.Code, "body: %.200s", w.Body)
				body := errorBody(t, w)
				assert.Equal(t, "bad_request", body.Code)
				assert.Contains(t, body.Error, tc.want)
				assert.NotContains(t, body.Error, "alice", "the answer does not quote the subject")
				assert.Empty(t, h.engine.Calls(), "the engine must not see it")
			})
		}
	}
}

func TestSubject_LongestAcceptedSubjectReachesTheEngine(t *testing.T) {
	h := newHarness(t, cannedEngine())
	subject := strings.Repeat("é", MaxSubjectLen/2)
	w := h.do("POST", "/v1/forget/preview", operatorToken, `{"subject":"`+subject+`"}`)
	require.Equal(t, http.StatusOK, w.Code, "body: %.200s", w.Body)
	assert.Equal(t, []string{"Preview " + subject}, h.engine.Calls())
}

// TestSubject_EscapedInAnEngineErrorIsBlankedToo: an engine error that
// quotes the subject with %q shows it escaped (o\"brïen); the log must
// hold neither spelling.
func TestSubject_EscapedInAnEngineErrorIsBlankedToo(t *testing.T) {
	const subject = `o"brïen@example.com`
	eng := cannedEngine()
	eng.err = fmt.Errorf("store: no rows for %q", subject)
	h := newHarness(t, eng)
	body, err := json.Marshal(map[string]string{"subject": subject})
	require.NoError(t, err)
	h.do("POST", "/v1/forget/preview", operatorToken, string(body))
	logs := h.logs.String()
	require.Contains(t, logs, "[subject]", "the engine error is logged, blanked")
	assert.NotContains(t, logs, "brïen")
	assert.NotContains(t, logs, `br\u00ef`)
}
