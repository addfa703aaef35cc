package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The journal runs its statements on the pool, with synchronous_commit on
// (the pool's default), outside the group committer.

func (l *Postgres) OpenForget(ctx context.Context, r ForgetRequest) error {
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		var used bool
		if err := tx.QueryRow(ctx, l.q(`SELECT EXISTS (SELECT 1 FROM ledger.forget_requests WHERE token_hash = $1)`), r.TokenHash[:]).Scan(&used); err != nil {
			return err
		}
		if used {
			return ErrTokenUsed
		}
		if _, err := tx.Exec(ctx, l.q(`
			INSERT INTO ledger.forget_requests (id, subject, token_hash, received_at, deadline, status, state, updated_at)
			VALUES ($1, $2, $3, $4, $5, 'received', $6, now())`),
			r.ID, r.Subject[:], r.TokenHash[:], r.ReceivedAt, r.Deadline, nonNilRecord(r.State)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, l.q(`
			INSERT INTO ledger.tombstones (subject, request_id, created_at) VALUES ($1, $2, now())
			ON CONFLICT (subject) DO UPDATE SET request_id = excluded.request_id, created_at = excluded.created_at`),
			r.Subject[:], r.ID)
		return err
	})
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "forget_requests_one_open":
		return ErrForgetInProgress
	case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "forget_requests_token_hash_key":
		// Two requests with one token raced past the EXISTS check.
		return ErrTokenUsed
	case errors.Is(err, ErrTokenUsed):
		return err
	}
	return unavailable(err)
}

const pgForgetColumns = `id, subject, token_hash, received_at, deadline, status, state, certificate, updated_at`

func (l *Postgres) Forget(ctx context.Context, id string) (ForgetRequest, error) {
	return l.oneForget(ctx, `WHERE id = $1`, id)
}

func (l *Postgres) ForgetByToken(ctx context.Context, tokenHash [32]byte) (ForgetRequest, error) {
	return l.oneForget(ctx, `WHERE token_hash = $1`, tokenHash[:])
}

func (l *Postgres) oneForget(ctx context.Context, where string, arg any) (ForgetRequest, error) {
	return firstForget(l.forgets(ctx, where, arg))
}

func (l *Postgres) OpenForgets(ctx context.Context) ([]ForgetRequest, error) {
	return l.forgets(ctx, `WHERE status = 'received' ORDER BY received_at, id`)
}

func (l *Postgres) forgets(ctx context.Context, where string, args ...any) ([]ForgetRequest, error) {
	rows, err := l.pool.Query(ctx, l.q(`SELECT `+pgForgetColumns+` FROM ledger.forget_requests `+where), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ForgetRequest, error) {
		var (
			r              ForgetRequest
			subject, token []byte
			status         string
		)
		err := row.Scan(&r.ID, &subject, &token, &r.ReceivedAt, &r.Deadline, &status, &r.State, &r.Certificate, &r.UpdatedAt)
		copy(r.Subject[:], subject)
		copy(r.TokenHash[:], token)
		r.Status = ForgetStatus(status)
		return r, err
	})
	return out, unavailable(err)
}

func (l *Postgres) LeaseForget(ctx context.Context, id, owner string, d time.Duration) (bool, error) {
	tag, err := l.pool.Exec(ctx, l.q(`
		UPDATE ledger.forget_requests SET lease_owner = $2, lease_until = now() + $3::interval
		WHERE id = $1 AND status = 'received' AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())`),
		id, owner, d.String())
	if err != nil {
		return false, unavailable(err)
	}
	return tag.RowsAffected() == 1, nil
}

func (l *Postgres) SaveForget(ctx context.Context, id string, state []byte) error {
	tag, err := l.pool.Exec(ctx, l.q(`UPDATE ledger.forget_requests SET state = $2, updated_at = now() WHERE id = $1 AND status = 'received'`),
		id, nonNilRecord(state))
	return l.openRowUpdated(ctx, id, tag, err)
}

func (l *Postgres) FinishForget(ctx context.Context, id string, status ForgetStatus, state, certificate []byte) error {
	if status != ForgetCompleted && status != ForgetFailed {
		return fmt.Errorf("ledger: cannot finish a forget as %q", status)
	}
	tag, err := l.pool.Exec(ctx, l.q(`
		UPDATE ledger.forget_requests SET status = $2, state = $3, certificate = $4, updated_at = now(), lease_owner = NULL, lease_until = NULL
		WHERE id = $1 AND status = 'received'`),
		id, string(status), nonNilRecord(state), certificate)
	return l.openRowUpdated(ctx, id, tag, err)
}

func (l *Postgres) openRowUpdated(ctx context.Context, id string, tag pgconn.CommandTag, err error) error {
	if err != nil {
		return unavailable(err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var status string
	err = l.pool.QueryRow(ctx, l.q(`SELECT status FROM ledger.forget_requests WHERE id = $1`), id).Scan(&status)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return unavailable(err)
	}
	return notOpen(status)
}

func (l *Postgres) Tombstones(ctx context.Context) ([]Tombstone, error) {
	rows, err := l.pool.Query(ctx, l.q(`SELECT subject, request_id, created_at FROM ledger.tombstones ORDER BY created_at`))
	if err != nil {
		return nil, unavailable(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Tombstone, error) {
		var (
			t       Tombstone
			subject []byte
		)
		err := row.Scan(&subject, &t.RequestID, &t.CreatedAt)
		copy(t.Subject[:], subject)
		return t, err
	})
	return out, unavailable(err)
}

func (l *Postgres) LiftTombstone(ctx context.Context, subject SubjectHash) (bool, error) {
	tag, err := l.pool.Exec(ctx, l.q(`DELETE FROM ledger.tombstones WHERE subject = $1`), subject[:])
	if err != nil {
		return false, unavailable(err)
	}
	return tag.RowsAffected() > 0, nil
}

func (l *Postgres) AddLateWrite(ctx context.Context, w LateWrite) error {
	_, err := l.pool.Exec(ctx, l.q(`INSERT INTO ledger.late_writes (request_id, at, store, tbl, deleted, residual, log_index) VALUES ($1, $2, $3, $4, $5, $6, $7)`),
		w.RequestID, w.At, string(w.Store), w.Table, w.Deleted, w.Residual, w.LogIndex)
	return unavailable(err)
}

func (l *Postgres) LateWrites(ctx context.Context, requestID string) ([]LateWrite, error) {
	rows, err := l.pool.Query(ctx, l.q(`SELECT at, store, tbl, deleted, residual, log_index FROM ledger.late_writes WHERE request_id = $1 ORDER BY at, log_index`), requestID)
	if err != nil {
		return nil, unavailable(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LateWrite, error) {
		w := LateWrite{RequestID: requestID}
		var store string
		err := row.Scan(&w.At, &store, &w.Table, &w.Deleted, &w.Residual, &w.LogIndex)
		w.Store, w.At = Store(store), w.At.UTC()
		return w, err
	})
	return out, unavailable(err)
}

func (l *Postgres) ListForgets(ctx context.Context, f ForgetFilter) ([]ForgetSummary, error) {
	where, args := forgetListWhere(f, func(n int) string { return "$" + strconv.Itoa(n) }, func(t time.Time) any { return t })
	rows, err := l.pool.Query(ctx, l.q(`SELECT id, status, received_at, deadline, updated_at FROM ledger.forget_requests`+where), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ForgetSummary, error) {
		var (
			s      ForgetSummary
			status string
		)
		err := row.Scan(&s.ID, &status, &s.ReceivedAt, &s.Deadline, &s.UpdatedAt)
		s.Status = ForgetStatus(status)
		return s, err
	})
	return out, unavailable(err)
}
