// Package ledger stores, durably, which records of which stores are about
// which data subjects, so that forget can find every one of them. Subjects
// are stored only as HMAC-SHA256(secret salt, subject). Writes go through
// write-ahead intents: an intent is made durable before the write is
// forwarded to the store, confirmed when the write commits and dropped when
// it rolls back; intents still pending after a crash are resolved on restart.
//
// Two backends pass one contract test suite: an embedded SQLite file (the
// default, zero setup) and PostgreSQL (several proxies sharing one ledger).
package ledger
