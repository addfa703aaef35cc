package certificate

import "fmt"

// checkConsistent runs check 15 of docs/certificate.md on a payload whose
// members all have their types: the statements it makes must agree with
// each other. It returns why they do not, or "". Whether the erasure was
// complete is not asked here (that is VerdictIncomplete, check 20).
func checkConsistent(p *Payload) string {
	// The log event names the request; outside this set no event can (its
	// bytes would need JSON escapes), so the payload contradicts its own log.
	if !requestIDPattern.MatchString(p.RequestID) {
		return fmt.Sprintf("request_id %q: want 1 to 128 of A-Z a-z 0-9 . _ : -", p.RequestID)
	}
	for _, d := range []struct{ name, value string }{
		{"subject.hmac_sha256", p.Subject.HMAC},
		{"subject.commitment", p.Subject.Commitment},
		{"deleted_ids.root", p.DeletedIDs.Root},
		{"rules_sha256", p.RulesSHA256},
	} {
		if !isHex256(d.value) {
			return fmt.Sprintf("%s %q is not 64 lowercase hex digits", d.name, d.value)
		}
	}
	if !p.ValidUntil.After(p.IssuedAt) {
		return fmt.Sprintf("valid_until %s is not after issued_at %s", rfc3339(p.ValidUntil), rfc3339(p.IssuedAt))
	}
	if p.DeletedIDs.Count < 0 {
		return fmt.Sprintf("deleted_ids.count %d is negative", p.DeletedIDs.Count)
	}
	scope := make(map[Scope]bool, len(p.Scope))
	for i, s := range p.Scope {
		if !IsStore(s.Store) {
			return fmt.Sprintf("scope[%d].store %q is not %q or %q", i, s.Store, StorePostgres, StorePinecone)
		}
		if scope[s] {
			return fmt.Sprintf("scope[%d] (%s %s) is listed twice", i, s.Store, s.Table)
		}
		scope[s] = true
	}
	// Each layer of the scope reports once, and only layers of the scope
	// report: a result for a layer nobody declared, or a declared layer
	// without a result, proves nothing about it.
	var deleted int64
	for i, l := range p.Layers {
		at := Scope{Store: l.Store, Table: l.Table}
		if !scope[at] {
			return fmt.Sprintf("layers[%d] (%s %s) is not in the scope, or is listed twice", i, l.Store, l.Table)
		}
		delete(scope, at)
		for _, n := range []struct {
			name string
			v    int64
		}{{"requested", l.Requested}, {"deleted", l.Deleted}, {"residual", l.Residual}} {
			if n.v < 0 {
				return fmt.Sprintf("layers[%d].%s %d is negative", i, n.name, n.v)
			}
		}
		// requested counts the records the ledger attributed to the
		// subject; deleted may exceed it (rows found by the subject's
		// predicate that the ledger never saw) or fall short of it
		// (records already gone), so the two are not compared.
		if l.VerifiedAbsent && l.Residual != 0 {
			return fmt.Sprintf("layers[%d] is verified absent but has %d residual records", i, l.Residual)
		}
		if l.Physical != nil {
			if why := checkPhysical(fmt.Sprintf("layers[%d].physical", i), l.Physical); why != "" {
				return why
			}
		}
		if deleted += l.Deleted; deleted < 0 {
			return "the layers' deleted counts overflow"
		}
	}
	for i, s := range p.Scope {
		if scope[s] {
			return fmt.Sprintf("scope[%d] (%s %s) has no entry in layers", i, s.Store, s.Table)
		}
	}
	inScope := make(map[Scope]bool, len(p.Scope))
	for _, s := range p.Scope {
		inScope[s] = true
	}
	if why := checkHorizon(p, inScope); why != "" {
		return why
	}
	if deleted != p.DeletedIDs.Count {
		return fmt.Sprintf("deleted_ids.count is %d, but the layers deleted %d records", p.DeletedIDs.Count, deleted)
	}
	return ""
}

// The stores a scope entry, a layer or a report layer may name.
const (
	StorePostgres = "postgres"
	StorePinecone = "pinecone"
)

// IsStore reports whether store is one a certificate or report may name.
// Compared as bytes: "Postgres" is not one.
func IsStore(store string) bool { return store == StorePostgres || store == StorePinecone }

// incompleteLayer returns the first layer whose erasure is not proven
// complete (records left, or absence not verified), or -1.
func incompleteLayer(p *Payload) int {
	for i, l := range p.Layers {
		if !l.VerifiedAbsent || l.Residual != 0 {
			return i
		}
	}
	return -1
}
