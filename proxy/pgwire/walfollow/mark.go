package walfollow

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/ledger"
)

// errSlotBusy is returned when the slot exists, this ledger holds no mark
// that its initial read is durable, and another process holds it: it
// streams the slot (a proxy of another ledger, or of this one on a release
// that kept no marks), or it is making the slot and reading its initial
// rows (a proxy of this ledger). The follower neither drops the slot nor
// streams it; it waits, as for a slot in use, and looks again.
var errSlotBusy = errors.New("walfollow: the replication slot is held by another process and this ledger does not hold the rows committed before it")

// slotKey names the slot for the ledger's marks (ledger.SlotKey): the
// server's system identifier, the database conn is in, and name. A role
// that may not call pg_control_system (a managed service may revoke it)
// gets an empty system identifier: its marks then tell databases and slots
// apart, not servers.
func slotKey(ctx context.Context, conn *pgx.Conn, name string) (ledger.SlotKey, error) {
	key := ledger.SlotKey{Slot: name}
	err := conn.QueryRow(ctx, `SELECT current_database()::text, (SELECT system_identifier::text FROM pg_control_system())`).Scan(&key.Database, &key.System)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		key.System = ""
		err = conn.QueryRow(ctx, `SELECT current_database()::text`).Scan(&key.Database)
	}
	if err != nil {
		return ledger.SlotKey{}, fmt.Errorf("walfollow: reading the server's identity for slot %s: %w", name, err)
	}
	return key, nil
}

// slotLockKey is the advisory lock key under which a follower makes slot
// name this ledger's (makeSlot).
func slotLockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("lethe-walfollow-slot:" + name))
	return int64(h.Sum64())
}

// makeSlot makes the slot this ledger's, holding the slot's advisory lock
// on conn so that proxies sharing the ledger do it one at a time: a slot
// that exists without this ledger's mark (a start killed during its
// initial read, a new ledger, a ledger of a release that kept no marks)
// is dropped, unless another process holds it, and made again with a
// fresh initial read (createSlot). Dropping loses nothing: the new slot's
// snapshot holds every row committed before it, and its stream everything
// after. It reports whether it made the slot; false when another proxy of
// the ledger made it meanwhile. A lock held elsewhere is errSlotBusy; the
// lock goes with conn, so a process killed while it holds it holds it no
// longer.
func (f *Follower) makeSlot(ctx context.Context, conn *pgx.Conn, key ledger.SlotKey, ps []published) (made bool, err error) {
	lock := slotLockKey(f.cfg.Name)
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lock).Scan(&locked); err != nil {
		return false, fmt.Errorf("walfollow: taking the lock of slot %s: %w", f.cfg.Name, err)
	}
	if !locked {
		return false, fmt.Errorf("%w (another proxy of this ledger is making slot %s and reading the rows before it)", errSlotBusy, f.cfg.Name)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lock)
	// Again under the lock: another proxy may have made it meanwhile.
	exists, err := slotExists(ctx, conn, f.cfg.Name)
	if err != nil {
		return false, err
	}
	if exists {
		done, err := f.cfg.Ledger.InitialReadDone(ctx, key)
		if err != nil {
			return false, fmt.Errorf("walfollow: reading whether the ledger holds the initial read of slot %s: %w", f.cfg.Name, err)
		}
		if done {
			return false, nil
		}
		if err := f.dropUnread(ctx, conn); err != nil {
			return false, err
		}
	}
	return true, f.createSlot(ctx, conn, key, ps)
}

// dropUnread drops the slot, which exists without this ledger's mark,
// unless another process streams it (errSlotBusy).
func (f *Follower) dropUnread(ctx context.Context, conn *pgx.Conn) error {
	busy := fmt.Errorf("%w: slot %s is streamed by another process (a proxy of another ledger, or of this one on an earlier release); "+
		"this proxy waits and follows once it is free", errSlotBusy, f.cfg.Name)
	var active bool
	if err := conn.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, f.cfg.Name).Scan(&active); err != nil {
		return fmt.Errorf("walfollow: reading replication slot %s: %w", f.cfg.Name, err)
	}
	if active {
		return busy
	}
	f.log.Warn("wal: the replication slot exists but this ledger does not hold the rows committed before it "+
		"(a start stopped during its initial read, a new or replaced ledger, or an upgrade from a release that kept no record of it): "+
		"dropping it and making it again with a fresh initial read", "slot", f.cfg.Name)
	if err := dropSlot(ctx, conn, f.cfg.Name); err != nil {
		if slotInUse(err) {
			return busy
		}
		return err
	}
	return nil
}
