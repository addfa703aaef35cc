package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// sqliteMigrations are applied in order; migration i brings the schema to
// version i+1. Never edit one that has shipped: append a new one.
//
// The state model: a pending intent's entries are a blob on its intents
// row (migration 2; before it, rows of intent_entries). Confirm expands
// them into entries (one row per record and subject, latest confirmation
// wins) and clears the blob; Drop clears it. So dropping intent B that
// rewrote a record confirmed by intent A leaves A's row in entries
// untouched.
var sqliteMigrations = []string{`
CREATE TABLE intents (
	id         INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused
	created_at INTEGER NOT NULL,                  -- unix microseconds
	state      TEXT NOT NULL CHECK (state IN ('pending', 'confirmed', 'dropped'))
);
CREATE INDEX intents_pending ON intents (id) WHERE state = 'pending';

CREATE TABLE intent_entries (
	intent_id    INTEGER NOT NULL REFERENCES intents (id),
	seq          INTEGER NOT NULL,
	store        TEXT NOT NULL,
	tbl          TEXT NOT NULL,
	record_id    TEXT NOT NULL,
	subject      BLOB NOT NULL CHECK (length(subject) = 32),
	unattributed INTEGER NOT NULL,
	PRIMARY KEY (intent_id, seq)
) WITHOUT ROWID;
CREATE INDEX intent_entries_subject ON intent_entries (subject);

CREATE TABLE entries (
	store        TEXT NOT NULL,
	tbl          TEXT NOT NULL,
	record_id    TEXT NOT NULL, -- '' when the store generated the id
	subject      BLOB NOT NULL CHECK (length(subject) = 32),
	unattributed INTEGER NOT NULL,
	state        TEXT NOT NULL CHECK (state IN ('confirmed', 'deleted')),
	intent_id    INTEGER NOT NULL, -- the intent that last confirmed it
	updated_at   INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (store, tbl, record_id, subject, unattributed)
) WITHOUT ROWID;
CREATE INDEX entries_subject ON entries (subject);
`, `
-- A pending intent's entries are one blob (encodeEntries) on its intents
-- row, NULL once it is resolved: Intend writes one row, not one indexed
-- row per entry. sqliteMoveIntentEntries then converts the pending rows
-- of intent_entries and drops the table.
ALTER TABLE intents ADD COLUMN entries BLOB;
`, `
-- Forget: the journal of erasure requests, the subjects kept gone, and the
-- transparency log (RFC 6962 stored hashes, see package tlog).
CREATE TABLE forget_requests (
	id          TEXT PRIMARY KEY,    -- random, hex; safe in URLs and logs
	subject     BLOB NOT NULL CHECK (length(subject) = 32),
	token_hash  BLOB NOT NULL UNIQUE, -- SHA-256 of the confirm token: single use
	received_at INTEGER NOT NULL,    -- unix microseconds
	deadline    INTEGER NOT NULL,    -- unix microseconds
	status      TEXT NOT NULL CHECK (status IN ('received', 'completed', 'failed')),
	state       BLOB NOT NULL,       -- engine's JSON: plan, commitment, progress
	certificate BLOB,                -- the signed certificate once completed
	lease_owner TEXT,                -- the engine working on it (one at a time)
	lease_until INTEGER,             -- unix microseconds; another engine may take over after
	updated_at  INTEGER NOT NULL
);
-- A subject has at most one forget in progress.
CREATE UNIQUE INDEX forget_requests_one_open ON forget_requests (subject) WHERE status = 'received';
CREATE INDEX forget_requests_subject ON forget_requests (subject);

CREATE TABLE tombstones (
	subject    BLOB PRIMARY KEY CHECK (length(subject) = 32),
	request_id TEXT NOT NULL,
	created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE tlog_records (
	idx  INTEGER PRIMARY KEY, -- leaf index, from 0
	data BLOB NOT NULL
);
CREATE TABLE tlog_hashes (
	idx  INTEGER PRIMARY KEY, -- stored hash index (tlog.StoredHashIndex)
	hash BLOB NOT NULL CHECK (length(hash) = 32)
);
CREATE TABLE tlog_checkpoints (
	size INTEGER PRIMARY KEY, -- tree size; one signed checkpoint per size, ever
	note BLOB NOT NULL
);
`, `
-- Owners (see owners.go): each handle registers at open and deletes its
-- row at Close. A SQLite file serves one proxy, so there is no lease: every
-- other handle's pending intents are orphans.
CREATE TABLE owners (
	id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: an owner_id names one handle
	name       TEXT NOT NULL,
	started_at INTEGER NOT NULL                    -- unix microseconds
);
-- The handle that made the intent. NULL for intents from before version
-- 4, whose proxy is gone: they are orphans.
ALTER TABLE intents ADD COLUMN owner_id INTEGER;
`, `
-- entries without its length(subject) CHECK: a statement that calls a
-- function (a CHECK's included) may abort halfway, so SQLite copies every
-- page it touches into a statement journal first, which doubled the cost
-- of a confirmation. Subjects are SubjectHash values, 32 bytes by type.
CREATE TABLE entries_v5 (
	store        TEXT NOT NULL,
	tbl          TEXT NOT NULL,
	record_id    TEXT NOT NULL, -- '' when the store generated the id
	subject      BLOB NOT NULL, -- HMAC-SHA256, 32 bytes
	unattributed INTEGER NOT NULL,
	state        TEXT NOT NULL CHECK (state IN ('confirmed', 'deleted')),
	intent_id    INTEGER NOT NULL, -- the intent that last confirmed it
	updated_at   INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (store, tbl, record_id, subject, unattributed)
) WITHOUT ROWID;
INSERT INTO entries_v5 SELECT store, tbl, record_id, subject, unattributed, state, intent_id, updated_at FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v5 RENAME TO entries;
CREATE INDEX entries_subject ON entries (subject);
`, `
-- Late writes (see LateWrite): rows about a forgotten subject committed
-- after its forget, deleted by the WAL follower's backstop.
CREATE TABLE late_writes (
	request_id TEXT NOT NULL,
	at         INTEGER NOT NULL, -- unix microseconds
	store      TEXT NOT NULL,
	tbl        TEXT NOT NULL,
	deleted    INTEGER NOT NULL,
	residual   INTEGER NOT NULL,
	log_index  INTEGER NOT NULL
);
CREATE INDEX late_writes_request ON late_writes (request_id);
`, `
-- The WAL follower's changes waiting to be written into entries, one row
-- per Observe (see sqlite_observed.go).
CREATE TABLE observed (
	id      INTEGER PRIMARY KEY, -- the order they were appended in
	at      INTEGER NOT NULL,    -- unix microseconds: the entries' updated_at
	n       INTEGER NOT NULL,    -- how many changes the blob holds
	changes BLOB NOT NULL        -- encodeChanges
);
`, `
-- The keyed fingerprint of the subject salt the ledger is written with
-- (see salt.go), never the salt: one row, recorded by the first command
-- that writes subject hashes.
CREATE TABLE subject_salt (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	fingerprint BLOB NOT NULL,    -- HMAC-SHA256(salt, "lethe subject salt fingerprint v1")
	recorded_at INTEGER NOT NULL  -- unix microseconds
);
`, `
-- The replication slots whose initial read (the rows the configured tables
-- held when the slot was created) is durable in this ledger (see
-- initialread.go): a slot without its row here is read again.
CREATE TABLE initial_reads (
	system_id TEXT NOT NULL,    -- the server's system identifier
	database  TEXT NOT NULL,
	slot      TEXT NOT NULL,
	done_at   INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (system_id, database, slot)
);
`, storeSeenSQLite + `;
` + sqliteAddendaTable + `;
`}

// sqliteMigrationSteps run in Go right after the SQL of the migration of
// the same index, in the same transaction.
var sqliteMigrationSteps = map[int]func(context.Context, *sql.Tx) error{
	1: sqliteMoveIntentEntries,
}

// sqliteMoveIntentEntries converts the per-entry rows of intents pending
// at upgrade into blobs, so that they stay confirmable, droppable and
// findable, then drops intent_entries.
func sqliteMoveIntentEntries(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT intent_id, store, tbl, record_id, subject, unattributed
		FROM intent_entries ORDER BY intent_id, seq`)
	if err != nil {
		return err
	}
	pending := map[int64][]Entry{}
	var order []int64
	for rows.Next() {
		var (
			id      int64
			e       Entry
			store   string
			subject []byte
		)
		if err := rows.Scan(&id, &store, &e.Table, &e.RecordID, &subject, &e.Unattributed); err != nil {
			rows.Close()
			return err
		}
		e.Store = Store(store)
		copy(e.Subject[:], subject)
		if _, ok := pending[id]; !ok {
			order = append(order, id)
		}
		pending[id] = append(pending[id], e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range order {
		if _, err := tx.ExecContext(ctx, `UPDATE intents SET entries = ? WHERE id = ?`, encodeEntries(pending[id]), id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE intent_entries`)
	return err
}

func migrateSQLite(db *sql.DB) error { return migrateSQLiteTo(db, len(sqliteMigrations)) }

// migrateSQLiteTo brings the schema to version n (tests make old versions
// with it).
func migrateSQLiteTo(db *sql.DB, n int) error {
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): one migrator at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(sqliteMigrations) {
		return fmt.Errorf("schema version %d is newer than this build knows (%d); upgrade lethe", v, len(sqliteMigrations))
	}
	for i := v; i < n; i++ {
		if _, err := tx.ExecContext(ctx, sqliteMigrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if step := sqliteMigrationSteps[i]; step != nil {
			if err := step(ctx, tx); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
	}
	if v < n {
		if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, n); err != nil {
			return err
		}
	}
	return tx.Commit()
}
