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
