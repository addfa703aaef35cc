package ledger

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/mod/sumdb/tlog"
)

// Location says where a ledger is: exactly one of a SQLite file or a
// PostgreSQL database.
type Location struct {
	SQLite   string // the ledger file's path
	Postgres string // a PostgreSQL connection string
}

// String names the ledger for messages: the file's path, or the
// PostgreSQL server and database, never the user or password of the
// connection string.
func (at Location) String() string {
	if at.Postgres == "" {
		return at.SQLite
	}
	c, err := pgconn.ParseConfig(at.Postgres)
	if err != nil {
		return "(PostgreSQL ledger: the connection string does not parse)"
	}
	host := c.Host
	if !strings.HasPrefix(host, "/") {
		host = net.JoinHostPort(host, fmt.Sprint(c.Port))
	}
	return fmt.Sprintf("postgres://%s/%s", host, c.Database)
}

// LogStorage is the transparency log's storage kept in the ledger's
// database: the contract of package tlog's Storage, written with
// golang.org/x/mod/sumdb/tlog's types so that this package need not import
// ours (see tlogstore.go).
type LogStorage interface {
	Append(ctx context.Context, record []byte, hashes func(n int64, r tlog.HashReader) ([]tlog.Hash, error)) (int64, error)
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	ReadRecord(ctx context.Context, n int64) ([]byte, error)
	Size(ctx context.Context) (int64, error)
	PutCheckpoint(ctx context.Context, size int64, note []byte) error
	Checkpoint(ctx context.Context, size int64) ([]byte, error)
	LatestCheckpoint(ctx context.Context) (int64, []byte, error)
}

// capabilities is everything both backends do; a Handle offers all of it.
type capabilities interface {
	Ledger          // tags and intents
	Journal         // forget requests and tombstones
	Observer        // the WAL follower's facts and its slots' initial reads
	Holder          // which facts the ledger holds (reconcile)
	Settler         // a table's present records, settled after a delete by filter
	SaltKeeper      // the subject salt's fingerprint
	PhysicalAddenda // later re-scans of completed forgets (physicaladdendum.go)
	logStorage() LogStorage
}

func (l *SQLite) logStorage() LogStorage   { return l.TransparencyLog() }
func (l *Postgres) logStorage() LogStorage { return l.TransparencyLog() }

var (
	_ capabilities = (*SQLite)(nil)
	_ capabilities = (*Postgres)(nil)
)

// Handle is an open ledger, whichever backend holds it: the tags and
// intents (Ledger), forget's journal and tombstones (Journal), the WAL
// follower's facts and initial-read marks (Observer), reconcile's lookups
// (Holder), the settling of deletes by filter (Settler), the subject
// salt's fingerprint (SaltKeeper) and the transparency log's storage
// (TransparencyLog). Consumers declare the
// narrow interface they need; a *Handle satisfies each. It is safe for
// concurrent use.
type Handle struct {
	capabilities          // the backend: *SQLite or *Postgres
	location     Location // where it is, for messages
}

// ErrNoLocation is returned by Open for a Location that names no ledger
// or both kinds.
var ErrNoLocation = errors.New("ledger: give exactly one of a SQLite file or a PostgreSQL connection string")

// Open opens (creating or migrating as needed) the ledger at at: a SQLite
// file (OpenSQLite) or a PostgreSQL database (OpenPostgres).
func Open(ctx context.Context, at Location, opts Options) (*Handle, error) {
	var (
		b   capabilities
		err error
	)
	switch {
	case (at.SQLite == "") == (at.Postgres == ""):
		return nil, ErrNoLocation
	case at.Postgres != "":
		var p *Postgres
		if p, err = OpenPostgres(ctx, at.Postgres, opts); err == nil {
			b = p
		}
	default:
		var s *SQLite
		if s, err = OpenSQLite(at.SQLite, opts); err == nil {
			b = s
		}
	}
	if err != nil {
		return nil, err
	}
	return &Handle{capabilities: b, location: at}, nil
}

// Location is where the ledger is.
func (h *Handle) Location() Location { return h.location }

// TransparencyLog is the transparency log's storage in the ledger's
// database.
func (h *Handle) TransparencyLog() LogStorage { return h.logStorage() }
