package coreopen

import (
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

func TestIntentSync_DurableUnlessTheWALFollowerRecordsCommittedRows(t *testing.T) {
	tables := []config.TableRule{{Table: "public.notes", ID: "id", Subjects: []string{"user_id"}}}
	if got := IntentSync(config.Capture{WAL: "on", Tables: tables}, ledger.IntentDurable); got != ledger.IntentNoSync {
		t.Fatalf("with the follower: %v, want IntentNoSync", got)
	}
	if got := IntentSync(config.Capture{WAL: "off", Tables: tables}, ledger.IntentDurable); got != ledger.IntentDurable {
		t.Fatalf("without it: %v, want IntentDurable", got)
	}
	if got := IntentSync(config.Capture{WAL: "off", Tables: tables}, ledger.IntentNoSync); got != ledger.IntentNoSync {
		t.Fatalf("without it, for the nosync bench: %v, want IntentNoSync", got)
	}
}

// TestFollowedStores_PostgreSQLOnlyWhenTheFollowerRuns: the follower
// stands in for PostgreSQL's intents, never for Pinecone's.
func TestFollowedStores_PostgreSQLOnlyWhenTheFollowerRuns(t *testing.T) {
	tables := []config.TableRule{{Table: "public.notes", ID: "id", Subjects: []string{"user_id"}}}
	if got := FollowedStores(config.Capture{WAL: "on", Tables: tables}); len(got) != 1 || got[0] != ledger.StorePostgres {
		t.Fatalf("with the follower: %v, want [postgres]", got)
	}
	if got := FollowedStores(config.Capture{WAL: "off", Tables: tables}); len(got) != 0 {
		t.Fatalf("without it: %v, want none", got)
	}
}
