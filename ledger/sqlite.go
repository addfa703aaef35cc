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
	path                          string
	writer, readers               *sql.DB // the ledger file: writer, readers
	pendingWriter, pendingReaders *sql.DB // the pending file: writer, readers
	// stmts are sqliteWrites, sqliteReads, pendingWrites and pendingReads,
	// each prepared on its file's writer or readers.
	stmts map[string]*sql.Stmt
	// inserts[k] confirms 1<<k entries (sqlite_confirm.go); insertArgs is
	// their reused argument list. They are used only inside a transaction
	// of the writer, which has one connection: by one caller at a time.
	inserts     [insertSizes]*sql.Stmt
	insertArgs  []any
	confirmed   confirmedRun // a batch's run of confirmations (sqlite_confirm.go); the decisions' committer's alone
	owner       int64        // this handle's row in owners (see owners.go)
	checkpoints *checkpointer
	observed    observedLog // the WAL follower's changes not yet in entries
	// bulkAt is when the last batch of decisions committed; only their
	// committer goroutine touches it.
	bulkAt time.Time
	// pendingFull is pendingWriter's synchronous mode (see pendingSync); only the
	// intents' committer touches it. The DSN opens it FULL.
	pendingFull bool
	intentSync  syncPolicy
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
	l.writer = openWriter(path, busy, ledgerWriterPragmas, "_cache_size=-65536")
	if err = migrateSQLite(l.writer); err != nil {
		return l, err
	}
	// A bigger page cache per reader: a lookup touches a few pages of the
	// subject index and one leaf per record.
	if l.readers, err = sql.Open("sqlite3", sqliteDSN(path, busy, "_query_only=1", "_cache_size=-32768")); err != nil {
		return l, err
	}
	if err = l.openPending(busy); err != nil {
		return l, fmt.Errorf("pending file: %w", err)
	}
	if err = l.prepare(); err != nil {
		return l, err
	}
	if err = l.loadObserved(); err != nil {
		return l, err
	}
	if err = l.clearResolvedPending(); err != nil {
		return l, fmt.Errorf("pending file: %w", err)
	}
	if err = l.register(opts.owner()); err != nil {
		return l, fmt.Errorf("registering this handle: %w", err)
	}
	if l.checkpoints, err = startCheckpointer(sqliteDSN(path, busy), path+"-wal", checkpointEvery, l.log); err != nil {
		return l, err
	}
	l.decisions = newCommitter(uncancelled(l.writeDecisions), opts)
	l.pendingFile = newCommitter(uncancelled(l.writeIntents), opts)
	return l, nil
}

// uncancelled runs a SQLite batch writer on its context's values without
// its cancellation or deadline. For a context that can end, go-sqlite3
// starts a goroutine per statement to interrupt it, and database/sql one
// per transaction, which together cost a commit of intents more CPU than
// its statements. A SQLite commit's waits are bounded without them: for
// the file's lock by _busy_timeout, the rest by the disk.
func uncancelled(write batchWriter) batchWriter {
	return func(ctx context.Context, now time.Time, batch []*request) error {
		return write(context.WithoutCancel(ctx), now, batch)
	}
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
	// database/sql hands a connection to one goroutine at a time, so
	// SQLite's own per-call mutexes (serialized mode) only cost time.
	q.Add("_mutex", "no")
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

// writeDecisions runs a batch of confirmations, drops and deletions in one
// transaction of the ledger file, then deletes the resolved intents from
// the pending file (see sqlite_pending.go for why in that order).
func (l *SQLite) writeDecisions(ctx context.Context, now time.Time, batch []*request) error {
	if l.checkpoints.restartDue(l.bulkAt) {
		// Between transactions, so that the batch starts the WAL over
		// (sqlite_checkpoint.go). A failure only delays that to the next
		// batch.
		if err := l.checkpoints.restart(ctx, l.writer); err != nil {
			l.log.Warn("ledger: the writer's checkpoint did not complete; the WAL grows until one does", "err", err)
		}
	}
	pending, err := l.pendingOf(ctx, batch)
	if err != nil {
		return err
	}
	l.observed.mu.Lock() // before the writer connection, as every holder takes them
	defer l.observed.mu.Unlock()
	// The writer is shared with forget and the transparency log, which
	// must stay FULL: this batch alone commits on a connection of its own
	// with synchronous=NORMAL (see relaxedSync).
	conn, err := l.writer.Conn(ctx)
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
	drain := l.observed.changes.Load() > 0
	if drain {
		if err := l.drainObserved(ctx, tx); err != nil {
			return err
		}
	}
	ts := now.UnixMicro()
	run := &l.confirmed
	run.reset()
	for _, r := range batch {
		if r.kind != opConfirm && r.kind != opDrop {
			// Records confirmed before a deletion are written before it.
			if err := l.writeConfirmed(ctx, tx, run, ts); err != nil {
				return err
			}
		}
		if err := l.apply(ctx, tx, ts, r, pending, run); err != nil {
			return err
		}
	}
	if err := l.writeConfirmed(ctx, tx, run, ts); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if drain {
		l.observed.drained()
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
	// settles SQLite's ON-after-SELECT parsing ambiguity.) Intent 0 is
	// the WAL follower's (Observer): it confirms a record again but
	// leaves it to the intent that last confirmed it.
	"confirm_upsert": `
		INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
		SELECT e.value ->> 0, e.value ->> 1, e.value ->> 2, unhex(e.value ->> 3), e.value ->> 4, 'confirmed', ?2, ?3
		FROM json_each(?1) AS e WHERE true
		ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
			state = 'confirmed',
			intent_id = CASE excluded.intent_id WHEN 0 THEN entries.intent_id ELSE excluded.intent_id END,
			updated_at = excluded.updated_at`,
	// The WAL follower's changes waiting for entries (sqlite_observed.go).
	"observed_append": `INSERT INTO observed (at, n, changes) VALUES (?, ?, ?)`,
	"observed_all":    `SELECT at, changes FROM observed ORDER BY id`,
	"observed_clear":  `DELETE FROM observed`,
	"truncate_table": `
		UPDATE entries SET state = 'deleted', updated_at = ?
		WHERE store = ? AND tbl = ? AND state <> 'deleted'`,
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
	}{{l.writer, sqliteWrites}, {l.readers, sqliteReads}, {l.pendingWriter, pendingWrites}, {l.pendingReaders, pendingReads}} {
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

// apply writes r inside tx, except a confirmation's entries, which it adds
// to run for writeConfirmed.
func (l *SQLite) apply(ctx context.Context, tx *sql.Tx, ts int64, r *request, pending map[IntentID]pendingIntent, run *confirmedRun) error {
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
			run.add(entries, r.intent)
		}
		_, err = exec("resolve", int64(r.intent), p.created, next, p.owner)
		return err

	case opMarkDeleted:
		return l.markDeleted(ctx, tx, ts, r.store, r.table, r.recordIDs)

	case opMarkTableDeleted:
		_, err := exec("truncate_table", ts, string(r.store), r.table)
		return err

	case opMarkDeletedUnlessConfirmedSince:
		return l.markDeletedUnlessConfirmedSince(ctx, tx, ts, r)
	}
	return fmt.Errorf("ledger: request kind %d does not go to the ledger file", r.kind)
}

// markDeleted marks the records of table with these ids deleted, inside tx.
func (l *SQLite) markDeleted(ctx context.Context, tx *sql.Tx, ts int64, store Store, table string, recordIDs []string) error {
	ids, err := json.Marshal(recordIDs)
	if err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, l.stmts["delete_records"]).ExecContext(ctx, ts, string(store), table, string(ids))
	return err
}

// Close commits the writes already submitted, removes this handle from
// the owners, then closes the files.
func (l *SQLite) Close() error {
	if l.decisions.isClosed() {
		return nil
	}
	l.decisions.close()   // decisions first: they clear intents from the pending file
	l.pendingFile.close() // through this one
	l.checkpoints.stop()
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
	for _, db := range []*sql.DB{l.pendingReaders, l.pendingWriter, l.readers, l.writer} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}
