package console

import (
	"crypto/subtle"
	"net/http"
	"net/url"
)

// sameOrigin refuses a POST that does not say it comes from a page of
// this host (its Origin header), the first defence against cross-site
// request forgery; the login form, which has no session yet, relies on it
// alone. Browsers send Origin with every POST; a request without one is
// refused rather than trusted.
func (c *console) sameOrigin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !fromThisOrigin(r) {
			c.renderError(w, r, callerOf(r.Context()), http.StatusForbidden,
				"This form was not sent from a console page of this server (its Origin header is missing or names another site). Open the console at this server's address and send the form again.")
			return
		}
		next(w, r)
	}
}

// fromThisOrigin reports whether r's Origin names the host r was sent to,
// with https exactly when r came over TLS.
func fromThisOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host != r.Host {
		return false
	}
	if r.TLS != nil {
		return u.Scheme == "https"
	}
	// Plain HTTP here may be TLS at a sidecar in front: either scheme.
	return u.Scheme == "http" || u.Scheme == "https"
}

// guarded is sameOrigin plus the session's anti-forgery token, which
// every form of the session carries in its csrf field and no other site
// can read. It reads the (bounded) form.
func (c *console) guarded(next http.HandlerFunc) http.HandlerFunc {
	return c.sameOrigin(func(w http.ResponseWriter, r *http.Request) {
		who := callerOf(r.Context())
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			c.renderError(w, r, who, http.StatusBadRequest, "The form could not be read (it may be too large); go back and send it again.")
			return
		}
		if r.URL.RawQuery != "" {
			// A subject in a URL would end up in logs and history.
			c.renderError(w, r, who, http.StatusBadRequest, "Forms here take no query string; send the fields in the form only.")
			return
		}
		sent := r.PostForm.Get("csrf")
		if sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(who.session.csrf)) != 1 {
			c.renderError(w, r, who, http.StatusForbidden,
				"This form's anti-forgery token is missing or belongs to another session. Reload the page and send the form again.")
			return
		}
		next(w, r)
	})
}

// operatorOnly refuses an auditor: only operators preview and forget, as
// in the admin API.
func (c *console) operatorOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who := callerOf(r.Context())
		if !who.Operator {
			c.renderError(w, r, who, http.StatusForbidden,
				"Your token ("+who.Name+") is an auditor's: auditors follow requests and read certificates and the log, but only an operator previews and confirms a forget.")
			return
		}
		next(w, r)
	}
}
