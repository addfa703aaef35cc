package pgcapture

import "github.com/lethe-privacy/lethe/proxy/pgwire"

// After an error in an extended-protocol batch the server ignores every
// message up to the next Sync, a simple Query included, and answers none
// of them. The proxy cannot tell from the client's messages whether such a
// Query will run: if the server ignores it, the ReadyForQuery the tracker
// expects for it never comes, and the answers after it would be paired with
// the wrong statements (a committed write's intent dropped as if skipped).
// No client library sends a Query inside an open batch (libpq's pipeline
// mode forbids it), so the session is ended instead, with a clear error.
// A FunctionCall is ignored the same way, and could also commit the
// batch's writes before their intents are durable.
var queryInBatch = &pgwire.Refusal{
	Code:       "08P01",
	Message:    "lethe: a simple Query or FunctionCall was sent inside an extended-protocol batch (after Parse/Bind/Describe/Execute/Close, before Sync); the proxy cannot tell whether the server will run or ignore it, so it ends the session",
	Hint:       "send a Sync before a simple Query or FunctionCall",
	LogReason:  "simple Query or FunctionCall inside an extended-protocol batch",
	EndSession: true,
}
