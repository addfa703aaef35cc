package admin

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/lethe-privacy/lethe/engine"
)

// SubjectRequest is the body of preview and lift.
type SubjectRequest struct {
	Subject string `json:"subject"`
}

// ForgetRequest is the body of a forget: the subject again and the
// confirm token its preview returned. NothingFound confirms a forget whose
// preview found no record of the subject (nothing_found in the preview):
// without it such a forget is refused, so that a mistyped subject is not
// certified as erased.
type ForgetRequest struct {
	Subject      string `json:"subject"`
	ConfirmToken string `json:"confirm_token"`
	NothingFound bool   `json:"nothing_found,omitempty"`
}

// LiftResult says whether the subject had a tombstone to lift.
type LiftResult struct {
	Lifted bool `json:"lifted"`
}

// subjectOnlyInBody refuses a subject route called with a query string:
// a subject there would be in every proxy's and browser's history, so the
// caller is told to move it rather than have it silently ignored.
func subjectOnlyInBody(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, "bad_request",
			"this route takes no query parameters; send the subject in the JSON body only (a subject in a URL ends up in logs)")
		return false
	}
	return true
}

func checkSubject(w http.ResponseWriter, subject string) bool {
	if err := CheckSubject(subject); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return false
	}
	return true
}

func (s *server) preview(w http.ResponseWriter, r *http.Request) {
	var req SubjectRequest
	if !subjectOnlyInBody(w, r) || !decodeBody(w, r, maxSubjectBody, &req) || !checkSubject(w, req.Subject) {
		return
	}
	p, err := s.engine.Preview(r.Context(), req.Subject)
	if err != nil {
		s.engineError(w, r, err, req.Subject)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *server) forget(w http.ResponseWriter, r *http.Request) {
	var req ForgetRequest
	if !subjectOnlyInBody(w, r) || !decodeBody(w, r, maxSubjectBody, &req) || !checkSubject(w, req.Subject) {
		return
	}
	if req.ConfirmToken == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "confirm_token is empty; run preview first and send the confirm_token it returns")
		return
	}
	rc, err := s.engine.Forget(r.Context(), req.Subject, req.ConfirmToken, engine.ForgetOptions{NothingFound: req.NothingFound})
	if err != nil {
		s.engineError(w, r, err, req.Subject)
		return
	}
	writeJSON(w, http.StatusAccepted, rc)
}

func (s *server) lift(w http.ResponseWriter, r *http.Request) {
	var req SubjectRequest
	if !subjectOnlyInBody(w, r) || !decodeBody(w, r, maxSubjectBody, &req) || !checkSubject(w, req.Subject) {
		return
	}
	lifted, err := s.engine.Lift(r.Context(), req.Subject)
	if err != nil {
		s.engineError(w, r, err, req.Subject)
		return
	}
	writeJSON(w, http.StatusOK, LiftResult{Lifted: lifted})
}

// requestID returns the {id} of the route if it looks like a request id
// (letters, digits, '-' and '_'; the engine's are 32 hex digits). Anything
// else, an e-mail address pasted by mistake say, is refused before it
// reaches the engine.
func requestID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := chi.URLParam(r, "id")
	ok := id != "" && len(id) <= 128
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			ok = false
			break
		}
	}
	if !ok {
		writeError(w, http.StatusBadRequest, "bad_request", "that is not a request id; use the request_id returned by POST /v1/forget")
	}
	return id, ok
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	id, ok := requestID(w, r)
	if !ok {
		return
	}
	st, err := s.engine.Status(r.Context(), id)
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *server) certificate(w http.ResponseWriter, r *http.Request) {
	id, ok := requestID(w, r)
	if !ok {
		return
	}
	cert, err := s.engine.Certificate(r.Context(), id)
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	// The certificate is served byte for byte as signed: re-encoding it
	// could change what the signature covers.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(cert)
}

func (s *server) reverify(w http.ResponseWriter, r *http.Request) {
	id, ok := requestID(w, r)
	if !ok {
		return
	}
	var req SubjectRequest
	if !subjectOnlyInBody(w, r) || !decodeBody(w, r, maxSubjectBody, &req) || !checkSubject(w, req.Subject) {
		return
	}
	rv, err := s.engine.Reverify(r.Context(), id, req.Subject)
	if err != nil {
		s.engineError(w, r, err, req.Subject)
		return
	}
	writeJSON(w, http.StatusOK, rv)
}
