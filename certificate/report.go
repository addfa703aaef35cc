package certificate

import (
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// ReportSchemaV1 is the schema of a report's payload.
const ReportSchemaV1 = "lethe.report/v1"

// ReportVersion is the value of "lethe_report" this package writes and
// accepts.
const ReportVersion = 1

// A Report is the signed account of an operation on the stores that is not
// a forget: a reconcile that adopted records the ledger did not know
// (EventReconcileAdopted), a retention sweep (EventRetentionSwept), or a
// replay of a completed forget after a restore (EventReplayed, its run_id
// the forget's request id), or a later re-scan of a completed forget's
// pages (EventPhysical, its run_id the forget's request id; per layer found
// is the pages scanned, done those free of the deleted records' bytes,
// residual those still holding them, and method names each relation's
// counts). It
// carries counts per layer and how records were selected, never ids or
// subjects, so it may be shown to anyone.
type Report struct {
	Schema string        `json:"schema"`
	Kind   string        `json:"kind"`
	RunID  string        `json:"run_id"` // the log event's request_id
	At     time.Time     `json:"at"`
	Layers []ReportLayer `json:"layers"`
}

// ReportLayer is what the operation found and did in one table or
// namespace.
type ReportLayer struct {
	Store string `json:"store"`
	Table string `json:"table"`
	// Found: records the operation selected (unknown to the ledger, or past
	// retention). Done: records adopted or deleted. Residual: selected
	// records still present after a sweep's delete.
	Found    int64 `json:"found"`
	Done     int64 `json:"done"`
	Residual int64 `json:"residual"`
	// Method says how records were selected and checked: queries with
	// placeholders, never values.
	Method string `json:"method"`
	// Cutoff: a sweep deleted records older than it.
	Cutoff *time.Time `json:"cutoff,omitempty"`
}

// A SignedReport is a report as handed out: its exact payload bytes, their
// signature and, once logged, the proof that the log holds its event.
type SignedReport struct {
	Version       int       `json:"lethe_report"`
	Payload       []byte    `json:"payload"`
	PayloadSHA256 string    `json:"payload_sha256"`
	Signature     Signature `json:"signature"`
	Log           *LogProof `json:"log,omitempty"`
}

// SignReport writes r as payload bytes (times in UTC) and signs them.
// Append Leaf to the log, then AttachLog.
func SignReport(s *Signer, r Report) (*SignedReport, error) {
	r.Schema = ReportSchemaV1
	r.At = r.At.UTC()
	if r.Layers == nil {
		r.Layers = []ReportLayer{}
	}
	for i, l := range r.Layers {
		if l.Cutoff != nil {
			utc := l.Cutoff.UTC()
			r.Layers[i].Cutoff = &utc
		}
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("certificate: report: %w", err)
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("certificate: encoding report: %w", err)
	}
	e := signBytes(s, payload)
	return &SignedReport{Version: ReportVersion, Payload: payload, PayloadSHA256: e.PayloadSHA256, Signature: e.Signature}, nil
}

func (r Report) check() error {
	if !isReportKind(r.Kind) {
		return fmt.Errorf("kind %q is not %s, %s, %s or %s", r.Kind, EventReconcileAdopted, EventRetentionSwept, EventReplayed, EventPhysical)
	}
	if !requestIDPattern.MatchString(r.RunID) {
		return fmt.Errorf("run_id %q: want 1-128 of A-Z a-z 0-9 . _ : -", r.RunID)
	}
	seen := make(map[[2]string]bool, len(r.Layers))
	for i, l := range r.Layers {
		at := fmt.Sprintf("layers[%d] (%s %s)", i, l.Store, l.Table)
		switch {
		case !IsStore(l.Store):
			return fmt.Errorf("%s: store %q is not %q or %q", at, l.Store, StorePostgres, StorePinecone)
		case seen[[2]string{l.Store, l.Table}]:
			return fmt.Errorf("%s is listed twice", at)
		case l.Found < 0 || l.Done < 0 || l.Residual < 0:
			return fmt.Errorf("%s has a negative count", at)
		case l.Done > l.Found:
			return fmt.Errorf("%s: done %d is more than found %d; the operation acts only on records it selected", at, l.Done, l.Found)
		case r.Kind == EventRetentionSwept && l.Cutoff == nil:
			return fmt.Errorf("%s: a sweep's layer states its cutoff", at)
		case r.Kind != EventRetentionSwept && l.Cutoff != nil:
			return fmt.Errorf("%s: only a sweep's layer has a cutoff", at)
		case r.Kind == EventReconcileAdopted && l.Residual != 0:
			return fmt.Errorf("%s: a reconcile's residual is 0, not %d", at, l.Residual)
		case r.Kind == EventPhysical && l.Done+l.Residual != l.Found:
			// Every page scanned is free of the bytes or holds them.
			return fmt.Errorf("%s: a re-scan's done %d and residual %d do not add up to the %d pages found (scanned)", at, l.Done, l.Residual, l.Found)
		}
		seen[[2]string{l.Store, l.Table}] = true
	}
	return nil
}

// Leaf returns the log leaf to append for the report: its kind's event,
// naming the run and the payload's hash.
func (sr *SignedReport) Leaf() ([]byte, error) {
	var r Report
	if err := json.Unmarshal(sr.Payload, &r); err != nil {
		return nil, fmt.Errorf("certificate: reading report payload: %w", err)
	}
	return reportLeaf(r.Kind, r.RunID, sr.PayloadSHA256)
}

// reportLeaf is the event of a report of kind, naming its run and its
// payload's hash: the only leaf VerifyReport accepts for it.
func reportLeaf(kind, runID, payloadSHA256 string) ([]byte, error) {
	return EncodeEvent(Event{Event: kind, RequestID: runID, ReportSHA256: payloadSHA256})
}

// AttachLog records where the log holds the report's event.
func (sr *SignedReport) AttachLog(leaf []byte, index int64, proof tlog.RecordProof, checkpoint string) {
	sr.Log = newLogProof(leaf, index, proof, checkpoint)
}

// Marshal returns the signed report as indented JSON ending in a newline.
func (sr *SignedReport) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(sr, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certificate: encoding report: %w", err)
	}
	return append(b, '\n'), nil
}
