package ledger

import (
	"context"
	"fmt"
)

// ChangeKind is what a committed change did to a record.
type ChangeKind uint8

const (
	// ChangeWrite: a row was inserted or updated; its stored values name
	// Change.Subjects.
	ChangeWrite ChangeKind = iota + 1
	// ChangeDelete: the row with Change.RecordID was deleted.
	ChangeDelete
	// ChangeTruncate: every row of Change.Table was deleted.
	ChangeTruncate
)

// Change is one committed change to a configured table, as the WAL
// follower read it from the server: the truth about what was stored,
// however it was written.
type Change struct {
	Kind     ChangeKind
	Store    Store
	Table    string
	RecordID string        // ChangeWrite, ChangeDelete
	Subjects []SubjectHash // ChangeWrite: the subjects the stored row names
}

// Observer records what the WAL follower read. Facts it adds are
// confirmed entries with intent 0 (no intent made them), so the ledger
// tells them from the proxy's own. Observe adds, it never removes a
// record's other subjects: a subject the proxy tagged and the stored row
// does not name stays a candidate, which forget checks against the row
// itself before deleting anything. The follower also marks here which
// slots' initial reads are durable (InitialReads).
type Observer interface {
	InitialReads
	// Observe applies changes in order in one transaction and returns once
	// it is durable (fsynced), and with it every transaction ObserveNoSync
	// committed before: the follower acknowledges changes to the server
	// only then. Applying the same changes again gives the same ledger. An
	// Observe of no changes does nothing, and makes nothing durable.
	Observe(ctx context.Context, changes []Change) error
	// ObserveNoSync applies changes as Observe does, in one transaction,
	// and returns once it is committed without waiting for the disk: the
	// changes are visible to every reader of the ledger at once and
	// survive the end of the proxy's process, but a crash of the
	// operating system or of the ledger's server may lose them, and then
	// it loses the latest such transactions, whole. They are durable once
	// a later Observe of at least one change returns. It is for the rows
	// of a transaction still being read, which the follower acknowledges
	// to nobody before the transaction's last rows are recorded by
	// Observe.
	ObserveNoSync(ctx context.Context, changes []Change) error
}

func validChange(c Change) error {
	switch {
	case c.Store == "":
		return fmt.Errorf("no store")
	case c.Table == "":
		return fmt.Errorf("no table")
	case c.Kind == ChangeWrite && c.RecordID == "":
		return fmt.Errorf("a write with no record id")
	case c.Kind != ChangeWrite && c.Kind != ChangeDelete && c.Kind != ChangeTruncate:
		return fmt.Errorf("unknown change kind %d", c.Kind)
	}
	return nil
}

func validChanges(changes []Change) error {
	for i, c := range changes {
		if err := validChange(c); err != nil {
			return fmt.Errorf("ledger: change %d: %w", i, err)
		}
	}
	return nil
}

// observedRuns walks changes in order: it calls write with each run of
// writes between two deletes or truncates, as entries (one per record and
// subject, in order), deletes with each run of deletes of one table, as
// their record ids, and truncate with each truncate. A backend may write
// a run as a whole: every write of a run confirms with intent 0 at the
// same time, and every delete of a run marks its record deleted, so their
// order within it does not change the ledger. write and deletes must not
// keep the slices they are given.
func observedRuns(changes []Change, write func([]Entry) error, deletes func(store Store, table string, ids []string) error, truncate func(Change) error) error {
	run := make([]Entry, 0, len(changes)) // a write names one subject, mostly
	var ids []string
	var deleted Change // the table of the deletes in ids
	flush := func() error {
		var err error
		switch {
		case len(run) > 0:
			err = write(run)
		case len(ids) > 0:
			err = deletes(deleted.Store, deleted.Table, ids)
		}
		run, ids = run[:0], ids[:0]
		return err
	}
	for _, c := range changes {
		switch {
		case c.Kind == ChangeWrite:
			if len(ids) > 0 {
				if err := flush(); err != nil {
					return err
				}
			}
			for _, s := range c.Subjects {
				run = append(run, Entry{Store: c.Store, Table: c.Table, RecordID: c.RecordID, Subject: s})
			}
		case c.Kind == ChangeDelete:
			if len(run) > 0 || len(ids) > 0 && (c.Store != deleted.Store || c.Table != deleted.Table) {
				if err := flush(); err != nil {
					return err
				}
			}
			deleted = c
			ids = append(ids, c.RecordID)
		default:
			if err := flush(); err != nil {
				return err
			}
			if err := truncate(c); err != nil {
				return err
			}
		}
	}
	return flush()
}
