package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-privacy/lethe/connector"
)

// Store is a connection pool to the vector store.
type Store struct {
	pool *pgxpool.Pool

	mu       sync.Mutex
	encoding string // server_encoding, once read ("" before)
}

// Open connects to the store at connString.
func Open(ctx context.Context, connString string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("pgvector store: %w", err)
	}
	// Forget's queries are one-off scans, for which JIT compilation costs
	// more than it saves.
	cfg.ConnConfig.RuntimeParams["jit"] = "off"
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "lethe"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgvector store: %w", serverError(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgvector store: %w", serverError(err))
	}
	return &Store{pool: pool}, nil
}

// WithConn calls fn with one of the store's connections, for callers that
// take a *pgx.Conn (the WAL follower's slot queries). The connection goes
// back to the pool: fn must leave no session state behind.
func (s *Store) WithConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgvector store: %w", serverError(err))
	}
	defer c.Release()
	return fn(c.Conn())
}

// Ping checks that the store answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pgvector store: %w", serverError(err))
	}
	return nil
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Existing returns which of ids exist in table (schema-qualified, as in the
// rules) by its id column, compared as text. A table that does not exist
// holds none of them: writes to it never committed, or went with it.
func (s *Store) Existing(ctx context.Context, table, idColumn string, ids []string) (map[string]bool, error) {
	schema, name, ok := strings.Cut(table, ".")
	if !ok {
		schema, name = "public", table
	}
	q := fmt.Sprintf("SELECT %[1]s::text FROM %[2]s WHERE %[1]s::text = ANY($1)",
		pgx.Identifier{idColumn}.Sanitize(), pgx.Identifier{schema, name}.Sanitize())
	rows, err := s.pool.Query(ctx, q, ids)
	var found []string
	if err == nil {
		found, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err = noTable(serverError(err)); errors.Is(err, connector.ErrAbsent) {
		return map[string]bool{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("pgvector store: checking %s: %w", table, err)
	}
	out := make(map[string]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
