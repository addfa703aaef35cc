package console

import (
	"bytes"
	"html/template"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/lethe-privacy/lethe/internal/redact"
)

// pages are the parsed templates, one set per page, each with the layout.
type pages map[string]*template.Template

// pageNames are the templates/*.html that are pages (layout.html is not).
var pageNames = []string{"login", "requests", "request", "forget", "preview", "receipt", "log", "coverage", "error"}

var templateFuncs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"prefix": func() string { return Prefix },
}

func parsePages() pages {
	p := pages{}
	for _, name := range pageNames {
		p[name] = template.Must(template.New("layout.html").Funcs(templateFuncs).
			ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// view is what the layout needs beside the page's own data.
type view struct {
	Title   string
	Caller  *Caller // nil when signed out
	CSRF    string  // the session's anti-forgery token, for the forms
	Running bool    // the page follows a running forget (a refresh without script)
	Page    any
}

// render writes page with status. who is nil on pages shown signed out.
func (c *console) render(w http.ResponseWriter, r *http.Request, status int, page string, who *signedIn, title string, data any) {
	v := view{Title: title, Page: data}
	if who != nil {
		v.Caller, v.CSRF = &who.Caller, who.session.csrf
	}
	if rv, ok := data.(requestView); ok {
		v.Running = rv.Running()
	}
	var buf bytes.Buffer
	if err := c.pages[page].Execute(&buf, v); err != nil {
		// Templates are fixed and checked by tests; the error names the
		// template, not the data.
		c.log.Error("console: rendering a page", "page", page, "err", err)
		http.Error(w, "internal error; the server log has the details", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// errorView is the error page.
type errorView struct {
	Status    int
	Message   string
	RequestID string // for a reused confirm token: the request it opened
}

// renderError shows msg as a page with status.
func (c *console) renderError(w http.ResponseWriter, r *http.Request, who *signedIn, status int, msg string) {
	c.render(w, r, status, "error", who, http.StatusText(status), errorView{Status: status, Message: msg})
}

// engineError shows an engine error as the admin API explains it. Errors
// the caller cannot act on are logged with subject blanked out, since a
// store's message may quote the value it was given.
func (c *console) engineError(w http.ResponseWriter, r *http.Request, err error, subject string) {
	who := callerOf(r.Context())
	refusal := c.cfg.Explain(err)
	if !refusal.Known {
		msg := redact.Subject(err.Error(), subject)
		c.log.Error("console: engine failed", "method", r.Method, "route", chi.RouteContext(r.Context()).RoutePattern(), "err", msg)
	}
	c.render(w, r, refusal.Status, "error", who, http.StatusText(refusal.Status),
		errorView{Status: refusal.Status, Message: refusal.Message, RequestID: refusal.RequestID})
}
