package console

import (
	"net/http"
	"strconv"

	"github.com/lethe-privacy/lethe/engine"
)

// forgetPage is the form that starts a forget: the subject, sent by POST
// only. An auditor is told that only operators forget.
func (c *console) forgetPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "forget", callerOf(r.Context()), "New forget", forgetView{})
}

// forgetView is the new-forget form, with what was wrong with the last
// subject sent.
type forgetView struct{ Problem string }

// previewView is a preview: per layer counts, the near-miss warning when
// nothing was found, and the confirm form, which carries the subject
// (this page is never cached) and the preview's confirm token.
type previewView struct {
	Subject string
	Preview engine.Preview
	Total   int // rows present now, over every layer
}

// preview shows what a forget of the posted subject would delete.
func (c *console) preview(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	subject := r.PostForm.Get("subject")
	if err := c.cfg.CheckSubject(subject); err != nil {
		c.render(w, r, http.StatusBadRequest, "forget", who, "New forget", forgetView{Problem: err.Error()})
		return
	}
	p, err := c.cfg.Engine.Preview(r.Context(), subject)
	if err != nil {
		c.engineError(w, r, err, subject)
		return
	}
	v := previewView{Subject: subject, Preview: p}
	for _, l := range p.Layers {
		v.Total += l.Rows
	}
	c.render(w, r, http.StatusOK, "preview", who, "Preview", v)
}

// receiptView is the answer to a confirm: the request opened and the
// data subject's secret, shown once.
type receiptView struct{ Receipt engine.Receipt }

// confirm starts the forget a preview showed (fields subject,
// confirm_token and nothing_found) and shows its receipt.
func (c *console) confirm(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	subject, token := r.PostForm.Get("subject"), r.PostForm.Get("confirm_token")
	if err := c.cfg.CheckSubject(subject); err != nil {
		c.render(w, r, http.StatusBadRequest, "forget", who, "New forget", forgetView{Problem: err.Error()})
		return
	}
	if token == "" {
		c.renderError(w, r, who, http.StatusBadRequest, "The confirm token is missing: preview the subject first, then confirm from the preview page.")
		return
	}
	var opts engine.ForgetOptions
	if nf := r.PostForm.Get("nothing_found"); nf != "" {
		b, err := strconv.ParseBool(nf)
		if err != nil {
			c.renderError(w, r, who, http.StatusBadRequest, "nothing_found must be true or false; confirm from the preview page.")
			return
		}
		opts.NothingFound = b
	}
	rc, err := c.cfg.Engine.Forget(r.Context(), subject, token, opts)
	if err != nil {
		c.engineError(w, r, err, subject)
		return
	}
	c.render(w, r, http.StatusAccepted, "receipt", who, "Forget started", receiptView{Receipt: rc})
}
