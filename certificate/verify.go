package certificate

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/lethe-privacy/lethe/translog"
)

// A Verdict is the outcome of Verify. docs/certificate.md lists the checks
// behind each one and the order they run in.
type Verdict string

const (
	VerdictValid           Verdict = "valid"
	VerdictPayloadTampered Verdict = "payload_tampered" // payload_sha256 is not the hash of the payload
	VerdictBadSignature    Verdict = "bad_signature"    // the trusted key did not sign the payload
	VerdictUnknownKey      Verdict = "unknown_key"      // key not trusted, or issued_at outside its window
	VerdictKeyMismatch     Verdict = "key_mismatch"     // embedded key differs from the trusted key of that id
	VerdictKeyIDMismatch   Verdict = "key_id_mismatch"  // key_id is not the id of the embedded key
	VerdictSchemaMismatch  Verdict = "schema_mismatch"  // another version, or unknown or missing members
	VerdictExpired         Verdict = "expired"          // now is after valid_until
	VerdictNotInLog        Verdict = "not_in_log"       // no valid proof that the log holds the certificate
	VerdictMalformed       Verdict = "malformed"        // not JSON of the subset, bad base64, wrong lengths, types or values, or a self-contradicting payload
	VerdictOversized       Verdict = "oversized"        // more than MaxSize bytes
	VerdictNotYetValid     Verdict = "not_yet_valid"    // now is before issued_at
	VerdictIncomplete      Verdict = "incomplete"       // genuine and logged, but not every layer is verified empty
)

// Result is what Verify found.
type Result struct {
	Verdict Verdict
	Reason  string // for people: what failed, or what was verified
	// Payload is set once the signature is verified and the payload
	// decoded, so expired or unlogged certificates can still be read.
	// Trust it as a statement only when Verdict is VerdictValid.
	Payload *Payload
	// Physical is the physical state of each layer (PhysicalSummary),
	// set beside a valid verdict on a v2 certificate; "" otherwise.
	// It never changes the verdict: valid is a verified logical erasure.
	Physical string
	// Horizon is the horizon line (HorizonSummary), set beside a valid
	// verdict on a v3 certificate; "" otherwise.
	Horizon string
}

// Valid reports whether the certificate is genuine, current, logged, and
// proves a complete erasure.
func (r Result) Valid() bool { return r.Verdict == VerdictValid }

// Verify checks a certificate envelope against the trusted keys as of now.
// It never panics, whatever data holds.
func Verify(data []byte, keys KeySet, now time.Time) Result {
	e, v, why := parseEnvelope(data)
	if v != "" {
		return Result{Verdict: v, Reason: why}
	}
	sig := e.Signature
	trusted, v, why := checkSignature(sig, e.Payload, e.PayloadSHA256, keys)
	if v != "" {
		return Result{Verdict: v, Reason: why}
	}
	p, v, why := parsePayload(e.Payload)
	if v != "" {
		return Result{Verdict: v, Reason: "payload: " + why}
	}
	if !trusted.Covers(p.IssuedAt) {
		return Result{Verdict: VerdictUnknownKey, Payload: p, Reason: fmt.Sprintf("issued_at %s is outside the window of key %s (%s)", rfc3339(p.IssuedAt), sig.KeyID, window(trusted))}
	}
	if now.Before(p.IssuedAt) {
		return Result{Verdict: VerdictNotYetValid, Payload: p, Reason: fmt.Sprintf("issued at %s; it is now %s: check the clock, or verify again later", rfc3339Nano(p.IssuedAt), rfc3339Nano(now))}
	}
	if now.After(p.ValidUntil) {
		return Result{Verdict: VerdictExpired, Payload: p, Reason: fmt.Sprintf("valid until %s; it is now %s", rfc3339Nano(p.ValidUntil), rfc3339Nano(now))}
	}
	cp, err := checkLog(e, p, keys)
	if err != nil {
		return Result{Verdict: VerdictNotInLog, Payload: p, Reason: err.Error()}
	}
	where := fmt.Sprintf("request %s, signed by %s at %s, valid until %s; leaf %d of %d in log %q",
		p.RequestID, sig.KeyID, rfc3339(p.IssuedAt), rfc3339(p.ValidUntil), e.Log.Index, cp.Size, cp.Origin)
	if len(p.Scope) == 0 {
		return Result{Verdict: VerdictIncomplete, Payload: p, Reason: where + "; but the scope is empty: no layer was checked, so the certificate proves no erasure"}
	}
	if i := incompleteLayer(p); i >= 0 {
		l := p.Layers[i]
		return Result{Verdict: VerdictIncomplete, Payload: p, Reason: fmt.Sprintf(
			"%s; but layer %s %s has %d residual records and verified_absent %t: the erasure is not proven complete", where, l.Store, l.Table, l.Residual, l.VerifiedAbsent)}
	}
	return Result{Verdict: VerdictValid, Payload: p, Reason: where + "; every layer of the scope verified empty", Physical: PhysicalSummary(p),
		Horizon: HorizonSummary(p)}
}

// checkSignature runs checks 7–11: sig is a trusted key's signature of
// payload, whose hash is payloadSHA256.
func checkSignature(sig Signature, payload []byte, payloadSHA256 string, keys KeySet) (TrustedKey, Verdict, string) {
	if id := KeyID(sig.PublicKey); sig.KeyID != id {
		return TrustedKey{}, VerdictKeyIDMismatch, fmt.Sprintf("key_id %q, but the embedded public key's id is %s", sig.KeyID, id)
	}
	trusted, ok := keys.Lookup(sig.KeyID)
	if !ok {
		return TrustedKey{}, VerdictUnknownKey, fmt.Sprintf("key %s is not in the trusted keys; if the operator rotated keys, get their current keys file", sig.KeyID)
	}
	if !bytes.Equal(trusted.PublicKey, sig.PublicKey) {
		return TrustedKey{}, VerdictKeyMismatch, fmt.Sprintf("the embedded public key differs from the trusted key %s", sig.KeyID)
	}
	if got := hexSHA256(sha256.Sum256(payload)); got != payloadSHA256 {
		return TrustedKey{}, VerdictPayloadTampered, fmt.Sprintf("payload hashes to %s, not to payload_sha256 %s", got, payloadSHA256)
	}
	if !ed25519.Verify(trusted.PublicKey, payload, sig.Sig) {
		return TrustedKey{}, VerdictBadSignature, fmt.Sprintf("the signature is not %s's signature of the payload", sig.KeyID)
	}
	return trusted, "", ""
}

// parsePayload runs checks 12–15: the signed bytes must be a v1, v2 or v3
// payload, spelled member for member, that does not contradict itself.
func parsePayload(data []byte) (*Payload, Verdict, string) {
	// One copy of the payload text backs all the strings of the Payload.
	text := string(data)
	r, err := newJSONReader(text, len(text)/16+16) // a value per 16 bytes or so
	if err != nil {
		return nil, VerdictMalformed, err.Error()
	}
	f := r.fields(0, payloadMembers)
	var schema string
	if t := f.vals[0]; t != 0 && r.toks[t].kind == jsonString {
		schema = r.stringAt(t)
	}
	if schema != SchemaV1 && schema != SchemaV2 && schema != SchemaV3 {
		return nil, VerdictSchemaMismatch, fmt.Sprintf("schema is %v; this verifier reads %q, %q and %q", r.generic(f.vals[0]), SchemaV1, SchemaV2, SchemaV3)
	}
	if schema == SchemaV3 {
		f = r.fields(0, payloadMembersV3)
	}
	p := readPayload(&r, &f, schema)
	if v, why := r.verdict(); v != "" {
		return nil, v, why
	}
	if why := checkConsistent(p); why != "" {
		return nil, VerdictMalformed, why
	}
	return p, "", ""
}

// checkLog runs check 19: the log section proves that a checkpoint signed
// by a trusted key covers this certificate's completion event.
func checkLog(e *Envelope, p *Payload, keys KeySet) (translog.Checkpoint, error) {
	if e.Log == nil {
		return translog.Checkpoint{}, fmt.Errorf("the certificate has no log section; ask the operator for the logged certificate")
	}
	want, err := completedLeaf(p.RequestID, e.PayloadSHA256)
	if err != nil {
		return translog.Checkpoint{}, fmt.Errorf("no log event can name this certificate: %w", err)
	}
	if !bytes.Equal(e.Log.Leaf, want) {
		return translog.Checkpoint{}, fmt.Errorf("log.leaf is not this certificate's event; want %s", want)
	}
	return checkInclusion(e.Log, keys, p.IssuedAt)
}

// checkInclusion checks that a checkpoint of the trusted log covers the
// leaf of lp: the checkpoint is accepted (see openCheckpoint) with a key
// whose window had not ended at signed, and the inclusion proof leads from
// the leaf at its index to the checkpoint's root.
func checkInclusion(lp *LogProof, keys KeySet, signed time.Time) (translog.Checkpoint, error) {
	// A checkpoint that contains a signed document was signed after it, so
	// a key retired before then cannot vouch for it.
	cp, err := openCheckpoint(lp.Checkpoint, keys, func(k TrustedKey) bool {
		return k.NotAfter.IsZero() || !k.NotAfter.Before(signed)
	})
	if err != nil {
		return translog.Checkpoint{}, err
	}
	if lp.Index >= cp.Size {
		return translog.Checkpoint{}, fmt.Errorf("log.index %d is beyond the checkpoint's tree of %d leaves", lp.Index, cp.Size)
	}
	if err := translog.CheckInclusion(lp.Proof, cp.Size, cp.Root, lp.Index, tlog.RecordHash(lp.Leaf)); err != nil {
		return translog.Checkpoint{}, fmt.Errorf("the inclusion proof does not lead from leaf %d to the root of the checkpoint of size %d", lp.Index, cp.Size)
	}
	return cp, nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// rfc3339Nano shows the instants compared in reasons, which may differ by
// less than a second.
func rfc3339Nano(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func window(k TrustedKey) string {
	if k.NotAfter.IsZero() {
		return "from " + rfc3339(k.NotBefore)
	}
	return rfc3339(k.NotBefore) + " to " + rfc3339(k.NotAfter)
}
