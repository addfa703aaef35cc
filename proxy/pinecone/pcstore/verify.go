package pcstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-privacy/lethe/connector"
)

// look is one verification pass over a layer's namespaces.
type look struct {
	present  int  // the subject's records found
	caughtUp bool // every read had indexed our last delete in its namespace (true when unknown)
	stamped  bool // every read carried x-pinecone-max-indexed-lsn
	waited   bool // some namespace had a delete of ours to wait for
	searched int  // namespaces searched
}

func (l *layer) look(ctx context.Context, subject string, ids []string) (look, error) {
	namespaces, err := l.namespaces(ctx)
	if err != nil {
		return look{}, err
	}
	r := look{caughtUp: true, stamped: true}
	for _, ns := range namespaces {
		rctx, seen := withLSN(ctx)
		found, err := l.ix.search(rctx, ns, l.fields, subject, ids)
		if err != nil {
			return look{}, err
		}
		r.present += len(found)
		r.searched++
		target := l.ix.deleteLSN(ns)
		r.waited = r.waited || target > 0
		indexed, ok := seen.readsIndexed()
		switch {
		case !ok:
			r.stamped = false
		case indexed < target:
			r.caughtUp = false
		}
	}
	return r, nil
}

// Residual looks for the subject's records again and again, with backoff,
// until none is found (and, when the index sends LSN headers, the reads
// have indexed the layer's deletes), or until the reads have indexed them
// and records are still found (those are there, not lagging), or until the
// verify deadline. Residual is never 0 while a record is found.
func (l *layer) Residual(ctx context.Context, subject string, ids []string) (connector.Absence, error) {
	r, attempts, took, err := l.ix.poll(ctx, func(ctx context.Context) (look, error) { return l.look(ctx, subject, ids) })
	if err != nil {
		return connector.Absence{}, err
	}
	return connector.Absence{Residual: int64(r.present), Method: l.method(r, len(ids), attempts, took), Queries: l.search().queries()}, nil
}

// poll repeats look with backoff until it settles (see Residual) or the
// verify deadline would pass, and returns the last look, the attempts made
// and how long they took.
func (ix *Index) poll(ctx context.Context, lookOnce func(context.Context) (look, error)) (look, int, time.Duration, error) {
	began := time.Now()
	wait := firstBackoff
	for attempt := 1; ; attempt++ {
		r, err := lookOnce(ctx)
		if err != nil {
			return look{}, 0, 0, err
		}
		took := time.Since(began)
		settled := r.caughtUp && (r.present == 0 || r.stamped)
		if settled || took+wait > ix.deadline {
			return r, attempt, took, nil
		}
		select {
		case <-ctx.Done():
			return look{}, 0, 0, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// method states in words how absence was looked for, how many times and
// for how long, as the certificate shows it.
func (l *layer) method(r look, ledgerIDs, attempts int, took time.Duration) string {
	var b strings.Builder
	b.WriteString(l.search().verifyMethod(fmt.Sprintf("%d ids", ledgerIDs), l.ix.deadline))
	b.WriteString(": ")
	if r.present == 0 {
		b.WriteString("absent")
	} else {
		fmt.Fprintf(&b, "%d still present", r.present)
	}
	fmt.Fprintf(&b, " at attempt %d, %.1f s after verification began", attempts, took.Seconds())
	if r.searched == 0 {
		b.WriteString("; " + l.ix.listing() + " listed no namespace to search")
	} else {
		b.WriteString(r.lsnNote())
	}
	return b.String()
}

// lsnNote says what the LSN headers of a look's reads showed.
func (r look) lsnNote() string {
	switch {
	case !r.stamped:
		return "; the index sent no x-pinecone-max-indexed-lsn header, so absence rests on polling alone"
	case r.waited && r.caughtUp:
		return "; every read's x-pinecone-max-indexed-lsn had reached the delete's x-pinecone-request-lsn"
	case r.waited:
		return "; the reads' x-pinecone-max-indexed-lsn had not yet reached the delete's x-pinecone-request-lsn"
	}
	return "; no delete of this process to wait for (the reads carried x-pinecone-max-indexed-lsn)"
}

// search is what a layer looks for and where, which is all that verifying
// absence states apart from a run's outcome.
func (l *layer) search() searchSpec {
	return searchSpec{namespace: l.namespace, others: len(l.except) > 0, fields: l.fields, topK: l.ix.topK, page: l.ix.docPage, documents: l.ix.docs != nil}
}

// searchSpec is one layer's search: its namespace ("" for every namespace
// without a rule of its own, others telling whether some have one), the
// subject fields, the query size, and whether the index is a document
// index (searched by fetches filtered on the subject fields instead).
type searchSpec struct {
	namespace string
	others    bool
	fields    []string
	topK      uint32
	page      int // a document index's fetch page
	documents bool
}

// verifyMethod says how absence is looked for, up to the outcome;
// ledgerIDs names the ids fetched ("3 ids").
func (s searchSpec) verifyMethod(ledgerIDs string, deadline time.Duration) string {
	if s.documents {
		return s.documentsVerifyMethod(ledgerIDs, deadline)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "fetch of the ledger's %s and of the ids found by queries filtered on metadata %s "+
		"(topK %d, repeated with other probe vectors while a query returned topK matches), "+
		"keeping the records whose metadata names the subject", ledgerIDs, strings.Join(s.fields, ", "), s.topK)
	if s.namespace == "" {
		b.WriteString(", in each namespace describe_index_stats listed")
		if s.others {
			b.WriteString(" except those with a rule of their own")
		}
	}
	fmt.Fprintf(&b, "; repeated with backoff (%s doubling to %s) until nothing was found, for at most %s", firstBackoff, maxBackoff, deadline)
	return b.String()
}

// queries are the requests each attempt makes, with placeholders for the
// subject, ids and probe vectors.
func (s searchSpec) queries() []string {
	if s.documents {
		return s.documentsQueries()
	}
	ns := s.namespace
	var out []string
	if ns == "" {
		ns = "$namespace"
		out = append(out, "describe_index_stats (the namespaces, each searched as below)")
	} else {
		out = append(out, "describe_index_stats (the index's dimension)")
	}
	out = append(out, fmt.Sprintf("fetch namespace=%s ids=$ledger_ids (chunks of %d)", ns, chunkSize))
	for _, f := range s.fields {
		out = append(out,
			fmt.Sprintf(`query namespace=%s filter={%q:{"$eq":$subject}} topK=%d vector=$probe includeMetadata=false`, ns, f, s.topK),
			fmt.Sprintf(`query namespace=%s filter={%q:{"$eq":$subject_number}} topK=%d vector=$probe includeMetadata=false (when the subject is the text of a number)`, ns, f, s.topK))
	}
	return append(out, fmt.Sprintf("fetch namespace=%s ids=$query_ids (chunks of %d)", ns, chunkSize))
}
