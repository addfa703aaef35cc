package admin

import (
	"fmt"
	"net/http"
	"strconv"
)

func (s *server) checkpoint(w http.ResponseWriter, r *http.Request) {
	note, err := s.engine.Checkpoint(r.Context())
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	// A signed note is text; its bytes are what the signature covers.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(note)
}

func (s *server) inclusion(w http.ResponseWriter, r *http.Request) {
	index, ok := queryInt(w, r, "index", 0)
	if !ok {
		return
	}
	size, ok := queryInt(w, r, "size", 1)
	if !ok {
		return
	}
	if index >= size {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("index %d is not in a tree of size %d; index must be below size", index, size))
		return
	}
	p, err := s.engine.Inclusion(r.Context(), index, size)
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *server) consistency(w http.ResponseWriter, r *http.Request) {
	oldSize, ok := queryInt(w, r, "old", 0)
	if !ok {
		return
	}
	newSize, ok := queryInt(w, r, "new", 0)
	if !ok {
		return
	}
	if oldSize > newSize {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("old size %d is larger than new size %d; a log only grows", oldSize, newSize))
		return
	}
	p, err := s.engine.Consistency(r.Context(), oldSize, newSize)
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// queryInt reads the required query parameter name as an integer no
// smaller than floor. On failure it has answered and returns false.
func queryInt(w http.ResponseWriter, r *http.Request, name string, floor int64) (int64, bool) {
	v := r.URL.Query().Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < floor {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("query parameter %s must be an integer of at least %d, got %q", name, floor, v))
		return 0, false
	}
	return n, true
}

// verify answers 200 with the verdict whatever it is: an invalid
// certificate is a finding about the certificate, not a failed request.
func (s *server) verify(w http.ResponseWriter, r *http.Request) {
	cert, ok := readBody(w, r, maxCertificateBody)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.engine.Verify(cert))
}
