package ledger

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// RecordSalt implements SaltKeeper. Proxies starting together each insert
// with ON CONFLICT DO NOTHING, which waits for a concurrent insert to
// commit; the statement after it reads the fingerprint that won, so every
// one of them compares against the same row.
func (l *Postgres) RecordSalt(ctx context.Context, h *Hasher) (SaltCheck, error) {
	given := h.SaltFingerprint()
	var check SaltCheck
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		stored, err := l.saltFingerprint(ctx, tx)
		if err != nil {
			return err
		}
		if check, err = compareSalt(stored, given); err != nil || check != SaltUnrecorded {
			return err
		}
		var held bool
		if err := tx.QueryRow(ctx, l.q(`SELECT EXISTS (SELECT 1 FROM ledger.entries)
			OR EXISTS (SELECT 1 FROM ledger.intents WHERE state = 'pending')
			OR EXISTS (SELECT 1 FROM ledger.tombstones) OR EXISTS (SELECT 1 FROM ledger.forget_requests)`)).Scan(&held); err != nil {
			return unavailable(err)
		}
		tag, err := tx.Exec(ctx, l.q(`INSERT INTO ledger.subject_salt (id, fingerprint, recorded_at)
			VALUES (1, $1, now()) ON CONFLICT (id) DO NOTHING`), given[:])
		if err != nil {
			return unavailable(err)
		}
		if tag.RowsAffected() == 0 {
			// Another handle recorded one first: compare with it.
			if stored, err = l.saltFingerprint(ctx, tx); err != nil {
				return err
			}
			check, err = compareSalt(stored, given)
			return err
		}
		check = SaltRecorded
		if held {
			check = SaltRecordedOnExisting
		}
		return nil
	})
	return check, err
}

// CheckSalt implements SaltKeeper.
func (l *Postgres) CheckSalt(ctx context.Context, h *Hasher) (SaltCheck, error) {
	stored, err := l.saltFingerprint(ctx, l.pool)
	if err != nil {
		return 0, err
	}
	return compareSalt(stored, h.SaltFingerprint())
}

// saltFingerprint is the stored fingerprint, nil when there is none.
func (l *Postgres) saltFingerprint(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) ([]byte, error) {
	var stored []byte
	err := q.QueryRow(ctx, l.q(`SELECT fingerprint FROM ledger.subject_salt WHERE id = 1`)).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return stored, nil
}
