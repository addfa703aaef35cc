package pgwing

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// SlotName is the slot lethe-proxy wal acts on: given when it is not
// empty (an error when PostgreSQL would refuse the name), else
// capture.wal_slot.
func SlotName(c config.Capture, given string) (string, error) {
	if given == "" {
		return c.WALSlot, nil
	}
	if err := config.ValidSlotName(given); err != nil {
		return "", err
	}
	return given, nil
}

// ShowSlot writes the replication slot named name as lethe-proxy wal
// status prints it (WriteSlotStatus) and reports whether a proxy can
// follow it.
func ShowSlot(ctx context.Context, c config.Capture, name string, out io.Writer) (followable bool, err error) {
	s, err := SlotStatus(ctx, c, name)
	if err != nil {
		return false, err
	}
	return WriteSlotStatus(out, s), nil
}

// WriteSlotStatus writes s, one line of state and one of tables, and
// reports whether a proxy can follow it: false for a slot that does not
// exist or that lost WAL it needed, after a line saying what happens or
// what to do next.
func WriteSlotStatus(out io.Writer, s walfollow.Slot) (followable bool) {
	if !s.Exists {
		fmt.Fprintf(out, "slot %s: does not exist (a proxy with capture.wal: on makes it at start)\n", s.Name)
		return false
	}
	fmt.Fprintf(out, "slot %s: active=%t wal_status=%s wal_kept_bytes=%d lag_bytes=%d\ntables: %s\n",
		s.Name, s.Active, s.Status, s.Retained, s.Lag, strings.Join(s.Tables, ", "))
	if s.Status == "lost" {
		fmt.Fprintln(out, "the slot lost WAL it needed (max_slot_wal_keep_size): drop it (lethe-proxy wal drop) and restart the proxies")
		return false
	}
	return true
}

// DropSlotAndSay drops the slot named name and its publications (DropSlot)
// and writes to out what was dropped and what the next start of a proxy
// does about it (lethe-proxy wal drop).
func DropSlotAndSay(ctx context.Context, c config.Capture, name string, out io.Writer) error {
	if err := DropSlot(ctx, c, name); err != nil {
		return err
	}
	fmt.Fprintf(out, "dropped replication slot %s and publications %s, %s_inserts; a proxy that follows it makes them again at its next start, with the rows the tables hold then (rows written and deleted in between are not in the ledger)\n", name, name, name)
	return nil
}
