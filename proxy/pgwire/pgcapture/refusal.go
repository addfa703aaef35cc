package pgcapture

import (
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// unattributable asks capture about a write whose rows cannot be
// attributed, for reason, which names tables, columns and functions but
// never quotes the statement (extract's Reason), so the log shows it too:
// a refusal (strict mode), or nil to forward it.
func (s *session) unattributable(reason string) *pgwire.Refusal {
	return s.unattributableLogged(reason, reason)
}

// unattributableErr is unattributable because of err, whose text may
// quote the statement or its values: the client sees it whole, the log
// redacted.
func (s *session) unattributableErr(what string, err error) *pgwire.Refusal {
	return s.unattributableLogged(what+": "+err.Error(), what+": "+extract.Redact(err))
}

func (s *session) unattributableLogged(reason, logReason string) *pgwire.Refusal {
	return wireRefusal(s.capture.Unattributable(
		"lethe: write to a configured table refused because its rows cannot be attributed to data subjects: "+reason,
		"write rows with explicit VALUES (or COPY FROM STDIN), or set capture.mode: permissive to forward such writes and record them as unattributed",
		logReason))
}
