package certificate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// The payload schemas this package writes and accepts. A v2 payload is a
// v1 payload whose every layer also has a physical section (Layer.Physical);
// a v3 payload (SchemaV3) is a v2 payload with a horizon. Sign writes v3
// when the payload has a horizon, else v2 when some layer has a physical
// section, so every other certificate stays v1 byte for byte.
const (
	SchemaV1 = "lethe.certificate/v1"
	SchemaV2 = "lethe.certificate/v2"
)

// Payload is what a certificate states. Sign writes it with encoding/json in
// field order; verifiers read those exact bytes and never re-serialise them.
type Payload struct {
	Schema      string    `json:"schema"`
	RequestID   string    `json:"request_id"`
	IssuedAt    time.Time `json:"issued_at"`
	ValidUntil  time.Time `json:"valid_until"`
	Subject     Subject   `json:"subject"`
	Scope       []Scope   `json:"scope"`
	Layers      []Layer   `json:"layers"`
	DeletedIDs  IDsDigest `json:"deleted_ids"`
	RulesSHA256 string    `json:"rules_sha256"`
	Tool        string    `json:"tool"`
	Claim       Claim     `json:"claim"`
	// Horizon is, in a v3 payload, when the copies forget cannot reach
	// (WAL, archives, backups, replicas, the provider's purge) are
	// expected to be gone; absent from v1 and v2 payloads.
	Horizon []Horizon `json:"horizon,omitempty"`
}

// Subject identifies the data subject without naming them.
type Subject struct {
	// HMAC is hex HMAC-SHA256(operator salt, subject), computed by the caller,
	// so the operator can find the certificate again.
	HMAC string `json:"hmac_sha256"`
	// Commitment is the NewCommitment value, so the subject can recognise it.
	Commitment string `json:"commitment"`
}

// Scope is one configured layer that forget checked: a PostgreSQL table or
// a Pinecone namespace.
type Scope struct {
	Store string `json:"store"` // "postgres" or "pinecone"
	Table string `json:"table"`
}

// Layer is what forget did in one layer of the scope.
type Layer struct {
	Store          string   `json:"store"`
	Table          string   `json:"table"`
	Requested      int64    `json:"requested"`
	Deleted        int64    `json:"deleted"`
	Residual       int64    `json:"residual"`
	VerifiedAbsent bool     `json:"verified_absent"`
	VerifyMethod   string   `json:"verify_method"`
	VerifyQueries  []string `json:"verify_queries"`
	// Physical is what the layer's pages still hold: in a v2 payload every
	// layer has one (PhysicalNotScanned when none was looked at); a v1
	// payload has none.
	Physical *Physical `json:"physical,omitempty"`
}

// IDsDigest commits to the deleted record ids: their count and the RFC 6962
// Merkle root (hex) computed by IDsRoot.
type IDsDigest struct {
	Count int64  `json:"count"`
	Root  string `json:"root"`
}

// Claim says in plain language what the certificate covers and what not.
type Claim struct {
	Statement string   `json:"statement"`
	Covers    []string `json:"covers"`
	Excludes  []string `json:"excludes"`
}

// DefaultExcludes returns what a certificate does not cover unless the
// caller says otherwise: copies Lethe cannot see or delete.
func DefaultExcludes() []string {
	return []string{
		"backups and snapshots",
		"replicas and read replicas",
		"the write-ahead log (WAL) and its archives",
		"model weights trained or fine-tuned on the data",
		"derived copies outside the scope (caches, exports, logs, other tables or stores)",
	}
}

// requestIDPattern keeps request ids free of anything JSON would escape, so
// a log event has exactly one encoding (docs/certificate.md, "Transparency log").
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// normalize fills defaults and checks p before signing, so every issued
// certificate is one a verifier accepts.
func (p *Payload) normalize() error {
	physical := 0
	for _, l := range p.Layers {
		if l.Physical != nil {
			physical++
		}
	}
	if p.Schema == "" {
		switch {
		case len(p.Horizon) > 0:
			p.Schema = SchemaV3
		case physical > 0:
			p.Schema = SchemaV2
		default:
			p.Schema = SchemaV1
		}
	}
	switch {
	case p.Schema == SchemaV1 && physical > 0:
		return fmt.Errorf("schema %q has no physical section; leave the schema empty or write %q", SchemaV1, SchemaV2)
	case p.Schema != SchemaV3 && len(p.Horizon) > 0:
		return fmt.Errorf("schema %q has no horizon; leave the schema empty or write %q", p.Schema, SchemaV3)
	case p.Schema == SchemaV3 && len(p.Horizon) == 0:
		return fmt.Errorf("schema %q needs a horizon (status %q with the reason for a copy nothing is known of)", SchemaV3, HorizonUnknown)
	case (p.Schema == SchemaV2 || p.Schema == SchemaV3) && physical < len(p.Layers):
		return fmt.Errorf("schema %q: every layer needs a physical section (status %q when its pages were not scanned)", p.Schema, PhysicalNotScanned)
	case p.Schema != SchemaV1 && p.Schema != SchemaV2 && p.Schema != SchemaV3:
		return fmt.Errorf("schema %q: this package signs only %q, %q and %q", p.Schema, SchemaV1, SchemaV2, SchemaV3)
	}
	if !requestIDPattern.MatchString(p.RequestID) {
		return fmt.Errorf("request_id %q: want 1-128 of A-Z a-z 0-9 . _ : -", p.RequestID)
	}
	if p.IssuedAt.IsZero() || p.ValidUntil.IsZero() {
		return fmt.Errorf("issued_at and valid_until must both be set")
	}
	p.IssuedAt = p.IssuedAt.UTC().Truncate(time.Second)
	p.ValidUntil = p.ValidUntil.UTC().Truncate(time.Second)
	if p.Tool == "" {
		return fmt.Errorf("tool is empty; name the issuing software, e.g. \"lethe-proxy 0.1.0\"")
	}
	if p.Claim.Statement == "" {
		return fmt.Errorf("claim.statement is empty; say in plain words what was deleted")
	}
	for i, s := range p.Scope {
		if s.Store == "" || s.Table == "" {
			return fmt.Errorf("scope[%d]: store and table must both be set", i)
		}
	}
	// nil slices would be written as null, which verifiers reject as a type
	// error: an empty list is written as [].
	p.Scope = nonNil(p.Scope)
	p.Layers = nonNil(p.Layers)
	for i := range p.Layers {
		p.Layers[i].VerifyQueries = nonNil(p.Layers[i].VerifyQueries)
		if ph := p.Layers[i].Physical; ph != nil {
			ph.At = ph.At.UTC()
			ph.Relations = nonNil(ph.Relations)
		}
	}
	p.Claim.Covers = nonNil(p.Claim.Covers)
	if p.Claim.Excludes == nil {
		p.Claim.Excludes = DefaultExcludes()
		if p.Schema == SchemaV3 {
			p.Claim.Excludes = HorizonExcludes()
		}
	}
	// Digests, times, counts, scope and layers: what Verify calls
	// malformed in a signed payload.
	if why := checkConsistent(p); why != "" {
		return errors.New(why)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// isHex256 reports whether s is a SHA-256 sized digest in lowercase hex.
func isHex256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// hexSHA256 is the form digests take in payloads and log events.
func hexSHA256(sum [32]byte) string { return hex.EncodeToString(sum[:]) }
