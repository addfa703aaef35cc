package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// slotReleaseWait bounds how long CleanPostgres waits for the slot of a
// demo that just stopped to be released by its server process.
const slotReleaseWait = 10 * time.Second

// CleanPostgres drops what the demo recorded making on the PostgreSQL
// server (its slot and publications, its table, the vector extension
// when it created it) and then the record; it drops nothing else. It
// connects with databaseURL when given, else with the recorded URL
// (password from PGPASSWORD or ~/.pgpass). It returns what it dropped.
func (s State) CleanPostgres(ctx context.Context, databaseURL string) (dropped []string, err error) {
	if _, err := os.Stat(s.Path(filePostgres)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	made, err := s.readMade()
	if err != nil {
		return nil, err
	}
	if databaseURL == "" {
		databaseURL = made.Store
	}
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s to drop what the demo made there (%s): %w; set %s (with the password) and run --clean again", made.Store, s.Path(filePostgres), err, DatabaseURLEnv)
	}
	defer conn.Close(ctx)
	if made.Slot {
		if err := dropSlot(ctx, conn); err != nil {
			return dropped, err
		}
		for _, pub := range []string{Slot, Slot + "_inserts"} {
			if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{pub}.Sanitize()); err != nil {
				return dropped, fmt.Errorf("dropping the demo's publication %s: %w", pub, err)
			}
		}
		dropped = append(dropped, "replication slot "+Slot, "publications "+Slot+", "+Slot+"_inserts")
	}
	if made.Table {
		if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+Table); err != nil {
			return dropped, fmt.Errorf("dropping the demo's table %s: %w", Table, err)
		}
		dropped = append(dropped, "table "+Table)
	}
	if made.Extension {
		// Without CASCADE: a table made since with a vector column keeps it.
		if _, err := conn.Exec(ctx, "DROP EXTENSION IF EXISTS vector"); err != nil {
			dropped = append(dropped, fmt.Sprintf("(the vector extension is kept: %v)", err))
		} else {
			dropped = append(dropped, "extension vector")
		}
	}
	if err := os.Remove(s.Path(filePostgres)); err != nil {
		return dropped, err
	}
	return dropped, nil
}

// dropSlot drops the demo's slot once no server process holds it (the
// walsender of a demo that just stopped may take a moment to exit).
func dropSlot(ctx context.Context, conn *pgx.Conn) error {
	deadline := time.Now().Add(slotReleaseWait)
	for {
		var exists, active bool
		err := conn.QueryRow(ctx, `SELECT count(*) > 0, coalesce(bool_or(active), false)
		  FROM pg_replication_slots WHERE slot_name = $1`, Slot).Scan(&exists, &active)
		if err != nil {
			return fmt.Errorf("reading the demo's replication slot %s: %w", Slot, err)
		}
		if !exists {
			return nil
		}
		if !active {
			_, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", Slot)
			if err != nil {
				return fmt.Errorf("dropping the demo's replication slot %s: %w", Slot, err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the demo's replication slot %s is in use: stop the running demo (Ctrl-C) and run --clean again", Slot)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
