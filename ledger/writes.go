package ledger

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// writes implements the write half of Ledger on top of the committer; both
// backends embed it, so that both take writes the same way. Intents go to
// pendingFile when it is set (SQLite's pending file, see sqlite_pending.go),
// to decisions otherwise; everything else goes to decisions.
type writes struct{ decisions, pendingFile *committer }

func (w writes) intents() *committer {
	if w.pendingFile != nil {
		return w.pendingFile
	}
	return w.decisions
}

// Intend durably records entries as pending and returns their intent. It
// returns only once the transaction holding them has committed.
func (w writes) Intend(ctx context.Context, entries []Entry) (IntentID, error) {
	return w.StartIntend(ctx, entries).Wait()
}

// StartIntend queues entries as Intend does and returns at once; Wait
// returns what Intend would have.
func (w writes) StartIntend(ctx context.Context, entries []Entry) Intending {
	for i, e := range entries {
		if err := validEntry(e); err != nil {
			return Intended(0, fmt.Errorf("ledger: entry %d: %w", i, err))
		}
	}
	if w.decisions.fence != nil {
		if err := w.decisions.fence(); err != nil {
			return Intended(0, err)
		}
	}
	r := &request{ctx: ctx, kind: opIntend, entries: entries}
	if err := w.intents().queue(r); err != nil {
		return Intended(0, err)
	}
	return queuedIntent{r}
}

// Intending is an intent on its way to the ledger (StartIntend).
type Intending interface {
	// Wait returns the intent once its entries are durable, or why they
	// are not. Call it once.
	Wait() (IntentID, error)
}

// Intended is an Intending whose outcome is already known: a refusal
// before the intent was queued, or a ledger that writes at once.
func Intended(id IntentID, err error) Intending { return knownIntent{id, err} }

type knownIntent struct {
	id  IntentID
	err error
}

func (k knownIntent) Wait() (IntentID, error) { return k.id, k.err }

type queuedIntent struct{ r *request }

func (q queuedIntent) Wait() (IntentID, error) {
	if err := q.r.wait(); err != nil {
		return 0, err
	}
	return q.r.id, nil
}

// Confirm moves an intent's entries to the confirmed state. Confirming an
// intent twice is not an error; confirming a dropped or unknown intent
// returns ErrUnknownIntent.
func (w writes) Confirm(ctx context.Context, id IntentID) error {
	return w.decisions.submit(&request{ctx: ctx, kind: opConfirm, intent: id})
}

// ConfirmAll confirms many intents, each as Confirm does, submitted
// together so that they share the committer's transactions. errs[i] is
// ids[i]'s outcome.
func (w writes) ConfirmAll(ctx context.Context, ids []IntentID) []error {
	rs := make([]*request, len(ids))
	for i, id := range ids {
		rs[i] = &request{kind: opConfirm, intent: id}
	}
	return w.decisions.submitAll(ctx, rs)
}

// Drop forgets an intent's pending entries. Records confirmed by earlier
// intents are untouched, even when the dropped intent rewrote them.
// Dropping twice is not an error; dropping a confirmed intent returns
// ErrIntentConfirmed.
func (w writes) Drop(ctx context.Context, id IntentID) error {
	return w.decisions.submit(&request{ctx: ctx, kind: opDrop, intent: id})
}

// MarkDeleted marks the confirmed records with these ids deleted, for every
// subject. Empty ids (store-generated) cannot be named and are ignored.
func (w writes) MarkDeleted(ctx context.Context, store Store, table string, recordIDs []string) error {
	ids := make([]string, 0, len(recordIDs))
	for _, id := range recordIDs {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return w.decisions.submit(&request{ctx: ctx, kind: opMarkDeleted, store: store, table: table, recordIDs: ids})
}

// MarkTableDeleted marks every confirmed record of table deleted, for
// every subject. Records confirmed later (by intents still pending now,
// or written after) are untouched.
func (w writes) MarkTableDeleted(ctx context.Context, store Store, table string) error {
	if store == "" || table == "" {
		return fmt.Errorf("ledger: mark a table deleted: the store and the table must be named (got %q, %q)", store, table)
	}
	return w.decisions.submit(&request{ctx: ctx, kind: opMarkTableDeleted, store: store, table: table})
}

func validEntry(e Entry) error {
	switch {
	case e.Store == "":
		return fmt.Errorf("no store")
	case e.Table == "":
		return fmt.Errorf("no table")
	case e.Unattributed && (e.Subject != SubjectHash{} || e.RecordID != ""):
		return fmt.Errorf("an unattributed entry has no subject and no record id")
	case !e.Unattributed && e.Subject == SubjectHash{}:
		return fmt.Errorf("no subject (mark it Unattributed if it has none)")
	}
	// Refused here rather than by the store: PostgreSQL text takes neither,
	// and a store error would fail every other request of the batch once.
	// Not quoted: a record id is row data, and this error is logged.
	for _, f := range []struct{ name, text string }{{"store", string(e.Store)}, {"table", e.Table}, {"record id", e.RecordID}} {
		if !utf8.ValidString(f.text) || strings.ContainsRune(f.text, 0) {
			return fmt.Errorf("the %s is not valid UTF-8 text without NUL bytes; encode binary ids (e.g. hex) before tagging", f.name)
		}
	}
	return nil
}
