package console

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/lethe-privacy/lethe/translog"
)

// logView is the transparency log page: the latest signed checkpoint, as
// the log signed it, and what it states. The page's script checks it
// against the checkpoint this browser kept from its last visit.
type logView struct {
	Note   string
	Origin string
	Size   int64
	Root   string // standard base64, as in the note
}

func (c *console) logPage(w http.ResponseWriter, r *http.Request) {
	who := callerOf(r.Context())
	note, err := c.cfg.Engine.Checkpoint(r.Context())
	if err != nil {
		c.engineError(w, r, err, "")
		return
	}
	body, _, _ := strings.Cut(string(note), "\n\n")
	cp, err := translog.ParseCheckpointText(body + "\n")
	if err != nil {
		c.log.Error("console: the log's checkpoint cannot be read", "err", err)
		c.renderError(w, r, who, http.StatusInternalServerError, "The log's checkpoint cannot be read; the server log has the details.")
		return
	}
	c.render(w, r, http.StatusOK, "log", who, "Transparency log", logView{
		Note: string(note), Origin: cp.Origin, Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:]),
	})
}

// consistency answers the page's script: the proof that the log of size
// new extends the one of size old (engine.ConsistencyProof as JSON, the
// admin API's answer), which the script checks itself.
func (c *console) consistency(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	oldSize, err1 := strconv.ParseInt(q.Get("old"), 10, 64)
	newSize, err2 := strconv.ParseInt(q.Get("new"), 10, 64)
	if err1 != nil || err2 != nil || oldSize < 0 || oldSize > newSize {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "old and new must be tree sizes with 0 <= old <= new"})
		return
	}
	p, err := c.cfg.Engine.Consistency(r.Context(), oldSize, newSize)
	if err != nil {
		refusal := c.cfg.Explain(err)
		if !refusal.Known {
			c.log.Error("console: engine failed", "route", "/console/log/consistency", "err", err.Error())
		}
		writeJSON(w, refusal.Status, map[string]string{"error": refusal.Message})
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
