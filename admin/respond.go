package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/internal/redact"
	"github.com/lethe-privacy/lethe/ledger"
)

// ErrorBody is every error response: a message saying what to do, a stable
// code for programs, for a reused confirm token the request it opened, and
// for a forget that found nothing (nothing_found) its near misses.
type ErrorBody struct {
	Error      string             `json:"error"`
	Code       string             `json:"code"`
	RequestID  string             `json:"request_id,omitempty"`
	NearMisses *engine.NearMisses `json:"near_misses,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only engine result types and ErrorBody come here: plain data.
		http.Error(w, `{"error":"internal error: cannot encode the response","code":"internal"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg, Code: code})
}

// apiError is how one engine error is answered.
type apiError struct {
	status int
	body   ErrorBody
}

// mapError maps an engine error to its answer; ok is false for errors the
// caller cannot act on (answered 500).
func mapError(err error) (apiError, bool) {
	var (
		used    *engine.UsedTokenError
		nothing *engine.NothingFoundError
	)
	switch {
	case errors.As(err, &nothing):
		// The engine's message carries only counts and what to do.
		return apiError{http.StatusConflict, ErrorBody{
			Error: strings.TrimPrefix(nothing.Error(), "engine: "), Code: "nothing_found", NearMisses: &nothing.NearMisses,
		}}, true
	case errors.Is(err, engine.ErrRecordsFound):
		return apiError{http.StatusConflict, ErrorBody{
			Error: "nothing_found was set, but records of this subject were found; run preview again and confirm without nothing_found",
			Code:  "records_found",
		}}, true
	case errors.As(err, &used):
		return apiError{http.StatusConflict, ErrorBody{
			Error: "the confirm token was already used; follow the request it opened (request_id)",
			Code:  "token_used", RequestID: used.RequestID,
		}}, true
	case errors.Is(err, engine.ErrTokenUsed):
		return apiError{http.StatusConflict, ErrorBody{Error: "the confirm token was already used; run preview again", Code: "token_used"}}, true
	case errors.Is(err, engine.ErrTokenMalformed):
		return apiError{http.StatusBadRequest, ErrorBody{Error: "the confirm token is malformed; run preview again and confirm with the confirm_token it returns", Code: "token_malformed"}}, true
	case errors.Is(err, engine.ErrTokenExpired):
		return apiError{http.StatusConflict, ErrorBody{Error: "the confirm token has expired; run preview again", Code: "token_expired"}}, true
	case errors.Is(err, engine.ErrTokenSubject):
		return apiError{http.StatusConflict, ErrorBody{Error: "the confirm token was issued for another subject; run preview again for this subject", Code: "token_subject"}}, true
	case errors.Is(err, engine.ErrTokenStale):
		return apiError{http.StatusConflict, ErrorBody{Error: "the data changed since preview; run preview again and confirm the new counts", Code: "token_stale"}}, true
	case errors.Is(err, engine.ErrInProgress):
		return apiError{http.StatusConflict, ErrorBody{Error: "a forget of this subject is already in progress; follow it and wait for it to finish", Code: "in_progress"}}, true
	case errors.Is(err, ledger.ErrNotFound):
		return apiError{http.StatusNotFound, ErrorBody{Error: "no forget request has this id; use the request_id returned by POST /v1/forget", Code: "not_found"}}, true
	case errors.Is(err, engine.ErrNotCompleted):
		return apiError{http.StatusConflict, ErrorBody{Error: "the request has no certificate because it has not completed; check its status with GET /v1/forget/{id}", Code: "not_completed"}}, true
	case errors.Is(err, engine.ErrWrongSubject):
		return apiError{http.StatusConflict, ErrorBody{Error: "this subject is not the one the request forgot; check the request id and the subject", Code: "wrong_subject"}}, true
	case errors.Is(err, ledger.ErrUnavailable):
		return apiError{http.StatusServiceUnavailable, ErrorBody{Error: "the ledger is unavailable; retry later", Code: "unavailable"}}, true
	}
	return apiError{http.StatusInternalServerError, ErrorBody{Error: "internal error; the server log has the details", Code: "internal"}}, false
}

// engineError answers err. Errors the caller cannot act on are logged;
// subject, when the request carried one, is blanked out of the logged
// text, since a store's error message may quote the value it was given.
func (s *server) engineError(w http.ResponseWriter, r *http.Request, err error, subject string) {
	a, known := mapError(err)
	msg := redact.Subject(err.Error(), subject)
	if known {
		s.log.Debug("admin: engine refused the request", "route", routePattern(r), "err", msg)
	} else {
		s.log.Error("admin: engine failed", "route", routePattern(r), "err", msg)
	}
	if a.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, a.status, a.body)
}

// Body limits. A subject request is a subject and a confirm token; a
// certificate is at most certificate.MaxSize (1 MiB), and verify accepts a
// little more so that the engine, not the transport, explains an
// oversized one.
const (
	maxSubjectBody     = 64 << 10
	maxCertificateBody = 1<<20 + 64<<10
)

// decodeBody decodes r's JSON body into v: at most limit bytes, one JSON
// value, no unknown fields. On failure it has answered and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	body, ok := readBody(w, r, limit)
	if !ok {
		return false
	}
	// json replaces invalid UTF-8 with U+FFFD: a subject would silently
	// become another one.
	if !utf8.Valid(body) {
		writeError(w, http.StatusBadRequest, "bad_request", "the request body is not valid UTF-8; send JSON in UTF-8")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err == nil {
		return true
	}
	switch {
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "bad_request", "the request body is empty; send a JSON object")
	default:
		// json's messages name the field or offset, never the value.
		writeError(w, http.StatusBadRequest, "bad_request", "the request body is not the expected JSON object: "+err.Error())
	}
	return false
}

// readBody reads r's body, at most limit bytes. On failure it has
// answered and returns false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body is over %d bytes", limit))
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "bad_request", "cannot read the request body")
		return nil, false
	}
	return b, true
}
