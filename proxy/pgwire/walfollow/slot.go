package walfollow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/ledger"
)

// Slot is the follower's replication slot as the server reports it.
type Slot struct {
	Name   string
	Exists bool
	Active bool   // a follower streams it now
	Status string // pg_replication_slots.wal_status: reserved, extended, unreserved, lost
	// Retained is the WAL the server keeps for the slot; Lag the WAL
	// written since the position the follower last confirmed (bytes).
	Retained, Lag int64
	// Tables are the relations the publications carry ("schema.name",
	// with " (inserts only)" for the second publication).
	Tables []string
}

// SlotStatus reads the slot named name and its publications.
func SlotStatus(ctx context.Context, conn *pgx.Conn, name string) (Slot, error) {
	s := Slot{Name: name}
	err := conn.QueryRow(ctx, `
		SELECT active, coalesce(wal_status, ''),
			coalesce((pg_current_wal_lsn() - restart_lsn)::bigint, 0),
			coalesce((pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, 0)
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&s.Active, &s.Status, &s.Retained, &s.Lag)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return Slot{}, fmt.Errorf("walfollow: reading replication slot %s: %w", name, err)
	default:
		s.Exists = true
	}
	err = conn.QueryRow(ctx, `
		SELECT array(SELECT schemaname || '.' || tablename || CASE WHEN pubname = $2 THEN ' (inserts only)' ELSE '' END
			FROM pg_publication_tables WHERE pubname IN ($1, $2) ORDER BY 1)`, name, insertsOnly(name)).Scan(&s.Tables)
	if err != nil {
		return Slot{}, fmt.Errorf("walfollow: reading publications %s: %w", name, err)
	}
	return s, nil
}

// Drop drops the slot named name and its publications. The server
// refuses while a follower streams the slot: stop the proxies first.
func Drop(ctx context.Context, conn *pgx.Conn, name string) error {
	if err := dropSlot(ctx, conn, name); err != nil {
		return fmt.Errorf("%w (stop the proxies that follow it first)", err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("DROP PUBLICATION IF EXISTS %s, %s",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{insertsOnly(name)}.Sanitize())); err != nil {
		return fmt.Errorf("walfollow: dropping publications %s: %w", name, err)
	}
	return nil
}

// AwaitCommitted waits until the slot has been confirmed past every
// transaction committed before the call and reads holds the slot's
// initial read (ledger.InitialReads): the ledger then holds all of them,
// whichever proxy follows the slot. A slot just made starts out confirmed
// up to the server's position while its initial rows are still being
// read, and one whose reader was killed stays so: only the mark tells.
// reads nil waits for the slot alone, for a ledger known to hold its
// initial read. It polls the server and the ledger.
func AwaitCommitted(ctx context.Context, conn *pgx.Conn, name string, reads ledger.InitialReads) error {
	var target string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&target); err != nil {
		return fmt.Errorf("walfollow: reading the server's WAL position: %w", err)
	}
	var key ledger.SlotKey
	if reads != nil {
		var err error
		if key, err = slotKey(ctx, conn, name); err != nil {
			return err
		}
	}
	for {
		var confirmed bool
		err := conn.QueryRow(ctx, `SELECT coalesce(bool_or(confirmed_flush_lsn >= $1::pg_lsn), false) FROM pg_replication_slots WHERE slot_name = $2`,
			target, name).Scan(&confirmed)
		if err != nil {
			return fmt.Errorf("walfollow: reading replication slot %s: %w", name, err)
		}
		// The mark is read after the slot: a follower clears an earlier
		// slot's mark before it makes the slot read just now.
		read := true
		if confirmed && reads != nil {
			if read, err = reads.InitialReadDone(ctx, key); err != nil {
				return fmt.Errorf("walfollow: reading whether the ledger holds the initial read of slot %s: %w", name, err)
			}
		}
		if confirmed && read {
			return nil
		}
		select {
		case <-ctx.Done():
			if confirmed {
				return fmt.Errorf("walfollow: the ledger does not hold the rows committed before slot %s was made yet "+
					"(a proxy is reading them, or none has started since the slot was made): %w", name, ctx.Err())
			}
			return fmt.Errorf("walfollow: slot %s has not reached the server's WAL position %s: %w", name, target, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
