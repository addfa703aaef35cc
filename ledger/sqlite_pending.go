package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// The pending file. Intents live in a SQLite file of their own beside the
// ledger file (path + "-pending") until they are resolved, for two
// reasons:
//
//   - an intent's commit fsyncs only the pending file's WAL. In one file it
//     also flushed every page the confirmations before it had written;
//   - a transaction of confirmations no longer holds the writer that
//     intents wait for. In one file it had to commit as soon as an intent
//     was queued, every few milliseconds under load, and each commit wrote
//     again the index pages the previous one had written.
//
// Resolving an intent commits in the ledger file first: its entries (when
// confirmed) and its outcome, a row of intents. Then its pending row is
// deleted. A crash in between leaves a pending row whose intent is
// resolved; open deletes those, and until then readers skip them: every
// read takes the pending rows first, then, from the ledger file, the
// records and which of those intents are resolved, in one statement. An
// intent resolved between the two reads is then seen resolved, with its
// entries, so a reader never misses a record.
//
// Pending rows keep their intent's id, which the ledger file's intents row
// takes when it is resolved. AUTOINCREMENT in the pending file, raised at
// open past every id the ledger file knows, keeps ids from being reused.

// pendingSchemaVersion is the pending file's PRAGMA user_version.
const pendingSchemaVersion = 1

const pendingSchema = `
CREATE TABLE IF NOT EXISTS pending (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	created_at INTEGER NOT NULL, -- unix microseconds
	entries    BLOB,             -- encodeEntries
	owner_id   INTEGER           -- the handle that made it (owners, in the ledger file)
);
PRAGMA user_version = 1;
`

// pendingWrites are prepared on the pending file's writer, pendingReads
// on its readers.
var pendingWrites = map[string]string{
	"pending_intend": `INSERT INTO pending (created_at, entries, owner_id) VALUES (?, ?, ?)`,
	"pending_clear":  `DELETE FROM pending WHERE id IN (SELECT value FROM json_each(?))`,
}

var pendingReads = map[string]string{
	"pending_all": `SELECT id, created_at, entries, owner_id FROM pending ORDER BY id`,
	// Every handle but this one is gone (see owners.go); IS NOT keeps the
	// NULL owners of intents from before schema version 4.
	"pending_orphans": `SELECT id, created_at, entries, owner_id FROM pending WHERE owner_id IS NOT ?1 ORDER BY id`,
	"pending_of":      `SELECT id, created_at, entries, owner_id FROM pending WHERE id IN (SELECT value FROM json_each(?1))`,
}

// pendingIntent is a row of the pending file.
type pendingIntent struct {
	id      IntentID
	created int64 // unix microseconds
	blob    []byte
	owner   sql.NullInt64
}

// openPending opens the pending file, creating it if needed, and brings
// it in line with the ledger file: intents left pending in the ledger file
// by a build before the split move over, and ids continue past the ledger
// file's. (Rows of intents resolved before a crash go once the statements
// are prepared: clearResolvedPending.)
func (l *SQLite) openPending(busyMillis int64) error {
	path := l.path + "-pending"
	l.pendingWriter = openWriter(path, busyMillis, nil)
	var err error
	l.pendingFull = true // the DSN's; a reconnection after an error is FULL too
	var version int
	if err := l.pendingWriter.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if version > pendingSchemaVersion {
		return fmt.Errorf("%s: schema version %d is newer than this build knows (%d); upgrade lethe", path, version, pendingSchemaVersion)
	}
	if _, err := l.pendingWriter.Exec(pendingSchema); err != nil {
		return err
	}
	if l.pendingReaders, err = sql.Open("sqlite3", sqliteDSN(path, busyMillis, "_query_only=1")); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.moveLegacyPending(ctx); err != nil {
		return fmt.Errorf("moving pending intents from the ledger file: %w", err)
	}
	return l.continueIDs(ctx)
}

// moveLegacyPending moves the intents a build before the pending file left
// pending in the ledger file. Copy, then delete: a crash in between only
// repeats the move at the next open.
func (l *SQLite) moveLegacyPending(ctx context.Context) error {
	rows, err := l.writer.QueryContext(ctx, `SELECT id, created_at, entries, owner_id FROM intents WHERE state = 'pending'`)
	if err != nil {
		return err
	}
	ps, err := scanPending(rows)
	if err != nil || len(ps) == 0 {
		return err
	}
	tx, err := l.pendingWriter.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, p := range ps {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pending (id, created_at, entries, owner_id) VALUES (?, ?, ?, ?)`,
			int64(p.id), p.created, p.blob, p.owner); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = l.writer.ExecContext(ctx, `DELETE FROM intents WHERE state = 'pending'`)
	return err
}

// continueIDs makes the pending file's next id follow every id the ledger
// file has seen.
func (l *SQLite) continueIDs(ctx context.Context) error {
	var last int64
	if err := l.writer.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM intents`).Scan(&last); err != nil {
		return err
	}
	if _, err := l.pendingWriter.ExecContext(ctx, `
		INSERT INTO sqlite_sequence (name, seq) SELECT 'pending', ?1
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'pending')`, last); err != nil {
		return err
	}
	_, err := l.pendingWriter.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'pending' AND seq < ?1`, last)
	return err
}

// clearResolvedPending deletes the pending rows of intents resolved in the
// ledger file, which a crash left behind. It runs at open, once the
// statements are prepared and before the committers start.
func (l *SQLite) clearResolvedPending() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ps, err := l.readPending(ctx, "pending_all")
	if err != nil {
		return err
	}
	resolved, err := l.resolvedAmong(ctx, ps)
	if err != nil || len(resolved) == 0 {
		return err
	}
	_, err = l.pendingWriter.ExecContext(ctx, pendingWrites["pending_clear"], idsJSON(slices.Collect(maps.Keys(resolved))))
	return err
}

// writeIntents runs a batch of intents, and of clearings of resolved
// ones, in one transaction of the pending file: one fsync for all of it.
func (l *SQLite) writeIntents(ctx context.Context, now time.Time, batch []*request) error {
	if err := l.pendingSync(ctx, l.intentSync.durable(batch)); err != nil {
		return err
	}
	tx, err := l.pendingWriter.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ts := now.UnixMicro()
	for _, r := range batch {
		switch r.kind {
		case opIntend:
			res, err := tx.StmtContext(ctx, l.stmts["pending_intend"]).ExecContext(ctx, ts, encodeEntries(r.entries), l.owner)
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			r.id = IntentID(id)
		case opClearPending:
			if _, err := tx.StmtContext(ctx, l.stmts["pending_clear"]).ExecContext(ctx, r.idsJSON); err != nil {
				return err
			}
		default:
			return fmt.Errorf("ledger: request kind %d does not go to the pending file", r.kind)
		}
	}
	return tx.Commit()
}

// pendingSync sets how the pending file's next commit reaches the disk:
// fsynced (FULL) when it holds an intent, which must survive power loss
// before the proxy forwards its write (unless Options.IntentSync is
// IntentNoSync); NORMAL for clearings alone (see relaxedSync: one lost to
// power loss leaves a row that readers skip and the next open deletes). Only the intents' committer uses the pending
// file's writer, so the mode it sets stays set.
func (l *SQLite) pendingSync(ctx context.Context, full bool) error {
	if l.pendingFull == full {
		return nil
	}
	mode := "NORMAL"
	if full {
		mode = "FULL"
	}
	if _, err := l.pendingWriter.ExecContext(ctx, "PRAGMA synchronous = "+mode); err != nil {
		return err
	}
	l.pendingFull = full
	return nil
}

// pendingOf reads the pending rows of the intents a batch of decisions
// resolves. Pending rows never change, so reading them before the
// ledger file's transaction is as good as inside it.
func (l *SQLite) pendingOf(ctx context.Context, batch []*request) (map[IntentID]pendingIntent, error) {
	var ids []IntentID
	for _, r := range batch {
		if r.kind == opConfirm || r.kind == opDrop {
			ids = append(ids, r.intent)
		}
	}
	out := map[IntentID]pendingIntent{}
	if len(ids) == 0 {
		return out, nil
	}
	ps, err := l.readPending(ctx, "pending_of", idsJSON(ids))
	for _, p := range ps {
		out[p.id] = p
	}
	return out, err
}

// clearPending deletes from the pending file the rows of intents a
// committed batch of decisions has resolved (or found resolved). A
// failure leaves rows that readers skip and the next open deletes.
func (l *SQLite) clearPending(resolved map[IntentID]pendingIntent) {
	if len(resolved) == 0 {
		return
	}
	ids := slices.Collect(maps.Keys(resolved))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.pendingFile.submit(&request{ctx: ctx, kind: opClearPending, idsJSON: idsJSON(ids)}); err != nil {
		l.log.Warn("ledger: could not clear resolved intents from the pending file; readers skip them and the next open clears them",
			"intents", len(ids), "err", err)
	}
}

// readPending runs one of pendingReads.
func (l *SQLite) readPending(ctx context.Context, stmt string, args ...any) ([]pendingIntent, error) {
	rows, err := l.stmts[stmt].QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return scanPending(rows)
}

// scanPending reads rows of (id, created_at, entries, owner_id) and closes
// them.
func scanPending(rows *sql.Rows) ([]pendingIntent, error) {
	defer rows.Close()
	var out []pendingIntent
	for rows.Next() {
		var (
			p  pendingIntent
			id int64
		)
		if err := rows.Scan(&id, &p.created, &p.blob, &p.owner); err != nil {
			return nil, err
		}
		p.id = IntentID(id)
		out = append(out, p)
	}
	return out, rows.Err()
}

// idsJSON is ids as a JSON array, for json_each.
func idsJSON(ids []IntentID) string {
	b := []byte{'['}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return string(append(b, ']'))
}

// idsOf returns the ids of ps.
func idsOf(ps []pendingIntent) []IntentID {
	ids := make([]IntentID, len(ps))
	for i, p := range ps {
		ids[i] = p.id
	}
	return ids
}
