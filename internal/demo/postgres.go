package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The PostgreSQL part of the demo: its table, replication slot and the
// environment variable naming the server.
const (
	DatabaseURLEnv = "DATABASE_URL"
	// Table is the demo's own table; a name no application uses, so that
	// the demo never writes to or drops a table it did not create.
	Table = "public.lethe_demo_memories"
	// Slot is the WAL follower's slot and publication name (capture.wal_slot),
	// not the README walkthrough's lethe_demo.
	Slot = "lethe_demo_memories"
	// filePostgres records what the demo made on the server, for --clean.
	filePostgres = "postgres.json"
)

// pgMade is what the demo created on the PostgreSQL server, kept in the
// state directory: --clean drops these and nothing else.
type pgMade struct {
	// Store is the server's URL without its password.
	Store     string `json:"store"`
	Table     bool   `json:"table"`
	Extension bool   `json:"extension"`
	Slot      bool   `json:"slot"`
}

// pgTarget is the server DATABASE_URL names, as the demo's configuration
// uses it.
type pgTarget struct {
	Store       string // DATABASE_URL without its password (capture.store)
	Password    string // given to the proxy through PGPASSWORD
	Upstream    string // host:port (postgres.upstream)
	UpstreamTLS string // disable | require | verify-full
	User        string
	Database    string
	// WAL is whether the WAL follower runs; WALOff says why not.
	WAL    bool
	WALOff string
}

// parseDatabaseURL reads a postgres:// URL into the demo's target.
func parseDatabaseURL(raw string) (pgTarget, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return pgTarget{}, fmt.Errorf("%s is not a postgres:// URL; set it as postgres://user:password@host:port/database", DatabaseURLEnv)
	}
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil {
		return pgTarget{}, fmt.Errorf("%s: %w", DatabaseURLEnv, err)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return pgTarget{}, fmt.Errorf("%s names a Unix socket; the demo's proxy needs a TCP host: postgres://user:password@127.0.0.1:5432/database", DatabaseURLEnv)
	}
	target := pgTarget{
		Upstream: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		User:     cfg.User, Database: cfg.Database, Password: cfg.Password,
		UpstreamTLS: "disable",
	}
	switch u.Query().Get("sslmode") {
	case "require":
		target.UpstreamTLS = "require"
	case "verify-ca", "verify-full":
		target.UpstreamTLS = "verify-full"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	target.Store = u.String()
	return target, nil
}

// walDecision says whether the WAL follower can run: it needs wal_level
// logical and a role with REPLICATION (or a superuser); otherwise the
// demo runs with capture.wal: off and says why.
func walDecision(walLevel string, canReplicate bool) (on bool, why string) {
	switch {
	case walLevel != "logical":
		return false, fmt.Sprintf("the server's wal_level is %s, not logical (ALTER SYSTEM SET wal_level = logical and a restart turn it on)", walLevel)
	case !canReplicate:
		return false, "the role has no REPLICATION (ALTER ROLE ... REPLICATION turns it on)"
	}
	return true, ""
}

// preparePostgres makes the demo's table (and the vector extension when
// the database lacks it), records what it made, and decides on the WAL
// follower. A table of the demo's name that an earlier run of this state
// directory did not make is refused, never reused.
func (s State) preparePostgres(ctx context.Context, raw string) (pgTarget, error) {
	target, err := parseDatabaseURL(raw)
	if err != nil {
		return target, err
	}
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return target, fmt.Errorf("connecting to the server %s names: %w; check it, or unset it for the Pinecone-only demo", DatabaseURLEnv, err)
	}
	defer conn.Close(ctx)
	made, err := s.readMade()
	if err != nil {
		return target, err
	}
	made.Store = target.Store
	var hasVector, available, tableExists, slotExists, canReplicate bool
	var walLevel string
	err = conn.QueryRow(ctx, `SELECT
	  EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
	  EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector'),
	  to_regclass($1) IS NOT NULL,
	  EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $2),
	  (SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user),
	  current_setting('wal_level')`, Table, Slot).Scan(&hasVector, &available, &tableExists, &slotExists, &canReplicate, &walLevel)
	if err != nil {
		return target, fmt.Errorf("reading the server's settings: %w", err)
	}
	if !hasVector {
		if !available {
			return target, fmt.Errorf("the server %s names has no pgvector (install it: https://github.com/pgvector/pgvector), or unset %s for the Pinecone-only demo", DatabaseURLEnv, DatabaseURLEnv)
		}
		if _, err := conn.Exec(ctx, "CREATE EXTENSION vector"); err != nil {
			return target, fmt.Errorf("creating the vector extension: %w; create it as a superuser (CREATE EXTENSION vector) and start again", err)
		}
		made.Extension = true
	}
	if tableExists && !made.Table {
		return target, fmt.Errorf("%s exists but this demo's state directory did not make it; the demo leaves it alone: drop it yourself, or use another database", Table)
	}
	if !tableExists {
		_, err := conn.Exec(ctx, `CREATE TABLE `+Table+` (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  content text NOT NULL,
  embedding vector(8) NOT NULL)`)
		if err != nil {
			return target, fmt.Errorf("creating %s: %w; the role needs CREATE on schema public", Table, err)
		}
		made.Table = true
	}
	target.WAL, target.WALOff = walDecision(walLevel, canReplicate)
	if target.WAL && slotExists && !made.Slot {
		target.WAL, target.WALOff = false, fmt.Sprintf("a replication slot %s exists that this demo's state directory did not make", Slot)
	}
	if target.WAL {
		made.Slot = true // the proxy makes it at its start
	}
	return target, s.writeMade(made)
}

func (s State) readMade() (pgMade, error) {
	var made pgMade
	b, err := os.ReadFile(s.Path(filePostgres))
	if errors.Is(err, fs.ErrNotExist) {
		return made, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &made)
	}
	if err != nil {
		return made, fmt.Errorf("reading %s: %w; remove it after dropping what it lists by hand", s.Path(filePostgres), err)
	}
	return made, nil
}

func (s State) writeMade(made pgMade) error {
	b, err := json.MarshalIndent(made, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.Path(filePostgres), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording what the demo made on the server: %w", err)
	}
	return nil
}
