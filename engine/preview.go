package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// LayerPreview is what a forget would do in one layer.
type LayerPreview struct {
	Store         ledger.Store `json:"store"`
	Table         string       `json:"table"`
	LedgerRecords int          `json:"ledger_records"` // tags the ledger holds for the subject (confirmed or pending)
	Rows          int          `json:"rows"`           // records present now that forget would delete
	// NearMisses are counted only when the preview found nothing in any
	// layer (Preview.NothingFound).
	NearMisses *NearMisses `json:"near_misses,omitempty"`
}

// Preview is the answer to preview: per layer counts, and the token that
// confirms exactly these counts for this subject.
type Preview struct {
	Layers []LayerPreview `json:"layers"`
	// NothingFound: no layer holds a ledger record or a row of the
	// subject. NearMisses then sums the layers' near misses, Warning says
	// what that means, and the forget must be confirmed with
	// ForgetOptions.NothingFound.
	NothingFound bool        `json:"nothing_found"`
	NearMisses   *NearMisses `json:"near_misses,omitempty"`
	Warning      string      `json:"warning,omitempty"`
	Token        string      `json:"confirm_token"`
	ExpiresAt    time.Time   `json:"expires_at"`
}

// Preview returns what a forget of subject would delete, and a confirm
// token for Forget. When it finds nothing, it counts near misses and says
// so in Warning.
func (e *Engine) Preview(ctx context.Context, subject string) (Preview, error) {
	h := e.cfg.Hasher.Hash(subject)
	layers, err := e.preview(ctx, subject, h)
	if err != nil {
		return Preview{}, err
	}
	exp := e.cfg.Now().Add(e.cfg.TokenTTL).Truncate(time.Second)
	tok := token{subject: h, counts: countsDigest(layers), expires: exp}
	p := Preview{Layers: layers, Token: tok.seal(e.token), ExpiresAt: exp}
	if nothingFound(layers) {
		near, err := e.nearMisses(ctx, subject, layers)
		if err != nil {
			return Preview{}, err
		}
		p.NothingFound, p.NearMisses = true, &near
		p.Warning = "No records of this subject were found in any layer; " + nearMissAdvice(near) +
			". Confirming certifies that nothing was found, and needs nothing_found (lethe-proxy forget confirm --nothing-found)."
	}
	return p, nil
}

func (e *Engine) preview(ctx context.Context, subject string, h ledger.SubjectHash) ([]LayerPreview, error) {
	e.settle(ctx)
	ids, err := e.ledgerIDs(ctx, h)
	if err != nil {
		return nil, err
	}
	out := make([]LayerPreview, 0, len(e.cfg.Layers))
	for _, l := range e.cfg.Layers {
		k := layerKey{l.Store(), l.Name()}
		rows, err := l.Matching(ctx, subject, ids[k].ids)
		if err != nil {
			return nil, err
		}
		out = append(out, LayerPreview{Store: l.Store(), Table: l.Name(), LedgerRecords: ids[k].records, Rows: len(rows)})
	}
	return out, nil
}

type layerKey struct {
	store ledger.Store
	name  string
}

type ledgerTags struct {
	records int      // records not deleted, including store-generated ids
	ids     []string // the record ids among them
	tables  []string // the ledger tables they are in (several for a connector.Scoped layer)
	// counted are the records counted: one record may be in the ledger
	// several times (a pending rewrite of a confirmed record, the WAL
	// follower's fact beside the proxy's intent).
	counted map[string]bool
}

// ledgerIDs groups the ledger's records about the subject by layer:
// confirmed and pending ones (a pending intent may have committed), and
// the ones the application deleted (to verify they are gone).
func (e *Engine) ledgerIDs(ctx context.Context, h ledger.SubjectHash) (map[layerKey]ledgerTags, error) {
	recs, err := e.cfg.Ledger.BySubject(ctx, h)
	if err != nil {
		return nil, err
	}
	out := map[layerKey]ledgerTags{}
	keys := map[layerKey]layerKey{} // ledger table → its layer
	for _, r := range recs {
		table := layerKey{r.Store, r.Table}
		k, seen := keys[table]
		if !seen {
			k = e.layerOf(r.Store, r.Table)
			keys[table] = k
		}
		t := out[k]
		if !seen || !slices.Contains(t.tables, r.Table) {
			t.tables = append(t.tables, r.Table)
		}
		if r.State != ledger.StateDeleted {
			key := r.Table + "\x00" + r.RecordID
			if r.RecordID == "" {
				t.records++ // store-generated ids cannot be told apart
			} else if !t.counted[key] {
				if t.counted == nil {
					t.counted = map[string]bool{}
				}
				t.counted[key] = true
				t.records++
			}
		}
		if r.RecordID != "" {
			t.ids = append(t.ids, r.RecordID)
		}
		out[k] = t
	}
	return out, nil
}

// layerOf is the key of the layer a ledger table's records belong to: the
// layer named like the table, else a connector.Scoped layer of the store
// that holds it, else the table itself (no layer: forget leaves it alone).
func (e *Engine) layerOf(store ledger.Store, table string) layerKey {
	for _, l := range e.cfg.Layers {
		if l.Store() == store && l.Name() == table {
			return layerKey{store, table}
		}
	}
	for _, l := range e.cfg.Layers {
		if s, ok := l.(connector.Scoped); ok && l.Store() == store && s.Holds(table) {
			return layerKey{store, l.Name()}
		}
	}
	return layerKey{store, table}
}

// countsDigest is what a token binds: the counts shown, layer by layer.
func countsDigest(layers []LayerPreview) [32]byte {
	d := sha256.New()
	for _, l := range layers {
		d.Write([]byte(string(l.Store) + "\x00" + l.Table + "\x00"))
		d.Write(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(l.LedgerRecords)), uint64(l.Rows)))
	}
	var out [32]byte
	d.Sum(out[:0])
	return out
}

// settleTimeout bounds the wait for Config.Settle.
const settleTimeout = 10 * time.Second

// settle waits, within settleTimeout, until the ledger holds every write
// committed so far (Config.Settle), so that preview and the check of its
// token count the same rows. When it cannot, the counts are the ledger's
// as it is; forget still finds the rows by the subject predicate.
func (e *Engine) settle(ctx context.Context) {
	if e.cfg.Settle == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if err := e.cfg.Settle(ctx); err != nil {
		e.log.Warn("forget: the ledger may not yet hold every committed write; counting it as it is", "err", err)
	}
}
