package engine

import (
	"context"

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
	// Residual counts the subject's records still present.
	Residual(ctx context.Context, subject string, ids []string) (int64, error)
	// VerifyMethod and VerifyQueries describe, for the certificate, how
	// absence was verified (queries with placeholders, never values).
	VerifyMethod() string
	VerifyQueries() []string
	// Cleanup physically removes what the delete left (VACUUM), when
	// configured; a no-op otherwise.
	Cleanup(ctx context.Context) error
}

// PGLayer is a pgvector table.
type PGLayer struct {
	store  *pgvector.Store
	table  pgvector.Table
	match  pgvector.Match
	vacuum bool
}

// NewPGLayer prepares table for forget, checking its rule against the
// catalog. vacuum runs VACUUM (INDEX_CLEANUP ON) after each forget.
func NewPGLayer(ctx context.Context, store *pgvector.Store, table pgvector.Table, vacuum bool) (*PGLayer, error) {
	m, err := store.MatchFor(ctx, table)
	if err != nil {
		return nil, err
	}
	return &PGLayer{store: store, table: table, match: m, vacuum: vacuum}, nil
}

func (l *PGLayer) Store() ledger.Store { return ledger.StorePostgres }
func (l *PGLayer) Name() string        { return l.table.String() }

func (l *PGLayer) Matching(ctx context.Context, subject string, ids []string) ([]string, error) {
	return l.store.Matching(ctx, l.match, subject, ids)
}

func (l *PGLayer) Delete(ctx context.Context, subject string, ids []string, beforeCommit func([]string) error) ([]string, error) {
	return l.store.Delete(ctx, l.match, subject, ids, 0, beforeCommit)
}

func (l *PGLayer) Residual(ctx context.Context, subject string, ids []string) (int64, error) {
	return l.store.Residual(ctx, l.match, subject, ids)
}

func (l *PGLayer) VerifyMethod() string {
	return "re-query after commit: both counts must be 0; the first with $1 = the subject, the second with $1 = the record ids the ledger holds for it"
}

func (l *PGLayer) VerifyQueries() []string { return l.match.CountQueries() }

func (l *PGLayer) Cleanup(ctx context.Context) error {
	if !l.vacuum {
		return nil
	}
	return l.store.Vacuum(ctx, l.table)
}
