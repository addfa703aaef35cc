package ledger

import (
	"bytes"
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"
)

// PostgresTlog is the transparency log's storage in the PostgreSQL ledger
// schema (tables tlog_records, tlog_hashes, tlog_checkpoints). It
// satisfies translog.Storage; proxies sharing the ledger share the log.
type PostgresTlog struct{ l *Postgres }

// TransparencyLog returns the storage of the transparency log kept in the
// ledger schema. It is valid until the ledger is closed.
func (l *Postgres) TransparencyLog() *PostgresTlog { return &PostgresTlog{l: l} }

// pgQuerier is a pool or a transaction.
type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Append adds record as the next record (see translog.Storage). The
// transaction first takes an advisory lock held to its end, so that
// appenders in every process sharing the schema run one after the other,
// and each reads the size its predecessor committed (READ COMMITTED takes
// a new snapshot per statement, after the lock is granted).
func (s *PostgresTlog) Append(ctx context.Context, record []byte, hashes func(n int64, r tlog.HashReader) ([]tlog.Hash, error)) (int64, error) {
	tx, err := s.l.pool.Begin(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, tlogLockKey(s.l.schemaName)); err != nil {
		return 0, unavailable(err)
	}
	n, err := s.size(ctx, tx)
	if err != nil {
		return 0, err
	}
	hs, err := hashes(n, tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		return s.readHashes(ctx, tx, indexes)
	}))
	if err != nil {
		return 0, err
	}
	if err := checkStoredHashes(n, hs); err != nil {
		return 0, err
	}
	idx, raw := make([]int64, len(hs)), make([][]byte, len(hs))
	for i := range hs {
		idx[i], raw[i] = tlog.StoredHashIndex(0, n)+int64(i), hs[i][:]
	}
	var b pgx.Batch
	b.Queue(s.l.q(`INSERT INTO ledger.tlog_records (idx, data) VALUES ($1, $2)`), n, nonNilRecord(record))
	b.Queue(s.l.q(`INSERT INTO ledger.tlog_hashes (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])`), idx, raw)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return 0, unavailable(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

func (s *PostgresTlog) size(ctx context.Context, q pgQuerier) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, s.l.q(`SELECT coalesce(max(idx) + 1, 0) FROM ledger.tlog_records`)).Scan(&n); err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

func (s *PostgresTlog) readHashes(ctx context.Context, q pgQuerier, indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return []tlog.Hash{}, nil
	}
	rows, err := q.Query(ctx, s.l.q(`SELECT idx, hash FROM ledger.tlog_hashes WHERE idx = ANY($1)`), indexes)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	return scanHashes(rows, indexes)
}

// ReadHashes returns the stored hashes at indexes.
func (s *PostgresTlog) ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	return s.readHashes(ctx, s.l.pool, indexes)
}

// ReadRecord returns record n.
func (s *PostgresTlog) ReadRecord(ctx context.Context, n int64) ([]byte, error) {
	var data []byte
	err := s.l.pool.QueryRow(ctx, s.l.q(`SELECT data FROM ledger.tlog_records WHERE idx = $1`), n).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoTlogRecord(n)
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return nonNilRecord(data), nil
}

// Size returns the number of records.
func (s *PostgresTlog) Size(ctx context.Context) (int64, error) {
	return s.size(ctx, s.l.pool)
}

// PutCheckpoint stores the checkpoint of size, once (see translog.Storage).
// ON CONFLICT DO NOTHING waits for a concurrent insert of the same size to
// commit, so the row read back afterwards is the one that won.
func (s *PostgresTlog) PutCheckpoint(ctx context.Context, size int64, note []byte) error {
	tag, err := s.l.pool.Exec(ctx, s.l.q(`INSERT INTO ledger.tlog_checkpoints (size, note) VALUES ($1, $2) ON CONFLICT (size) DO NOTHING`), size, note)
	if err != nil {
		return unavailable(err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	stored, err := s.Checkpoint(ctx, size)
	if err != nil {
		return err
	}
	if !bytes.Equal(stored, note) {
		return errCheckpointConflict(size)
	}
	return nil
}

// Checkpoint returns the checkpoint of size, or nil if none is stored.
func (s *PostgresTlog) Checkpoint(ctx context.Context, size int64) ([]byte, error) {
	var note []byte
	err := s.l.pool.QueryRow(ctx, s.l.q(`SELECT note FROM ledger.tlog_checkpoints WHERE size = $1`), size).Scan(&note)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return note, nil
}

// LatestCheckpoint returns the checkpoint of the largest size, or a nil
// note if none is stored.
func (s *PostgresTlog) LatestCheckpoint(ctx context.Context) (int64, []byte, error) {
	var (
		size int64
		note []byte
	)
	err := s.l.pool.QueryRow(ctx, s.l.q(`SELECT size, note FROM ledger.tlog_checkpoints ORDER BY size DESC LIMIT 1`)).Scan(&size, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, unavailable(err)
	}
	return size, note, nil
}
