package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// A confirmation writes an intent's entries into entries, and the WAL
// follower's observed writes the same way with intent 0. The common case,
// records new to the ledger, goes through plain multi-row INSERTs with the
// values bound as they are. SQLite keeps a statement journal, a copy of
// every page a statement changes, for any statement that writes several
// rows and may abort halfway: one that calls a function (JSON's included)
// or upserts. That copy would be half the cost of a confirmation.
//
// The INSERT stops at the first record the ledger already has (a rewrite,
// or one record twice in an intent) and keeps what it wrote (OR FAIL);
// the upsert over the JSON array then writes the rest, that chunk
// included, and rewrites what the INSERT wrote to the same values.

// insertSizes INSERTs are prepared, for 1, 2, 4, … 128 entries (the most
// one names), so an intent of n entries takes at most about log2(n)
// statements plus one per 128 entries.
const insertSizes = 8

// confirmInsertSQL is the INSERT of n entries: five parameters per entry,
// then the intent and the time.
func confirmInsertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT OR FAIL INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		p := 5*i + 1
		fmt.Fprintf(&b, "(?%d,?%d,?%d,?%d,?%d,'confirmed',?%d,?%d)", p, p+1, p+2, p+3, p+4, 5*n+1, 5*n+2)
	}
	return b.String()
}

// prepareConfirmInserts compiles the INSERTs on the writer, once.
func (l *SQLite) prepareConfirmInserts() error {
	for k := range insertSizes {
		st, err := l.writer.Prepare(confirmInsertSQL(1 << k))
		if err != nil {
			return fmt.Errorf("prepare confirmation insert of %d: %w", 1<<k, err)
		}
		l.inserts[k] = st
	}
	return nil
}

// confirmEntries writes entries as confirmed by intent, inside tx, in
// order. Intent 0 (an observed fact) writes new records with intent 0 and
// leaves a record the ledger has to the intent that last confirmed it.
func (l *SQLite) confirmEntries(ctx context.Context, tx *sql.Tx, entries []Entry, intent IntentID, ts int64) error {
	for rest := entries; len(rest) > 0; {
		k := min(bits.Len(uint(len(rest)))-1, insertSizes-1)
		n := 1 << k
		args := l.insertArgs[:0]
		for i := range rest[:n] {
			e := &rest[i]
			unattributed := 0
			if e.Unattributed {
				unattributed = 1
			}
			args = append(args, string(e.Store), e.Table, e.RecordID, e.Subject[:], unattributed)
		}
		args = append(args, int64(intent), ts)
		_, err := tx.StmtContext(ctx, l.inserts[k]).ExecContext(ctx, args...)
		clear(args) // keep no entry alive until the next confirmation
		l.insertArgs = args
		if isPrimaryKeyConflict(err) {
			_, err = tx.StmtContext(ctx, l.stmts["confirm_upsert"]).ExecContext(ctx, entriesJSON(rest), int64(intent), ts)
			return err
		}
		if err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

func isPrimaryKeyConflict(err error) bool {
	var e sqlite3.Error
	return errors.As(err, &e) && e.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
}

// confirmedRun gathers the entries of a batch's consecutive
// confirmations, each entry once, with the last confirmation that named
// it. A record that many confirmations of one batch name (the same
// documents upserted again and again) is then written once, as the last
// of them would leave it: writing it once per confirmation, in one
// transaction at one time, ends in the same row.
type confirmedRun struct {
	entries []runEntry
	at      map[Entry]int // index in entries
	scratch []Entry       // one intent's entries, for confirmEntries
}

type runEntry struct {
	Entry
	intent IntentID
}

func (run *confirmedRun) reset() {
	clear(run.entries) // keep no entry alive until the next batch
	run.entries = run.entries[:0]
	if run.at == nil {
		run.at = map[Entry]int{}
	}
	clear(run.at)
}

// add records that intent confirms entries, after the confirmations added
// before it.
func (run *confirmedRun) add(entries []Entry, intent IntentID) {
	for _, e := range entries {
		if i, ok := run.at[e]; ok {
			run.entries[i].intent = intent
			continue
		}
		run.at[e] = len(run.entries)
		run.entries = append(run.entries, runEntry{e, intent})
	}
}

// writeConfirmed writes run's entries into entries inside tx, each with
// the intent that confirmed it last, and empties run.
func (l *SQLite) writeConfirmed(ctx context.Context, tx *sql.Tx, run *confirmedRun, ts int64) error {
	if len(run.entries) == 0 {
		return nil
	}
	slices.SortStableFunc(run.entries, func(a, b runEntry) int { return cmp.Compare(a.intent, b.intent) })
	for rest := run.entries; len(rest) > 0; {
		intent := rest[0].intent
		n := 1
		for n < len(rest) && rest[n].intent == intent {
			n++
		}
		run.scratch = run.scratch[:0]
		for _, e := range rest[:n] {
			run.scratch = append(run.scratch, e.Entry)
		}
		err := l.confirmEntries(ctx, tx, run.scratch, intent, ts)
		clear(run.scratch)
		if err != nil {
			return err
		}
		rest = rest[n:]
	}
	run.reset()
	return nil
}
