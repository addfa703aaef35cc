package pgwing

import (
	"context"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// The questions readWALFacts asks, each on its own so that one refused
// leaves the others answered. Privileges (PostgreSQL 15): every one is
// open to any role by default (pg_control_checkpoint() and
// pg_current_wal_lsn() are executable by PUBLIC, pg_replication_slots
// and pg_stat_replication readable by it), except that
// pg_stat_replication shows the positions of another role's walsenders
// only to members of pg_read_all_stats (pg_monitor includes it). An
// operator who revoked any of them gets an unknown horizon naming the
// grant.
const (
	queryWALPosition = `SELECT current_user, pg_current_wal_lsn()::text`
	queryCheckpoint  = `SELECT redo_lsn::text, checkpoint_time FROM pg_control_checkpoint()`
	queryWALSettings = `SELECT pg_size_bytes(current_setting('wal_keep_size')), pg_size_bytes(current_setting('max_wal_size')),
		extract(epoch FROM current_setting('checkpoint_timeout')::interval)::float8, current_setting('checkpoint_completion_target')::float8`
	querySlots    = `SELECT slot_name::text, slot_type, restart_lsn::text FROM pg_replication_slots ORDER BY slot_name`
	queryStandbys = `SELECT coalesce(r.application_name, ''), r.replay_lsn::text, extract(epoch FROM r.replay_lag)::float8
		FROM pg_stat_replication r
		WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical')
		ORDER BY 1`
)

// readWALFacts asks the server what walHorizons needs; a question
// refused or failed leaves its Err set, never an error.
func readWALFacts(ctx context.Context, conn *pgx.Conn, now time.Time) walFacts {
	f := walFacts{ReadAt: now.UTC(), Role: "the store role"}
	var lsn string
	if err := conn.QueryRow(ctx, queryWALPosition).Scan(&f.Role, &lsn); err != nil {
		f.LSNErr = err.Error()
	} else if f.LSN, err = pglogrepl.ParseLSN(lsn); err != nil {
		f.LSNErr = err.Error()
	}
	var redo string
	if err := conn.QueryRow(ctx, queryCheckpoint).Scan(&redo, &f.CheckpointAt); err != nil {
		f.CheckpointErr = err.Error()
	} else if f.Redo, err = pglogrepl.ParseLSN(redo); err != nil {
		f.CheckpointErr = err.Error()
	}
	var timeout float64
	if err := conn.QueryRow(ctx, queryWALSettings).Scan(&f.WALKeepSize, &f.MaxWALSize, &timeout, &f.CompletionTarget); err != nil {
		f.SettingsErr = err.Error()
	}
	f.CheckpointTimeout = time.Duration(timeout * float64(time.Second))
	rows, err := conn.Query(ctx, querySlots)
	if err == nil {
		f.Slots, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (slotFacts, error) {
			var (
				s       slotFacts
				restart *string
			)
			if err := row.Scan(&s.Name, &s.Type, &restart); err != nil || restart == nil {
				return s, err
			}
			s.RestartLSN, err = pglogrepl.ParseLSN(*restart)
			s.Reserves = err == nil
			return s, err
		})
	}
	if err != nil {
		f.SlotsErr = err.Error()
	}
	rows, err = conn.Query(ctx, queryStandbys)
	if err == nil {
		f.Standbys, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (standbyFacts, error) {
			var (
				s      standbyFacts
				replay *string
				lag    *float64
			)
			if err := row.Scan(&s.Name, &replay, &lag); err != nil {
				return s, err
			}
			if replay != nil {
				s.ReplayLSN, err = pglogrepl.ParseLSN(*replay)
				s.Visible = err == nil
			}
			if lag != nil {
				s.ReplayLag, s.HasLag = time.Duration(*lag*float64(time.Second)), true
			}
			return s, err
		})
	}
	if err != nil {
		f.StandbysErr = err.Error()
	}
	return f
}

// horizon is the wing's connector.HorizonFunc, Horizon through store,
// forget's own connection to capture.store, with postgres.retention.
func (w *Wing) horizon(store *pgstore.Store) connector.HorizonFunc {
	kept := w.cfg.Postgres.Retention
	return func(ctx context.Context, deleted time.Time) []connector.Horizon {
		return Horizon(ctx, store, kept, deleted)
	}
}

// Horizon is the PostgreSQL store's horizon for deletes committed by
// deleted: the server's answers read through store, and the retention
// kept declares. A store that cannot be reached gives unknown horizons
// with the reason; it never fails.
func Horizon(ctx context.Context, store *pgstore.Store, kept config.CopyRetention, deleted time.Time) []connector.Horizon {
	var f walFacts
	err := store.WithConn(ctx, func(conn *pgx.Conn) error {
		f = readWALFacts(ctx, conn, time.Now())
		return nil
	})
	if err != nil {
		why := err.Error()
		f = walFacts{ReadAt: time.Now().UTC(), Role: "the store role", LSNErr: why, CheckpointErr: why, SettingsErr: why, SlotsErr: why, StandbysErr: why}
	}
	return walHorizons(f, kept, deleted)
}
