package pgwing

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// Without the follower there is nothing to wait for; with it, a store
// that cannot be reached is a warning that names capture.store and says
// the ledger is read as it is.
func TestAwaitFollower_WithoutAStoreTheLedgerIsReadAsItIs(t *testing.T) {
	tables := []config.TableRule{{Table: "public.notes", ID: "id", Subjects: []string{"user_id"}}}
	if err := AwaitFollower(context.Background(), config.Capture{WAL: "off", Tables: tables}, nil, 0); err != nil {
		t.Fatalf("without the follower: %v", err)
	}
	err := AwaitFollower(context.Background(), config.Capture{WAL: "on", WALSlot: "lethe_x", Tables: tables}, func() (*ledger.Handle, string, error) {
		return nil, "/nowhere/ledger.db", errors.New("no such file")
	}, 0)
	if err == nil || err.Error() != "opening /nowhere/ledger.db to wait for the WAL follower: no such file; reading the ledger as it is" {
		t.Fatalf("a ledger that does not open: %v", err)
	}
	err = AwaitFollower(context.Background(), config.Capture{WAL: "on", WALSlot: "lethe_x", Tables: tables}, openTempLedger(t), 0)
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

// openTempLedger opens a fresh SQLite ledger, for the wait alone.
func openTempLedger(t *testing.T) func() (*ledger.Handle, string, error) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	return func() (*ledger.Handle, string, error) {
		l, err := ledger.Open(context.Background(), ledger.Location{SQLite: path}, ledger.Options{})
		return l, path, err
	}
}
