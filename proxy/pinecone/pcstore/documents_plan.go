package pcstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// documentsDeleteMethod says how a layer on a document index finds and
// deletes the subject's documents (searchDocuments).
var documentsDeleteMethod = "fetch the ids the ledger holds for the subject and every document a fetch filtered on each subject " +
	"field returns, keep the documents whose fields name the subject now, and delete those by id through " +
	"/namespaces/{namespace}/documents/delete, " + strconv.Itoa(chunkSize) + " per request, each chunk journaled before it is sent; " +
	"never by filter, so that the certificate can list every id deleted. A document the ledger lists that now names another person is kept"

// documentsVerifyMethod is verifyMethod on a document index.
func (s searchSpec) documentsVerifyMethod(ledgerIDs string, deadline time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "documents fetch of the ledger's %s and of every document a fetch filtered on %s returns "+
		"(pages of %d, only the subject fields), keeping the documents whose fields name the subject",
		ledgerIDs, strings.Join(s.fields, ", "), s.page)
	if s.namespace == "" {
		b.WriteString(", in each namespace GET /namespaces listed")
		if s.others {
			b.WriteString(" except those with a rule of their own")
		}
	}
	fmt.Fprintf(&b, "; repeated with backoff (%s doubling to %s) until nothing was found, for at most %s", firstBackoff, maxBackoff, deadline)
	return b.String()
}

// documentsQueries are the requests each attempt makes on a document
// index, with placeholders for the subject and ids.
func (s searchSpec) documentsQueries() []string {
	ns := s.namespace
	var out []string
	if ns == "" {
		ns = "$namespace"
		out = append(out, "GET /namespaces (the namespaces, each searched as below)")
	}
	include := strings.Join(s.fields, `","`)
	for _, f := range s.fields {
		out = append(out,
			fmt.Sprintf(`POST /namespaces/%s/documents/fetch {"filter":{%q:{"$eq":$subject}},"include_fields":["%s"],"limit":%d} (each page, with pagination_token)`, ns, f, include, s.page),
			fmt.Sprintf(`POST /namespaces/%s/documents/fetch {"filter":{%q:{"$eq":$subject_number}},"include_fields":["%s"],"limit":%d} (when the subject is the text of a number)`, ns, f, include, s.page))
	}
	return append(out, fmt.Sprintf(`POST /namespaces/%s/documents/fetch {"ids":$ledger_ids,"include_fields":["%s"]} (chunks of %d)`, ns, include, chunkSize))
}

// listing names the request that lists the index's namespaces.
func (ix *Index) listing() string {
	if ix.docs != nil {
		return "GET /namespaces"
	}
	return "describe_index_stats"
}

// documentsQueries are Retention's requests on a document index.
func (r *Retention) documentsQueries() []string {
	ns := r.namespace
	var out []string
	if ns == "" {
		ns = "$namespace"
		out = append(out, "GET /namespaces (the namespaces, each swept as below)")
	}
	return append(out,
		fmt.Sprintf(`POST /namespaces/%s/documents/list {"limit":%d,"pagination_token":$next}`, ns, listPage),
		fmt.Sprintf(`POST /namespaces/%s/documents/fetch {"ids":$listed_ids,"include_fields":[%q]} (each page)`, ns, r.field),
		fmt.Sprintf(`POST /namespaces/%s/documents/delete {"ids":$expired_ids} (chunks of at most %d)`, ns, chunkSize),
		fmt.Sprintf(`POST /namespaces/%s/documents/fetch {"ids":$deleted_ids,"include_fields":[]} (chunks of %d)`, ns, chunkSize))
}
