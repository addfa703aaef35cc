package pgcapture

import (
	"sync"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// prepared is what capture knows of one prepared statement.
type prepared struct {
	eff effect
	// sql is the text of a statement that names a configured table, ""
	// for others. Which table it writes depends on search_path when it is
	// bound: PostgreSQL re-analyses a statement bound under another path.
	sql      string
	paths    string // the key of the search_paths the analyses resolved names under
	analyses []*extract.Analysis
	types    []uint32
	refusal  *pgwire.Refusal // refused: every execution is refused too
	bare     *portal         // the portal of any Bind of it, when it writes nothing of ours
}

// plain stands for every statement that names no configured table and
// has no effect on the transaction or search_path, and for statements
// unknown to capture (the server reports those). It is shared and never
// modified, so the common Parse/Bind of other statements allocates
// nothing here.
var plain = newPlain(effect{})

func newPlain(e effect) *prepared {
	p := &prepared{eff: e}
	p.bare = &portal{stmt: p}
	return p
}

// analysisKey caches analyses by statement text and the search_paths
// unqualified names were resolved against.
type analysisKey struct{ paths, sql string }

// portal is a bound statement with the tags of its writes, computed at
// Bind while the parameters are in the relay's buffer, so that megabytes of
// vector parameters are never copied.
type portal struct {
	stmt *prepared
	tags [][]extract.Tag // per analysis (nil for COPY)
	err  error           // parameters that could not be read
}

// session follows one connection. The relay calls ClientMessage and
// ServerMessage from two goroutines; mu orders their use of the tracker.
type session struct {
	capture *capture.Capture
	// maxStatements bounds the statements in flight (limits.go).
	maxStatements int
	reset         []string             // what RESET search_path restores: the startup setting
	stmts         map[string]*prepared // by name; "" is the unnamed statement
	portals       portalBook           // portals.go
	byText        map[analysisKey]*prepared
	// rules are the rules stmts, byText and shapes were analysed with;
	// texts are the prepared statements' texts, to analyse them again when
	// the rules change (rules.go).
	rules  *extract.Rules
	shapes *extract.Shapes
	texts  map[string]stmtText

	copyDec  *extract.CopyDecoder
	copyReq  uint64 // the COPY statement in the tracker
	copyTags []extract.Tag

	// inflight are intents of forwarded writes still being made durable
	// (inflight.go); only the client-side goroutine touches the slice.
	inflight []*inflight
	// inBatch: extended-protocol messages were sent since the last Sync
	// (batch.go).
	inBatch bool
	// skipping: a statement was refused for crowding (limits.go) and the
	// server skips every message up to the next Sync, answering none: they
	// are not queued for the tracker either.
	skipping bool

	// reading follows how the server reads statement text (reading.go).
	reading textReading
	// exchanges pairs requests with their ReadyForQuery (exchanges.go).
	exchanges exchanges

	mu sync.Mutex
	tx *txTracker // the transaction and its search_path
	// ddl is DDL sent and not yet read from the catalog (ddl.go), under mu.
	ddl ddlFollower
	o   *Observer
}

func newSession(o *Observer, info pgwire.SessionInfo) *session {
	c := o.capture
	s := &session{
		capture: c, maxStatements: o.cfg.MaxStatementsInFlight, stmts: map[string]*prepared{}, portals: newPortalBook(), byText: map[analysisKey]*prepared{},
		reset: startupSearchPath(info.Parameters),
		rules: c.Rules(), texts: map[string]stmtText{}, o: o,
	}
	s.shapes = s.rules.Shapes()
	s.tx = newTxTracker(c, s.reset)
	s.reading.start(info.ServerParameters)
	return s
}

func (s *session) Close() {
	s.dropInflight()
	s.lock(func() { s.tx.Abandon() })
}

func (s *session) lock(f func()) {
	s.mu.Lock()
	f()
	s.mu.Unlock()
}
