package pcstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// Retention is one namespace rule with retain, as lethe-proxy sweep drives
// it (connector.Retainer). Pinecone cannot filter a listing by metadata, so
// the namespace's ids are listed page by page and each page is fetched; a
// record whose RetainBy field is a number of seconds since the Unix epoch
// before the cutoff is expired. A record without the field, or with a value
// that is not a finite number, is kept and counted as unreadable. Expired
// records are deleted by id; absence is verified by fetching the deleted
// ids again, with backoff, as forget verifies (see the package comment).
//
// A "*" rule sweeps every namespace describe_index_stats lists without a
// rule of its own.
type Retention struct {
	ix        *Index
	namespace string          // "" for a "*" rule
	except    map[string]bool // "*": the namespaces with their own rule
	field     string

	mu sync.Mutex
	// found keeps the expired ids Expired listed, per namespace, for
	// DeleteExpired with the same cutoff (listing twice is costly);
	// deleted keeps what DeleteExpired deleted, for ResidualExpired.
	foundAt time.Time
	found   map[string][]string
	deleted map[string][]string
}

var _ connector.Retainer = (*Retention)(nil)

// Retainers returns a Retention for each rule with RetainBy set, in order.
func (ix *Index) Retainers(rules []Rule) []connector.Retainer {
	own := map[string]bool{}
	for _, r := range rules {
		if ns := extract.CanonicalNamespace(r.Namespace); ns != pcextract.AnyNamespace {
			own[ns] = true
		}
	}
	var out []connector.Retainer
	for _, r := range rules {
		if r.RetainBy == "" {
			continue
		}
		rt := &Retention{ix: ix, field: r.RetainBy}
		if ns := extract.CanonicalNamespace(r.Namespace); ns != pcextract.AnyNamespace {
			rt.namespace = ns
		} else {
			rt.except = own
		}
		out = append(out, rt)
	}
	return out
}

func (r *Retention) Store() ledger.Store { return ledger.StorePinecone }

func (r *Retention) Name() string {
	if r.namespace == "" {
		return r.ix.name + "/" + pcextract.AnyNamespace
	}
	return r.ix.name + "/" + r.namespace
}

// namespaces is where the rule applies now.
func (r *Retention) namespaces(ctx context.Context) ([]string, error) {
	l := layer{ix: r.ix, namespace: r.namespace, except: r.except}
	return l.namespaces(ctx)
}

func (r *Retention) Expired(ctx context.Context, cutoff time.Time) (connector.Expiry, error) {
	namespaces, err := r.namespaces(ctx)
	if err != nil {
		return connector.Expiry{}, err
	}
	var e connector.Expiry
	found := map[string][]string{}
	for _, ns := range namespaces {
		ids, unreadable, err := r.expiredIn(ctx, ns, cutoff)
		if err != nil {
			return connector.Expiry{}, err
		}
		found[ns] = ids
		e.Expired += int64(len(ids))
		e.Unreadable += unreadable
	}
	r.mu.Lock()
	r.foundAt, r.found = cutoff, found
	r.mu.Unlock()
	return e, nil
}

// expiredIn lists namespace ns and fetches each page, returning the ids of
// the expired records and how many records have no readable time.
func (r *Retention) expiredIn(ctx context.Context, ns string, cutoff time.Time) (expired []string, unreadable int64, err error) {
	before := float64(cutoff.UnixNano()) / 1e9
	err = r.ix.eachPage(ctx, ns, []string{r.field}, func(page []*pinecone.Vector) error {
		for _, v := range page {
			at, ok := epochSeconds(v.Metadata, r.field)
			switch {
			case !ok:
				unreadable++
			case at < before:
				expired = append(expired, v.Id)
			}
		}
		return nil
	})
	return expired, unreadable, err
}

// epochSeconds reads field of md as seconds since the Unix epoch: a finite
// number, nothing else.
func epochSeconds(md *structpb.Struct, field string) (float64, bool) {
	v, ok := md.GetFields()[field].GetKind().(*structpb.Value_NumberValue)
	if !ok || math.IsNaN(v.NumberValue) || math.IsInf(v.NumberValue, 0) {
		return 0, false
	}
	return v.NumberValue, true
}

// DeleteExpired deletes the expired records by id, batch (at most 1,000)
// per request. It uses the ids Expired listed for the same cutoff, and
// lists again otherwise.
func (r *Retention) DeleteExpired(ctx context.Context, cutoff time.Time, batch int, beforeCommit func(table string, ids []string) error) (int64, error) {
	if batch <= 0 {
		return 0, fmt.Errorf("pinecone: batch size %d; want at least 1", batch)
	}
	batch = min(batch, chunkSize)
	r.mu.Lock()
	found := r.found
	if !r.foundAt.Equal(cutoff) {
		found = nil
	}
	r.found, r.deleted = nil, map[string][]string{}
	r.mu.Unlock()
	if found == nil {
		found = map[string][]string{}
		namespaces, err := r.namespaces(ctx)
		if err != nil {
			return 0, err
		}
		for _, ns := range namespaces {
			if found[ns], _, err = r.expiredIn(ctx, ns, cutoff); err != nil {
				return 0, err
			}
		}
	}
	var total int64
	for _, ns := range sortedKeys(found) {
		for chunk := range slices.Chunk(found[ns], batch) {
			if err := beforeCommit(r.ix.name+"/"+ns, chunk); err != nil {
				return total, err
			}
			if err := r.ix.deleteIDs(ctx, ns, chunk); err != nil {
				return total, err
			}
			r.mu.Lock()
			r.deleted[ns] = append(r.deleted[ns], chunk...)
			r.mu.Unlock()
			total += int64(len(chunk))
		}
	}
	return total, nil
}

// ResidualExpired fetches the ids DeleteExpired deleted until none is
// found (and the reads have indexed the deletes, when the index says), or
// the verify deadline passes.
func (r *Retention) ResidualExpired(ctx context.Context, cutoff time.Time) (connector.Absence, error) {
	r.mu.Lock()
	deleted := r.deleted
	r.mu.Unlock()
	var n int
	for _, ids := range deleted {
		n += len(ids)
	}
	res, attempts, took, err := r.ix.poll(ctx, func(ctx context.Context) (look, error) {
		lk := look{caughtUp: true, stamped: true}
		for _, ns := range sortedKeys(deleted) {
			rctx, seen := withLSN(ctx)
			for chunk := range slices.Chunk(deleted[ns], chunkSize) {
				n, err := r.ix.present(rctx, ns, chunk)
				if err != nil {
					return look{}, err
				}
				lk.present += n
			}
			lk.searched++
			target := r.ix.deleteLSN(ns)
			lk.waited = lk.waited || target > 0
			switch indexed, ok := seen.readsIndexed(); {
			case !ok:
				lk.stamped = false
			case indexed < target:
				lk.caughtUp = false
			}
		}
		return lk, nil
	})
	if err != nil {
		return connector.Absence{}, err
	}
	return connector.Absence{Residual: int64(res.present), Method: r.method(res, n, attempts, took), Queries: r.queries()}, nil
}

func (r *Retention) method(res look, deleted, attempts int, took time.Duration) string {
	m := fmt.Sprintf("every id listed (pages of %d) and fetched; a record is expired when its metadata field %q is a number of "+
		"seconds since the Unix epoch before the cutoff, and kept when the field is missing or not a number", listPage, r.field)
	if r.ix.docs != nil {
		m = fmt.Sprintf("every document id listed (POST /namespaces/{namespace}/documents/list, pages of %d) and fetched with include_fields [%q]; "+
			"a document is expired when its field %q is a number of seconds since the Unix epoch before the cutoff, and kept when the field "+
			"is missing or not a number", listPage, r.field, r.field)
	}
	if r.namespace == "" {
		m += "; in each namespace " + r.ix.listing() + " listed"
		if len(r.except) > 0 {
			m += " except those with a rule of their own"
		}
	}
	if deleted == 0 {
		return m + "; nothing was deleted, so nothing was fetched again"
	}
	m += fmt.Sprintf("; the %d ids deleted were fetched again with backoff (%s doubling to %s) until none was found, for at most %s: ",
		deleted, firstBackoff, maxBackoff, r.ix.deadline)
	if res.present == 0 {
		m += "absent"
	} else {
		m += fmt.Sprintf("%d still present", res.present)
	}
	return m + fmt.Sprintf(" at attempt %d, %.1f s after verification began", attempts, took.Seconds()) + res.lsnNote()
}

func (r *Retention) queries() []string {
	if r.ix.docs != nil {
		return r.documentsQueries()
	}
	ns := r.namespace
	var out []string
	if ns == "" {
		ns = "$namespace"
		out = append(out, "describe_index_stats (the namespaces, each swept as below)")
	}
	return append(out,
		fmt.Sprintf("list namespace=%s limit=%d paginationToken=$next", ns, listPage),
		fmt.Sprintf("fetch namespace=%s ids=$listed_ids (each page)", ns),
		fmt.Sprintf("delete namespace=%s ids=$expired_ids (chunks of at most %d)", ns, chunkSize),
		fmt.Sprintf("fetch namespace=%s ids=$deleted_ids (chunks of %d)", ns, chunkSize))
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
