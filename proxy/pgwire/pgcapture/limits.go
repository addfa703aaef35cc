package pgcapture

import (
	"fmt"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// What one session may hold. A client may pipeline without a Sync and
// without reading for as long as it likes; what the proxy keeps for it
// must not grow with that.
const (
	// maxIntentsInFlight and maxEntriesInFlight bound the write-ahead
	// intents a session has forwarded the writes of but the ledger has not
	// yet made durable (inflight.go). Past either, the next write waits for
	// them: the client is slowed to the ledger's pace instead of piling up
	// intents (and their entries) faster than the ledger takes them.
	maxIntentsInFlight = 64
	maxEntriesInFlight = 1 << 15

	// DefaultMaxStatementsInFlight is the default Config.MaxStatementsInFlight.
	DefaultMaxStatementsInFlight = 100_000

	// maxDeletesMarked bounds the application's deletes by id one
	// transaction remembers to mark in the ledger when it commits. Marks
	// past it are not made: forget checks the store itself, so a record
	// still marked live there costs a delete of nothing.
	maxDeletesMarked = 1 << 16
)

// CodeTooManyInFlight is the SQLSTATE of the refusal of a statement over
// Config.MaxStatementsInFlight: PostgreSQL's program_limit_exceeded.
const CodeTooManyInFlight = "54000"

// crowded refuses a statement when the session already has as many
// statements in flight (sent to the server, not yet answered) as it may.
func (s *session) crowded() *pgwire.Refusal {
	var n int
	s.lock(func() { n = len(s.tx.queue) })
	limit := s.maxStatements
	if n < limit {
		return nil
	}
	s.capture.Logger().Warn("too many statements in flight on one connection", "limit", limit)
	return wireRefusal(s.capture.Refuse(capture.Refusal{
		Code:      CodeTooManyInFlight,
		Message:   fmt.Sprintf("lethe: statement refused: this connection has %d statements in flight (sent, not yet answered by the server), the proxy's limit", limit),
		Hint:      "send a Sync (end the pipeline) and read the results more often, or raise capture.max_statements_in_flight in the proxy configuration",
		LogReason: "too many statements in flight",
	}))
}

// entriesInFlight counts the ledger entries of the intents in flight.
func (s *session) entriesInFlight() int {
	n := 0
	for _, f := range s.inflight {
		n += f.entries
	}
	return n
}
