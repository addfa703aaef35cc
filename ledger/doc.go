// Package ledger stores, durably, which records of which stores are about
// which data subjects, so that forget can find every one of them. Subjects
// are stored only as HMAC-SHA256(secret salt, subject). Writes go through
// write-ahead intents: an intent is made durable before the write is
// forwarded to the store, confirmed when the write commits and dropped when
// it rolls back; intents still pending after a crash are resolved on restart.
//
// State model (both backends): while an intent is pending its entries live
// on its one intents row (a blob in SQLite, parallel arrays in
// PostgreSQL), so that Intend, on the proxy's hot path, writes one row
// whatever the number of entries. Confirm expands them into entries, keyed
// by (store, table, record id, subject), where the latest confirmation
// wins, and clears them; Drop only clears them, so dropping a rewrite never
// loses a record an earlier intent confirmed. BySubject returns both
// confirmed and pending facts (forget treats pending ones as candidates);
// the pending ones are found by scanning the few open intents, not an
// index.
//
// Durability: a commit that holds an intent is fsynced before Intend
// returns. Confirmations, drops and deletions alone are committed without
// waiting for fsync in SQLite: one lost to power loss leaves its intent
// pending, which is safe (recovery or forget resolves it).
//
// Two backends pass one contract test suite: an embedded SQLite file (the
// default, zero setup) and PostgreSQL (several proxies sharing one ledger).
package ledger
