package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lethe-privacy/lethe/connector/pgvector"
	"github.com/lethe-privacy/lethe/ledger"
)

// Layer is one configured table (or namespace) of one store: everything
// forget does there. ids are the record ids the ledger holds for the
// subject in this layer.
type Layer interface {
	Store() ledger.Store
	Name() string // as the ledger names it: "public.docs"
	// Matching returns the ids of the subject's records present now.
	Matching(ctx context.Context, subject string, ids []string) ([]string, error)
	// Delete deletes them and returns the ids deleted; beforeCommit gets
	// the ids before the store commits (forget journals them there).
	Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error)
	// Residual counts the subject's records still present and says how,
	// for the certificate.
	Residual(ctx context.Context, subject string, ids []string) (Absence, error)
	// Cleanup physically removes what the delete left (VACUUM), when
	// configured; a no-op otherwise.
	Cleanup(ctx context.Context) error
}

// Absence is one verification of a layer: the subject's records still
// found, and how they were looked for (queries with placeholders, never
// values), as the certificate states it.
type Absence struct {
	Residual int64
	Method   string
	Queries  []string
}

// PGLayer is a pgvector table. The table need not exist: until it does it
// holds nothing, and the certificate says it did not exist. Its columns are
// read from the catalog when it is first found.
type PGLayer struct {
	store  *pgvector.Store
	table  pgvector.Table
	vacuum bool

	mu    sync.Mutex
	match *pgvector.Match // nil while the table is not found
}

// NewPGLayer prepares table for forget, checking its rule against the
// catalog when the table exists (Found). vacuum runs VACUUM (INDEX_CLEANUP
// ON) after each forget.
func NewPGLayer(ctx context.Context, store *pgvector.Store, table pgvector.Table, vacuum bool) (*PGLayer, error) {
	l := &PGLayer{store: store, table: table, vacuum: vacuum}
	if _, err := l.resolve(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *PGLayer) Store() ledger.Store { return ledger.StorePostgres }
func (l *PGLayer) Name() string        { return l.table.String() }

// Found reports whether the table existed when forget last looked.
func (l *PGLayer) Found() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.match != nil
}

// resolve returns the table's match conditions, reading its columns from
// the catalog the first time the table is found; nil while it does not
// exist.
func (l *PGLayer) resolve(ctx context.Context) (*pgvector.Match, error) {
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
	if errors.Is(err, pgvector.ErrNoTable) {
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
func (l *PGLayer) gone(m *pgvector.Match) {
	l.mu.Lock()
	if l.match == m {
		l.match = nil
	}
	l.mu.Unlock()
}

// missing reports whether err says the table does not exist, forgetting m
// if so: a table that does not exist holds nothing.
func (l *PGLayer) missing(m *pgvector.Match, err error) bool {
	if !errors.Is(err, pgvector.ErrNoTable) {
		return false
	}
	l.gone(m)
	return true
}

func (l *PGLayer) Matching(ctx context.Context, subject string, ids []string) ([]string, error) {
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

func (l *PGLayer) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	m, err := l.resolve(ctx)
	if err != nil || m == nil {
		return nil, err
	}
	deleted, err := l.store.Delete(ctx, *m, subject, ids, 0, beforeCommit)
	if l.missing(m, err) {
		return nil, nil
	}
	return deleted, err
}

const (
	pgVerifyMethod = "re-query after commit: both counts must be 0; the first with $1 = the subject, " +
		"the second with $1 = the record ids the ledger holds for it"
	pgAbsentMethod = "the table did not exist when forget verified absence (the query returned true: " +
		"no relation of that name), so it held none of the subject's records and nothing was deleted from it"
)

// Residual counts the subject's rows still in the table; a table that does
// not exist holds none, and the Absence says it did not exist.
func (l *PGLayer) Residual(ctx context.Context, subject string, ids []string) (Absence, error) {
	// The table may be dropped between looking it up and counting in it
	// (then it is looked for again), but not again and again.
	for range 3 {
		m, err := l.resolve(ctx)
		if err != nil {
			return Absence{}, err
		}
		if m == nil {
			return Absence{Method: pgAbsentMethod, Queries: []string{l.table.AbsentQuery()}}, nil
		}
		n, err := l.store.Residual(ctx, *m, subject, ids)
		if l.missing(m, err) {
			continue
		}
		if err != nil {
			return Absence{}, err
		}
		return Absence{Residual: n, Method: pgVerifyMethod, Queries: m.CountQueries()}, nil
	}
	return Absence{}, fmt.Errorf("engine: %s was dropped and created again while forget verified it; the request resumes later", l.table)
}

func (l *PGLayer) Cleanup(ctx context.Context) error {
	if !l.vacuum {
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
