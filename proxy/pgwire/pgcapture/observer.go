package pgcapture

import (
	"sync/atomic"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// Config is what the PostgreSQL adapter adds to capture's configuration.
type Config struct {
	// Database is the database the rules' tables are in: sessions
	// connected to another database are not observed at all. Empty
	// observes every session.
	Database string
	// MaxStatementsInFlight bounds the statements one session may have
	// sent to the server and not yet had answered; more are refused with
	// SQLSTATE CodeTooManyInFlight (default DefaultMaxStatementsInFlight).
	MaxStatementsInFlight int
}

// Observer is the pgwire.Observer that records, through its Capture,
// every write to a configured table in the ledger before it is forwarded.
type Observer struct {
	capture *capture.Capture
	cfg     Config
	catalog atomic.Pointer[WriterCatalog]
}

// FollowCatalog has sessions read the catalog again through w after DDL
// passes through them, before their next statement is analysed (ddl.go).
// Without it, DDL is followed at w's next periodic read.
func (o *Observer) FollowCatalog(w *WriterCatalog) { o.catalog.Store(w) }

// New returns the Observer of the relay's sessions that records their
// writes with c. Closing c (Close, Shutdown) is the caller's.
func New(c *capture.Capture, cfg Config) *Observer {
	if cfg.MaxStatementsInFlight <= 0 {
		cfg.MaxStatementsInFlight = DefaultMaxStatementsInFlight
	}
	return &Observer{capture: c, cfg: cfg}
}

// Open starts observing one session, or returns nil (the relay then
// passes the session's bytes untouched) when it is connected to a database
// other than Config.Database: a table name in the rules means that
// database's table, and the same name in another database is another table.
func (o *Observer) Open(info pgwire.SessionInfo) pgwire.Session {
	if o.cfg.Database != "" && sessionDatabase(info) != o.cfg.Database {
		return nil
	}
	return newSession(o, info)
}

// sessionDatabase is the database a session is connected to: its startup
// database parameter, or, when that is absent or empty, the user name, as
// PostgreSQL defaults it.
func sessionDatabase(info pgwire.SessionInfo) string {
	if info.Database != "" {
		return info.Database
	}
	return info.User
}

// wireRefusal is capture's refusal in the shape the relay reports: the
// codes are SQLSTATEs already, so the fields carry over as they are.
func wireRefusal(r *capture.Refusal) *pgwire.Refusal {
	if r == nil {
		return nil
	}
	return &pgwire.Refusal{Code: r.Code, Message: r.Message, Hint: r.Hint, LogReason: r.LogReason}
}
