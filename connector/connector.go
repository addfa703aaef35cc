// Package connector names what forget and reconcile need of one store: a
// Layer is one configured table or namespace as forget drives it, a
// Scanner the same as reconcile reads it; each store's package (pgvector,
// pinecone) implements them. The engine drives both and knows no store.
package connector

import (
	"context"
	"errors"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Layer is one configured table (or namespace) of one store: everything
// forget does there. ids are the record ids the ledger holds for the
// subject in this layer.
type Layer interface {
	Store() ledger.Store
	Name() string // as the ledger names it: "public.docs"
	// Matching returns the ids of the subject's records present now.
	Matching(ctx context.Context, subject string, ids []string) ([]string, error)
	// Delete deletes them and returns the ids deleted; beforeCommit gets
	// the ids before the store commits (forget journals them there).
	Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error)
	// Residual counts the subject's records still present and says how,
	// for the certificate.
	Residual(ctx context.Context, subject string, ids []string) (Absence, error)
	// Cleanup physically removes what the delete left (VACUUM), when
	// configured; a no-op otherwise.
	Cleanup(ctx context.Context) error
	// NearMisses counts the records that do not name subject exactly but
	// name it once case, surrounding whitespace and Unicode normalisation
	// are ignored: the records a mistyped subject misses. variants are
	// such spellings of subject (lower- and upper-cased, trimmed, NFC and
	// NFD), for a store that cannot normalise what it holds; a store that
	// can compares normalised forms instead. Counts only: neither the
	// subject nor what matched is ever logged or returned.
	NearMisses(ctx context.Context, subject string, variants []string) (int64, error)
}

// Absence is one verification of a layer: the subject's records still
// found, and how they were looked for (queries with placeholders, never
// values), as the certificate states it.
type Absence struct {
	Residual int64
	Method   string
	Queries  []string
}

// Scoped is a Layer that stands for several ledger tables of its store,
// not only the one named like it: a Pinecone "*" rule covers every
// namespace of its index without a rule of its own. The engine gives it
// the ledger's ids of each table it Holds that no layer names exactly.
type Scoped interface {
	Layer
	Holds(table string) bool
}

// Retainer is one table or namespace whose records expire (a rule with
// retain): what lethe-proxy sweep does there. A record's age is read from
// the rule's retain_by; a record whose retain_by is missing or cannot be
// read as a time is never expired, only counted.
type Retainer interface {
	Store() ledger.Store
	Name() string // as the ledger names the rule's table: "public.docs", "index/namespace"
	// Expired counts the records whose retain_by is before cutoff, and
	// those whose retain_by is missing or unreadable.
	Expired(ctx context.Context, cutoff time.Time) (Expiry, error)
	// DeleteExpired deletes the records whose retain_by is before cutoff,
	// at most batch per statement or request, and returns how many went.
	// beforeCommit gets each batch's ids with the ledger table they are
	// recorded under, before the batch is committed or sent, so that a
	// failed batch is deleted and recorded again by the next sweep.
	DeleteExpired(ctx context.Context, cutoff time.Time, batch int, beforeCommit func(table string, ids []string) error) (int64, error)
	// ResidualExpired counts the expired records still present after
	// DeleteExpired on the same Retainer and says how it looked, for the
	// sweep's report.
	ResidualExpired(ctx context.Context, cutoff time.Time) (Absence, error)
}

// Expiring is a Retainer with its rule's retain (records older than it
// expire) and retain_by as the rule writes it, for the sweep's report.
type Expiring struct {
	Retainer
	Retain   time.Duration
	RetainBy string
}

// Expiry is what Retainer.Expired counted.
type Expiry struct {
	Expired int64
	// Unreadable records have no retain_by value, or one that is not a
	// time (nor, where numbers are read, seconds since the Unix epoch):
	// they are kept.
	Unreadable int64
}

// Scanner reads every record of one configured table or namespace, for
// reconcile: the record ids and the subjects their stored values name, by
// the rule that tags writes to it. Reading never changes the store.
type Scanner interface {
	Store() ledger.Store
	Name() string // as the ledger names it, or "<index>/*" for several namespaces
	// Scan calls fn with the records in batches of bounded size (so that a
	// table of any size is read in bounded memory); fn must not keep the
	// batch. An error from fn stops the scan and is returned. A table that
	// does not exist returns an error wrapping ErrAbsent.
	Scan(ctx context.Context, fn func(batch []Record) error) error
	// ScanMethod says how Scan reads the records, for reconcile's report:
	// queries with placeholders, never values.
	ScanMethod() string
}

// Record is one record a store holds, as Scan reads it.
type Record struct {
	// Table is where the ledger names it: the scanner's Name, or for a
	// scanner of several namespaces the namespace's own ("<index>/<ns>").
	Table string
	// ID is the record id as text; "" when the record has none (NULL).
	ID string
	// Subjects are the subjects its stored values name, as stored (never
	// logged); none when they name nobody (NULL, absent).
	Subjects []string
	// Unreadable: a value the rule reads could not be read as the rule
	// says (a JSON path into text that is not JSON), so the record's
	// subjects are unknown.
	Unreadable bool
}

// ErrAbsent is wrapped by the errors of operations (Scan among them) on a
// table that does not exist: it holds no records (an application that
// creates its table on first use has not yet).
var ErrAbsent = errors.New("the table does not exist")
