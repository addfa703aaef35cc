package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/translog"
)

// Certifier signs certificates and keeps the transparency log.
type Certifier struct {
	signer      *certificate.Signer
	keys        certificate.KeySet
	log         *translog.Log
	validFor    time.Duration
	rulesSHA256 string
	tool        string
	now         func() time.Time
}

// CertifierConfig wires a Certifier.
type CertifierConfig struct {
	Signer      *certificate.Signer
	Keys        certificate.KeySet // what Verify trusts (current and retired keys)
	Log         *translog.Log
	ValidFor    time.Duration // a certificate's claim stands this long (default a year)
	RulesSHA256 string        // digest of the capture rules in force
	Tool        string        // "lethe-proxy 0.1.0"
	Now         func() time.Time
}

// NewCertifier returns a Certifier.
func NewCertifier(c CertifierConfig) *Certifier {
	if c.ValidFor <= 0 {
		c.ValidFor = 365 * 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Certifier{signer: c.Signer, keys: c.Keys, log: c.Log, validFor: c.ValidFor,
		rulesSHA256: c.RulesSHA256, tool: c.Tool, now: c.Now}
}

const claimStatement = "Lethe deleted the records of the data subject identified by this certificate from every layer " +
	"listed in scope, then queried each layer again and found none left (residual 0). It speaks only for the live " +
	"data of those layers at issued_at."

// nothingFoundStatement is the claim of a forget that found no record of
// the subject: the ledger held none and no layer held a matching record,
// so nothing was deleted. Subjects are compared as exact bytes, which the
// claim says, so that it is not read as covering other spellings.
const nothingFoundStatement = "No records of the data subject identified by this certificate were found in any layer listed " +
	"in scope: the ledger held none under its HMAC, no layer held a record naming it, and nothing was deleted; each " +
	"layer was queried again and none found (residual 0). The subject was compared as exact bytes: records naming " +
	"it in another spelling (case, surrounding white space, Unicode normalisation) are not covered. It speaks only " +
	"for the live data of those layers at issued_at."

// statement is the claim st supports: nothingFoundStatement when no layer
// had a ledger record of the subject or deleted a record, claimStatement
// otherwise.
func (st *journalState) statement() string {
	for _, l := range st.Layers {
		if l.Requested > 0 || len(l.Deleted) > 0 {
			return claimStatement
		}
	}
	return nothingFoundStatement
}

// certify issues the certificate of a request whose layers are all done.
// The payload is journaled (save) before the log append; a resumed
// request signs the same payload bytes again (Ed25519 is deterministic),
// finds its leaf if it was appended before the crash, and so hands out the
// same certificate, never a second one.
func (c *Certifier) certify(ctx context.Context, r ledger.ForgetRequest, st *journalState, save func() error) ([]byte, error) {
	var (
		env *certificate.Envelope
		err error
	)
	if st.Payload == nil {
		p, err := c.payload(r, st)
		if err != nil {
			return nil, err
		}
		var payload []byte
		env, payload, err = certificate.Sign(c.signer, p)
		if err != nil {
			return nil, err
		}
		size, err := c.log.Size(ctx)
		if err != nil {
			return nil, err
		}
		st.Payload, st.LogSize = payload, size
		if err := save(); err != nil {
			return nil, err
		}
	} else if env, err = c.resign(st.Payload); err != nil {
		return nil, err
	}
	leaf, err := env.CompletedLeaf()
	if err != nil {
		return nil, err
	}
	index, err := c.appendOnce(ctx, leaf, st.LogSize)
	if err != nil {
		return nil, err
	}
	if err := c.attachProof(ctx, leaf, index, env.AttachLog); err != nil {
		return nil, err
	}
	return env.Marshal()
}

// attachProof signs a checkpoint of the log as it is now and hands attach
// the proof that it holds leaf at index.
func (c *Certifier) attachProof(ctx context.Context, leaf []byte, index int64, attach func([]byte, int64, translog.RecordProof, string)) error {
	cp, err := c.log.Sign(ctx)
	if err != nil {
		return err
	}
	proof, err := c.log.InclusionProof(ctx, index, cp.Size)
	if err != nil {
		return err
	}
	attach(leaf, index, proof, string(cp.Note))
	return nil
}

// appendOnce appends leaf unless a crash left it appended already, at or
// after index from.
func (c *Certifier) appendOnce(ctx context.Context, leaf []byte, from int64) (int64, error) {
	size, err := c.log.Size(ctx)
	if err != nil {
		return 0, err
	}
	for i := from; i < size; i++ {
		rec, err := c.log.Record(ctx, i)
		if err != nil {
			return 0, err
		}
		if bytes.Equal(rec, leaf) {
			return i, nil
		}
	}
	return c.log.Append(ctx, leaf)
}

// resign signs the journaled payload again. Sign writes a payload it has
// read back byte for byte the same (fixed field order, normalised
// values), which is checked rather than assumed.
func (c *Certifier) resign(payload []byte) (*certificate.Envelope, error) {
	var p certificate.Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, fmt.Errorf("engine: the journaled certificate payload is unreadable: %w", err)
	}
	env, again, err := certificate.Sign(c.signer, p)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, payload) {
		return nil, errors.New("engine: the journaled certificate payload does not re-encode to the same bytes; refusing to issue a different certificate")
	}
	return env, nil
}

func (c *Certifier) payload(r ledger.ForgetRequest, st *journalState) (certificate.Payload, error) {
	issued := c.now().UTC().Truncate(time.Second)
	p := certificate.Payload{
		// No schema: Sign writes v1, v2 when a layer has a physical
		// section, v3 when there is a horizon.
		RequestID: r.ID, IssuedAt: issued, ValidUntil: issued.Add(c.validFor),
		Subject:     certificate.Subject{HMAC: r.Subject.String(), Commitment: st.Commitment},
		RulesSHA256: c.rulesSHA256, Tool: c.tool,
		Claim: certificate.Claim{
			Statement: st.statement(),
			Covers:    []string{"live rows of the PostgreSQL tables and records of the Pinecone namespaces listed in scope"},
			Excludes:  certificate.DefaultExcludes(),
		},
	}
	var refs []certificate.RecordRef
	horizon := certificateHorizon(st.Horizon)
	physical := certificatePhysical(st, issued, len(horizon) > 0)
	for i, l := range st.Layers {
		p.Scope = append(p.Scope, certificate.Scope{Store: l.Store, Table: l.Table})
		gone := l.gone()
		p.Layers = append(p.Layers, certificate.Layer{
			Store: l.Store, Table: l.Table, Requested: l.Requested, Deleted: int64(len(gone)), Residual: l.Residual,
			VerifiedAbsent: l.Residual == 0, VerifyMethod: l.VerifyMethod, VerifyQueries: l.VerifyQueries,
		})
		if physical != nil {
			p.Layers[i].Physical = physical[i]
		}
		for _, id := range gone {
			refs = append(refs, certificate.RecordRef{Store: l.Store, Table: l.Table, ID: id})
		}
	}
	p.Claim.Statement += physicalStatement(p.Layers)
	if len(horizon) > 0 {
		// A v3 certificate dates the WAL, archives, backups and replicas
		// instead of excluding them.
		p.Horizon, p.Claim.Excludes = horizon, certificate.HorizonExcludes()
		p.Claim.Statement += horizonStatement(horizon)
	}
	ids, err := certificate.IDsRoot(refs)
	if err != nil {
		return certificate.Payload{}, err
	}
	p.DeletedIDs = ids
	return p, nil
}

// AnnounceKey logs a key.rotated event when the log's latest checkpoint
// was signed by another key (or there is none yet), and signs a checkpoint
// with the current key, so that every key change is in the log.
func (c *Certifier) AnnounceKey(ctx context.Context) (bool, error) {
	changed, err := c.log.SignerChanged(ctx)
	if err != nil || !changed {
		return false, err
	}
	leaf, err := certificate.EncodeEvent(certificate.Event{Event: certificate.EventKeyRotated, KeyID: c.signer.KeyID()})
	if err != nil {
		return false, err
	}
	if _, err := c.log.Append(ctx, leaf); err != nil {
		return false, err
	}
	_, err = c.log.Sign(ctx)
	return err == nil, err
}

// appendEvent appends an event (no subject data) to the transparency log
// and returns its index.
func (c *Certifier) appendEvent(ctx context.Context, kind, requestID string) (int64, error) {
	leaf, err := certificate.EncodeEvent(certificate.Event{Event: kind, RequestID: requestID})
	if err != nil {
		return 0, err
	}
	return c.log.Append(ctx, leaf)
}

func (c *Certifier) checkpoint(ctx context.Context) ([]byte, error) {
	cp, err := c.log.Sign(ctx)
	if err != nil {
		return nil, err
	}
	return cp.Note, nil
}

// ErrBadRange is returned for proofs asked for sizes the log does not have.
var ErrBadRange = errors.New("engine: the requested index or sizes are outside the log")

func (c *Certifier) inclusion(ctx context.Context, index, size int64) (InclusionProof, error) {
	if index < 0 || size <= index {
		return InclusionProof{}, fmt.Errorf("%w: need 0 <= index < size", ErrBadRange)
	}
	proof, err := c.log.InclusionProof(ctx, index, size)
	if err != nil {
		return InclusionProof{}, fmt.Errorf("%w: %v", ErrBadRange, err)
	}
	rec, err := c.log.Record(ctx, index)
	if err != nil {
		return InclusionProof{}, err
	}
	return InclusionProof{Index: index, Size: size, Record: rec, Hashes: hashes(proof)}, nil
}

func (c *Certifier) consistency(ctx context.Context, oldSize, newSize int64) (ConsistencyProof, error) {
	if oldSize < 0 || newSize < oldSize {
		return ConsistencyProof{}, fmt.Errorf("%w: need 0 <= old <= new", ErrBadRange)
	}
	proof, err := c.log.ConsistencyProof(ctx, oldSize, newSize)
	if err != nil {
		return ConsistencyProof{}, fmt.Errorf("%w: %v", ErrBadRange, err)
	}
	return ConsistencyProof{OldSize: oldSize, NewSize: newSize, Hashes: hashes(proof)}, nil
}

func hashes(hs []translog.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = append([]byte(nil), hs[i][:]...)
	}
	return out
}

func (c *Certifier) verify(cert []byte) VerifyResult {
	res := certificate.Verify(cert, c.keys, c.now())
	return VerifyResult{Verdict: string(res.Verdict), Reason: res.Reason, Physical: res.Physical, Horizon: res.Horizon}
}

// newCommitment makes the data subject's commitment and its secret.
func newCommitment(subject string) ([32]byte, string) {
	return certificate.NewCommitment(subject)
}
