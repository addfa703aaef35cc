package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"
)

// walCmd shows or drops the WAL follower's replication slot; the work and
// its text are pgwing's.
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
	name, err := pgwing.SlotName(cfg.Capture, *slot)
	if err != nil {
		return fail(2, "--slot: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	followable := true
	if args[0] == "drop" {
		err = pgwing.DropSlotAndSay(ctx, cfg.Capture, name, stdout)
	} else {
		followable, err = pgwing.ShowSlot(ctx, cfg.Capture, name, stdout)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	if !followable {
		return 1
	}
	return 0
}
