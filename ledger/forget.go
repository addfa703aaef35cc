package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"time"
)

// ForgetStatus is where an erasure request stands.
type ForgetStatus string

const (
	ForgetReceived  ForgetStatus = "received"  // journaled; deletion in progress or to resume
	ForgetCompleted ForgetStatus = "completed" // certificate issued
	ForgetFailed    ForgetStatus = "failed"    // gave up; State says why
)

// ForgetRequest is one erasure request in the forget journal. The journal
// is what makes a forget resumable and idempotent: the engine writes its
// progress into State before each step that cannot be repeated blindly.
type ForgetRequest struct {
	ID          string // random hex; safe in URLs and logs
	Subject     SubjectHash
	TokenHash   [32]byte // SHA-256 of the confirm token, so a token is used once
	ReceivedAt  time.Time
	Deadline    time.Time
	Status      ForgetStatus
	State       []byte // the engine's JSON (plan, progress); opaque here
	Certificate []byte // set once completed
	UpdatedAt   time.Time
}

// Journal is the durable side of forget: the request journal and the
// tombstones that keep forgotten subjects out. Both backends implement it.
type Journal interface {
	// OpenForget journals r (status received) and tombstones its subject
	// in the same transaction, so that from the moment a forget is
	// accepted new writes about the subject are refused. It fails with
	// ErrTokenUsed when r's token was used before and with
	// ErrForgetInProgress when the subject already has an open request.
	OpenForget(ctx context.Context, r ForgetRequest) error
	// Forget returns the request with this id, or ErrNotFound.
	Forget(ctx context.Context, id string) (ForgetRequest, error)
	// ForgetByToken returns the request opened with this token hash, or
	// ErrNotFound.
	ForgetByToken(ctx context.Context, tokenHash [32]byte) (ForgetRequest, error)
	// OpenForgets returns requests still in status received, oldest first.
	OpenForgets(ctx context.Context) ([]ForgetRequest, error)
	// ListForgets returns the requests f chooses, newest first (by
	// received_at, then id, both descending), without their subjects,
	// states or certificates.
	ListForgets(ctx context.Context, f ForgetFilter) ([]ForgetSummary, error)
	// LeaseForget lets owner work on request id until now+d, unless
	// another owner holds an unexpired lease (then ok is false). Engines
	// sharing a ledger use it so that one request runs in one place.
	LeaseForget(ctx context.Context, id, owner string, d time.Duration) (ok bool, err error)
	// SaveForget stores the request's progress while it is open.
	SaveForget(ctx context.Context, id string, state []byte) error
	// FinishForget sets the final status, state and certificate (nil when
	// failed). A request already finished is left as it is and
	// ErrForgetFinished is returned, so that a certificate is never
	// replaced.
	FinishForget(ctx context.Context, id string, status ForgetStatus, state, certificate []byte) error
	// Tombstones returns every tombstoned subject.
	Tombstones(ctx context.Context) ([]Tombstone, error)
	// LiftTombstone removes subject's tombstone; it reports whether there
	// was one.
	LiftTombstone(ctx context.Context, subject SubjectHash) (bool, error)
	// AddLateWrite records a late write deleted after request w.RequestID
	// finished; LateWrites returns a request's, oldest first.
	AddLateWrite(ctx context.Context, w LateWrite) error
	LateWrites(ctx context.Context, requestID string) ([]LateWrite, error)
}

// LateWrite is one backstop deletion: records about a forgotten subject
// committed after its forget (by any path: the WAL follower saw them),
// deleted and verified in one table, and logged in the transparency log.
type LateWrite struct {
	RequestID string    `json:"-"`
	At        time.Time `json:"at"`
	Store     Store     `json:"store"`
	Table     string    `json:"table"`
	Deleted   int64     `json:"deleted"`
	Residual  int64     `json:"residual"`
	LogIndex  int64     `json:"log_index"` // the forget.late_write event
}

// Tombstone keeps a forgotten subject out of the stores.
type Tombstone struct {
	Subject   SubjectHash
	RequestID string // the forget that set it
	CreatedAt time.Time
}

// Errors of the journal that callers branch on.
var (
	ErrNotFound         = errors.New("ledger: no such forget request")
	ErrTokenUsed        = errors.New("ledger: this confirm token was already used")
	ErrForgetInProgress = errors.New("ledger: a forget of this subject is already in progress")
	ErrForgetFinished   = errors.New("ledger: the forget request is already finished")
)

// firstForget is the one request a lookup by a unique key found, or
// ErrNotFound.
func firstForget(rs []ForgetRequest, err error) (ForgetRequest, error) {
	if err != nil {
		return ForgetRequest{}, err
	}
	if len(rs) == 0 {
		return ForgetRequest{}, ErrNotFound
	}
	return rs[0], nil
}

// Derive returns a key for purpose derived from the subject salt, so that
// secrets the engine needs (confirm-token MACs) follow the salt without
// another setting and differ from the subject hashes.
func (h *Hasher) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, h.salt)
	m.Write([]byte("lethe-derive-v1\x00" + purpose))
	return m.Sum(nil)
}

var (
	_ Journal = (*SQLite)(nil)
	_ Journal = (*Postgres)(nil)
)
