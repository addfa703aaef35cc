package console_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// fakeEngine answers the admin API's calls with canned results (err when
// set) and records each call with its arguments.
type fakeEngine struct {
	err     error
	preview engine.Preview
	status  engine.Status
	cert    []byte

	mu    sync.Mutex
	calls []string
}

func (f *fakeEngine) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeEngine) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeEngine) Preview(ctx context.Context, subject string) (engine.Preview, error) {
	f.record("Preview %s", subject)
	return f.preview, f.err
}

func (f *fakeEngine) Forget(ctx context.Context, subject, token string, options ...engine.ForgetOptions) (engine.Receipt, error) {
	nothing := len(options) > 0 && options[0].NothingFound
	f.record("Forget %s %s nothing_found=%t", subject, token, nothing)
	return engine.Receipt{RequestID: testID, Deadline: t0.Add(30 * 24 * time.Hour), SubjectSecret: "c2VjcmV0"}, f.err
}

func (f *fakeEngine) Status(ctx context.Context, id string) (engine.Status, error) {
	f.record("Status %s", id)
	return f.status, f.err
}

func (f *fakeEngine) List(ctx context.Context, filter engine.ListFilter) (engine.RequestList, error) {
	f.record("List status=%s overdue=%t", filter.Status, filter.Overdue)
	return engine.RequestList{Requests: []engine.RequestSummary{
		{RequestID: testID, Status: ledger.ForgetReceived, ReceivedAt: t0, Deadline: t0.Add(30 * 24 * time.Hour), UpdatedAt: t0, Overdue: true},
	}}, f.err
}

func (f *fakeEngine) Certificate(ctx context.Context, id string) ([]byte, error) {
	f.record("Certificate %s", id)
	return f.cert, f.err
}

func (f *fakeEngine) Lift(ctx context.Context, subject string) (bool, error) {
	f.record("Lift %s", subject)
	return false, f.err
}

func (f *fakeEngine) Reverify(ctx context.Context, id, subject string) (engine.Reverification, error) {
	f.record("Reverify %s %s", id, subject)
	return engine.Reverification{}, f.err
}

func (f *fakeEngine) Checkpoint(ctx context.Context) ([]byte, error) {
	f.record("Checkpoint")
	return []byte("lethe.example/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— lethe.example/log AAAA\n"), f.err
}

func (f *fakeEngine) Inclusion(ctx context.Context, index, size int64) (engine.InclusionProof, error) {
	return engine.InclusionProof{}, f.err
}

func (f *fakeEngine) Consistency(ctx context.Context, oldSize, newSize int64) (engine.ConsistencyProof, error) {
	f.record("Consistency %d %d", oldSize, newSize)
	return engine.ConsistencyProof{OldSize: oldSize, NewSize: newSize}, f.err
}

func (f *fakeEngine) Verify(cert []byte) engine.VerifyResult {
	f.record("Verify")
	return engine.VerifyResult{Verdict: "valid"}
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const testID = "0123456789abcdef0123456789abcdef"

// cannedEngine previews three records in one table and reports the
// request completed.
func cannedEngine() *fakeEngine {
	return &fakeEngine{
		preview: engine.Preview{
			Layers: []engine.LayerPreview{{Store: "postgres", Table: "public.docs", LedgerRecords: 3, Rows: 3}},
			Token:  "tok-123", ExpiresAt: t0.Add(10 * time.Minute),
		},
		status: engine.Status{RequestID: testID, Status: ledger.ForgetReceived, ReceivedAt: t0, Deadline: t0.Add(30 * 24 * time.Hour), UpdatedAt: t0,
			Layers: []engine.LayerStatus{{Store: "postgres", Table: "public.docs", Deleted: 1, Residual: 2}}},
	}
}
