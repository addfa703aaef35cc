// Package ledger stores, durably, which records of which stores are about
// which data subjects, so that forget can find every one of them. Subjects
// are stored only as HMAC-SHA256(secret salt, subject). Writes go through
// write-ahead intents: an intent is made durable before the write is
// forwarded to the store, confirmed when the write commits and dropped when
// it rolls back; intents still pending after a crash are resolved on restart.
//
// State model (both backends): an intent's entries live in intent_entries
// while it is pending. Confirm copies them into entries, keyed by (store,
// table, record id, subject), where the latest confirmation wins; Drop only
// deletes the intent's pending rows, so dropping a rewrite never loses a
// record an earlier intent confirmed. BySubject returns both confirmed and
// pending facts: forget treats pending ones as candidates.
//
// Two backends pass one contract test suite: an embedded SQLite file (the
// default, zero setup) and PostgreSQL (several proxies sharing one ledger).
package ledger
