// Package reconcile compares what the stores hold with what the ledger
// holds: it scans every configured table and namespace, counts records the
// ledger does not know (written before Lethe, around a proxy while the WAL
// follower was off, or unattributed in permissive mode) and records naming
// a forgotten subject, and with Adopt records the unknown ones in the
// ledger as the WAL follower would. It holds counts only, never ids,
// subjects or values, and signs nothing itself: Report builds the report
// a certifier signs and logs.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// Ledger is what reconcile needs of the ledger: which facts it
// holds, the WAL follower's way of adding facts, and the tombstones of
// forgotten subjects.
type Ledger interface {
	ledger.Holder
	ledger.Observer
	Tombstones(ctx context.Context) ([]ledger.Tombstone, error)
}

// An open ledger, whichever its backend, is a Ledger.
var _ Ledger = (*ledger.Handle)(nil)

// Config is one reconcile run.
type Config struct {
	Ledger   Ledger
	Hasher   *ledger.Hasher
	Scanners []connector.Scanner // every configured table and namespace
	// Adopt records each unknown (record, subject) pair in the ledger as
	// the WAL follower records a committed row: a confirmed fact with
	// intent 0 (ledger.Observer).
	Adopt bool
	// Certifier signs and logs the report of an adoption (Reconcile);
	// needed with Adopt. Now dates it (default time.Now).
	Certifier *engine.Certifier
	Now       func() time.Time
}

// Count is what reconcile found in one table or namespace. It
// holds counts only: never ids, subjects or values.
type Count struct {
	Store ledger.Store `json:"store"`
	Table string       `json:"table"` // as the ledger names it
	// Absent: the table does not exist (it holds nothing).
	Absent bool `json:"absent,omitempty"`
	// Scanned: records read. Known: records whose every subject the ledger
	// holds under their id. Unknown: records naming a subject the ledger
	// does not hold under their id. Unreadable: records with no id (or one
	// the ledger cannot hold: not UTF-8 text), whose values name no
	// subject (NULL), or whose subject could not be read;
	// there is nothing to adopt for them, and forget finds them by no
	// subject. Forgotten: records naming a subject a forget tombstoned,
	// written after it where nothing caught them; they are never adopted
	// (forgetting the subject again deletes them). Each record is counted
	// once: Scanned = Known + Unknown + Unreadable + Forgotten. Adopted:
	// unknown records recorded in the ledger by Adopt.
	Scanned    int64 `json:"scanned"`
	Known      int64 `json:"known"`
	Unknown    int64 `json:"unknown"`
	Unreadable int64 `json:"unreadable"`
	Forgotten  int64 `json:"forgotten"`
	Adopted    int64 `json:"adopted"`
	// ForgottenBy are the forget requests whose subjects the Forgotten
	// records name (request ids: no personal data), sorted.
	ForgottenBy []string `json:"forgotten_by,omitempty"`
	// Method says how the records were read (the scanner's ScanMethod).
	Method string `json:"method"`
}

// Run scans every configured table and namespace and compares each
// record's (id, subject) pairs with the ledger: records written before
// Lethe, around a proxy while the WAL follower was off, or unattributed in
// permissive mode. Records naming a subject a forget tombstoned are
// counted apart and never adopted. With Adopt it records the unknown pairs
// as it goes, so that a second run finds them known. Records are counted where the
// ledger names them (a "*" namespace rule's records per namespace), in
// the order first met; a scanner that read nothing has one count of its
// own name.
func Run(ctx context.Context, cfg Config) ([]Count, error) {
	if cfg.Ledger == nil || cfg.Hasher == nil {
		return nil, errors.New("reconcile: Run needs a Ledger and a Hasher")
	}
	tombs, err := cfg.Ledger.Tombstones(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile: reading the tombstones: %w", err)
	}
	r := &reconciler{cfg: cfg, index: map[[2]string]int{}, forgotten: map[ledger.SubjectHash]string{}}
	for _, t := range tombs {
		r.forgotten[t.Subject] = t.RequestID
	}
	for _, s := range cfg.Scanners {
		before := len(r.counts)
		err := s.Scan(ctx, func(batch []connector.Record) error { return r.batch(ctx, s, batch) })
		absent := errors.Is(err, connector.ErrAbsent)
		if err != nil && !absent {
			return nil, fmt.Errorf("reconcile %s: %w", s.Name(), err)
		}
		if len(r.counts) == before {
			r.counts[r.count(s, s.Name())].Absent = absent
		}
	}
	return r.counts, nil
}

// reconciler is one run's state: the counts per table, and the forgotten
// subjects.
type reconciler struct {
	cfg       Config
	counts    []Count
	index     map[[2]string]int             // (store, table) → position in counts
	forgotten map[ledger.SubjectHash]string // tombstoned subject → its forget's request id
}

// count returns the position in counts of table's count, adding it the
// first time. (A position, not a pointer: adding moves counts.)
func (r *reconciler) count(s connector.Scanner, table string) int {
	k := [2]string{string(s.Store()), table}
	i, ok := r.index[k]
	if !ok {
		i = len(r.counts)
		r.index[k] = i
		r.counts = append(r.counts, Count{Store: s.Store(), Table: table, Method: s.ScanMethod()})
	}
	return i
}

// batch classifies one batch of records with one ledger query, and adopts
// its unknown pairs in one ledger transaction.
func (r *reconciler) batch(ctx context.Context, s connector.Scanner, batch []connector.Record) error {
	type named struct {
		count int // in r.counts
		first int // the record's first entry in entries
		n     int
	}
	var (
		entries []ledger.Entry
		records []named
	)
	for _, rec := range batch {
		c := r.count(s, rec.Table)
		r.counts[c].Scanned++
		if !storableID(rec.ID) || rec.Unreadable || len(rec.Subjects) == 0 {
			r.counts[c].Unreadable++
			continue
		}
		first := len(entries)
		forgottenBy := ""
		for _, subject := range rec.Subjects {
			h := r.cfg.Hasher.Hash(subject)
			if id, ok := r.forgotten[h]; ok {
				forgottenBy = id
			}
			if !namesSubject(entries[first:], h) {
				entries = append(entries, ledger.Entry{Store: s.Store(), Table: rec.Table, RecordID: rec.ID, Subject: h})
			}
		}
		if forgottenBy != "" {
			entries = entries[:first]
			r.counts[c].Forgotten++
			if !slices.Contains(r.counts[c].ForgottenBy, forgottenBy) {
				r.counts[c].ForgottenBy = append(r.counts[c].ForgottenBy, forgottenBy)
				slices.Sort(r.counts[c].ForgottenBy)
			}
			continue
		}
		records = append(records, named{count: c, first: first, n: len(entries) - first})
	}
	held, err := r.cfg.Ledger.Holds(ctx, entries)
	if err != nil {
		return err
	}
	var adopt []ledger.Change
	for _, rec := range records {
		var missing []ledger.SubjectHash
		for i := rec.first; i < rec.first+rec.n; i++ {
			if !held[i] {
				missing = append(missing, entries[i].Subject)
			}
		}
		if len(missing) == 0 {
			r.counts[rec.count].Known++
			continue
		}
		r.counts[rec.count].Unknown++
		if r.cfg.Adopt {
			e := entries[rec.first]
			adopt = append(adopt, ledger.Change{Kind: ledger.ChangeWrite, Store: e.Store, Table: e.Table, RecordID: e.RecordID, Subjects: missing})
		}
	}
	if len(adopt) == 0 {
		return nil
	}
	if err := r.cfg.Ledger.Observe(ctx, adopt); err != nil {
		return err
	}
	for _, c := range adopt {
		r.counts[r.count(s, c.Table)].Adopted++
	}
	return nil
}

// namesSubject reports whether entries (one record's) name h: a record
// naming a subject twice is one pair.
func namesSubject(entries []ledger.Entry, h ledger.SubjectHash) bool {
	for _, e := range entries {
		if e.Subject == h {
			return true
		}
	}
	return false
}

// storableID reports whether the ledger can hold id (valid UTF-8 text
// without NUL, see ledger.Entry): a record whose id it cannot hold can be
// neither compared nor adopted.
func storableID(id string) bool {
	return id != "" && utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}
