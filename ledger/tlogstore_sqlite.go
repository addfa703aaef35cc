package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"golang.org/x/mod/sumdb/tlog"
)

// SQLiteTlog is the transparency log's storage in the SQLite ledger file
// (tables tlog_records, tlog_hashes, tlog_checkpoints). It satisfies
// translog.Storage. Writes run in durableTx: on the writer connection, not
// through the group committer (log appends are rare, and Append must read
// hashes in the transaction that writes them), as BEGIN IMMEDIATE, so
// that appenders in other processes wait for the lock rather than
// interleave, and fsynced, because a log entry backs a certificate.
type SQLiteTlog struct{ l *SQLite }

// TransparencyLog returns the storage of the transparency log kept in the
// ledger file. It is valid until the ledger is closed.
func (l *SQLite) TransparencyLog() *SQLiteTlog { return &SQLiteTlog{l: l} }

// Append adds record as the next record (see translog.Storage).
func (s *SQLiteTlog) Append(ctx context.Context, record []byte, hashes func(n int64, r tlog.HashReader) ([]tlog.Hash, error)) (int64, error) {
	var n int64
	err := s.l.durableTx(ctx, func(tx *sql.Tx) error {
		var err error
		if n, err = sqliteTlogSize(ctx, tx); err != nil {
			return err
		}
		hs, err := hashes(n, tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
			return sqliteReadHashes(ctx, tx, indexes)
		}))
		if err != nil {
			return err
		}
		if err := checkStoredHashes(n, hs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tlog_records (idx, data) VALUES (?, ?)`, n, nonNilRecord(record)); err != nil {
			return unavailable(err)
		}
		first := tlog.StoredHashIndex(0, n)
		for i, h := range hs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tlog_hashes (idx, hash) VALUES (?, ?)`, first+int64(i), h[:]); err != nil {
				return unavailable(err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// sqlQuerier is a *sql.DB or *sql.Tx.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sqliteTlogSize is max(idx)+1, which SQLite answers from the end of the
// rowid b-tree (idx is the rowid), unlike count(*).
func sqliteTlogSize(ctx context.Context, q sqlQuerier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(idx) + 1, 0) FROM tlog_records`).Scan(&n); err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

func sqliteReadHashes(ctx context.Context, q sqlQuerier, indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return []tlog.Hash{}, nil
	}
	list, err := json.Marshal(indexes)
	if err != nil {
		return nil, err
	}
	// One statement whatever the number of indexes; each is a rowid
	// lookup.
	rows, err := q.QueryContext(ctx, `SELECT idx, hash FROM tlog_hashes WHERE idx IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	return scanHashes(rows, indexes)
}

// ReadHashes returns the stored hashes at indexes.
func (s *SQLiteTlog) ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	return sqliteReadHashes(ctx, s.l.readers, indexes)
}

// ReadRecord returns record n.
func (s *SQLiteTlog) ReadRecord(ctx context.Context, n int64) ([]byte, error) {
	var data []byte
	err := s.l.readers.QueryRowContext(ctx, `SELECT data FROM tlog_records WHERE idx = ?`, n).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoTlogRecord(n)
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return nonNilRecord(data), nil
}

// Size returns the number of records.
func (s *SQLiteTlog) Size(ctx context.Context) (int64, error) {
	return sqliteTlogSize(ctx, s.l.readers)
}

// PutCheckpoint stores the checkpoint of size, once (see translog.Storage).
func (s *SQLiteTlog) PutCheckpoint(ctx context.Context, size int64, note []byte) error {
	return s.l.durableTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO tlog_checkpoints (size, note) VALUES (?, ?) ON CONFLICT (size) DO NOTHING`, size, note)
		if err != nil {
			return unavailable(err)
		}
		added, err := res.RowsAffected()
		if err != nil {
			return unavailable(err)
		}
		if added == 1 {
			return nil
		}
		var stored []byte
		if err := tx.QueryRowContext(ctx, `SELECT note FROM tlog_checkpoints WHERE size = ?`, size).Scan(&stored); err != nil {
			return unavailable(err)
		}
		if !bytes.Equal(stored, note) {
			return errCheckpointConflict(size)
		}
		return nil
	})
}

// Checkpoint returns the checkpoint of size, or nil if none is stored.
func (s *SQLiteTlog) Checkpoint(ctx context.Context, size int64) ([]byte, error) {
	var note []byte
	err := s.l.readers.QueryRowContext(ctx, `SELECT note FROM tlog_checkpoints WHERE size = ?`, size).Scan(&note)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return note, nil
}

// LatestCheckpoint returns the checkpoint of the largest size, or a nil
// note if none is stored.
func (s *SQLiteTlog) LatestCheckpoint(ctx context.Context) (int64, []byte, error) {
	var (
		size int64
		note []byte
	)
	err := s.l.readers.QueryRowContext(ctx, `SELECT size, note FROM tlog_checkpoints ORDER BY size DESC LIMIT 1`).Scan(&size, &note)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, unavailable(err)
	}
	return size, note, nil
}
