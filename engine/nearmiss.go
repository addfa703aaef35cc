package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Subjects are compared as exact bytes everywhere: the ledger keeps their
// HMAC, and forget deletes the rows whose stored subject equals the one
// asked for. "Bob@Example.com" and "bob@example.com " are other people as
// far as forget knows. So that a mistyped subject is not certified as
// erased, a preview that finds nothing counts near misses: records that
// name the subject once case, surrounding white space and Unicode
// normalisation form are ignored. Counts only: the spellings that matched
// are never shown, logged or stored.

// NearMisses counts, where a preview found nothing, the records that name
// the subject in another spelling.
type NearMisses struct {
	// LedgerRecords are the ledger's records about a spelling of the
	// subject (lower or upper case, trimmed, NFC or NFD, and their
	// combinations): the ledger holds HMACs, so only spellings derived
	// from the subject can be looked up.
	LedgerRecords int `json:"ledger_records"`
	// Records are the store's records that name the subject once
	// normalised, as the store can compare them (see docs/forget.md).
	Records int64 `json:"records"`
}

func (n NearMisses) found() bool { return n.LedgerRecords > 0 || n.Records > 0 }

func (n *NearMisses) add(o NearMisses) {
	n.LedgerRecords += o.LedgerRecords
	n.Records += o.Records
}

// ErrNothingFound is wrapped by the refusal of a forget whose preview
// found no record of the subject anywhere, confirmed without
// ForgetOptions.NothingFound.
var ErrNothingFound = errors.New("engine: no records of this subject were found in any layer")

// NothingFoundError is that refusal, with the near misses counted.
type NothingFoundError struct{ NearMisses NearMisses }

func (e *NothingFoundError) Error() string {
	return ErrNothingFound.Error() + "; " + nearMissAdvice(e.NearMisses) +
		"; to certify that nothing was found, confirm again with nothing_found (lethe-proxy forget confirm --nothing-found)"
}

func (e *NothingFoundError) Unwrap() error { return ErrNothingFound }

// ErrRecordsFound is returned when a forget is confirmed with
// ForgetOptions.NothingFound but the subject's records are there.
var ErrRecordsFound = errors.New("engine: nothing_found was set, but records of this subject were found; confirm without nothing_found")

// nearMissAdvice says what the near misses mean for the operator.
func nearMissAdvice(n NearMisses) string {
	if !n.found() {
		return "no record names it in another spelling either (case, surrounding white space, Unicode normalisation): " +
			"check that this is the identifier the application stores"
	}
	return fmt.Sprintf("%d ledger records and %d store records name it in another spelling (case, surrounding white space "+
		"or Unicode normalisation): subjects are compared as exact bytes, so check how the application stores this subject "+
		"and preview that spelling", n.LedgerRecords, n.Records)
}

// spellings are the other spellings of subject an application may have
// stored: as given or without surrounding white space; as given, NFC or
// NFD; as given, lower or upper case; every combination, each once, the
// subject itself left out.
func spellings(subject string) []string {
	seen := map[string]bool{subject: true}
	var out []string
	for _, trimmed := range []string{subject, strings.TrimSpace(subject)} {
		for _, form := range []string{trimmed, norm.NFC.String(trimmed), norm.NFD.String(trimmed)} {
			for _, cased := range []string{form, strings.ToLower(form), strings.ToUpper(form)} {
				if !seen[cased] {
					seen[cased] = true
					out = append(out, cased)
				}
			}
		}
	}
	return out
}

// nearMisses counts each layer's near misses of subject into layers, and
// returns their sum.
func (e *Engine) nearMisses(ctx context.Context, subject string, layers []LayerPreview) (NearMisses, error) {
	variants := spellings(subject)
	ledgerNear, err := e.ledgerNearMisses(ctx, variants)
	if err != nil {
		return NearMisses{}, err
	}
	var total NearMisses
	for i, l := range e.cfg.Layers {
		n, err := l.NearMisses(ctx, subject, variants)
		if err != nil {
			return NearMisses{}, err
		}
		near := NearMisses{LedgerRecords: ledgerNear[layerKey{l.Store(), l.Name()}], Records: n}
		layers[i].NearMisses = &near
		total.add(near)
	}
	return total, nil
}

// ledgerNearMisses counts, per layer, the ledger's records about any of
// variants, each record once.
func (e *Engine) ledgerNearMisses(ctx context.Context, variants []string) (map[layerKey]int, error) {
	records := map[layerKey]map[string]bool{}
	unnamed := map[layerKey]int{} // records with store-generated ids, which cannot be told apart
	for _, v := range variants {
		tags, err := e.ledgerIDs(ctx, e.cfg.Hasher.Hash(v))
		if err != nil {
			return nil, err
		}
		for k, t := range tags {
			if records[k] == nil {
				records[k] = map[string]bool{}
			}
			for key := range t.counted {
				records[k][key] = true
			}
			unnamed[k] += t.records - len(t.counted)
		}
	}
	out := map[layerKey]int{}
	for k, ids := range records {
		out[k] = len(ids) + unnamed[k]
	}
	return out, nil
}

// nothingFound reports whether the preview found no record anywhere: no
// ledger record and no row in any layer.
func nothingFound(layers []LayerPreview) bool {
	for _, l := range layers {
		if l.LedgerRecords > 0 || l.Rows > 0 {
			return false
		}
	}
	return true
}
