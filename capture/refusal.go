package capture

// Codes of the refusals capture makes. They are SQLSTATE-shaped (five
// characters, class LT) because PostgreSQL clients see them as the
// statement's SQLSTATE; a relay whose protocol has other error codes maps
// them (see the package doc).
const (
	// CodeUnattributed: strict mode refused a write it cannot attribute.
	CodeUnattributed = "LT001"
	// CodeLedgerDown: the ledger could not take the write-ahead intent.
	CodeLedgerDown = "LT002"
	// CodeForgotten: the write is about a subject that was forgotten.
	CodeForgotten = "LT003"
)

// Refusal is a write capture keeps from the store: the relay answers it
// with an error in its own protocol's shape instead of forwarding it, and
// logs Code and LogReason. Message and Hint go to the client only, and may
// quote its request.
type Refusal struct {
	// Code is one of the Code constants, or a relay's own code for a
	// refusal of its own (a SQLSTATE for PostgreSQL).
	Code    string
	Message string // what was refused and why
	Hint    string // what to do about it
	// LogReason says why, for the log: it never holds request text, row
	// values or subjects.
	LogReason string
}

// RefuseUnattributed refuses, in Strict mode, a write whose rows cannot be
// attributed to subjects, and counts it in Stats.Refused. The relay words
// message and hint for its protocol; logReason, which says why without
// quoting the request (extract's Reason, or a redacted error), is logged
// as "unattributable write: " + logReason.
func (c *Capture) RefuseUnattributed(message, hint, logReason string) *Refusal {
	c.Stats.Refused.Add(1)
	return &Refusal{Code: CodeUnattributed, Message: message, Hint: hint, LogReason: "unattributable write: " + logReason}
}
