package pcwing

import (
	"context"
	"fmt"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Forget opens forget's connection to each index host with namespace
// rules and returns one layer per rule, named as capture names the
// ledger's records ("<index>/<namespace>"). Nothing lags behind the relay
// (it records as it relays): Settle is nil. The side's Close, or the
// wing's, closes the connections.
func (w *Wing) Forget(context.Context) (connector.ForgetSide, error) {
	layers, indexes, err := w.layers(false)
	if err != nil {
		return connector.ForgetSide{}, err
	}
	w.keep(indexes)
	return connector.ForgetSide{Layers: layers, Close: w.closeIndexes, Horizon: w.horizon}, nil
}

// Scanners are reconcile's view of the same layers: every record of each
// namespace rule; the closer closes their index connections.
func (w *Wing) Scanners(context.Context) ([]connector.Scanner, func(), error) {
	scanners, indexes, err := w.scanners(false)
	if err != nil {
		return nil, nil, err
	}
	return scanners, func() { closeAll(indexes) }, nil
}

// scanners opens the layers (paced by pinecone.scan_rate when paced) and
// returns them as scanners, with the indexes to close.
func (w *Wing) scanners(paced bool) ([]connector.Scanner, []*pcstore.Index, error) {
	layers, indexes, err := w.layers(paced)
	if err != nil {
		return nil, nil, err
	}
	scanners := make([]connector.Scanner, 0, len(layers))
	for _, l := range layers {
		s, ok := l.(connector.Scanner)
		if !ok {
			closeAll(indexes)
			return nil, nil, fmt.Errorf("%s cannot be scanned", l.Name())
		}
		scanners = append(scanners, s)
	}
	return scanners, indexes, nil
}

// layers opens each index with namespace rules and returns the layers of
// its rules, with the indexes to close. An index without rules is
// relayed only: nothing of it is captured, nothing to forget. paced gives
// each index its own pacer at pinecone.scan_rate.
func (w *Wing) layers(paced bool) ([]connector.Layer, []*pcstore.Index, error) {
	var (
		layers  []connector.Layer
		indexes []*pcstore.Index
	)
	for _, ic := range w.settings.Indexes {
		if len(ic.Namespaces) == 0 {
			continue
		}
		var pace func(context.Context) error
		if paced {
			pace = newPacer(w.settings.ScanRate).wait
		}
		ix, err := w.openIndex(ic, pace)
		if err != nil {
			closeAll(indexes)
			return nil, nil, err
		}
		indexes = append(indexes, ix)
		ls, err := ix.Layers(rules(ic))
		if err != nil {
			closeAll(indexes)
			return nil, nil, err
		}
		layers = append(layers, ls...)
	}
	return layers, indexes, nil
}
