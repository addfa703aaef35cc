package admin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/engine"
)

// fakeEngine answers every call with canned results, or with err when it
// is set, and records the subjects and ids it was given.
type fakeEngine struct {
	err error

	preview     engine.Preview
	receipt     engine.Receipt
	status      engine.Status
	list        engine.RequestList
	certificate []byte
	lifted      bool
	checkpoint  []byte
	inclusion   engine.InclusionProof
	consistency engine.ConsistencyProof
	verdict     engine.VerifyResult

	mu    sync.Mutex
	calls []string // method and argument, e.g. "Preview alice@example.com"
}

func (f *fakeEngine) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeEngine) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeEngine) Preview(ctx context.Context, subject string) (engine.Preview, error) {
	f.record("Preview " + subject)
	return f.preview, f.err
}

func (f *fakeEngine) Forget(ctx context.Context, subject, confirmToken string, options ...engine.ForgetOptions) (engine.Receipt, error) {
	call := "Forget " + subject + " " + confirmToken
	for _, o := range options {
		if o.NothingFound {
			call += " nothing_found"
		}
	}
	f.record(call)
	return f.receipt, f.err
}

func (f *fakeEngine) Status(ctx context.Context, id string) (engine.Status, error) {
	f.record("Status " + id)
	return f.status, f.err
}

func (f *fakeEngine) List(ctx context.Context, filter engine.ListFilter) (engine.RequestList, error) {
	f.record(fmt.Sprintf("List status=%s overdue=%t limit=%d", filter.Status, filter.Overdue, filter.Limit))
	return f.list, f.err
}

func (f *fakeEngine) Certificate(ctx context.Context, id string) ([]byte, error) {
	f.record("Certificate " + id)
	return f.certificate, f.err
}

func (f *fakeEngine) Reverify(ctx context.Context, id, subject string) (engine.Reverification, error) {
	f.record("Reverify " + id + " " + subject)
	return engine.Reverification{RequestID: id, Absent: true}, f.err
}

func (f *fakeEngine) Lift(ctx context.Context, subject string) (bool, error) {
	f.record("Lift " + subject)
	return f.lifted, f.err
}

func (f *fakeEngine) Checkpoint(ctx context.Context) ([]byte, error) {
	f.record("Checkpoint")
	return f.checkpoint, f.err
}

func (f *fakeEngine) Inclusion(ctx context.Context, index, size int64) (engine.InclusionProof, error) {
	f.record("Inclusion")
	return f.inclusion, f.err
}

func (f *fakeEngine) Consistency(ctx context.Context, oldSize, newSize int64) (engine.ConsistencyProof, error) {
	f.record("Consistency")
	return f.consistency, f.err
}

func (f *fakeEngine) Verify(cert []byte) engine.VerifyResult {
	f.record("Verify")
	return f.verdict
}

// cannedEngine is a fake with a plausible answer for every call.
func cannedEngine() *fakeEngine {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return &fakeEngine{
		preview: engine.Preview{
			Layers:    []engine.LayerPreview{{Store: "postgres", Table: "public.docs", LedgerRecords: 3, Rows: 3}},
			Token:     "tok-123",
			ExpiresAt: t0.Add(10 * time.Minute),
		},
		receipt: engine.Receipt{RequestID: "0123456789abcdef0123456789abcdef", Deadline: t0.Add(30 * 24 * time.Hour), SubjectSecret: "s3cr3t"},
		status:  engine.Status{RequestID: "0123456789abcdef0123456789abcdef", Status: "completed", ReceivedAt: t0, Deadline: t0.Add(30 * 24 * time.Hour), UpdatedAt: t0},
		list: engine.RequestList{Requests: []engine.RequestSummary{
			{RequestID: "0123456789abcdef0123456789abcdef", Status: "received", ReceivedAt: t0, Deadline: t0.Add(30 * 24 * time.Hour), UpdatedAt: t0, Overdue: true},
		}},
		certificate: []byte(`{"payload":"e30","signatures":[]}`),
		lifted:      true,
		checkpoint:  []byte("lethe.example/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— lethe.example/log AAAA\n"),
		inclusion:   engine.InclusionProof{Index: 1, Size: 4, Record: []byte("leaf"), Hashes: [][]byte{make([]byte, 32)}},
		consistency: engine.ConsistencyProof{OldSize: 2, NewSize: 4, Hashes: [][]byte{make([]byte, 32)}},
		verdict:     engine.VerifyResult{Verdict: "invalid_signature", Reason: "signature does not match"},
	}
}
