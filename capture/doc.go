// Package capture is the observer both relays plug into. It turns the
// writes a session sends into write-ahead intents in the ledger before they
// are forwarded, confirms them when the server says the transaction
// committed, drops them when it rolled back, and leaves them pending when
// the outcome cannot be known (a lost connection), for recovery to resolve.
// It knows transaction semantics, not wire formats.
package capture
