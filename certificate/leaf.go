package certificate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// Event kinds recorded in the transparency log.
const (
	EventRequested  = "forget.requested"
	EventCompleted  = "forget.completed"
	EventReverified = "forget.reverified"
	EventLateWrite  = "forget.late_write"
	EventLifted     = "tombstone.lifted"
	EventKeyRotated = "key.rotated"
	// A reconcile adopted records the ledger did not know, and a retention
	// sweep deleted expired records: each names its run and the hash of
	// its signed report (SignedReport).
	EventReconcileAdopted = "reconcile.adopted"
	EventRetentionSwept   = "retention.swept"
	// A replay deleted again, after a restore, the records of a completed
	// forget: its request_id is the forget's and its report counts what
	// came back (lethe-proxy replay).
	EventReplayed = "forget.replayed"
	// A later look at a completed forget's pages (a re-scan of a layer
	// whose certificate stated residue): its request_id is the forget's
	// and its report counts, per layer, the pages scanned and those still
	// holding the deleted records' bytes (docs/forget.md, "Later re-scans").
	EventPhysical = "forget.physical"
)

// EventVersion is the only event encoding version.
const EventVersion = 1

// An Event is one leaf of the transparency log. The log is public, so an
// event carries no subject data at all, not even the HMAC: only the request
// id, the certificate's payload hash, or a key id.
type Event struct {
	V                 int    `json:"v"`
	Event             string `json:"event"`
	RequestID         string `json:"request_id,omitempty"`
	CertificateSHA256 string `json:"certificate_sha256,omitempty"`
	KeyID             string `json:"key_id,omitempty"`
	ReportSHA256      string `json:"report_sha256,omitempty"`
}

var keyIDPattern = regexp.MustCompile(`^ed25519:[0-9a-f]{32}$`)

// EncodeEvent returns the leaf bytes of e: compact JSON, members in field
// order. Every value is restricted to characters JSON does not escape, so
// the encoding is unique and verifiers compare leaves byte for byte.
// A zero V means EventVersion.
func EncodeEvent(e Event) ([]byte, error) {
	if e.V == 0 {
		e.V = EventVersion
	}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("certificate: event %q: %w", e.Event, err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("certificate: encoding event %q: %w", e.Event, err)
	}
	return b, nil
}

// ParseEvent reads leaf bytes written by EncodeEvent, and only those: any
// other spelling of the same event is an error.
func ParseEvent(leaf []byte) (Event, error) {
	var e Event
	if err := decodeStrict(leaf, &e); err != nil {
		return Event{}, fmt.Errorf("certificate: log event: %w", err)
	}
	if e.V != EventVersion {
		return Event{}, fmt.Errorf("certificate: log event version %d, want %d", e.V, EventVersion)
	}
	canonical, err := EncodeEvent(e)
	if err != nil {
		return Event{}, err
	}
	if !bytes.Equal(canonical, leaf) {
		return Event{}, fmt.Errorf("certificate: log event is not in canonical form; want %s", canonical)
	}
	return e, nil
}

// check enforces which members each kind carries.
func (e Event) check() error {
	if e.V != EventVersion {
		return fmt.Errorf("version %d, want %d", e.V, EventVersion)
	}
	wantRequest, wantCert, wantKey, wantReport := true, false, false, false
	switch e.Event {
	case EventRequested, EventReverified, EventLateWrite, EventLifted:
	case EventCompleted:
		wantCert = true
	case EventKeyRotated:
		wantRequest, wantKey = false, true
	case EventReconcileAdopted, EventRetentionSwept, EventReplayed, EventPhysical:
		wantReport = true
	default:
		return fmt.Errorf("unknown event kind")
	}
	if wantRequest != (e.RequestID != "") || wantCert != (e.CertificateSHA256 != "") || wantKey != (e.KeyID != "") || wantReport != (e.ReportSHA256 != "") {
		return fmt.Errorf("carries request_id=%t certificate_sha256=%t key_id=%t report_sha256=%t, want %t %t %t %t",
			e.RequestID != "", e.CertificateSHA256 != "", e.KeyID != "", e.ReportSHA256 != "", wantRequest, wantCert, wantKey, wantReport)
	}
	if wantReport && !isHex256(e.ReportSHA256) {
		return fmt.Errorf("report_sha256 %q: want 64 lowercase hex digits", e.ReportSHA256)
	}
	if wantRequest && !requestIDPattern.MatchString(e.RequestID) {
		return fmt.Errorf("request_id %q: want 1-128 of A-Z a-z 0-9 . _ : -", e.RequestID)
	}
	if wantCert && !isHex256(e.CertificateSHA256) {
		return fmt.Errorf("certificate_sha256 %q: want 64 lowercase hex digits", e.CertificateSHA256)
	}
	if wantKey && !keyIDPattern.MatchString(e.KeyID) {
		return fmt.Errorf("key_id %q: want ed25519: and 32 lowercase hex digits", e.KeyID)
	}
	return nil
}
