package certificate

import (
	"bytes"
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
// (EventReconcileAdopted), or a retention sweep (EventRetentionSwept). It
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
	if r.Kind != EventReconcileAdopted && r.Kind != EventRetentionSwept {
		return fmt.Errorf("kind %q is not %s or %s", r.Kind, EventReconcileAdopted, EventRetentionSwept)
	}
	if !requestIDPattern.MatchString(r.RunID) {
		return fmt.Errorf("run_id %q: want 1-128 of A-Z a-z 0-9 . _ : -", r.RunID)
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
	return EncodeEvent(Event{Event: r.Kind, RequestID: r.RunID, ReportSHA256: sr.PayloadSHA256})
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

// VerifyReport checks a signed report against the trusted keys: the
// signature is a trusted key's (within its window at the report's time),
// and, when logged, a checkpoint signed by a trusted key covers its event.
// It returns the report it vouches for.
func VerifyReport(data []byte, keys KeySet) (*Report, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("certificate: report of %d bytes; at most %d", len(data), MaxSize)
	}
	var sr SignedReport
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sr); err != nil {
		return nil, fmt.Errorf("certificate: report: %w", err)
	}
	if sr.Version != ReportVersion || sr.Signature.Alg != AlgEd25519 {
		return nil, fmt.Errorf("certificate: report: lethe_report %d with %q signature; this verifier reads version %d, %s", sr.Version, sr.Signature.Alg, ReportVersion, AlgEd25519)
	}
	trusted, v, why := checkSignature(sr.Signature, sr.Payload, sr.PayloadSHA256, keys)
	if v != "" {
		return nil, fmt.Errorf("certificate: report: %s: %s", v, why)
	}
	var r Report
	dec = json.NewDecoder(bytes.NewReader(sr.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Schema != ReportSchemaV1 {
		return nil, fmt.Errorf("certificate: report payload is not %s: %v", ReportSchemaV1, err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("certificate: report: %w", err)
	}
	if !trusted.Covers(r.At) {
		return nil, fmt.Errorf("certificate: report: at %s is outside the window of key %s (%s)", rfc3339(r.At), trusted.ID, window(trusted))
	}
	if sr.Log == nil {
		return &r, nil
	}
	want, err := sr.Leaf()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(sr.Log.Leaf, want) {
		return nil, fmt.Errorf("certificate: report: log.leaf is not this report's event; want %s", want)
	}
	cp, err := openCheckpoint(sr.Log.Checkpoint, keys, func(k TrustedKey) bool {
		return k.NotAfter.IsZero() || !k.NotAfter.Before(r.At)
	})
	if err != nil {
		return nil, fmt.Errorf("certificate: report: %w", err)
	}
	if sr.Log.Index < 0 || sr.Log.Index >= cp.Size ||
		tlog.CheckRecord(sr.Log.Proof, cp.Size, cp.Root, sr.Log.Index, tlog.RecordHash(sr.Log.Leaf)) != nil {
		return nil, fmt.Errorf("certificate: report: the inclusion proof does not lead from leaf %d to the root of the checkpoint of size %d", sr.Log.Index, cp.Size)
	}
	return &r, nil
}
