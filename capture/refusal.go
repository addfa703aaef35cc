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
	// CodeUncovered: coverage.mode enforce refused a write to a table
	// that no rule covers (capture/coverage).
	CodeUncovered = "LT005"
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

// RefuseUncovered refuses a write to table, which no capture rule or
// coverage ignore covers (coverage.mode: enforce), whatever Mode says, and
// counts it in Stats.RefusedUncovered. reason says why in words that name
// tables only (extract's Reason of a KindUncovered Analysis).
func (c *Capture) RefuseUncovered(table, reason string) *Refusal {
	c.Stats.RefusedUncovered.Add(1)
	return &Refusal{
		Code:    CodeUncovered,
		Message: "lethe: write to " + table + " refused: " + reason + " (coverage.mode: enforce)",
		Hint: "add a capture.tables rule for " + table + " (table, id, subjects) or a coverage.ignore with a reason " +
			"(table: " + table + ", reason: why no person's data is there), then restart the proxy; lethe-proxy check prints the YAML",
		LogReason: "write to an uncovered table: " + reason,
	}
}
