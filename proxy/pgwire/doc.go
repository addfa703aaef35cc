// Package pgwire relays the PostgreSQL frontend/backend protocol (version 3.0
// and 3.2, https://www.postgresql.org/docs/current/protocol.html) between
// clients and one upstream server.
//
// The relay owns bytes and connections; policy plugs in through Observer, in
// the manner of net/http/httputil.ReverseProxy's hooks. On the hot path the
// relay reads whatever the socket holds, walks the 5-byte message headers and
// forwards the same buffer slice with one write. It decodes only the messages
// an Observer needs (client statements and their parameters, the server's
// completions and transaction status) and never re-encodes what it forwards.
//
// The startup phase is handled explicitly: SSLRequest (TLS termination with
// the configured certificate, or 'N'), PostgreSQL 17 direct SSL, GSSENCRequest
// (always 'N'), CancelRequest (forwarded to the upstream backend that issued
// the key), and authentication passed through message by message, with
// SCRAM-SHA-256-PLUS removed from the server's offer because channel binding
// cannot survive a relay that terminates TLS.
package pgwire
