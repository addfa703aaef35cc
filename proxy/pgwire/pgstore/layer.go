package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// Layer is one configured table as forget drives it (connector.Layer). The
// table need not exist: until it does it holds nothing, and the certificate
// says it did not exist. Its columns are read from the catalog when it is
// first found.
type Layer struct {
	store  *Store
	table  Table
	vacuum bool

	mu    sync.Mutex
	match *Match // nil while the table is not found
	// physical is the page scan to run after each forget, nil when off;
	// prints holds, by subject, the bytes it looks for (memory only).
	physical *PhysicalScan
	steps    PhysicalSteps
	prints   map[string]*fingerprint
	// rescanEvery is how often a scan that found residue is repeated, 0
	// for never; kept holds, by subject, the bytes those re-scans look for
	// (layerrescan.go).
	rescanEvery time.Duration
	kept        map[string]keptPrint
	// window is the table's physical_window: when set, vacuum and scrub
	// wait for a batch (layerbatch.go) instead of running in each forget.
	window time.Duration
}

// NewLayer prepares table for forget, checking its rule against the
// catalog when the table exists (Found). vacuum runs VACUUM (INDEX_CLEANUP
// ON) after each forget.
func NewLayer(ctx context.Context, store *Store, table Table, vacuum bool) (*Layer, error) {
	l := &Layer{store: store, table: table, vacuum: vacuum}
	if _, err := l.resolve(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

var _ connector.Layer = (*Layer)(nil)

func (l *Layer) Store() ledger.Store { return ledger.StorePostgres }
func (l *Layer) Name() string        { return l.table.String() }

// Found reports whether the table existed when forget last looked.
func (l *Layer) Found() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.match != nil
}

// resolve returns the table's match conditions, reading its columns from
// the catalog the first time the table is found; nil while it does not
// exist.
func (l *Layer) resolve(ctx context.Context) (*Match, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.match != nil {
		return l.match, nil
	}
	absent, err := l.store.Absent(ctx, l.table)
	if err != nil || absent {
		return nil, err
	}
	m, err := l.store.MatchFor(ctx, l.table)
	if errors.Is(err, connector.ErrAbsent) {
		return nil, nil // dropped since Absent looked
	}
	if err != nil {
		return nil, err
	}
	l.match = &m
	return l.match, nil
}

// gone forgets m after the store said the table no longer exists, so that
// the next resolve looks for it again (and reads the columns of a table
// created anew).
func (l *Layer) gone(m *Match) {
	l.mu.Lock()
	if l.match == m {
		l.match = nil
	}
	l.mu.Unlock()
}

// missing reports whether err says the table does not exist, forgetting m
// if so: a table that does not exist holds nothing.
func (l *Layer) missing(m *Match, err error) bool {
	if !errors.Is(err, connector.ErrAbsent) {
		return false
	}
	l.gone(m)
	return true
}

func (l *Layer) Matching(ctx context.Context, subject string, ids []string) ([]string, error) {
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		return nil, err
	}
	found, err := l.store.Matching(ctx, *m, subject, ids)
	if l.missing(m, err) {
		return nil, nil
	}
	return found, err
}

func (l *Layer) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		return nil, err
	}
	l.remember(ctx, m, subject, ids)
	deleted, err := l.store.Delete(ctx, *m, subject, ids, 0, beforeCommit)
	if l.missing(m, err) {
		return nil, nil
	}
	return deleted, err
}

const (
	verifyMethod = "re-query after commit: both counts must be 0; the first with $1 = the subject, " +
		"the second with $1 = the record ids the ledger holds for it"
	absentMethod = "the table did not exist when forget verified absence (the query returned true: " +
		"no relation of that name), so it held none of the subject's records and nothing was deleted from it"
)

// Residual counts the subject's rows still in the table; a table that does
// not exist holds none, and the Absence says it did not exist.
func (l *Layer) Residual(ctx context.Context, subject string, ids []string) (connector.Absence, error) {
	// The table may be dropped between looking it up and counting in it
	// (then it is looked for again), but not again and again.
	for range 3 {
		m, err := l.resolve(ctx)
		if err != nil {
			return connector.Absence{}, err
		}
		if m == nil {
			return connector.Absence{Method: absentMethod, Queries: []string{l.table.AbsentQuery()}}, nil
		}
		n, err := l.store.Residual(ctx, *m, subject, ids)
		if l.missing(m, err) {
			continue
		}
		if err != nil {
			return connector.Absence{}, err
		}
		return connector.Absence{Residual: n, Method: verifyMethod, Queries: m.CountQueries()}, nil
	}
	return connector.Absence{}, fmt.Errorf("pgvector: %s was dropped and created again while forget verified it; the request resumes later", l.table)
}

// Cleanup runs the rule's vacuum: true (VACUUM (INDEX_CLEANUP ON)) unless
// the layer's physical steps run that VACUUM themselves.
func (l *Layer) Cleanup(ctx context.Context) error {
	l.mu.Lock()
	stepsVacuum := l.physical != nil && l.steps.Vacuum
	l.mu.Unlock()
	if !l.vacuum || stepsVacuum {
		return nil
	}
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		return err
	}
	if err := l.store.Vacuum(ctx, l.table); !l.missing(m, err) {
		return err
	}
	return nil
}
