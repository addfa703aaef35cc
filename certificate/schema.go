package certificate

import "slices"

// The members of each object of a certificate, in the order of the Go
// struct fields (TestSchema_MembersMatchStructs keeps them in step with the
// json tags), and the decoders that read them member for member with a
// jsonReader: checks 3–4 and 13–14 of docs/certificate.md. A v2 layer has
// one member more than a v1 layer, physical, and it is required there; a
// v3 payload has one member more than a v2 payload, horizon, required
// there, and v2 layers.
var (
	envelopeMembers  = []string{"lethe_certificate", "payload", "payload_sha256", "signature", "log"}
	signatureMembers = []string{"alg", "key_id", "public_key", "sig"}
	logMembers       = []string{"leaf", "index", "proof", "checkpoint"}

	payloadMembers = []string{"schema", "request_id", "issued_at", "valid_until", "subject", "scope",
		"layers", "deleted_ids", "rules_sha256", "tool", "claim"}
	subjectMembers = []string{"hmac_sha256", "commitment"}
	scopeMembers   = []string{"store", "table"}
	layerMembers   = []string{"store", "table", "requested", "deleted", "residual",
		"verified_absent", "verify_method", "verify_queries"}
	layerMembersV2  = append(slices.Clip(layerMembers), "physical")
	physicalMembers = []string{"status", "reason", "method", "at", "relations"}
	relationMembers = []string{"relation", "kind", "pages", "scanned", "holding", "holding_vector",
		"holding_subject", "coverage", "took_ms"}
	payloadMembersV3 = append(slices.Clip(payloadMembers), "horizon")
	horizonMembers   = []string{"store", "copy", "status", "until", "basis"}
	idsDigestMembers = []string{"count", "root"}
	claimMembers     = []string{"statement", "covers", "excludes"}
)

// wireEnvelope is the envelope as JSON spells it, before base64 decoding.
type wireEnvelope struct {
	Payload, PayloadSHA256     string
	Alg, KeyID, PublicKey, Sig string
	HasLog                     bool // log present and not null
	Leaf                       string
	Index                      int64
	Proof                      []string
	Checkpoint                 string
}

// isVersionOne reports whether member t (0: absent) is the number 1
// written as the integer 1: 1.0 and 1e0 are other spellings, which
// docs/certificate.md does not allow for integers.
func isVersionOne(r *jsonReader, t int32) bool {
	return t != 0 && r.toks[t].kind == jsonNumber && r.raw(t) == "1"
}

// readEnvelope reads the members of the envelope f, the document's object,
// whose version has been checked.
func readEnvelope(r *jsonReader, f *jsonFields) (w wireEnvelope) {
	// f.vals[0], lethe_certificate, is 1: parseEnvelope checked it first.
	w.Payload = r.str(r.get(f, 1))
	w.PayloadSHA256 = r.str(r.get(f, 2))
	if s, ok := r.object(r.get(f, 3), signatureMembers); ok {
		w.Alg = r.str(r.get(&s, 0))
		w.KeyID = r.str(r.get(&s, 1))
		w.PublicKey = r.str(r.get(&s, 2))
		w.Sig = r.str(r.get(&s, 3))
		r.done(&s)
	}
	// The log section is absent, or null, until the certificate is logged.
	if t := f.vals[4]; t != 0 && r.toks[t].kind != jsonNull {
		if l, ok := r.object(t, logMembers); ok {
			w.HasLog = true
			w.Leaf = r.str(r.get(&l, 0))
			w.Index = r.int(r.get(&l, 1))
			w.Proof = r.stringList(r.get(&l, 2))
			w.Checkpoint = r.str(r.get(&l, 3))
			r.done(&l)
		}
	}
	r.done(f)
	return w
}

// readPayload reads the members of the payload f, the document's object,
// whose schema is v1, v2 or v3 (f read with payloadMembersV3 for v3).
func readPayload(r *jsonReader, f *jsonFields, schema string) *Payload {
	readLayer := readLayerV1
	if schema == SchemaV2 || schema == SchemaV3 {
		readLayer = readLayerV2
	}
	p := &Payload{
		Schema:      r.str(r.get(f, 0)),
		RequestID:   r.str(r.get(f, 1)),
		IssuedAt:    r.time(r.get(f, 2)),
		ValidUntil:  r.time(r.get(f, 3)),
		Subject:     readSubject(r, r.get(f, 4)),
		Scope:       readArray(r, r.get(f, 5), func(t int32) Scope { return readScope(r, t) }),
		Layers:      readArray(r, r.get(f, 6), func(t int32) Layer { return readLayer(r, t) }),
		DeletedIDs:  readIDsDigest(r, r.get(f, 7)),
		RulesSHA256: r.str(r.get(f, 8)),
		Tool:        r.str(r.get(f, 9)),
		Claim:       readClaim(r, r.get(f, 10)),
	}
	if schema == SchemaV3 {
		p.Horizon = readArray(r, r.get(f, 11), func(t int32) Horizon { return readHorizon(r, t) })
	}
	r.done(f)
	return p
}

// readHorizon reads one entry of a v3 payload's horizon; until is a
// string here, read as a time by checkHorizon when the entry is dated.
func readHorizon(r *jsonReader, t int32) (h Horizon) {
	if f, ok := r.object(t, horizonMembers); ok {
		h = Horizon{
			Store:  r.str(r.get(&f, 0)),
			Copy:   r.str(r.get(&f, 1)),
			Status: r.str(r.get(&f, 2)),
			Until:  r.str(r.get(&f, 3)),
			Basis:  r.str(r.get(&f, 4)),
		}
		r.done(&f)
	}
	return h
}

func readSubject(r *jsonReader, t int32) (s Subject) {
	if f, ok := r.object(t, subjectMembers); ok {
		s = Subject{HMAC: r.str(r.get(&f, 0)), Commitment: r.str(r.get(&f, 1))}
		r.done(&f)
	}
	return s
}

func readScope(r *jsonReader, t int32) (s Scope) {
	if f, ok := r.object(t, scopeMembers); ok {
		s = Scope{Store: r.str(r.get(&f, 0)), Table: r.str(r.get(&f, 1))}
		r.done(&f)
	}
	return s
}

func readLayerV1(r *jsonReader, t int32) (l Layer) {
	if f, ok := r.object(t, layerMembers); ok {
		l = readLayerFields(r, &f)
		r.done(&f)
	}
	return l
}

func readLayerV2(r *jsonReader, t int32) (l Layer) {
	if f, ok := r.object(t, layerMembersV2); ok {
		l = readLayerFields(r, &f)
		l.Physical = readPhysical(r, r.get(&f, 8))
		r.done(&f)
	}
	return l
}

// readLayerFields reads the members v1 and v2 layers share.
func readLayerFields(r *jsonReader, f *jsonFields) Layer {
	return Layer{
		Store:          r.str(r.get(f, 0)),
		Table:          r.str(r.get(f, 1)),
		Requested:      r.int(r.get(f, 2)),
		Deleted:        r.int(r.get(f, 3)),
		Residual:       r.int(r.get(f, 4)),
		VerifiedAbsent: r.bool(r.get(f, 5)),
		VerifyMethod:   r.str(r.get(f, 6)),
		VerifyQueries:  r.stringList(r.get(f, 7)),
	}
}

// readPhysical reads a v2 layer's physical section; nil when it is absent
// or not an object (a problem already recorded).
func readPhysical(r *jsonReader, t int32) *Physical {
	f, ok := r.object(t, physicalMembers)
	if !ok {
		return nil
	}
	ph := &Physical{
		Status:    r.str(r.get(&f, 0)),
		Reason:    r.str(r.get(&f, 1)),
		Method:    r.str(r.get(&f, 2)),
		At:        r.time(r.get(&f, 3)),
		Relations: readArray(r, r.get(&f, 4), func(t int32) RelationPages { return readRelation(r, t) }),
	}
	r.done(&f)
	return ph
}

func readRelation(r *jsonReader, t int32) (rp RelationPages) {
	if f, ok := r.object(t, relationMembers); ok {
		rp = RelationPages{
			Relation:       r.str(r.get(&f, 0)),
			Kind:           r.str(r.get(&f, 1)),
			Pages:          r.int(r.get(&f, 2)),
			Scanned:        r.int(r.get(&f, 3)),
			Holding:        r.int(r.get(&f, 4)),
			HoldingVector:  r.int(r.get(&f, 5)),
			HoldingSubject: r.int(r.get(&f, 6)),
			Coverage:       r.str(r.get(&f, 7)),
			TookMS:         r.int(r.get(&f, 8)),
		}
		r.done(&f)
	}
	return rp
}

func readIDsDigest(r *jsonReader, t int32) (d IDsDigest) {
	if f, ok := r.object(t, idsDigestMembers); ok {
		d = IDsDigest{Count: r.int(r.get(&f, 0)), Root: r.str(r.get(&f, 1))}
		r.done(&f)
	}
	return d
}

func readClaim(r *jsonReader, t int32) (c Claim) {
	if f, ok := r.object(t, claimMembers); ok {
		c = Claim{
			Statement: r.str(r.get(&f, 0)),
			Covers:    r.stringList(r.get(&f, 1)),
			Excludes:  r.stringList(r.get(&f, 2)),
		}
		r.done(&f)
	}
	return c
}
