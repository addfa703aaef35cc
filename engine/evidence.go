package engine

import (
	"context"
)

// ConsistencyProof proves that the log of size NewSize extends the log of
// size OldSize (RFC 6962 §2.1.2).
type ConsistencyProof struct {
	OldSize int64    `json:"old_size"`
	NewSize int64    `json:"new_size"`
	Hashes  [][]byte `json:"hashes"` // base64 in JSON
}

// InclusionProof proves that record Index is in the log of size Size.
type InclusionProof struct {
	Index  int64    `json:"index"`
	Size   int64    `json:"size"`
	Record []byte   `json:"record"` // the leaf bytes (no personal data)
	Hashes [][]byte `json:"hashes"`
}

// VerifyResult is a certificate verification verdict.
type VerifyResult struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Physical is a valid v2 certificate's physical line
	// (certificate.PhysicalSummary), beside the verdict.
	Physical string `json:"physical,omitempty"`
	// Horizon is a valid v3 certificate's horizon line
	// (certificate.HorizonSummary), beside the verdict.
	Horizon string `json:"horizon,omitempty"`
}

// Checkpoint returns the latest signed checkpoint of the transparency log
// (a C2SP signed note), signing one for the current size if needed.
func (e *Engine) Checkpoint(ctx context.Context) ([]byte, error) {
	return e.cfg.Certifier.checkpoint(ctx)
}

// Inclusion proves record index is in the log of size size.
func (e *Engine) Inclusion(ctx context.Context, index, size int64) (InclusionProof, error) {
	return e.cfg.Certifier.inclusion(ctx, index, size)
}

// Consistency proves the log of size newSize extends that of oldSize.
func (e *Engine) Consistency(ctx context.Context, oldSize, newSize int64) (ConsistencyProof, error) {
	return e.cfg.Certifier.consistency(ctx, oldSize, newSize)
}

// Verify checks a certificate against the operator's trusted keys, now.
func (e *Engine) Verify(cert []byte) VerifyResult {
	return e.cfg.Certifier.verify(cert)
}

// AnnounceKey puts a key.rotated event in the log when the signing key is
// not the one that signed the latest checkpoint (including the first key
// of a new log). Call it once at start; it reports whether it logged one.
func (e *Engine) AnnounceKey(ctx context.Context) (bool, error) {
	return e.cfg.Certifier.AnnounceKey(ctx)
}
