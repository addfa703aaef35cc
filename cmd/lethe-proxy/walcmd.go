package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
)

func walCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "status" && args[0] != "drop") {
		fmt.Fprint(stderr, usageOf("wal"))
		return 2
	}
	fs := newFlagSet("wal "+args[0], "", stderr)
	path := fs.String("config", "", "configuration file")
	slot := fs.String("slot", "", "the slot to show or drop (default capture.wal_slot)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	fail := failer(stderr, "wal")
	cfg, ok := loadConfig("wal", *path, usageOf("wal"), false, stderr)
	if !ok {
		return exitConfig
	}
	name := cfg.Capture.WALSlot
	if *slot != "" {
		if err := config.ValidSlotName(*slot); err != nil {
			return fail(2, "--slot: %v", err)
		}
		name = *slot
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args[0] == "drop" {
		if err := pgwing.DropSlot(ctx, cfg.Capture, name); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "dropped replication slot %s and publications %s, %s_inserts; a proxy that follows it makes them again at its next start, with the rows the tables hold then (rows written and deleted in between are not in the ledger)\n", name, name, name)
		return 0
	}
	s, err := pgwing.SlotStatus(ctx, cfg.Capture, name)
	if err != nil {
		return fail(1, "%v", err)
	}
	if !s.Exists {
		fmt.Fprintf(stdout, "slot %s: does not exist (a proxy with capture.wal: on makes it at start)\n", name)
		return 1
	}
	fmt.Fprintf(stdout, "slot %s: active=%t wal_status=%s wal_kept_bytes=%d lag_bytes=%d\ntables: %s\n",
		name, s.Active, s.Status, s.Retained, s.Lag, strings.Join(s.Tables, ", "))
	if s.Status == "lost" {
		fmt.Fprintln(stdout, "the slot lost WAL it needed (max_slot_wal_keep_size): drop it (lethe-proxy wal drop) and restart the proxies")
		return 1
	}
	return 0
}
