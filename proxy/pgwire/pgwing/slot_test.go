package pgwing

import (
	"context"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
)

// Without the follower there is nothing to wait for; with it, a store
// that cannot be reached is a warning that names capture.store and says
// the ledger is read as it is.
func TestAwaitFollower_WithoutAStoreTheLedgerIsReadAsItIs(t *testing.T) {
	tables := []config.TableRule{{Table: "public.notes", ID: "id", Subjects: []string{"user_id"}}}
	if err := AwaitFollower(context.Background(), config.Capture{WAL: "off", Tables: tables}, nil, 0); err != nil {
		t.Fatalf("without the follower: %v", err)
	}
	err := AwaitFollower(context.Background(), config.Capture{WAL: "on", WALSlot: "lethe_x", Tables: tables}, nil, 0)
	if err == nil || !strings.HasPrefix(err.Error(), "capture.store is not set:") || !strings.HasSuffix(err.Error(), "; reading the ledger as it is") {
		t.Fatalf("an unset store: %v", err)
	}
}

// The slot commands say which key to set when capture.store is not set.
func TestSlotCommands_NameCaptureStore(t *testing.T) {
	if _, err := SlotStatus(context.Background(), config.Capture{}, "lethe"); err == nil || !strings.Contains(err.Error(), "capture.store is not set: wal status and drop") {
		t.Fatalf("status: %v", err)
	}
	if err := DropSlot(context.Background(), config.Capture{}, "lethe"); err == nil || !strings.Contains(err.Error(), "capture.store is not set: wal status and drop") {
		t.Fatalf("drop: %v", err)
	}
}
