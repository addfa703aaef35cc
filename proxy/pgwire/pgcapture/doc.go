// Package pgcapture is capture's PostgreSQL adapter: the pgwire.Observer
// that follows each session's messages and records its writes to
// configured tables through the protocol-neutral core in package capture.
//
// It decodes the messages capture needs (Query, Parse, Bind, Execute,
// Sync, Close, COPY data: client.go; the server's completions, errors,
// ParameterStatus and ReadyForQuery: server.go), judges statements
// (judge.go; simple Queries split into statements in query.go; reads that
// cannot write are not parsed, readonly.go), executes portals
// (execute.go), follows each transaction with its savepoints and
// search_path in one tracker (txtrack.go; its state in txstate.go, the
// states pipelined requests may leave in txworlds.go) from what the client
// sends and the server answers,
// refuses text the server would read differently under its
// standard_conforming_strings and client_encoding (reading.go), makes extended-protocol intents
// durable while the server executes (inflight.go), bounds what one
// session may hold (limits.go), and words capture's refusals as SQLSTATE
// errors. It observes only sessions connected to the configured database
// (Config.Database), and keeps the rules in step with the database's
// server-side writers (WriterCatalog).
//
// The relay does not parse SQL, so this lives beside it rather than in
// it; the arrow points relay → capture: package capture imports neither
// this package nor pgwire.
package pgcapture
