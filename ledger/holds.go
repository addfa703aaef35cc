package ledger

import (
	"context"
	"fmt"
)

// Holder says which (record, subject) facts the ledger holds: reconcile
// asks it about the records a store holds now, to find the ones written
// where no proxy saw them.
type Holder interface {
	// Holds reports, for each of entries (a store, table, record id and
	// subject; not Unattributed), whether the ledger holds it confirmed.
	// Pending and deleted records are not held: a record the store holds
	// now whose entry was deleted was written again where no proxy saw it.
	// Entries under another subject, or under an empty record id (a row
	// whose id the store generated), do not count: the answer is about
	// this exact record and subject.
	Holds(ctx context.Context, entries []Entry) ([]bool, error)
}

var (
	_ Holder = (*SQLite)(nil)
	_ Holder = (*Postgres)(nil)
)

func validHoldsEntries(entries []Entry) error {
	for i, e := range entries {
		if err := validEntry(e); err != nil {
			return fmt.Errorf("ledger: entry %d: %w", i, err)
		}
		if e.Unattributed {
			return fmt.Errorf("ledger: entry %d: an unattributed entry names no record to look for", i)
		}
	}
	return nil
}
