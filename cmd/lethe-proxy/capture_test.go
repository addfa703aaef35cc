package main

import (
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

func TestIntentSync_DurableUnlessTheWALFollowerRecordsCommittedRows(t *testing.T) {
	tables := []config.TableRule{{Table: "public.notes", ID: "id", Subjects: []string{"user_id"}}}
	if got := intentSync(config.Capture{WAL: "on", Tables: tables}); got != ledger.IntentNoSync {
		t.Fatalf("with the follower: %v, want IntentNoSync", got)
	}
	if got := intentSync(config.Capture{WAL: "off", Tables: tables}); got != ledger.IntentDurable {
		t.Fatalf("without it: %v, want IntentDurable", got)
	}
}
