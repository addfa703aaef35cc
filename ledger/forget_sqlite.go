package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// durableTx runs fn in one transaction on the writer connection, fsynced
// at commit. The forget journal and the transparency log write here
// rather than through the group committer: they write rarely and need
// their own queries. synchronous is set to FULL on the connection first
// because the committer leaves it at NORMAL after decision-only batches;
// the committer's idea of the mode can only be stale towards NORMAL, which
// costs it one extra PRAGMA, never durability.
func (l *SQLite) durableTx(ctx context.Context, fn func(*sql.Tx) error) error {
	conn, err := l.writer.Conn(ctx) // the one writer connection: waits for the committer's batch
	if err != nil {
		return unavailable(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = FULL"); err != nil {
		return unavailable(err)
	}
	return inTx(ctx, conn, fn)
}

// inTx runs fn in one transaction on conn, the writer connection, and
// commits it; fn's error is returned as it is, the database's as
// ErrUnavailable.
func inTx(ctx context.Context, conn *sql.Conn, fn func(*sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return unavailable(err)
	}
	return nil
}

func (l *SQLite) OpenForget(ctx context.Context, r ForgetRequest) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM forget_requests WHERE token_hash = ?`, r.TokenHash[:]).Scan(&n); err != nil {
			return unavailable(err)
		}
		if n > 0 {
			return ErrTokenUsed
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM forget_requests WHERE subject = ? AND status = 'received'`, r.Subject[:]).Scan(&n); err != nil {
			return unavailable(err)
		}
		if n > 0 {
			return ErrForgetInProgress
		}
		now := time.Now().UnixMicro()
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO forget_requests (id, subject, token_hash, received_at, deadline, status, state, updated_at)
			VALUES (?, ?, ?, ?, ?, 'received', ?, ?)`,
			r.ID, r.Subject[:], r.TokenHash[:], r.ReceivedAt.UnixMicro(), r.Deadline.UnixMicro(), nonNilRecord(r.State), now); err != nil {
			return unavailable(err)
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO tombstones (subject, request_id, created_at) VALUES (?, ?, ?)
			ON CONFLICT (subject) DO UPDATE SET request_id = excluded.request_id, created_at = excluded.created_at`,
			r.Subject[:], r.ID, now)
		return unavailable(err)
	})
}

const sqliteForgetColumns = `id, subject, token_hash, received_at, deadline, status, state, certificate, updated_at`

func (l *SQLite) Forget(ctx context.Context, id string) (ForgetRequest, error) {
	return l.oneForget(ctx, `WHERE id = ?`, id)
}

func (l *SQLite) ForgetByToken(ctx context.Context, tokenHash [32]byte) (ForgetRequest, error) {
	return l.oneForget(ctx, `WHERE token_hash = ?`, tokenHash[:])
}

func (l *SQLite) oneForget(ctx context.Context, where string, arg any) (ForgetRequest, error) {
	return firstForget(l.forgets(ctx, where, arg))
}

func (l *SQLite) OpenForgets(ctx context.Context) ([]ForgetRequest, error) {
	return l.forgets(ctx, `WHERE status = 'received' ORDER BY received_at, id`)
}

func (l *SQLite) forgets(ctx context.Context, where string, args ...any) ([]ForgetRequest, error) {
	rows, err := l.readers.QueryContext(ctx, `SELECT `+sqliteForgetColumns+` FROM forget_requests `+where, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []ForgetRequest
	for rows.Next() {
		var (
			r                             ForgetRequest
			subject, token                []byte
			received, deadline, updatedAt int64
			status                        string
		)
		if err := rows.Scan(&r.ID, &subject, &token, &received, &deadline, &status, &r.State, &r.Certificate, &updatedAt); err != nil {
			return nil, unavailable(err)
		}
		copy(r.Subject[:], subject)
		copy(r.TokenHash[:], token)
		r.ReceivedAt, r.Deadline, r.UpdatedAt = time.UnixMicro(received), time.UnixMicro(deadline), time.UnixMicro(updatedAt)
		r.Status = ForgetStatus(status)
		out = append(out, r)
	}
	return out, unavailable(rows.Err())
}

func (l *SQLite) LeaseForget(ctx context.Context, id, owner string, d time.Duration) (bool, error) {
	var ok bool
	err := l.durableTx(ctx, func(tx *sql.Tx) error {
		now := time.Now()
		res, err := tx.ExecContext(ctx, `
			UPDATE forget_requests SET lease_owner = ?, lease_until = ?
			WHERE id = ? AND status = 'received' AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)`,
			owner, now.Add(d).UnixMicro(), id, owner, now.UnixMicro())
		if err != nil {
			return unavailable(err)
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return unavailable(err)
	})
	return ok, err
}

func (l *SQLite) SaveForget(ctx context.Context, id string, state []byte) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE forget_requests SET state = ?, updated_at = ? WHERE id = ? AND status = 'received'`,
			nonNilRecord(state), time.Now().UnixMicro(), id)
		return openRowUpdated(res, err, func() (string, error) { return l.forgetStatus(ctx, tx, id) })
	})
}

func (l *SQLite) FinishForget(ctx context.Context, id string, status ForgetStatus, state, certificate []byte) error {
	if status != ForgetCompleted && status != ForgetFailed {
		return fmt.Errorf("ledger: cannot finish a forget as %q", status)
	}
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE forget_requests SET status = ?, state = ?, certificate = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL
			WHERE id = ? AND status = 'received'`,
			string(status), nonNilRecord(state), certificate, time.Now().UnixMicro(), id)
		return openRowUpdated(res, err, func() (string, error) { return l.forgetStatus(ctx, tx, id) })
	})
}

func (l *SQLite) forgetStatus(ctx context.Context, tx *sql.Tx, id string) (string, error) {
	var s string
	err := tx.QueryRowContext(ctx, `SELECT status FROM forget_requests WHERE id = ?`, id).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, err
}

// openRowUpdated turns the result of an update of an open request into
// ErrNotFound or ErrForgetFinished when it matched no row.
func openRowUpdated(res sql.Result, err error, status func() (string, error)) error {
	if err != nil {
		return unavailable(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable(err)
	}
	if n == 1 {
		return nil
	}
	s, err := status()
	if err != nil {
		return unavailable(err)
	}
	return notOpen(s)
}

// notOpen is the error for a request that is not open: missing ("") or
// finished.
func notOpen(status string) error {
	if status == "" {
		return ErrNotFound
	}
	return ErrForgetFinished
}

func (l *SQLite) Tombstones(ctx context.Context) ([]Tombstone, error) {
	rows, err := l.readers.QueryContext(ctx, `SELECT subject, request_id, created_at FROM tombstones ORDER BY created_at`)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Tombstone
	for rows.Next() {
		var (
			t       Tombstone
			subject []byte
			created int64
		)
		if err := rows.Scan(&subject, &t.RequestID, &created); err != nil {
			return nil, unavailable(err)
		}
		copy(t.Subject[:], subject)
		t.CreatedAt = time.UnixMicro(created)
		out = append(out, t)
	}
	return out, unavailable(rows.Err())
}

func (l *SQLite) LiftTombstone(ctx context.Context, subject SubjectHash) (bool, error) {
	var lifted bool
	err := l.durableTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM tombstones WHERE subject = ?`, subject[:])
		if err != nil {
			return unavailable(err)
		}
		n, err := res.RowsAffected()
		lifted = n > 0
		return unavailable(err)
	})
	return lifted, err
}

func (l *SQLite) AddLateWrite(ctx context.Context, w LateWrite) error {
	return l.durableTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO late_writes (request_id, at, store, tbl, deleted, residual, log_index) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.RequestID, w.At.UnixMicro(), string(w.Store), w.Table, w.Deleted, w.Residual, w.LogIndex)
		return unavailable(err)
	})
}

func (l *SQLite) LateWrites(ctx context.Context, requestID string) ([]LateWrite, error) {
	rows, err := l.readers.QueryContext(ctx, `SELECT at, store, tbl, deleted, residual, log_index FROM late_writes WHERE request_id = ? ORDER BY at, log_index`, requestID)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []LateWrite
	for rows.Next() {
		w := LateWrite{RequestID: requestID}
		var at int64
		if err := rows.Scan(&at, &w.Store, &w.Table, &w.Deleted, &w.Residual, &w.LogIndex); err != nil {
			return nil, unavailable(err)
		}
		w.At = time.UnixMicro(at).UTC()
		out = append(out, w)
	}
	return out, unavailable(rows.Err())
}

func (l *SQLite) ListForgets(ctx context.Context, f ForgetFilter) ([]ForgetSummary, error) {
	where, args := forgetListWhere(f, func(int) string { return "?" }, func(t time.Time) any { return t.UnixMicro() })
	rows, err := l.readers.QueryContext(ctx, `SELECT id, status, received_at, deadline, updated_at FROM forget_requests`+where, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []ForgetSummary
	for rows.Next() {
		var (
			s                             ForgetSummary
			status                        string
			received, deadline, updatedAt int64
		)
		if err := rows.Scan(&s.ID, &status, &received, &deadline, &updatedAt); err != nil {
			return nil, unavailable(err)
		}
		s.Status = ForgetStatus(status)
		s.ReceivedAt, s.Deadline, s.UpdatedAt = time.UnixMicro(received), time.UnixMicro(deadline), time.UnixMicro(updatedAt)
		out = append(out, s)
	}
	return out, unavailable(rows.Err())
}
