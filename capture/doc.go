// Package capture is the protocol-neutral core every relay's capture
// adapter calls: it records each write to a configured table in the
// ledger before the relay forwards it, and settles it by the outcome the
// relay reports. It knows a write's life, not wire formats: it imports no
// relay, and the relays' adapters import it (proxy/pgwire/pgcapture for
// PostgreSQL, proxy/pinecone/pcapture for Pinecone). Entries name their
// store (ledger.Store), which the adapter gives.
//
// The contract with an adapter, for each write:
//
//   - Rules gives the rules in force (SetRules replaces them); the adapter
//     turns a request into extract.Tags with them. Capture alone decides
//     write policy (policy.go): when a request's rows cannot be
//     attributed the adapter asks Unattributable (or Unreadable, for a
//     request it cannot read at all), which refuses it in Strict Mode
//     (CodeUnattributed) and returns nil in Permissive Mode, where the
//     adapter tags it as unattributed; the adapter never reads the mode.
//   - Prepare turns the tags into ledger entries and refuses a write about
//     a forgotten subject (CodeForgotten; Config.FlagForgotten forwards it
//     and counts it instead). Durable then makes the entries one durable
//     write-ahead intent; Intend is both. The adapter forwards nothing
//     that could commit a write before the write's intent is durable, so a
//     crash can leave an intent pending but never a committed write
//     untagged.
//   - A write to a table a WAL follower streams in full (Config.Followed)
//     takes no intent: StartDurable returns nil and Intend 0, and the
//     adapter forwards it at once. The slot holds the committed row until
//     the follower has made it durable in the ledger, which makes the
//     follower, not the intent, the write's record; the forgotten-subject
//     check (Prepare) still runs before it is forwarded.
//   - When the ledger cannot take the intent the write is refused
//     (CodeLedgerDown): capture fails closed. Config.FailOpen forwards it
//     untracked instead, logging loudly and counting
//     Stats.UntrackedWrites.
//   - The adapter reports the outcome through Decisions: Confirm when the
//     store says the write committed, Drop when it certainly did not,
//     Deleted for the application's own committed deletes by id. Neither
//     is reported when the outcome cannot be known (a lost connection): the
//     intent stays pending, forget treats it as a candidate, and Recover
//     resolves it against the store.
//   - A wing that sees its store restored from a backup holds the store's
//     writes (Hold: CodeRestored) until lethe-proxy replay has forgotten
//     again the people the restore brought back, and Release ends it;
//     deletes pass.
//   - A refusal is a *Refusal: the relay answers the request with an error
//     in its protocol's shape carrying Code, Message and Hint, and logs
//     Code and LogReason, which never hold request text, values or
//     subjects.
//
// Codes are SQLSTATE-shaped strings (class LT), which PostgreSQL clients
// receive as they are. A relay whose protocol has its own error codes maps
// each one as below and starts its message with the LT code, so that
// operators find the same code in every client's error and in the proxy's
// log; codes of a relay's own refusals are its own business.
//
//	CodeUnattributed  gRPC INVALID_ARGUMENT     HTTP 400
//	CodeForgotten     gRPC FAILED_PRECONDITION  HTTP 400
//	CodeLedgerDown    gRPC UNAVAILABLE          HTTP 503 (a retry may succeed)
//	CodeRestored      gRPC UNAVAILABLE          HTTP 503 (until replay ran)
//
// Decisions are committed by a background worker; Close or Shutdown waits
// for them (Shutdown within a deadline, leaving the rest pending for
// recovery).
package capture
