package pcstore

import (
	"strconv"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// Plan is what forget does under one namespace rule, in the words and
// requests a certificate uses, built from the rules alone (no connection):
// for a data map that a privacy officer reads and CI keeps current.
type Plan struct {
	// Scope says where the rule's layer looks.
	Scope string
	// Method says in words how the subject's records are found and
	// deleted.
	Method string
	// VerifyMethod and VerifyQueries are how absence is verified, as the
	// certificate states them (without a run's outcome: attempts, seconds).
	VerifyMethod  string
	VerifyQueries []string
}

// deleteMethod says how a layer finds and deletes the subject's records
// (see the package comment).
var deleteMethod = "fetch the ids the ledger holds for the subject and the ids found by queries filtered on each subject " +
	"field, keep the records whose metadata names the subject now, and delete those by id, " + strconv.Itoa(chunkSize) +
	" per request, each chunk journaled before it is sent; never by filter, so that the certificate can list every id deleted. " +
	"A record the ledger lists that now names another person is kept"

// PlanFor is the plan of rule r, one of its index's rules (a "*" rule
// covers the namespaces the others do not), on an index of api (empty:
// APIVectors); verifyDeadline is pinecone.verify_deadline (0: the
// default).
func PlanFor(r Rule, rules []Rule, api API, verifyDeadline time.Duration) Plan {
	if verifyDeadline <= 0 {
		verifyDeadline = defaultVerify
	}
	s := searchSpec{namespace: extract.CanonicalNamespace(r.Namespace), fields: r.Fields, topK: maxTopK, page: documentPage, documents: api == APIDocuments}
	method, listing := deleteMethod, "describe_index_stats"
	if s.documents {
		method, listing = documentsDeleteMethod, "GET /namespaces"
	}
	scope := "namespace " + strconv.Quote(s.namespace)
	if s.namespace == pcextract.AnyNamespace {
		s.namespace = ""
		for _, o := range rules {
			s.others = s.others || extract.CanonicalNamespace(o.Namespace) != pcextract.AnyNamespace
		}
		scope = "every namespace " + listing + " lists when forget runs"
		if s.others {
			scope += ", except those with a rule of their own"
		}
	}
	return Plan{
		Scope:         scope,
		Method:        method,
		VerifyMethod:  s.verifyMethod("ids", verifyDeadline),
		VerifyQueries: s.queries(),
	}
}
