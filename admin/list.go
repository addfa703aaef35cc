package admin

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// list answers GET /v1/forget: the forget requests, newest first, chosen
// by the query parameters status, overdue and limit. Requests are listed
// by id; no subject data is in the answer.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	f, msg := listFilter(r)
	if msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	out, err := s.engine.List(r.Context(), f)
	if err != nil {
		s.engineError(w, r, err, "")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// listFilter reads the listing's query parameters, or says what is wrong
// with them.
func listFilter(r *http.Request) (engine.ListFilter, string) {
	var f engine.ListFilter
	for name, values := range r.URL.Query() {
		if len(values) != 1 {
			return f, fmt.Sprintf("query parameter %s is given %d times; give it once", name, len(values))
		}
		v := values[0]
		switch name {
		case "status":
			f.Status = ledger.ForgetStatus(v)
		case "overdue":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return f, fmt.Sprintf("query parameter overdue must be true or false, got %q", v)
			}
			f.Overdue = b
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > engine.MaxListLimit {
				return f, fmt.Sprintf("query parameter limit must be an integer from 1 to %d, got %q", engine.MaxListLimit, v)
			}
			f.Limit = n
		default:
			return f, fmt.Sprintf("unknown query parameter %q; this route takes status, overdue and limit", name)
		}
	}
	if err := f.Check(); err != nil {
		return f, err.Error()
	}
	return f, ""
}
