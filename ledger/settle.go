package ledger

import (
	"context"
	"fmt"
	"time"
)

// Settler is what a wing needs to bring the ledger in line with a delete
// that named no ids (a Pinecone delete by metadata filter): which records
// of a table the ledger holds present, and a mark for those the store no
// longer holds that cannot undo a later write.
type Settler interface {
	// PresentRecords returns the distinct ids of table's records that the
	// ledger holds confirmed for some subject, greater than after, in
	// ascending order, at most limit of them: a page, the next one
	// starting after its last id. Unattributed entries and records whose
	// id the store generated ("") are not listed.
	PresentRecords(ctx context.Context, store Store, table, after string, limit int) ([]string, error)
	// MarkDeletedUnlessConfirmedSince marks deleted, for every subject,
	// the confirmed records of table among recordIDs none of whose
	// subjects was confirmed at or after since, and returns how many
	// records it marked. A record confirmed at or after since was written
	// again after the delete began, so the store's answer that it is
	// absent may predate that write: it is left as it is. A confirmation
	// that commits after the mark makes the record confirmed again, as
	// any confirmation does.
	MarkDeletedUnlessConfirmedSince(ctx context.Context, store Store, table string, recordIDs []string, since time.Time) (int, error)
}

var (
	_ Settler = (*SQLite)(nil)
	_ Settler = (*Postgres)(nil)
)

// MarkDeletedUnlessConfirmedSince implements Settler through the
// committer, so that it is ordered with the confirmations it must not
// undo: a confirmation committed before it protects its record, one
// committed after it restores the record.
func (w writes) MarkDeletedUnlessConfirmedSince(ctx context.Context, store Store, table string, recordIDs []string, since time.Time) (int, error) {
	if store == "" || table == "" {
		return 0, fmt.Errorf("ledger: mark records deleted: the store and the table must be named (got %q, %q)", store, table)
	}
	if since.IsZero() {
		return 0, fmt.Errorf("ledger: mark records deleted: no time given before which their last confirmation must lie")
	}
	ids := make([]string, 0, len(recordIDs))
	for _, id := range recordIDs {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	r := &request{ctx: ctx, kind: opMarkDeletedUnlessConfirmedSince, store: store, table: table, recordIDs: ids, since: since}
	if err := w.decisions.submit(r); err != nil {
		return 0, err
	}
	return r.marked, nil
}

// validPage checks PresentRecords' arguments.
func validPage(store Store, table string, limit int) error {
	if store == "" || table == "" {
		return fmt.Errorf("ledger: list present records: the store and the table must be named (got %q, %q)", store, table)
	}
	if limit <= 0 {
		return fmt.Errorf("ledger: list present records: the page size must be positive (got %d)", limit)
	}
	return nil
}

// idRows are the rows of a query returning one text column, as both
// drivers give them.
type idRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// distinctIDs counts the distinct ids rows returns: a record marked for
// several subjects is one record.
func distinctIDs(rows idRows) (int, error) {
	seen := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		seen[id] = true
	}
	return len(seen), rows.Err()
}
