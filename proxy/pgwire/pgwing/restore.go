package pgwing

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/ledger"
)

// Restore detection. A backup restored into capture.store brings back the
// records of every subject forgotten since it was taken. The wing records
// what it saw of the server in the ledger (which lives outside the
// restored store) and compares at start and every capture.
// recovery_interval:
//
//   - pg_control_system().system_identifier: another cluster, or one
//     initialised afresh and loaded from a dump (pg_dump, pg_basebackup
//     into a new data directory keeps it; a dump does not);
//   - the timeline (pg_control_checkpoint().timeline_id): a point-in-time
//     recovery, or a promotion, starts a new one;
//   - the WAL position (pg_current_wal_lsn(), or pg_last_wal_replay_lsn()
//     on a standby) behind the one recorded: the server went back.
//
// PostgreSQL grants EXECUTE on pg_control_* to PUBLIC by default; a role
// from which they were revoked (some managed services do) leaves the WAL
// position as the only signal, which the log states.

// controlReader asks the server what restore detection compares.
type controlReader interface {
	SystemIdentifier(ctx context.Context) (string, error)
	Timeline(ctx context.Context) (int64, error)
	WALPosition(ctx context.Context) (uint64, error)
}

// connControl is controlReader on one connection.
type connControl struct{ conn *pgx.Conn }

func (c connControl) SystemIdentifier(ctx context.Context) (string, error) {
	var id string
	err := c.conn.QueryRow(ctx, `SELECT system_identifier::text FROM pg_control_system()`).Scan(&id)
	return id, err
}

func (c connControl) Timeline(ctx context.Context) (int64, error) {
	var tl int64
	err := c.conn.QueryRow(ctx, `SELECT timeline_id::bigint FROM pg_control_checkpoint()`).Scan(&tl)
	return tl, err
}

func (c connControl) WALPosition(ctx context.Context) (uint64, error) {
	var lsn string
	err := c.conn.QueryRow(ctx, `SELECT ((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) - '0/0')::text`).Scan(&lsn)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(lsn, 10, 64)
}

// refusedCall reports whether err is the server's insufficient_privilege.
func refusedCall(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// readSeen reads the server's identity. A role refused pg_control_*
// gets System "" and Timeline 0, and degraded says so; any other error
// is returned.
func readSeen(ctx context.Context, r controlReader) (seen ledger.StoreSeen, degraded bool, err error) {
	if seen.System, err = r.SystemIdentifier(ctx); refusedCall(err) {
		seen.System, degraded = "", true
	} else if err != nil {
		return seen, false, fmt.Errorf("reading the system identifier: %w", err)
	}
	if seen.Timeline, err = r.Timeline(ctx); refusedCall(err) {
		seen.Timeline, degraded = 0, true
	} else if err != nil {
		return seen, false, fmt.Errorf("reading the timeline: %w", err)
	}
	if seen.WAL, err = r.WALPosition(ctx); err != nil {
		return seen, false, fmt.Errorf("reading the WAL position: %w", err)
	}
	return seen, degraded, nil
}

// restoreSignal says why now, read from the server, shows a restore
// since was, recorded before; "" when it does not. A signal either side
// could not read is not compared.
func restoreSignal(was, now ledger.StoreSeen) string {
	switch {
	case was.System != "" && now.System != "" && was.System != now.System:
		return fmt.Sprintf("the server's system identifier changed from %s to %s (another cluster, or one loaded from a backup)", was.System, now.System)
	case was.Timeline != 0 && now.Timeline != 0 && was.Timeline != now.Timeline:
		return fmt.Sprintf("the server's timeline changed from %d to %d (a point-in-time recovery, or a promotion)", was.Timeline, now.Timeline)
	case now.WAL < was.WAL:
		return fmt.Sprintf("the server's WAL position %s is behind %s, the one seen before (the server went back to a backup)", lsnText(now.WAL), lsnText(was.WAL))
	}
	return ""
}

// lsnText writes an LSN as PostgreSQL does (X/X).
func lsnText(lsn uint64) string { return fmt.Sprintf("%X/%X", lsn>>32, uint32(lsn)) }

// storeKey names capture.store in the ledger's store marks: its host,
// port and database, never its user or password.
func storeKey(connString string) (string, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return "", fmt.Errorf("capture.store: %w", err)
	}
	return fmt.Sprintf("postgres://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database), nil
}
