package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" database/sql driver (SQLite's C code, via cgo)
)

// SQLite is the embedded ledger: two files, each with a WAL journal and
// synchronous=FULL, so that a committed write survives kill -9 and power
// loss (intents only kill -9 with Options.IntentSync = IntentNoSync). Intents live in a file of their own until they are resolved (see
// sqlite_pending.go); everything else is in the ledger file. Each file has
// one writer connection, owned by a group committer: intents go through
// one, confirmations, drops and deletions through the other, so neither
// waits for the other. Reads use pools of read-only connections, which WAL
// lets run beside the writers.
type SQLite struct {
	writes
	path   string
	w, r   *sql.DB // the ledger file: writer, readers
	pw, pr *sql.DB // the pending file: writer, readers
	// stmts are sqliteWrites, sqliteReads, pendingWrites and pendingReads,
	// each prepared on its file's writer or readers.
	stmts map[string]*sql.Stmt
	// inserts[k] confirms 1<<k entries (sqlite_confirm.go); insertArgs is
	// their reused argument list. Only the decisions' committer uses them.
	inserts    [insertSizes]*sql.Stmt
	insertArgs []any
	owner      int64 // this handle's row in owners (see owners.go)
	cp         *checkpointer
	// bulkAt is when the last batch of decisions committed; only their
	// committer goroutine touches it.
	bulkAt time.Time
	// pendingFull is pw's synchronous mode (see pendingSync); only the
	// intents' committer touches it. The DSN opens it FULL.
	pendingFull bool
	intentSync  IntentSync
	log         *slog.Logger
}

var _ Ledger = (*SQLite)(nil)

// OpenSQLite opens (creating if needed) the ledger file at path and its
// pending file (path + "-pending"), and brings their schemas up to date.
func OpenSQLite(path string, opts Options) (*SQLite, error) {
	return openSQLite(path, opts, checkpointInterval)
}

// openSQLite is OpenSQLite with the checkpointer's interval (see
// startCheckpointer).
func openSQLite(path string, opts Options, checkpointEvery time.Duration) (l *SQLite, err error) {
	l = &SQLite{path: path, log: opts.logger(), intentSync: opts.intentSync()}
	defer func() {
		if err != nil {
			l.closeFiles()
			err = fmt.Errorf("%w: sqlite ledger %s: %w", ErrUnavailable, path, err)
		}
	}()
	busy := opts.busyTimeout().Milliseconds()
	// A 64 MiB page cache for the writer (SQLite's default is 2 MiB): a
	// confirmation touches the last subject-index page of every subject
	// it names, and re-reading those from the OS on every batch would make
	// its cost per entry grow with the ledger.
	// The writer never checkpoints inside its commits (see
	// sqlite_checkpoint.go).
	l.w = openWriter(path, busy, ledgerWriterPragmas, "_cache_size=-65536")
	if err = migrateSQLite(l.w); err != nil {
		return l, err
	}
	// A bigger page cache per reader: a lookup touches a few pages of the
	// subject index and one leaf per record.
	if l.r, err = sql.Open("sqlite3", sqliteDSN(path, busy, "_query_only=1", "_cache_size=-32768")); err != nil {
		return l, err
	}
	if err = l.openPending(busy); err != nil {
		return l, fmt.Errorf("pending file: %w", err)
	}
	if err = l.prepare(); err != nil {
		return l, err
	}
	if err = l.clearResolvedPending(); err != nil {
		return l, fmt.Errorf("pending file: %w", err)
	}
	if err = l.register(opts.owner()); err != nil {
		return l, fmt.Errorf("registering this handle: %w", err)
	}
	if l.cp, err = startCheckpointer(sqliteDSN(path, busy), path+"-wal", checkpointEvery, l.log); err != nil {
		return l, err
	}
	l.c = newCommitter(l.writeDecisions, opts)
	l.ic = newCommitter(l.writeIntents, opts)
	return l, nil
}

// sqliteDSN is the connection string of the SQLite file at path.
func sqliteDSN(path string, busyMillis int64, extra ...string) string {
	q := url.Values{}
	q.Add("_busy_timeout", fmt.Sprint(busyMillis))
	q.Add("_journal_mode", "WAL")
	// FULL: the WAL is fsynced at every commit. NORMAL would only fsync
	// at checkpoints and could lose the last intents on power loss,
	// breaking "no untracked write".
	q.Add("_synchronous", "FULL")
	q.Add("_foreign_keys", "1")
	for _, p := range extra {
		k, v, _ := strings.Cut(p, "=")
		q.Add(k, v)
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// openWriter opens the one writer connection of the file at path: SQLite
// serialises writers anyway; one connection makes that explicit and keeps
// BEGIN IMMEDIATE from waiting on ourselves. pragmas run on each
// connection it opens, including one database/sql opens again after an
// error: pragmas hold per connection.
func openWriter(path string, busyMillis int64, pragmas []string, extra ...string) *sql.DB {
	db := sql.OpenDB(pragmaConnector{
		dsn: sqliteDSN(path, busyMillis, append(extra, "_txlock=immediate")...),
		driver: &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
			for _, p := range pragmas {
				if _, err := conn.Exec(p, nil); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			return nil
		}},
	})
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	return db
}

// pragmaConnector opens connections through driver, whose ConnectHook
// sets them up.
type pragmaConnector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
}

func (c pragmaConnector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }
func (c pragmaConnector) Driver() driver.Driver                        { return c.driver }

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

// writeDecisions runs a batch of confirmations, drops and deletions in one
// transaction of the ledger file, then deletes the resolved intents from
// the pending file (see sqlite_pending.go for why in that order).
func (l *SQLite) writeDecisions(ctx context.Context, now time.Time, batch []*request) error {
	if l.cp.restartDue(l.bulkAt) {
		// Between transactions, so that the batch starts the WAL over
		// (sqlite_checkpoint.go). A failure only delays that to the next
		// batch.
		if err := l.cp.restart(ctx, l.w); err != nil {
			l.log.Warn("ledger: the writer's checkpoint did not complete; the WAL grows until one does", "err", err)
		}
	}
	pending, err := l.pendingOf(ctx, batch)
	if err != nil {
		return err
	}
	// The writer is shared with forget and the transparency log, which
	// must stay FULL: this batch alone commits on a connection of its own
	// with synchronous=NORMAL (see relaxedSync).
	conn, err := l.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	restore, err := relaxedSync(ctx, conn)
	if err != nil {
		return err
	}
	defer restore()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ts := now.UnixMicro()
	for _, r := range batch {
		if err := l.apply(ctx, tx, ts, r, pending); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	l.bulkAt = time.Now()
	l.clearPending(pending)
	return nil
}

// relaxedSync sets synchronous=NORMAL on conn until restore: commits are
// durable across a process crash, and reach the disk at the next
// checkpoint or FULL commit. For decisions that is enough: one lost to
// power loss leaves its intent pending, which recovery resolves again. An
// fsync per batch would make a caller that decides one intent at a time
// (recovery after a crash) wait for the disk each time. If FULL cannot be
// restored, the connection is closed instead of going back to the pool.
func relaxedSync(ctx context.Context, conn *sql.Conn) (restore func(), err error) {
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return nil, err
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), "PRAGMA synchronous = FULL"); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}, nil
}

// sqliteWrites are the statements of the write path, prepared once on the
// writer connection: compiling them per call cost more than running them.
var sqliteWrites = map[string]string{
	// An intent's outcome, once resolved (see sqlite_pending.go).
	"resolved": `SELECT state FROM intents WHERE id = ? AND state <> 'pending'`,
	"resolve":  `INSERT INTO intents (id, created_at, state, owner_id) VALUES (?, ?, ?, ?)`,
	// The fallback of confirmEntries: one statement over the entries as
	// a JSON array (see entriesJSON), which SQLite walks in C, in order,
	// so later entries win as with a multi-row INSERT. ("WHERE true"
	// settles SQLite's ON-after-SELECT parsing ambiguity.)
	"confirm_upsert": `
		INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
		SELECT e.value ->> 0, e.value ->> 1, e.value ->> 2, unhex(e.value ->> 3), e.value ->> 4, 'confirmed', ?2, ?3
		FROM json_each(?1) AS e WHERE true
		ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
			state = 'confirmed', intent_id = excluded.intent_id, updated_at = excluded.updated_at`,
	"delete_records": `
		UPDATE entries SET state = 'deleted', updated_at = ?
		WHERE store = ? AND tbl = ? AND record_id IN (SELECT value FROM json_each(?)) AND state <> 'deleted'`,
}

// sqliteReads are the read queries of the ledger file, prepared on its
// read pool. Each takes the ids of the pending intents the caller read
// first from the pending file (a JSON array) and returns, in the same
// statement and so the same snapshot, the ones resolved since, whose
// outcome is in the ledger file (see sqlite_pending.go).
var sqliteReads = map[string]string{
	"resolved_among": `SELECT id FROM intents WHERE id IN (SELECT value FROM json_each(?1)) AND state <> 'pending'`,
	"by_subject": `
		SELECT store, tbl, record_id, unattributed, state, intent_id, updated_at
		FROM entries WHERE subject = ?1
		UNION ALL
		SELECT '', '', '', 0, '', id, 0
		FROM intents WHERE id IN (SELECT value FROM json_each(?2)) AND state <> 'pending'`,
	// Holds: the positions (from 0) in the JSON array of entries (see
	// entriesJSON) of those held confirmed.
	"holds": `
		SELECT f.key FROM json_each(?1) AS f
		WHERE EXISTS (SELECT 1 FROM entries e
			WHERE e.store = f.value ->> 0 AND e.tbl = f.value ->> 1 AND e.record_id = f.value ->> 2
				AND e.subject = unhex(f.value ->> 3) AND e.unattributed = 0 AND e.state = 'confirmed')`,
	"counts": `
		SELECT store, tbl, state, count(*) FROM entries GROUP BY store, tbl, state
		UNION ALL
		SELECT '', '', '', id FROM intents WHERE id IN (SELECT value FROM json_each(?1)) AND state <> 'pending'`,
}

// prepare compiles the statements once: SQLite spends more time
// compiling a statement than running these.
func (l *SQLite) prepare() error {
	l.stmts = map[string]*sql.Stmt{}
	for _, set := range []struct {
		db      *sql.DB
		queries map[string]string
	}{{l.w, sqliteWrites}, {l.r, sqliteReads}, {l.pw, pendingWrites}, {l.pr, pendingReads}} {
		for name, q := range set.queries {
			st, err := set.db.Prepare(q)
			if err != nil {
				return fmt.Errorf("prepare %s: %w", name, err)
			}
			l.stmts[name] = st
		}
	}
	return l.prepareConfirmInserts()
}

func (l *SQLite) apply(ctx context.Context, tx *sql.Tx, ts int64, r *request, pending map[IntentID]pendingIntent) error {
	exec := func(name string, args ...any) (sql.Result, error) {
		return tx.StmtContext(ctx, l.stmts[name]).ExecContext(ctx, args...)
	}
	switch r.kind {
	case opConfirm, opDrop:
		var prior string
		err := tx.StmtContext(ctx, l.stmts["resolved"]).QueryRowContext(ctx, int64(r.intent)).Scan(&prior)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		p, ok := pending[r.intent]
		if prior != "" || !ok {
			r.opErr = resolveErr(r.kind, prior)
			return nil
		}
		next := intentDropped
		if r.kind == opConfirm {
			next = intentConfirmed
			entries, err := decodeEntries(p.blob)
			if err != nil {
				return fmt.Errorf("intent %d: %w", r.intent, err)
			}
			if err := l.confirmEntries(ctx, tx, entries, r.intent, ts); err != nil {
				return err
			}
		}
		_, err = exec("resolve", int64(r.intent), p.created, next, p.owner)
		return err

	case opMarkDeleted:
		ids, err := json.Marshal(r.recordIDs)
		if err != nil {
			return err
		}
		_, err = exec("delete_records", ts, string(r.store), r.table, string(ids))
		return err
	}
	return fmt.Errorf("ledger: request kind %d does not go to the ledger file", r.kind)
}

// Pending returns intents not yet confirmed or dropped, oldest first.
func (l *SQLite) Pending(ctx context.Context) ([]Intent, error) {
	return l.pendingIntents(ctx, "pending_all")
}

// PendingOrphans returns the pending intents of every other handle, oldest
// first: a SQLite ledger serves one proxy, so they were left by its earlier
// runs (see owners.go).
func (l *SQLite) PendingOrphans(ctx context.Context) ([]Intent, error) {
	if l.c.isClosed() {
		return nil, ErrClosed
	}
	return l.pendingIntents(ctx, "pending_orphans", l.owner)
}

func (l *SQLite) pendingIntents(ctx context.Context, stmt string, args ...any) ([]Intent, error) {
	ps, err := l.readPending(ctx, stmt, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	resolved, err := l.resolvedAmong(ctx, ps)
	if err != nil {
		return nil, unavailable(err)
	}
	var out []Intent
	for _, p := range ps {
		if resolved[p.id] {
			continue
		}
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(fmt.Errorf("intent %d: %w", p.id, err))
		}
		out = append(out, Intent{ID: p.id, CreatedAt: time.UnixMicro(p.created).UTC(), Entries: entries})
	}
	return out, nil
}

// resolvedAmong returns which of the pending intents ps are resolved in
// the ledger file.
func (l *SQLite) resolvedAmong(ctx context.Context, ps []pendingIntent) (map[IntentID]bool, error) {
	resolved := map[IntentID]bool{}
	if len(ps) == 0 {
		return resolved, nil
	}
	rows, err := l.stmts["resolved_among"].QueryContext(ctx, idsJSON(idsOf(ps)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		resolved[IntentID(id)] = true
	}
	return resolved, rows.Err()
}

// BySubject returns every record about subject, in every state, ordered by
// store, table, record id and intent.
func (l *SQLite) BySubject(ctx context.Context, subject SubjectHash) ([]Record, error) {
	ps, err := l.readPending(ctx, "pending_all")
	if err != nil {
		return nil, unavailable(err)
	}
	var (
		pending []Record
		about   []pendingIntent // the pending intents that name subject
	)
	for _, p := range ps {
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(fmt.Errorf("intent %d: %w", p.id, err))
		}
		named := false
		for _, e := range entries {
			if e.Subject == subject {
				pending = append(pending, Record{Entry: e, State: StatePending, Intent: p.id, UpdatedAt: time.UnixMicro(p.created).UTC()})
				named = true
			}
		}
		if named {
			about = append(about, p)
		}
	}
	rows, err := l.stmts["by_subject"].QueryContext(ctx, subject[:], idsJSON(idsOf(about)))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Record
	resolved := map[IntentID]bool{}
	for rows.Next() {
		var (
			rec     Record
			store   string
			state   string
			intent  int64
			updated int64
		)
		if err := rows.Scan(&store, &rec.Table, &rec.RecordID, &rec.Unattributed, &state, &intent, &updated); err != nil {
			return nil, unavailable(err)
		}
		if state == "" {
			resolved[IntentID(intent)] = true
			continue
		}
		rec.Store, rec.Subject, rec.State, rec.Intent = Store(store), subject, State(state), IntentID(intent)
		rec.UpdatedAt = time.UnixMicro(updated).UTC()
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	for _, rec := range pending {
		if !resolved[rec.Intent] {
			out = append(out, rec)
		}
	}
	sortRecords(out)
	return out, nil
}

// Counts returns record counts per store, table and state.
func (l *SQLite) Counts(ctx context.Context) ([]TableCount, error) {
	ps, err := l.readPending(ctx, "pending_all")
	if err != nil {
		return nil, unavailable(err)
	}
	rows, err := l.stmts["counts"].QueryContext(ctx, idsJSON(idsOf(ps)))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []TableCount
	resolved := map[IntentID]bool{}
	for rows.Next() {
		var c TableCount
		var store, state string
		if err := rows.Scan(&store, &c.Table, &state, &c.Count); err != nil {
			return nil, unavailable(err)
		}
		if state == "" {
			resolved[IntentID(c.Count)] = true
			continue
		}
		c.Store, c.State = Store(store), State(state)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	pending := map[[2]string]int64{}
	for _, p := range ps {
		if resolved[p.id] {
			continue
		}
		entries, err := decodeEntries(p.blob)
		if err != nil {
			return nil, unavailable(err)
		}
		for _, e := range entries {
			pending[[2]string{string(e.Store), e.Table}]++
		}
	}
	for k, n := range pending {
		out = append(out, TableCount{Store: Store(k[0]), Table: k[1], State: StatePending, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Store != b.Store {
			return a.Store < b.Store
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.State < b.State
	})
	return out, nil
}

// sortRecords orders records by store, table, record id and intent, the
// order both backends return them in.
func sortRecords(recs []Record) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.Store != b.Store {
			return a.Store < b.Store
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		if a.RecordID != b.RecordID {
			return a.RecordID < b.RecordID
		}
		return a.Intent < b.Intent
	})
}

// Close commits the writes already submitted, removes this handle from
// the owners, then closes the files.
func (l *SQLite) Close() error {
	if l.c.isClosed() {
		return nil
	}
	l.c.close()  // decisions first: they clear intents from the pending file
	l.ic.close() // through this one
	l.cp.stop()
	l.unregister()
	return l.closeFiles()
}

// closeFiles closes the statements and connections that are open.
func (l *SQLite) closeFiles() error {
	for _, st := range l.stmts {
		st.Close()
	}
	for _, st := range l.inserts {
		if st != nil {
			st.Close()
		}
	}
	var errs []error
	for _, db := range []*sql.DB{l.pr, l.pw, l.r, l.w} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}
