package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/connector"
)

// PhysicalSteps is what a layer does to remove the bytes a delete left in
// the table's pages before its page scan states what is left (the table's
// physical: vacuum and scrub; docs/forget.md, "Reaching zero").
type PhysicalSteps struct {
	// Vacuum runs VACUUM (INDEX_CLEANUP ON) on the table before the scan:
	// dead tuples, HNSW elements and btree keys go; freed heap and TOAST
	// space keeps its bytes, and a GIN keeps its keys.
	Vacuum bool
	// Scrub, after that scan, rebuilds what still holds the bytes and
	// scans again: the table with VACUUM FULL when its heap or TOAST pages
	// hold them and all its relations together have at most
	// RewriteMaxPages pages (VACUUM FULL rebuilds the indexes too), else
	// each index holding them with REINDEX INDEX CONCURRENTLY.
	Scrub           bool
	RewriteMaxPages int64
}

// Name is the physical setting the steps carry out, as the config and
// the certificate's method spell it.
func (p PhysicalSteps) Name() string {
	switch {
	case p.Scrub:
		return "scrub"
	case p.Vacuum:
		return "vacuum"
	}
	return "report"
}

// rewriteLockTimeout bounds how long VACUUM FULL waits for its ACCESS
// EXCLUSIVE lock: while it waits, every later query on the table queues
// behind it, so a table busy with long transactions is left as it is and
// its residue stated instead.
const rewriteLockTimeout = "2s"

// ErrNotOwner is wrapped by a step the store role may not run: in
// PostgreSQL 15 only the table's owner (or a member of the owning role, or
// a superuser) may VACUUM it, rewrite it or REINDEX its indexes; the
// database's owner may VACUUM it too.
var ErrNotOwner = errors.New("the store role does not own the table")

// owners is who owns t and who the store role is (as identifiers, quoted
// where needed), and whether the store role acts as the table's owner or
// as the database's owner.
type owners struct {
	owner, role        string
	isOwner, isDBOwner bool
}

func (s *Store) owners(ctx context.Context, t Table) (owners, error) {
	var o owners
	err := s.pool.QueryRow(ctx, `
		SELECT (SELECT quote_ident(rolname) FROM pg_roles WHERE oid = c.relowner), quote_ident(current_user), pg_has_role(c.relowner, 'USAGE'),
			pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
		FROM pg_class c WHERE c.oid = to_regclass($1)`, t.ident()).Scan(&o.owner, &o.role, &o.isOwner, &o.isDBOwner)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, fmt.Errorf("pgvector store: %s: %w", t, connector.ErrAbsent)
	}
	if err != nil {
		return o, fmt.Errorf("pgvector store: finding the owner of %s: %w", t, serverError(err))
	}
	return o, nil
}

// notOwner says which grant lets the store role run step on t.
func (o owners) notOwner(step string, t Table) error {
	return fmt.Errorf("%s: %w: %s is owned by %s and the store role %s is not a member of it; "+
		"GRANT %s TO %s (or ALTER TABLE %s OWNER TO %s)", step, ErrNotOwner, t, o.owner, o.role,
		o.owner, o.role, t.ident(), o.role)
}

// stepLog is what ran of a layer's physical steps, in the words the
// certificate's method uses.
type stepLog []string

func (l *stepLog) ran(statement string, began time.Time) {
	*l = append(*l, fmt.Sprintf("%s (%d ms)", statement, time.Since(began).Milliseconds()))
}

func (l *stepLog) notPossible(statement string, err error) {
	*l = append(*l, fmt.Sprintf("%s: not possible: %v", statement, err))
}

// vacuumStep runs VACUUM (INDEX_CLEANUP ON) on t. VACUUM of a table the
// role does not own only warns, so ownership is checked first.
func (s *Store) vacuumStep(ctx context.Context, t Table, log *stepLog) {
	stmt := t.VacuumStatement()
	o, err := s.owners(ctx, t)
	if err == nil && !o.isOwner && !o.isDBOwner {
		err = o.notOwner("VACUUM", t)
	}
	if err == nil {
		began := time.Now()
		if err = s.Vacuum(ctx, t); err == nil {
			log.ran(stmt, began)
			return
		}
	}
	log.notPossible(stmt, err)
}

// scrubStep rebuilds what first still holds the bytes: the whole table
// when its heap or TOAST pages hold them and it is small enough, else each
// index holding them. It reports whether anything was rebuilt.
func (s *Store) scrubStep(ctx context.Context, t Table, first *connector.Physical, maxPages int64, log *stepLog) bool {
	var total int64
	heapHolds := false
	var indexes []string
	for _, r := range first.Relations {
		total += r.Pages
		switch {
		case r.Holding == 0:
		case r.Kind == "heap" || r.Kind == "toast":
			heapHolds = true
		default:
			indexes = append(indexes, r.Relation)
		}
	}
	o, err := s.owners(ctx, t)
	if err != nil {
		log.notPossible("scrub", err)
		return false
	}
	if heapHolds {
		stmt := "VACUUM FULL " + t.ident()
		switch {
		case total > maxPages:
			*log = append(*log, fmt.Sprintf("%s: not run: the table, its TOAST table and indexes have %d pages, over "+
				"scrub_rewrite_max_pages %d (VACUUM FULL holds an ACCESS EXCLUSIVE lock while it rewrites them); "+
				"raise it to rewrite the table at the next forget", stmt, total, maxPages))
		case !o.isOwner && !o.isDBOwner:
			log.notPossible(stmt, o.notOwner("VACUUM FULL", t))
		default:
			began := time.Now()
			if err := s.rewrite(ctx, t); err != nil {
				log.notPossible(stmt, err)
			} else {
				// VACUUM FULL rebuilt every index too.
				log.ran(stmt+" (lock_timeout "+rewriteLockTimeout+"; it rebuilt every index)", began)
				return true
			}
		}
	}
	rebuilt := false
	for _, ix := range indexes {
		stmt := "REINDEX INDEX CONCURRENTLY " + ix
		if !o.isOwner {
			log.notPossible(stmt, o.notOwner("REINDEX", t))
			continue
		}
		began := time.Now()
		if err := s.reindex(ctx, ix); err != nil {
			log.notPossible(stmt, err)
			continue
		}
		log.ran(stmt, began)
		rebuilt = true
	}
	return rebuilt
}

// rewrite runs VACUUM FULL on t on one connection with a lock timeout,
// which it resets before the connection goes back to the pool.
func (s *Store) rewrite(ctx context.Context, t Table) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgvector store: %w", serverError(err))
	}
	defer c.Release()
	if _, err := c.Exec(ctx, "SET lock_timeout = '"+rewriteLockTimeout+"'"); err != nil {
		return fmt.Errorf("pgvector store: %w", serverError(err))
	}
	_, err = c.Exec(ctx, "VACUUM FULL "+t.ident())
	if _, rerr := c.Exec(context.WithoutCancel(ctx), "RESET lock_timeout"); rerr != nil {
		// A connection whose setting could not be reset is not reused.
		c.Conn().Close(context.WithoutCancel(ctx))
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55P03" {
		return fmt.Errorf("the ACCESS EXCLUSIVE lock was not granted within %s (other transactions hold the table); "+
			"the residue stays until a later forget rewrites it", rewriteLockTimeout)
	}
	if err != nil {
		return fmt.Errorf("pgvector store: rewriting %s: %w", t, noTable(serverError(err)))
	}
	return nil
}

// reindex rebuilds the index named ix (as the catalog prints it) into a
// new file without blocking reads or writes. A REINDEX CONCURRENTLY that
// fails part way leaves an invalid copy (<name>_ccnew), which is dropped.
func (s *Store) reindex(ctx context.Context, ix string) error {
	_, err := s.pool.Exec(ctx, "REINDEX INDEX CONCURRENTLY "+ix)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("pgvector store: rebuilding %s: %w", ix, serverError(err))
	var leftover []string
	rows, qerr := s.pool.Query(context.WithoutCancel(ctx), `
		WITH b AS (SELECT relname::text AS base FROM pg_class WHERE oid = to_regclass($1))
		SELECT i.indexrelid::regclass::text FROM b, pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE NOT i.indisvalid AND i.indrelid = (SELECT indrelid FROM pg_index WHERE indexrelid = to_regclass($1))
		  AND left(c.relname, length(b.base) + 6) = b.base || '_ccnew' AND substr(c.relname, length(b.base) + 7) ~ '^[0-9]*$'`, ix)
	if qerr == nil {
		leftover, qerr = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	for _, name := range leftover {
		if _, derr := s.pool.Exec(context.WithoutCancel(ctx), "DROP INDEX CONCURRENTLY IF EXISTS "+name); derr != nil {
			qerr = derr
		}
	}
	if qerr != nil {
		err = fmt.Errorf("%w; dropping the invalid copy it left failed too (%v): drop the index named %s_ccnew by hand",
			err, serverError(qerr), strings.TrimSuffix(ix, `"`))
	}
	return err
}

// physicalStep runs steps, scans t's pages for f's bytes, and for scrub
// rebuilds what still holds them and scans again. The result's method
// names the setting and every step with how it went.
func (s *Store) physicalStep(ctx context.Context, t Table, scan PhysicalScan, steps PhysicalSteps, f *fingerprint) *connector.Physical {
	return s.physicalSteps(ctx, t, scan, steps, []*fingerprint{f})[0]
}
