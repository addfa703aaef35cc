package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// RecordSalt implements SaltKeeper in one transaction of the writer
// (BEGIN IMMEDIATE, so a second process opening the file waits and then
// finds the first one's fingerprint).
func (l *SQLite) RecordSalt(ctx context.Context, h *Hasher) (SaltCheck, error) {
	given := h.SaltFingerprint()
	var check SaltCheck
	err := l.durableTx(ctx, func(tx *sql.Tx) error {
		stored, err := sqliteSaltFingerprint(ctx, tx)
		if err != nil {
			return err
		}
		if check, err = compareSalt(stored, given); err != nil || check != SaltUnrecorded {
			return err
		}
		var held bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM entries) OR EXISTS (SELECT 1 FROM observed)
			OR EXISTS (SELECT 1 FROM tombstones) OR EXISTS (SELECT 1 FROM forget_requests)`).Scan(&held); err != nil {
			return unavailable(err)
		}
		if !held {
			// Intents still pending live in the pending file.
			if err := l.pendingReaders.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pending WHERE entries IS NOT NULL)`).Scan(&held); err != nil {
				return unavailable(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO subject_salt (id, fingerprint, recorded_at) VALUES (1, ?, ?)`,
			given[:], time.Now().UnixMicro()); err != nil {
			return unavailable(err)
		}
		check = SaltRecorded
		if held {
			check = SaltRecordedOnExisting
		}
		return nil
	})
	return check, err
}

// CheckSalt implements SaltKeeper on the read pool.
func (l *SQLite) CheckSalt(ctx context.Context, h *Hasher) (SaltCheck, error) {
	stored, err := sqliteSaltFingerprint(ctx, l.readers)
	if err != nil {
		return 0, err
	}
	return compareSalt(stored, h.SaltFingerprint())
}

// sqliteSaltFingerprint is the stored fingerprint, nil when there is none.
func sqliteSaltFingerprint(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) ([]byte, error) {
	var stored []byte
	err := q.QueryRowContext(ctx, `SELECT fingerprint FROM subject_salt WHERE id = 1`).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return stored, nil
}
