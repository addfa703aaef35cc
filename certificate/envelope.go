package certificate

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lethe-privacy/lethe/translog"
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
	e.Log = newLogProof(leaf, index, proof, checkpoint)
}

func newLogProof(leaf []byte, index int64, proof tlog.RecordProof, checkpoint string) *LogProof {
	return &LogProof{
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

// A signedForm is a document parseSigned reads: an envelope around signed
// payload bytes, whose first member is its version.
type signedForm struct {
	noun    string   // "certificate" or "report", for reasons
	members []string // the envelope's members; [0] is the version member
}

var (
	certificateForm = signedForm{noun: "certificate", members: envelopeMembers}
	reportForm      = signedForm{noun: "report", members: reportEnvelopeMembers}
)

// parseEnvelope runs checks 1–6 and returns the envelope, or the verdict
// and reason of the first failure.
func parseEnvelope(data []byte) (*Envelope, Verdict, string) {
	return parseSigned(data, certificateForm)
}

// parseSigned runs checks 1–6 on a document of form: a certificate's
// envelope, or a signed report, which differs only in its version member.
func parseSigned(data []byte, form signedForm) (*Envelope, Verdict, string) {
	if len(data) > MaxSize {
		return nil, VerdictOversized, fmt.Sprintf("%d bytes; a %s is at most %d", len(data), form.noun, MaxSize)
	}
	// An envelope has some 30 values, a few of them proof hashes.
	r, err := newJSONReader(string(data), 64)
	if err != nil {
		return nil, VerdictMalformed, fmt.Sprintf("not a JSON object: %v", err)
	}
	f := r.fields(0, form.members)
	if v := f.vals[0]; !isVersionOne(&r, v) {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("%s is %v; this verifier reads version 1", form.members[0], r.generic(v))
	}
	w := readEnvelope(&r, &f)
	if v, why := r.verdict(); v != "" {
		return nil, v, "envelope: " + why
	}
	if w.Alg != AlgEd25519 {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("signature.alg %q; v1 %ss use %q", w.Alg, form.noun, AlgEd25519)
	}
	// The strings of w share the input's copy in r; those kept in the
	// envelope are cloned so that it does not hold on to all of it.
	e := &Envelope{
		Version:       EnvelopeVersion,
		PayloadSHA256: strings.Clone(w.PayloadSHA256),
		Signature:     Signature{Alg: AlgEd25519, KeyID: strings.Clone(w.KeyID)},
	}
	if e.Payload, err = translog.DecodeBase64(w.Payload, -1); err != nil {
		return nil, VerdictMalformed, "payload: " + err.Error()
	}
	if e.Signature.PublicKey, err = translog.DecodeBase64(w.PublicKey, ed25519.PublicKeySize); err != nil {
		return nil, VerdictMalformed, "signature.public_key: " + err.Error()
	}
	if e.Signature.Sig, err = translog.DecodeBase64(w.Sig, ed25519.SignatureSize); err != nil {
		return nil, VerdictMalformed, "signature.sig: " + err.Error()
	}
	if w.HasLog {
		e.Log = &LogProof{Index: w.Index, Proof: make(tlog.RecordProof, len(w.Proof)), Checkpoint: strings.Clone(w.Checkpoint)}
		if e.Log.Leaf, err = translog.DecodeBase64(w.Leaf, -1); err != nil {
			return nil, VerdictMalformed, "log.leaf: " + err.Error()
		}
		for i, s := range w.Proof {
			h, err := translog.DecodeBase64(s, len(tlog.Hash{}))
			if err != nil {
				return nil, VerdictMalformed, fmt.Sprintf("log.proof[%d]: %v", i, err)
			}
			e.Log.Proof[i] = tlog.Hash(h)
		}
	}
	if !isHex256(e.PayloadSHA256) {
		return nil, VerdictMalformed, fmt.Sprintf("payload_sha256 %q: want 64 lowercase hex digits", e.PayloadSHA256)
	}
	if e.Log != nil && e.Log.Index < 0 {
		return nil, VerdictMalformed, fmt.Sprintf("log.index %d is negative", e.Log.Index)
	}
	return e, "", ""
}
