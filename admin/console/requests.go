package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// requestsView is the requests page.
type requestsView struct {
	List    engine.RequestList
	Status  string // the status filter, "" for any
	Overdue bool
	Problem string // what is wrong with the filter
}

// requestsPage lists forget requests, newest first, by id, with their
// deadlines and overdue flags; status and overdue filter them (query
// parameters: they hold no personal data).
func (c *console) requestsPage(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	q := r.URL.Query()
	v := requestsView{Status: q.Get("status")}
	f := engine.ListFilter{Status: ledger.ForgetStatus(v.Status)}
	if o := q.Get("overdue"); o != "" {
		b, err := strconv.ParseBool(o)
		if err != nil {
			v.Problem = "overdue must be true or false"
		}
		f.Overdue, v.Overdue = b, b
	}
	if err := f.Check(); err != nil && v.Problem == "" {
		v.Problem = err.Error()
	}
	if v.Problem != "" {
		c.render(w, r, http.StatusBadRequest, "requests", who, "Requests", v)
		return
	}
	list, err := c.cfg.Engine.List(r.Context(), f)
	if err != nil {
		c.engineError(w, r, err, "")
		return
	}
	v.List = list
	c.render(w, r, http.StatusOK, "requests", who, "Requests", v)
}

// requestIDOf returns the {id} of the route if it looks like a request id
// (letters, digits, '-' and '_', as the engine makes them).
func requestIDOf(r *http.Request) (string, bool) {
	id := chi.URLParam(r, "id")
	if id == "" || len(id) > 128 {
		return "", false
	}
	for _, ch := range id {
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch == '-' || ch == '_') {
			return "", false
		}
	}
	return id, true
}

// requestView is a request's page: its progress and, once completed, its
// certificate.
type requestView struct {
	Status      engine.Status
	Certificate *certificateView
}

// Running says the forget is still at work: the page follows it.
func (v requestView) Running() bool { return v.Status.Status == ledger.ForgetReceived }

// certificateView is what the page shows of a certificate.
type certificateView struct {
	Verdict  engine.VerifyResult // the proxy's own check, against its trusted keys
	Payload  *certificate.Payload
	LogIndex int64
	Logged   bool
	Size     int
	Problem  string // why the payload cannot be shown
}

func (c *console) requestPage(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	id, ok := requestIDOf(r)
	if !ok {
		c.renderError(w, r, who, http.StatusBadRequest, "That is not a request id; open the request from the requests page.")
		return
	}
	st, err := c.cfg.Engine.Status(r.Context(), id)
	if err != nil {
		c.engineError(w, r, err, "")
		return
	}
	v := requestView{Status: st}
	if st.Status == ledger.ForgetCompleted {
		cert, err := c.cfg.Engine.Certificate(r.Context(), id)
		if err != nil {
			c.engineError(w, r, err, "")
			return
		}
		v.Certificate = c.describe(cert)
	}
	c.render(w, r, http.StatusOK, "request", who, "Request "+id, v)
}

// describe reads what a certificate states, for the page, and has the
// proxy verify it.
func (c *console) describe(cert []byte) *certificateView {
	v := &certificateView{Verdict: c.cfg.Engine.Verify(cert), Size: len(cert)}
	env, err := certificate.Parse(cert)
	if err != nil {
		v.Problem = err.Error()
		return v
	}
	var p certificate.Payload
	if err := json.Unmarshal(env.Payload, &p); err != nil {
		v.Problem = fmt.Sprintf("certificate payload: %v", err)
		return v
	}
	v.Payload = &p
	if env.Log != nil {
		v.Logged, v.LogIndex = true, env.Log.Index
	}
	return v
}

// certificateDownload serves the certificate byte for byte as signed, as
// a file to keep and to verify.
func (c *console) certificateDownload(w http.ResponseWriter, r *http.Request) {
	id, ok := requestIDOf(r)
	if !ok {
		c.renderError(w, r, callerOf(r.Context()), http.StatusBadRequest, "That is not a request id; open the request from the requests page.")
		return
	}
	cert, err := c.cfg.Engine.Certificate(r.Context(), id)
	if err != nil {
		c.engineError(w, r, err, "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="certificate-%s.json"`, id))
	w.Write(cert)
}
