package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"sync"
	"time"
)

// SubjectHash is HMAC-SHA256(salt, subject): the only form in which a data
// subject is stored.
type SubjectHash [32]byte

// String is the hex form, safe for logs and URLs.
func (h SubjectHash) String() string { return hex.EncodeToString(h[:]) }

// Hasher hashes subjects with the operator's secret salt. It is safe for
// concurrent use.
type Hasher struct {
	salt []byte
	// macs keeps HMACs keyed with salt: Reset returns one to its keyed
	// state without hashing the key again, and capture hashes a subject
	// per row, and keying a new HMAC each time is a visible cost on ingest.
	macs sync.Pool
}

// ErrShortSalt is returned for salts too short to resist guessing.
var ErrShortSalt = errors.New("ledger: the subject salt must be at least 32 bytes")

// NewHasher returns a Hasher for salt (at least 32 bytes).
func NewHasher(salt []byte) (*Hasher, error) {
	if len(salt) < 32 {
		return nil, ErrShortSalt
	}
	h := &Hasher{salt: append([]byte(nil), salt...)}
	h.macs.New = func() any { return hmac.New(sha256.New, h.salt) }
	return h, nil
}

// Hash returns the stored form of subject.
func (h *Hasher) Hash(subject string) SubjectHash {
	m := h.macs.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, subject)
	var out SubjectHash
	m.Sum(out[:0])
	h.macs.Put(m)
	return out
}

// Store names a kind of vector store.
type Store string

const (
	StorePostgres Store = "postgres"
	StorePinecone Store = "pinecone"
)

// State is where a record stands in the ledger.
type State string

const (
	StatePending   State = "pending"   // intent recorded, write not yet known to have committed
	StateConfirmed State = "confirmed" // the write committed
	StateDeleted   State = "deleted"   // the application (or a forget) deleted it
)

// Entry is one (record, subject) fact to record. A record about several
// subjects is several entries with the same Store, Table and RecordID.
type Entry struct {
	Store    Store
	Table    string // schema-qualified table, or Pinecone index/namespace
	RecordID string // "" when the store generated the id (forget then deletes by the subject predicate)
	Subject  SubjectHash
	// Unattributed marks a write whose rows could not be known (permissive
	// mode); Subject is zero and RecordID empty. Forget deletes by the
	// subject predicate too, so the rows such writes made are still found.
	Unattributed bool
}

// Record is an Entry as stored, with its state.
type Record struct {
	Entry
	State     State
	Intent    IntentID
	UpdatedAt time.Time
}

// IntentID identifies one batch of entries made durable together.
type IntentID int64

// Intent is a batch still pending, as returned after a crash.
type Intent struct {
	ID        IntentID
	CreatedAt time.Time
	Entries   []Entry
}

// TableCount is the number of records per state for one table.
type TableCount struct {
	Store Store
	Table string
	State State
	Count int64
}

// Ledger is the durable store of tags. Implementations are safe for
// concurrent use; Intend calls from many connections share one commit
// (group commit), and Intend returns only once its entries are durable.
type Ledger interface {
	// Intend durably records entries as pending and returns their intent.
	Intend(ctx context.Context, entries []Entry) (IntentID, error)
	// StartIntend is Intend without the wait: the intent is queued, and
	// its Wait returns what Intend would have.
	StartIntend(ctx context.Context, entries []Entry) Intending
	// Confirm marks an intent's entries confirmed (the write committed).
	Confirm(ctx context.Context, id IntentID) error
	// ConfirmAll confirms many intents at once; errs[i] is ids[i]'s
	// outcome, as Confirm would return it.
	ConfirmAll(ctx context.Context, ids []IntentID) (errs []error)
	// Drop removes an intent's entries (the write rolled back).
	Drop(ctx context.Context, id IntentID) error
	// Pending returns intents not yet confirmed or dropped, oldest first:
	// every handle's, in flight or left by a crash (forget's candidates).
	Pending(ctx context.Context) ([]Intent, error)
	// PendingOrphans returns the pending intents that no live handle will
	// resolve, oldest first: those left by handles that closed or died
	// (see "Owners" in the package documentation), never this handle's
	// own. Recovery resolves these; after Close it returns ErrClosed.
	PendingOrphans(ctx context.Context) ([]Intent, error)
	// MarkDeleted marks records deleted by the application.
	MarkDeleted(ctx context.Context, store Store, table string, recordIDs []string) error
	// MarkTableDeleted marks every record of one table deleted, for every
	// subject, as of now (a Pinecone deleteAll or namespace delete, which
	// names no ids). Pending intents are untouched: their writes may land
	// after the delete, and forget treats them as candidates.
	MarkTableDeleted(ctx context.Context, store Store, table string) error
	// BySubject returns every record about subject, in every state.
	BySubject(ctx context.Context, subject SubjectHash) ([]Record, error)
	// Counts returns record counts per store, table and state.
	Counts(ctx context.Context) ([]TableCount, error)
	// Close flushes and releases the ledger.
	Close() error
}

// ErrUnavailable wraps every failure to reach or write the ledger, so that
// callers can fail closed.
var ErrUnavailable = errors.New("ledger unavailable")
