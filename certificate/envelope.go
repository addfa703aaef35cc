package certificate

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// EnvelopeVersion is the value of "lethe_certificate" this package writes
// and accepts.
const EnvelopeVersion = 1

// AlgEd25519 is the only signature algorithm.
const AlgEd25519 = "ed25519"

// MaxSize bounds a certificate's encoded size. Verify refuses larger input
// before parsing it.
const MaxSize = 1 << 20

// An Envelope is a certificate as it is handed out: the exact payload
// bytes, their signature and, once the completion is logged, the proof that
// the log holds it. Byte fields travel as standard base64.
type Envelope struct {
	Version       int       `json:"lethe_certificate"`
	Payload       []byte    `json:"payload"`
	PayloadSHA256 string    `json:"payload_sha256"`
	Signature     Signature `json:"signature"`
	Log           *LogProof `json:"log,omitempty"`
}

// Signature is the operator's Ed25519 signature over Envelope.Payload.
type Signature struct {
	Alg       string `json:"alg"`
	KeyID     string `json:"key_id"`
	PublicKey []byte `json:"public_key"`
	Sig       []byte `json:"sig"`
}

// LogProof shows that the log holds the certificate's "forget.completed"
// event: the leaf, its index, the RFC 6962 inclusion proof and the signed
// checkpoint the proof leads to.
type LogProof struct {
	Leaf       []byte           `json:"leaf"`
	Index      int64            `json:"index"`
	Proof      tlog.RecordProof `json:"proof"`
	Checkpoint string           `json:"checkpoint"`
}

// Sign writes p as payload bytes and signs them. The returned envelope has
// no log section yet: append CompletedLeaf to the log, then
// AttachLog. Sign fills defaults (schema, UTC whole-second times, empty
// lists, Claim.Excludes = DefaultExcludes()) and refuses a payload a
// verifier would reject.
func Sign(s *Signer, p Payload) (*Envelope, []byte, error) {
	if err := p.normalize(); err != nil {
		return nil, nil, fmt.Errorf("certificate: payload: %w", err)
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate: encoding payload: %w", err)
	}
	return signBytes(s, payload), payload, nil
}

// signBytes signs payload bytes as they are; tests use it to sign payloads
// Sign would refuse.
func signBytes(s *Signer, payload []byte) *Envelope {
	return &Envelope{
		Version:       EnvelopeVersion,
		Payload:       payload,
		PayloadSHA256: hexSHA256(sha256.Sum256(payload)),
		Signature: Signature{
			Alg:       AlgEd25519,
			KeyID:     s.id,
			PublicKey: s.Public(),
			Sig:       ed25519.Sign(s.key, payload),
		},
	}
}

// CompletedLeaf returns the log leaf to append for e: the canonical
// "forget.completed" event of its request and payload hash, which is the
// only leaf Verify accepts for e.
func (e *Envelope) CompletedLeaf() ([]byte, error) {
	var p struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return nil, fmt.Errorf("certificate: reading request_id from payload: %w", err)
	}
	return completedLeaf(p.RequestID, e.PayloadSHA256)
}

func completedLeaf(requestID, payloadSHA256 string) ([]byte, error) {
	return EncodeEvent(Event{V: EventVersion, Event: EventCompleted, RequestID: requestID, CertificateSHA256: payloadSHA256})
}

// AttachLog records where the log holds e's completion event: the leaf
// bytes, their index, the inclusion proof up to the tree of the checkpoint,
// and the signed checkpoint text.
func (e *Envelope) AttachLog(leaf []byte, index int64, proof tlog.RecordProof, checkpoint string) {
	e.Log = &LogProof{
		Leaf:       leaf,
		Index:      index,
		Proof:      append(tlog.RecordProof{}, proof...), // never null in JSON
		Checkpoint: checkpoint,
	}
}

// Marshal returns the envelope as indented JSON ending in a newline.
func (e *Envelope) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certificate: encoding envelope: %w", err)
	}
	return append(b, '\n'), nil
}

// Parse decodes an envelope without checking keys, signature or log: the
// structural checks 1–6 of docs/certificate.md. Use Verify to trust it.
func Parse(data []byte) (*Envelope, error) {
	e, v, why := parseEnvelope(data)
	if v != "" {
		return nil, fmt.Errorf("certificate: %s: %s", v, why)
	}
	return e, nil
}

// wireEnvelope is the envelope as JSON spells it, before base64 decoding.
type wireEnvelope struct {
	Version       json.Number `json:"lethe_certificate"`
	Payload       string      `json:"payload"`
	PayloadSHA256 string      `json:"payload_sha256"`
	Signature     struct {
		Alg       string `json:"alg"`
		KeyID     string `json:"key_id"`
		PublicKey string `json:"public_key"`
		Sig       string `json:"sig"`
	} `json:"signature"`
	Log *struct {
		Leaf       string   `json:"leaf"`
		Index      int64    `json:"index"`
		Proof      []string `json:"proof"`
		Checkpoint string   `json:"checkpoint"`
	} `json:"log,omitempty"`
}

// parseEnvelope runs checks 1–6 and returns the envelope, or the verdict
// and reason of the first failure.
func parseEnvelope(data []byte) (*Envelope, Verdict, string) {
	if len(data) > MaxSize {
		return nil, VerdictOversized, fmt.Sprintf("%d bytes; a certificate is at most %d", len(data), MaxSize)
	}
	obj, err := decodeObject(data)
	if err != nil {
		return nil, VerdictMalformed, fmt.Sprintf("not a JSON object: %v", err)
	}
	if !isNumberOne(obj["lethe_certificate"]) {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("lethe_certificate is %v; this verifier reads version %d", obj["lethe_certificate"], EnvelopeVersion)
	}
	var w wireEnvelope
	if c := decodeShaped(obj, &w); c != nil {
		if c.members != "" {
			return nil, VerdictSchemaMismatch, "envelope: " + c.members
		}
		return nil, VerdictMalformed, "envelope: " + c.types
	}
	if w.Signature.Alg != AlgEd25519 {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("signature.alg %q; v1 certificates use %q", w.Signature.Alg, AlgEd25519)
	}
	// b64 decodes one field; after the first failure it records nothing more.
	var bad string
	b64 := func(name, s string, n int) []byte {
		b, err := decodeBase64(s, n)
		if err != nil && bad == "" {
			bad = fmt.Sprintf("%s: %v", name, err)
		}
		return b
	}
	e := &Envelope{
		Version:       EnvelopeVersion,
		Payload:       b64("payload", w.Payload, -1),
		PayloadSHA256: w.PayloadSHA256,
		Signature: Signature{
			Alg:       w.Signature.Alg,
			KeyID:     w.Signature.KeyID,
			PublicKey: b64("signature.public_key", w.Signature.PublicKey, ed25519.PublicKeySize),
			Sig:       b64("signature.sig", w.Signature.Sig, ed25519.SignatureSize),
		},
	}
	if w.Log != nil {
		e.Log = &LogProof{
			Leaf:       b64("log.leaf", w.Log.Leaf, -1),
			Index:      w.Log.Index,
			Proof:      make(tlog.RecordProof, len(w.Log.Proof)),
			Checkpoint: w.Log.Checkpoint,
		}
		for i, s := range w.Log.Proof {
			if h := b64(fmt.Sprintf("log.proof[%d]", i), s, 32); len(h) == 32 {
				e.Log.Proof[i] = tlog.Hash(h)
			}
		}
	}
	if bad != "" {
		return nil, VerdictMalformed, bad
	}
	if !isHex256(e.PayloadSHA256) {
		return nil, VerdictMalformed, fmt.Sprintf("payload_sha256 %q: want 64 lowercase hex digits", e.PayloadSHA256)
	}
	if e.Log != nil && e.Log.Index < 0 {
		return nil, VerdictMalformed, fmt.Sprintf("log.index %d is negative", e.Log.Index)
	}
	return e, "", ""
}

// isNumberOne reports whether a decoded JSON value is the number 1 (in any
// spelling, 1.0 or 1e0, as every JSON parser reads them alike).
func isNumberOne(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := n.Float64()
	return err == nil && f == 1
}
