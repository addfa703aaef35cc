package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (pure Go)
)

// SQLite is the embedded ledger: one file, WAL journal, synchronous=FULL so
// that a committed intent survives kill -9 and power loss. All writes go
// through one connection owned by the group committer; reads use a separate
// pool of read-only connections, which WAL lets run beside the writer.
type SQLite struct {
	writes
	path  string
	w, r  *sql.DB
	stmts map[string]*sql.Stmt // sqliteWrites prepared on w, sqliteReads on r
}

var _ Ledger = (*SQLite)(nil)

// OpenSQLite opens (creating if needed) the ledger file at path and brings
// its schema up to date.
func OpenSQLite(path string, opts Options) (*SQLite, error) {
	busy := opts.busyTimeout().Milliseconds()
	dsn := func(extra ...string) string {
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
		q.Add("_pragma", "journal_mode(WAL)")
		// FULL: the WAL is fsynced at every commit. NORMAL would only
		// fsync at checkpoints and could lose the last intents on power
		// loss, breaking "no untracked write".
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "foreign_keys(1)")
		for _, p := range extra {
			q.Add("_pragma", p)
		}
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn()+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("%w: open sqlite ledger %s: %w", ErrUnavailable, path, err)
	}
	// One writer: SQLite serialises writers anyway; one connection makes
	// that explicit and keeps BEGIN IMMEDIATE from waiting on ourselves.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrateSQLite(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: sqlite ledger %s: %w", ErrUnavailable, path, err)
	}
	// A bigger page cache per reader: a lookup touches a few pages of the
	// subject index and one leaf per record.
	r, err := sql.Open("sqlite", dsn("query_only(1)", "cache_size(-32768)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: open sqlite ledger %s: %w", ErrUnavailable, path, err)
	}
	l := &SQLite{path: path, w: w, r: r}
	if err := l.prepare(); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("%w: sqlite ledger %s: %w", ErrUnavailable, path, err)
	}
	l.c = newCommitter(l.writeBatch, opts)
	return l, nil
}

// sqliteMigrations are applied in order; migration i brings the schema to
// version i+1. Never edit one that has shipped: append a new one.
//
// The state model: intent_entries holds the entries of pending intents
// only, keyed by intent. Confirm moves them into entries (one row per
// record and subject, latest confirmation wins) and deletes them; Drop
// deletes them. So dropping intent B that rewrote a record confirmed by
// intent A leaves A's row in entries untouched.
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
`}

func migrateSQLite(db *sql.DB) error {
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
	for i := v; i < len(sqliteMigrations); i++ {
		if _, err := tx.ExecContext(ctx, sqliteMigrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if v < len(sqliteMigrations) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, len(sqliteMigrations)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// writeBatch runs batch in one transaction: one fsync for all of it.
func (l *SQLite) writeBatch(ctx context.Context, now time.Time, batch []*request) error {
	tx, err := l.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ts := now.UnixMicro()
	for _, r := range batch {
		if err := l.apply(ctx, tx, ts, r); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// sqliteWrites are the statements of the write path, prepared once on the
// writer connection: compiling them per call cost more than running them.
var sqliteWrites = map[string]string{
	"intent":       `INSERT INTO intents (created_at, state) VALUES (?, 'pending')`,
	"intent_entry": `INSERT INTO intent_entries (intent_id, seq, store, tbl, record_id, subject, unattributed) VALUES (?, ?, ?, ?, ?, ?, ?)`,
	"state":        `SELECT state FROM intents WHERE id = ?`,
	// "WHERE" before ON CONFLICT is required: SQLite's parser cannot
	// otherwise tell the upsert from a join.
	"confirm": `
		INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
		SELECT store, tbl, record_id, subject, unattributed, 'confirmed', intent_id, ?
		FROM intent_entries WHERE intent_id = ?
		ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
			state = 'confirmed', intent_id = excluded.intent_id, updated_at = excluded.updated_at`,
	"clear":   `DELETE FROM intent_entries WHERE intent_id = ?`,
	"resolve": `UPDATE intents SET state = ? WHERE id = ?`,
	"delete_records": `
		UPDATE entries SET state = 'deleted', updated_at = ?
		WHERE store = ? AND tbl = ? AND record_id IN (SELECT value FROM json_each(?)) AND state <> 'deleted'`,
}

// sqliteReads are the read queries, prepared on the read pool.
var sqliteReads = map[string]string{
	"pending": `
		SELECT i.id, i.created_at, e.store, e.tbl, e.record_id, e.subject, e.unattributed
		FROM intents i LEFT JOIN intent_entries e ON e.intent_id = i.id
		WHERE i.state = 'pending'
		ORDER BY i.id, e.seq`,
	// Confirmed and deleted records from entries, pending ones from the
	// intents still open.
	"by_subject": `
		SELECT store, tbl, record_id, unattributed, state, intent_id, updated_at
		FROM entries WHERE subject = ?1
		UNION ALL
		SELECT e.store, e.tbl, e.record_id, e.unattributed, 'pending', e.intent_id, i.created_at
		FROM intent_entries e JOIN intents i ON i.id = e.intent_id
		WHERE e.subject = ?1
		ORDER BY 1, 2, 3, 6`,
	"counts": `
		SELECT store, tbl, state, count(*) FROM entries GROUP BY store, tbl, state
		UNION ALL
		SELECT store, tbl, 'pending', count(*) FROM intent_entries GROUP BY store, tbl
		ORDER BY 1, 2, 3`,
}

// prepare compiles the statements once: modernc's SQLite spends more time
// compiling a statement than running these (a BySubject went from ~280µs
// to ~60µs).
func (l *SQLite) prepare() error {
	l.stmts = make(map[string]*sql.Stmt, len(sqliteWrites)+len(sqliteReads))
	for _, set := range []struct {
		db      *sql.DB
		queries map[string]string
	}{{l.w, sqliteWrites}, {l.r, sqliteReads}} {
		for name, q := range set.queries {
			st, err := set.db.Prepare(q)
			if err != nil {
				return fmt.Errorf("prepare %s: %w", name, err)
			}
			l.stmts[name] = st
		}
	}
	return nil
}

func (l *SQLite) apply(ctx context.Context, tx *sql.Tx, ts int64, r *request) error {
	exec := func(name string, args ...any) (sql.Result, error) {
		return tx.StmtContext(ctx, l.stmts[name]).ExecContext(ctx, args...)
	}
	switch r.kind {
	case opIntend:
		res, err := exec("intent", ts)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		r.id = IntentID(id)
		for i, e := range r.entries {
			if _, err := exec("intent_entry", id, i, string(e.Store), e.Table, e.RecordID, e.Subject[:], e.Unattributed); err != nil {
				return err
			}
		}
		return nil

	case opConfirm, opDrop:
		var prior string
		err := tx.StmtContext(ctx, l.stmts["state"]).QueryRowContext(ctx, int64(r.intent)).Scan(&prior)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		if prior != intentPending {
			r.opErr = resolveErr(r.kind, prior)
			return nil
		}
		next := intentDropped
		if r.kind == opConfirm {
			next = intentConfirmed
			if _, err := exec("confirm", ts, int64(r.intent)); err != nil {
				return err
			}
		}
		if _, err := exec("clear", int64(r.intent)); err != nil {
			return err
		}
		_, err = exec("resolve", next, int64(r.intent))
		return err

	case opMarkDeleted:
		ids, err := json.Marshal(r.recordIDs)
		if err != nil {
			return err
		}
		_, err = exec("delete_records", ts, string(r.store), r.table, string(ids))
		return err
	}
	return fmt.Errorf("ledger: unknown request kind %d", r.kind)
}

// Pending returns intents not yet confirmed or dropped, oldest first.
func (l *SQLite) Pending(ctx context.Context) ([]Intent, error) {
	rows, err := l.stmts["pending"].QueryContext(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		var (
			id           int64
			created      int64
			store, tbl   sql.NullString
			recordID     sql.NullString
			subject      []byte
			unattributed sql.NullBool
		)
		if err := rows.Scan(&id, &created, &store, &tbl, &recordID, &subject, &unattributed); err != nil {
			return nil, unavailable(err)
		}
		if len(out) == 0 || out[len(out)-1].ID != IntentID(id) {
			out = append(out, Intent{ID: IntentID(id), CreatedAt: time.UnixMicro(created).UTC()})
		}
		if !store.Valid { // an intent with no entries
			continue
		}
		e := Entry{Store: Store(store.String), Table: tbl.String, RecordID: recordID.String, Unattributed: unattributed.Bool}
		copy(e.Subject[:], subject)
		out[len(out)-1].Entries = append(out[len(out)-1].Entries, e)
	}
	return out, unavailable(rows.Err())
}

// BySubject returns every record about subject, in every state.
func (l *SQLite) BySubject(ctx context.Context, subject SubjectHash) ([]Record, error) {
	rows, err := l.stmts["by_subject"].QueryContext(ctx, subject[:])
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Record
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
		rec.Store, rec.Subject, rec.State, rec.Intent = Store(store), subject, State(state), IntentID(intent)
		rec.UpdatedAt = time.UnixMicro(updated).UTC()
		out = append(out, rec)
	}
	return out, unavailable(rows.Err())
}

// Counts returns record counts per store, table and state.
func (l *SQLite) Counts(ctx context.Context) ([]TableCount, error) {
	rows, err := l.stmts["counts"].QueryContext(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []TableCount
	for rows.Next() {
		var c TableCount
		var store, state string
		if err := rows.Scan(&store, &c.Table, &state, &c.Count); err != nil {
			return nil, unavailable(err)
		}
		c.Store, c.State = Store(store), State(state)
		out = append(out, c)
	}
	return out, unavailable(rows.Err())
}

// Close commits the writes already submitted, then closes the file.
func (l *SQLite) Close() error {
	l.c.close()
	for _, st := range l.stmts {
		st.Close()
	}
	rerr := l.r.Close()
	if err := l.w.Close(); err != nil {
		return err
	}
	return rerr
}
