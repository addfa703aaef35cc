package pgcapture

import (
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// refuse refuses an unattributable write for reason, which names tables,
// columns and functions but never quotes the statement (extract's Reason),
// so the log shows it too.
func (s *session) refuse(reason string) *pgwire.Refusal {
	return s.refuseLogged(reason, reason)
}

// refuseErr refuses a write because of err, whose text may quote the
// statement or its values: the client sees it whole, the log redacted.
func (s *session) refuseErr(what string, err error) *pgwire.Refusal {
	return s.refuseLogged(what+": "+err.Error(), what+": "+extract.Redact(err))
}

func (s *session) refuseLogged(reason, logReason string) *pgwire.Refusal {
	return wireRefusal(s.c.RefuseUnattributed(
		"lethe: write to a configured table refused because its rows cannot be attributed to data subjects: "+reason,
		"write rows with explicit VALUES (or COPY FROM STDIN), or set capture.mode: permissive to forward such writes and record them as unattributed",
		logReason))
}
