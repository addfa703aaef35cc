package capture

import (
	"context"
	"fmt"

	"github.com/lethe-privacy/lethe/ledger"
)

// Checker tells which records exist in the store.
type Checker interface {
	Existing(ctx context.Context, table, idColumn string, ids []string) (map[string]bool, error)
}

// RecoveryStats counts what Recover did.
type RecoveryStats struct {
	Confirmed, Dropped, LeftPending int
}

// Recover resolves intents left pending by a crash, by asking the store.
// An intent is one statement's writes, which committed together or not at
// all, so its records with known ids decide it: if any exists the intent is
// confirmed (forget deletes by id and subject, so a record that exists
// because of an earlier write is never mistaken for another person's); if
// none exists it is dropped. An intent with no record the store can be
// asked about (database-generated ids, unattributed writes, a table no
// longer configured) stays pending, and forget treats it as a candidate.
//
// Call Recover only when no other proxy writes to the same ledger: a live
// proxy's in-flight intents look exactly like a crashed one's.
func Recover(ctx context.Context, l ledger.Ledger, idColumns map[string]string, store Checker) (RecoveryStats, error) {
	var st RecoveryStats
	pending, err := l.Pending(ctx)
	if err != nil {
		return st, err
	}
	for _, in := range pending {
		decided, exists, err := intentExists(ctx, in, idColumns, store)
		if err != nil {
			return st, fmt.Errorf("recovering intent %d: %w", in.ID, err)
		}
		switch {
		case !decided:
			st.LeftPending++
		case exists:
			if err := l.Confirm(ctx, in.ID); err != nil {
				return st, err
			}
			st.Confirmed++
		default:
			if err := l.Drop(ctx, in.ID); err != nil {
				return st, err
			}
			st.Dropped++
		}
	}
	return st, nil
}

// intentExists asks the store about the intent's records with known ids.
func intentExists(ctx context.Context, in ledger.Intent, idColumns map[string]string, store Checker) (decided, exists bool, err error) {
	byTable := map[string][]string{}
	for _, e := range in.Entries {
		if e.Store != ledger.StorePostgres || e.Unattributed || e.RecordID == "" {
			continue
		}
		if _, ok := idColumns[e.Table]; ok {
			byTable[e.Table] = append(byTable[e.Table], e.RecordID)
		}
	}
	for table, ids := range byTable {
		found, err := store.Existing(ctx, table, idColumns[table], ids)
		if err != nil {
			return false, false, err
		}
		decided = true
		if len(found) > 0 {
			return true, true, nil
		}
	}
	return decided, false, nil
}
