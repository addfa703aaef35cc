// Package ledger stores, durably, which records of which stores are about
// which data subjects, so that forget can find every one of them. Subjects
// are stored only as HMAC-SHA256(secret salt, subject). Writes go through
// write-ahead intents: an intent is made durable before the write is
// forwarded to the store, confirmed when the write commits and dropped when
// it rolls back; intents still pending after a crash are resolved on restart.
//
// Open returns one Handle, whichever backend a Location names (a SQLite
// file, or a PostgreSQL database for several proxies): it has every
// capability both backends have (tags, forget's journal and tombstones, the
// WAL follower's Observer, Holder, SaltKeeper, the transparency log's
// storage). Consumers declare the narrow interface they use.
//
// State model (both backends): while an intent is pending its entries live
// on its one row (in SQLite a blob in a file of its own, the pending file,
// see sqlite_pending.go; in PostgreSQL parallel arrays on its intents
// row), so that Intend, on the proxy's hot path, writes one row whatever
// the number of entries. Confirm expands them into entries, keyed
// by (store, table, record id, subject), where the latest confirmation
// wins, and clears them; Drop only clears them, so dropping a rewrite never
// loses a record an earlier intent confirmed. BySubject returns both
// confirmed and pending facts (forget treats pending ones as candidates);
// the pending ones are found by scanning the few open intents, not an
// index.
//
// The WAL follower's facts (Observer) are confirmed entries of intent 0.
// SQLite appends each Observe as one row (sqlite_observed.go) and writes
// the waiting rows into entries before any read of entries and any other
// write of it, so that the follower's frequent small commits do not each
// rewrite a page of the subject index per subject. The follower also
// marks, per replication slot (server, database, name), that the rows
// committed before the slot are durable here (InitialReads): a slot this
// ledger holds no mark for is read again.
//
// Owners and orphans: every handle registers itself at open (a row of
// owners, named by Options.Owner, default host name and random hex) and
// each intent records the id of the handle that made it (one integer
// column, no lookup on the hot path). Pending lists every pending intent;
// PendingOrphans only those no live handle will resolve, which recovery
// (capture.Recover) may decide by asking the store:
//   - a handle's own intents are never orphans;
//   - intents of a handle that closed are (Close removes its row);
//   - SQLite: a file serves one proxy, so every other handle's are (its
//     previous run's), at once;
//   - PostgreSQL: several proxies share the ledger, so a handle holds a
//     lease (owners.lease_until, in the server's clock; Options
//     LeaseDuration, default 60s, renewed every RenewInterval, default
//     10s) and its intents are orphans once the lease has expired, or at
//     once to a later handle of the same name (a restart under a stable
//     name). A handle whose renewals fail refuses new intents once its
//     own lease lapses, since others may then resolve them.
//
// Intents pending when a ledger is upgraded to schema version 4 have no
// owner and are orphans: at once in SQLite (the proxy upgrading it is the
// one that left them), in PostgreSQL once older than a lease (a proxy of
// the older build may still have them in flight). The upgrade makes the
// older build's Intend fail (a CHECK constraint), so it fails closed
// rather than making intents no one could attribute.
//
// Two proxies may resolve one orphan at once: Confirm and Drop lock the
// intent and report how the other resolved it (ErrUnknownIntent,
// ErrIntentConfirmed), repeats of the same decision being no error.
//
// Durability: a commit that holds an intent is fsynced before Intend
// returns. Confirmations, drops and deletions are committed without
// waiting for fsync in SQLite: one lost to power loss leaves its intent
// pending, which is safe (recovery or forget resolves it).
//
// The subject salt: a ledger's subject hashes match only under the salt
// they were made with, so the ledger keeps a keyed fingerprint of it
// (SaltFingerprint, HMAC-SHA256(salt, a fixed message); never the salt).
// SaltKeeper.RecordSalt records it the first time a command that writes
// subject hashes opens the ledger, and refuses another salt from then on
// (ErrSaltMismatch); CheckSalt compares without writing.
//
// Deletes that name no ids (a Pinecone delete by metadata filter) are
// settled by the wing that saw them through Settler: it lists a table's
// present records page by page, asks the store, and marks deleted those
// gone whose last confirmation precedes the delete, so that a write
// confirmed after it is never undone.
//
// Two backends pass one contract test suite: embedded SQLite (the default,
// zero setup: the ledger file and its pending file) and PostgreSQL
// (several proxies sharing one ledger).
package ledger
