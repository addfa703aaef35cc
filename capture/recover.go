package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Checker tells which records exist in the store.
type Checker interface {
	Existing(ctx context.Context, table, idColumn string, ids []string) (map[string]bool, error)
}

// RecoveryStats counts what Recover did.
type RecoveryStats struct {
	Confirmed, Dropped, LeftPending int
	// Raced counts intents another proxy's recovery resolved the other
	// way while this one looked (also counted in Confirmed: see Recover).
	Raced int
}

// Recover resolves the intents that the ledger's dead handles left
// pending (ledger.Ledger.PendingOrphans: a crashed run of this proxy, or,
// on a shared ledger, another proxy whose lease expired), by asking the
// store. In-flight intents of live proxies are not orphans and are left
// alone, so Recover may run while writes flow, and on several proxies at
// once.
//
// An intent is one statement's writes, which committed together or not at
// all, so its records with known ids decide it: if any exists the intent
// is confirmed (forget deletes by id and subject, so a record that exists
// because of an earlier write is never mistaken for another person's); if
// none exists it is dropped. An intent with no record the store can be
// asked about (database-generated ids, unattributed writes, a table no
// longer configured) stays pending, and forget treats it as a candidate.
//
// When two proxies recover the same orphan, Confirm and Drop are
// idempotent, so agreeing answers are no conflict. When they disagree (a
// record appeared between their looks), the record is kept tracked: a
// Drop that finds the intent confirmed leaves it so, and a Confirm that
// finds it dropped records its entries again as a new, confirmed intent.
func Recover(ctx context.Context, l ledger.Ledger, idColumns map[string]string, store Checker) (RecoveryStats, error) {
	return RecoverFrom(ctx, l, PostgresCheck(idColumns, store))
}

// StoreCheck is how recovery asks one store about the records of the
// intents it left pending.
type StoreCheck struct {
	// Store is the store whose entries are checked; entries of other
	// stores decide nothing.
	Store ledger.Store
	// IDColumn is the id column of a table the Checker can answer for;
	// false leaves the table's entries undecided.
	IDColumn func(table string) (string, bool)
	Checker  Checker
	// AbsentAfter is how old an intent must be for the absence of all its
	// records to drop it: a store whose reads may lag its writes
	// (Pinecone) could otherwise drop an intent whose write is applied
	// but not yet visible. Younger intents stay pending for a later run.
	// Zero drops at once (PostgreSQL: a committed row is visible).
	AbsentAfter time.Duration
}

// PostgresCheck is the StoreCheck of Recover: PostgreSQL tables by their
// id columns.
func PostgresCheck(idColumns map[string]string, store Checker) StoreCheck {
	return StoreCheck{Store: ledger.StorePostgres, Checker: store, IDColumn: func(table string) (string, bool) {
		col, ok := idColumns[table]
		return col, ok
	}}
}

// RecoverFrom is Recover for the store check names (see Recover for the
// contract): an intent is confirmed when one of its records of that store
// exists, dropped when none does and it is older than check.AbsentAfter,
// and left pending otherwise.
func RecoverFrom(ctx context.Context, l ledger.Ledger, check StoreCheck) (RecoveryStats, error) {
	var st RecoveryStats
	orphans, err := l.PendingOrphans(ctx)
	if err != nil {
		return st, err
	}
	for _, in := range orphans {
		decided, exists, err := intentExists(ctx, in, check)
		if err != nil {
			return st, fmt.Errorf("recovering intent %d: %w", in.ID, err)
		}
		switch {
		case !decided, !exists && time.Since(in.CreatedAt) < check.AbsentAfter:
			st.LeftPending++
		case exists:
			err := l.Confirm(ctx, in.ID)
			if errors.Is(err, ledger.ErrUnknownIntent) {
				st.Raced++
				err = recordAgain(ctx, l, in.Entries)
			}
			if err != nil {
				return st, fmt.Errorf("confirming intent %d: %w", in.ID, err)
			}
			st.Confirmed++
		default:
			err := l.Drop(ctx, in.ID)
			if errors.Is(err, ledger.ErrIntentConfirmed) {
				st.Raced++
				st.Confirmed++
				continue
			}
			if err != nil {
				return st, fmt.Errorf("dropping intent %d: %w", in.ID, err)
			}
			st.Dropped++
		}
	}
	return st, nil
}

// recordAgain confirms entries under a new intent: another proxy dropped
// their intent, having found none of its records, while this one found one.
func recordAgain(ctx context.Context, l ledger.Ledger, entries []ledger.Entry) error {
	id, err := l.Intend(ctx, entries)
	if err != nil {
		return err
	}
	return l.Confirm(ctx, id)
}

// RecoverEvery runs Recover every interval until ctx ends or the ledger is
// closed (ledger.ErrClosed), so that the intents of a proxy that dies are
// resolved by the proxies that live on, once its lease has expired. Runs
// that resolve something are logged at info, failures at warn (and
// retried at the next tick).
func RecoverEvery(ctx context.Context, interval time.Duration, l ledger.Ledger, idColumns map[string]string, store Checker, log *slog.Logger) {
	RecoverFromEvery(ctx, interval, l, PostgresCheck(idColumns, store), log)
}

// RecoverFromEvery is RecoverEvery for the store check names.
func RecoverFromEvery(ctx context.Context, interval time.Duration, l ledger.Ledger, check StoreCheck, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Bounded, so that a store that hangs delays the next run rather
		// than stopping them; ticks missed meanwhile are skipped.
		rctx, cancel := context.WithTimeout(ctx, max(interval, time.Minute))
		st, err := RecoverFrom(rctx, l, check)
		cancel()
		switch {
		case errors.Is(err, ledger.ErrClosed):
			return
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("recovering orphaned intents failed; retrying later", "err", err,
				"confirmed", st.Confirmed, "dropped", st.Dropped, "left_pending", st.LeftPending)
		case st.Confirmed+st.Dropped > 0:
			log.Info("orphaned intents recovered", "confirmed", st.Confirmed, "dropped", st.Dropped,
				"left_pending", st.LeftPending, "raced", st.Raced)
		default:
			log.Debug("no orphaned intents to recover", "left_pending", st.LeftPending)
		}
	}
}

// intentExists asks check's store about the intent's records with known
// ids.
func intentExists(ctx context.Context, in ledger.Intent, check StoreCheck) (decided, exists bool, err error) {
	byTable := map[string][]string{}
	for _, e := range in.Entries {
		if e.Store != check.Store || e.Unattributed || e.RecordID == "" {
			continue
		}
		if _, ok := check.IDColumn(e.Table); ok {
			byTable[e.Table] = append(byTable[e.Table], e.RecordID)
		}
	}
	for table, ids := range byTable {
		col, _ := check.IDColumn(table)
		found, err := check.Checker.Existing(ctx, table, col, ids)
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
