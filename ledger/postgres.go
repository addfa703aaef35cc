package ledger

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the shared ledger: several proxies point at one database and
// keep their tags in one schema. The schema and state model are those of
// SQLite (see sqliteMigrations); a batch of writes is sent as one pipelined
// round trip and committed with synchronous_commit on (intents with
// synchronous_commit off when Options.IntentSync is IntentNoSync).
type Postgres struct {
	writes
	pool       *pgxpool.Pool
	schemaName string
	schema     string // schemaName as a quoted identifier
	owner      pgOwner
	intentSync syncPolicy
}

var _ Ledger = (*Postgres)(nil)

// OpenPostgres connects to connString and brings the ledger schema
// (Options.Schema, default "lethe_ledger") up to date. Several proxies may
// open the same ledger at once: migrations are serialised by an advisory
// lock.
func OpenPostgres(ctx context.Context, connString string, opts Options) (*Postgres, error) {
	if opts.renewInterval() >= opts.leaseDuration() {
		return nil, fmt.Errorf("ledger: RenewInterval (%s) must be shorter than LeaseDuration (%s), or the lease lapses between renewals",
			opts.renewInterval(), opts.leaseDuration())
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("ledger: bad PostgreSQL connection string: %w", err)
	}
	// Every session of this pool writes the ledger: an intent must be on
	// disk (and on synchronous standbys) before Intend returns, whatever
	// the server's or role's default is.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "lethe-ledger"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to PostgreSQL ledger: %w", ErrUnavailable, err)
	}
	l := &Postgres{pool: pool, schemaName: opts.schema(), schema: pgx.Identifier{opts.schema()}.Sanitize(), intentSync: opts.intentSync()}
	if err := l.migrate(ctx, opts.schema()); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: PostgreSQL ledger schema %q: %w", ErrUnavailable, opts.schema(), err)
	}
	if err := l.register(ctx, opts); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: PostgreSQL ledger schema %q: registering this handle: %w", ErrUnavailable, opts.schema(), err)
	}
	l.decisions = newCommitter(l.writeBatch, opts)
	l.decisions.fence = l.owner.lease.check
	go l.renewLoop()
	return l, nil
}

// pgMigrations mirror sqliteMigrations; "%[1]s" is the quoted schema.
var pgMigrations = []string{`
CREATE TABLE %[1]s.intents (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	created_at timestamptz NOT NULL,
	state      text NOT NULL CHECK (state IN ('pending', 'confirmed', 'dropped'))
);
CREATE INDEX intents_pending ON %[1]s.intents (id) WHERE state = 'pending';

CREATE TABLE %[1]s.intent_entries (
	intent_id    bigint NOT NULL REFERENCES %[1]s.intents (id),
	seq          integer NOT NULL,
	store        text NOT NULL,
	tbl          text NOT NULL,
	record_id    text NOT NULL,
	subject      bytea NOT NULL CHECK (octet_length(subject) = 32),
	unattributed boolean NOT NULL,
	PRIMARY KEY (intent_id, seq)
);
CREATE INDEX intent_entries_subject ON %[1]s.intent_entries (subject);

CREATE TABLE %[1]s.entries (
	store        text NOT NULL,
	tbl          text NOT NULL,
	record_id    text NOT NULL,
	subject      bytea NOT NULL CHECK (octet_length(subject) = 32),
	unattributed boolean NOT NULL,
	state        text NOT NULL CHECK (state IN ('confirmed', 'deleted')),
	intent_id    bigint NOT NULL,
	updated_at   timestamptz NOT NULL,
	PRIMARY KEY (store, tbl, record_id, subject, unattributed)
);
CREATE INDEX entries_subject ON %[1]s.entries (subject);
`, `
-- A pending intent's entries are parallel arrays on its intents row, NULL
-- once it is resolved: Intend writes one row, not one indexed row per
-- entry, and Confirm still expands them in SQL (unnest). Intents pending
-- at upgrade are converted, then intent_entries is dropped, so that a
-- proxy of an older build sharing the ledger fails closed rather than
-- writing entries no one reads.
ALTER TABLE %[1]s.intents
	ADD COLUMN e_store text[],
	ADD COLUMN e_tbl text[],
	ADD COLUMN e_record_id text[],
	ADD COLUMN e_subject bytea[],
	ADD COLUMN e_unattributed boolean[];
UPDATE %[1]s.intents i SET (e_store, e_tbl, e_record_id, e_subject, e_unattributed) = (
	SELECT array_agg(e.store ORDER BY e.seq), array_agg(e.tbl ORDER BY e.seq), array_agg(e.record_id ORDER BY e.seq),
		array_agg(e.subject ORDER BY e.seq), array_agg(e.unattributed ORDER BY e.seq)
	FROM %[1]s.intent_entries e WHERE e.intent_id = i.id)
WHERE i.id IN (SELECT intent_id FROM %[1]s.intent_entries);
DROP TABLE %[1]s.intent_entries;
`, `
CREATE TABLE %[1]s.forget_requests (
	id          text PRIMARY KEY,
	subject     bytea NOT NULL CHECK (octet_length(subject) = 32),
	token_hash  bytea NOT NULL UNIQUE,
	received_at timestamptz NOT NULL,
	deadline    timestamptz NOT NULL,
	status      text NOT NULL CHECK (status IN ('received', 'completed', 'failed')),
	state       bytea NOT NULL,
	certificate bytea,
	lease_owner text,
	lease_until timestamptz,
	updated_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX forget_requests_one_open ON %[1]s.forget_requests (subject) WHERE status = 'received';
CREATE INDEX forget_requests_subject ON %[1]s.forget_requests (subject);

CREATE TABLE %[1]s.tombstones (
	subject    bytea PRIMARY KEY CHECK (octet_length(subject) = 32),
	request_id text NOT NULL,
	created_at timestamptz NOT NULL
);

CREATE TABLE %[1]s.tlog_records (
	idx  bigint PRIMARY KEY,
	data bytea NOT NULL
);
CREATE TABLE %[1]s.tlog_hashes (
	idx  bigint PRIMARY KEY,
	hash bytea NOT NULL CHECK (octet_length(hash) = 32)
);
CREATE TABLE %[1]s.tlog_checkpoints (
	size bigint PRIMARY KEY,
	note bytea NOT NULL
);
`, `
-- Owners (see owners.go): each handle registers at open, renews
-- lease_until (the server's clock) in the background and deletes its row
-- at Close. A handle whose lease has expired is gone.
CREATE TABLE %[1]s.owners (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name        text NOT NULL,
	started_at  timestamptz NOT NULL,
	lease_until timestamptz NOT NULL
);
-- The handle that made the intent; NULL for intents from before version
-- 4 (orphans once older than a lease, see PendingOrphans). A column with
-- no default is added without rewriting the table.
ALTER TABLE %[1]s.intents ADD COLUMN owner_id bigint;
-- A proxy of an older build still running against the upgraded ledger
-- would make intents with no owner, which no one could tell from a dead
-- proxy's: its intents are refused, so it fails closed (SQLSTATE LT002)
-- until it is upgraded. NOT VALID: the rows from before keep their NULL
-- owner; new and updated rows are checked.
ALTER TABLE %[1]s.intents ADD CONSTRAINT intents_owned CHECK (owner_id IS NOT NULL OR state <> 'pending') NOT VALID;
`, `
-- Late writes (see LateWrite): rows about a forgotten subject committed
-- after its forget, deleted by the WAL follower's backstop.
CREATE TABLE %[1]s.late_writes (
	request_id text NOT NULL,
	at         timestamptz NOT NULL,
	store      text NOT NULL,
	tbl        text NOT NULL,
	deleted    bigint NOT NULL,
	residual   bigint NOT NULL,
	log_index  bigint NOT NULL
);
CREATE INDEX late_writes_request ON %[1]s.late_writes (request_id);
`, `
-- The keyed fingerprint of the subject salt the ledger is written with
-- (see salt.go), never the salt: one row, recorded by the first command
-- that writes subject hashes. Every proxy sharing the ledger must use the
-- salt it names.
CREATE TABLE %[1]s.subject_salt (
	id          smallint PRIMARY KEY CHECK (id = 1),
	fingerprint bytea NOT NULL CHECK (octet_length(fingerprint) = 32),
	recorded_at timestamptz NOT NULL
);
`, `
-- The replication slots whose initial read (the rows the configured tables
-- held when the slot was created) is durable in this ledger (see
-- initialread.go): a slot without its row here is read again.
CREATE TABLE %[1]s.initial_reads (
	system_id text NOT NULL, -- the server's system identifier
	database  text NOT NULL,
	slot      text NOT NULL,
	done_at   timestamptz NOT NULL,
	PRIMARY KEY (system_id, database, slot)
);
`, storeSeenPostgres + `;
` + postgresAddendaTable + `;
`}

// migrationLockKey is the advisory lock key for schema's migrations, so
// that ledgers in different schemas of one database do not wait on each
// other.
func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("lethe-ledger-migrate:" + schema))
	return int64(h.Sum64())
}

func (l *Postgres) migrate(ctx context.Context, schema string) error {
	return l.migrateTo(ctx, schema, len(pgMigrations))
}

// migrateTo brings the schema to version n (tests make old versions with
// it).
func (l *Postgres) migrateTo(ctx context.Context, schema string, n int) error {
	return pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		// Held to the end of the transaction: proxies starting together
		// migrate one after the other, and the later ones find it done.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey(schema)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+l.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+l.schema+`.schema_version (version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+l.schema+`.schema_version`).Scan(&v); err != nil {
			return err
		}
		if v > len(pgMigrations) {
			return fmt.Errorf("schema version %d is newer than this build knows (%d); upgrade lethe", v, len(pgMigrations))
		}
		for i := v; i < n; i++ {
			if _, err := tx.Exec(ctx, fmt.Sprintf(pgMigrations[i], l.schema)); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if v < n {
			if _, err := tx.Exec(ctx, `DELETE FROM `+l.schema+`.schema_version`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+l.schema+`.schema_version (version) VALUES ($1)`, n); err != nil {
				return err
			}
		}
		return nil
	})
}

// q expands the schema placeholder "ledger." in a query.
func (l *Postgres) q(sql string) string {
	return strings.ReplaceAll(sql, "ledger.", l.schema+".")
}

// writeBatch sends batch as one pipeline in one transaction, then commits.
func (l *Postgres) writeBatch(ctx context.Context, now time.Time, batch []*request) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())

	var b pgx.Batch
	// As in SQLite: a decision lost to a crash of the ledger server
	// leaves its intent pending, which is safe; only intents must be
	// flushed before the proxy forwards a write, and not even those
	// IntentNoSync covers (syncPolicy).
	relaxed := !l.intentSync.durable(batch)
	if relaxed {
		b.Queue("SET LOCAL synchronous_commit = off")
	}
	steps := pgSteps(batch)
	for _, step := range steps {
		if len(step) > 1 {
			l.queueConfirmRun(&b, now, step)
		} else {
			l.queue(&b, now, step[0])
		}
	}
	res := tx.SendBatch(ctx, &b)
	if relaxed {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return err
		}
	}
	for _, step := range steps {
		var err error
		if len(step) > 1 {
			err = readConfirmRun(res, step)
		} else {
			err = l.readResult(res, step[0])
		}
		if err != nil {
			res.Close()
			return err
		}
	}
	if err := res.Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Each request is one statement, so that a batch is one round trip.
//
// Confirm and Drop lock the intent's row first (CTE o) and report the
// state that lock returns. Under READ COMMITTED, FOR UPDATE waits for a
// concurrent Confirm or Drop of the same intent (two proxies recovering
// one orphan) and returns the row as that one left it, whereas the
// statement's snapshot would still show it pending: so the loser learns
// that the intent was resolved the other way (ErrUnknownIntent,
// ErrIntentConfirmed) instead of being told it succeeded.
const (
	pgIntend = `
INSERT INTO ledger.intents (created_at, state, e_store, e_tbl, e_record_id, e_subject, e_unattributed, owner_id)
VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7)
RETURNING id`

	pgConfirm = `
WITH o AS (
	SELECT id, state, e_store, e_tbl, e_record_id, e_subject, e_unattributed
	FROM ledger.intents WHERE id = $1 FOR UPDATE
), i AS (
	-- Joining o hands RETURNING the arrays as they were before the
	-- update clears them.
	UPDATE ledger.intents n SET state = 'confirmed',
		e_store = NULL, e_tbl = NULL, e_record_id = NULL, e_subject = NULL, e_unattributed = NULL
	FROM o WHERE n.id = o.id AND o.state = 'pending'
	RETURNING o.*
), moved AS (
	SELECT u.store, u.tbl, u.record_id, u.subject, u.unattributed, i.id AS intent_id
	FROM i, unnest(i.e_store, i.e_tbl, i.e_record_id, i.e_subject, i.e_unattributed)
		AS u (store, tbl, record_id, subject, unattributed)
), up AS (
	INSERT INTO ledger.entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at)
	-- DISTINCT ON: one intent may name the same record and subject twice,
	-- and ON CONFLICT may not touch a row twice in one statement.
	SELECT DISTINCT ON (store, tbl, record_id, subject, unattributed)
		store, tbl, record_id, subject, unattributed, 'confirmed', intent_id, $2
	FROM moved
	ON CONFLICT (store, tbl, record_id, subject, unattributed) DO UPDATE SET
		state = 'confirmed', intent_id = excluded.intent_id, updated_at = excluded.updated_at
)
SELECT coalesce((SELECT state FROM o), '')`

	pgDrop = `
WITH o AS (
	SELECT id, state FROM ledger.intents WHERE id = $1 FOR UPDATE
), i AS (
	UPDATE ledger.intents n SET state = 'dropped',
		e_store = NULL, e_tbl = NULL, e_record_id = NULL, e_subject = NULL, e_unattributed = NULL
	FROM o WHERE n.id = o.id AND o.state = 'pending'
)
SELECT coalesce((SELECT state FROM o), '')`

	pgMarkDeleted = `
UPDATE ledger.entries SET state = 'deleted', updated_at = $1
WHERE store = $2 AND tbl = $3 AND record_id = ANY($4) AND state <> 'deleted'`

	pgMarkTableDeleted = `
UPDATE ledger.entries SET state = 'deleted', updated_at = $1
WHERE store = $2 AND tbl = $3 AND state <> 'deleted'`
)

func (l *Postgres) queue(b *pgx.Batch, now time.Time, r *request) {
	switch r.kind {
	case opIntend:
		n := len(r.entries)
		stores, tbls, ids := make([]string, n), make([]string, n), make([]string, n)
		subjects, unattributed := make([][]byte, n), make([]bool, n)
		for i, e := range r.entries {
			stores[i], tbls[i], ids[i] = string(e.Store), e.Table, e.RecordID
			subjects[i], unattributed[i] = append([]byte(nil), e.Subject[:]...), e.Unattributed
		}
		b.Queue(l.q(pgIntend), now, stores, tbls, ids, subjects, unattributed, l.owner.id)
	case opConfirm:
		b.Queue(l.q(pgConfirm), int64(r.intent), now)
	case opDrop:
		b.Queue(l.q(pgDrop), int64(r.intent))
	case opMarkDeleted:
		b.Queue(l.q(pgMarkDeleted), now, string(r.store), r.table, r.recordIDs)
	case opMarkTableDeleted:
		b.Queue(l.q(pgMarkTableDeleted), now, string(r.store), r.table)
	case opMarkDeletedUnlessConfirmedSince:
		l.queueMarkDeletedUnlessConfirmedSince(b, now, r)
	}
}

func (l *Postgres) readResult(res pgx.BatchResults, r *request) error {
	switch r.kind {
	case opIntend:
		var id int64
		if err := res.QueryRow().Scan(&id); err != nil {
			return err
		}
		r.id = IntentID(id)
	case opConfirm, opDrop:
		var prior string
		if err := res.QueryRow().Scan(&prior); err != nil {
			return err
		}
		if prior != intentPending {
			r.opErr = resolveErr(r.kind, prior)
		}
	case opMarkDeleted, opMarkTableDeleted:
		if _, err := res.Exec(); err != nil {
			return err
		}
	case opMarkDeletedUnlessConfirmedSince:
		return readMarked(res, r)
	default:
		return errors.New("ledger: unknown request kind")
	}
	return nil
}

// Pending returns intents not yet confirmed or dropped, oldest first.
func (l *Postgres) Pending(ctx context.Context) ([]Intent, error) {
	return l.pending(ctx, "")
}

// pending returns the pending intents that also match cond (SQL over
// intents i and owners o, which are LEFT JOINed), oldest first.
func (l *Postgres) pending(ctx context.Context, cond string, args ...any) ([]Intent, error) {
	join, where := "", ""
	if cond != "" {
		join, where = "LEFT JOIN ledger.owners o ON o.id = i.owner_id", "AND ("+cond+")"
	}
	rows, err := l.pool.Query(ctx, l.q(`
		SELECT i.id, i.created_at, e.store, e.tbl, e.record_id, e.subject, e.unattributed
		FROM ledger.intents i `+join+`
		LEFT JOIN LATERAL unnest(i.e_store, i.e_tbl, i.e_record_id, i.e_subject, i.e_unattributed)
			WITH ORDINALITY AS e (store, tbl, record_id, subject, unattributed, seq) ON true
		WHERE i.state = 'pending' `+where+`
		ORDER BY i.id, e.seq`), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		var (
			id           int64
			created      time.Time
			store, tbl   *string
			recordID     *string
			subject      []byte
			unattributed *bool
		)
		if err := rows.Scan(&id, &created, &store, &tbl, &recordID, &subject, &unattributed); err != nil {
			return nil, unavailable(err)
		}
		if len(out) == 0 || out[len(out)-1].ID != IntentID(id) {
			out = append(out, Intent{ID: IntentID(id), CreatedAt: created.UTC()})
		}
		if store == nil { // an intent with no entries
			continue
		}
		e := Entry{Store: Store(*store), Table: *tbl, RecordID: *recordID, Unattributed: *unattributed}
		copy(e.Subject[:], subject)
		out[len(out)-1].Entries = append(out[len(out)-1].Entries, e)
	}
	return out, unavailable(rows.Err())
}

// BySubject returns every record about subject: confirmed and deleted ones
// from entries (indexed), pending ones from the arrays of the intents
// still open. The latter unnests every pending intent (found through the
// intents_pending index) per lookup; pending intents live for the
// duration of one write statement, so there are few of them.
func (l *Postgres) BySubject(ctx context.Context, subject SubjectHash) ([]Record, error) {
	rows, err := l.pool.Query(ctx, l.q(`
		SELECT store, tbl, record_id, unattributed, state, intent_id, updated_at
		FROM ledger.entries WHERE subject = $1
		UNION ALL
		SELECT e.store, e.tbl, e.record_id, e.unattributed, 'pending', i.id, i.created_at
		FROM ledger.intents i, unnest(i.e_store, i.e_tbl, i.e_record_id, i.e_subject, i.e_unattributed)
			AS e (store, tbl, record_id, subject, unattributed)
		WHERE i.state = 'pending' AND e.subject = $1
		ORDER BY 1, 2, 3, 6`), subject[:])
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var (
			rec     Record
			store   string
			state   string
			intent  int64
			updated time.Time
		)
		if err := rows.Scan(&store, &rec.Table, &rec.RecordID, &rec.Unattributed, &state, &intent, &updated); err != nil {
			return nil, unavailable(err)
		}
		rec.Store, rec.Subject, rec.State, rec.Intent = Store(store), subject, State(state), IntentID(intent)
		rec.UpdatedAt = updated.UTC()
		out = append(out, rec)
	}
	return out, unavailable(rows.Err())
}

// Counts returns record counts per store, table and state.
func (l *Postgres) Counts(ctx context.Context) ([]TableCount, error) {
	rows, err := l.pool.Query(ctx, l.q(`
		SELECT store, tbl, state, count(*) FROM ledger.entries GROUP BY store, tbl, state
		UNION ALL
		SELECT e.store, e.tbl, 'pending', count(*)
		FROM ledger.intents i, unnest(i.e_store, i.e_tbl) AS e (store, tbl)
		WHERE i.state = 'pending' GROUP BY e.store, e.tbl
		ORDER BY 1, 2, 3`))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []TableCount
	for rows.Next() {
		var c TableCount
		var store, state string
		if err := rows.Scan(&store, &c.Table, &state, &c.Count); err != nil {
			return nil, unavailable(err)
		}
		c.Store, c.State = Store(store), State(state)
		out = append(out, c)
	}
	return out, unavailable(rows.Err())
}

// Close stops renewing the lease, commits the writes already submitted,
// removes this handle from the owners (what it left pending becomes an
// orphan at once), then closes the pool.
func (l *Postgres) Close() error {
	if l.decisions.isClosed() {
		return nil
	}
	l.owner.stopRenewing()
	l.decisions.close()
	l.unregister()
	l.pool.Close()
	return nil
}
