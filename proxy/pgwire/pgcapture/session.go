package pgcapture

import (
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
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
	c *capture.Capture
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
	tx *txTracker // and the session's search_path, in tx.paths
	// ddl is DDL sent and not yet read from the catalog (ddl.go), under mu.
	ddl ddlFollower
	o   *Observer
}

func newSession(o *Observer, info pgwire.SessionInfo) *session {
	c := o.c
	s := &session{
		c: c, maxStatements: o.cfg.MaxStatementsInFlight, stmts: map[string]*prepared{}, portals: newPortalBook(), byText: map[analysisKey]*prepared{},
		reset: startupSearchPath(info.Parameters),
		rules: c.Rules(), texts: map[string]stmtText{}, o: o,
	}
	s.shapes = s.rules.Shapes()
	s.tx = newTxTracker(c, s.reset)
	s.reading.start(info.ServerParameters)
	return s
}

func (s *session) ClientMessage(m pgwire.Message) *pgwire.Refusal {
	s.followRules()
	unsettled := s.reading.clientMessage(m.Type, s.exchanges.open())
	switch m.Type {
	case 'P', 'B', 'D', 'E', 'C':
		s.inBatch = true
	case 'S':
		s.inBatch = false
	case 'Q', 'F':
		if s.inBatch {
			return queryInBatch
		}
	}
	if m.Type == 'Q' || m.Type == 'S' || m.Type == 'F' {
		defer s.exchanges.sent.Add(1) // after the message's DDL, if any, is noted
	}
	switch m.Type {
	case 'Q':
		q, err := m.Query()
		if err != nil {
			return nil // the server reports the malformed message
		}
		if r := s.settle(); r != nil {
			// The server answers the raise sent in the Query's place with
			// an error and ReadyForQuery: keep the tracker in step.
			s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
			return r
		}
		if r := s.crowded(); r != nil {
			s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
			return r
		}
		if r := s.misread(q, unsettled); r != nil {
			s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
			return r
		}
		return s.query(q)
	case 'P':
		p, err := m.Parse()
		if err != nil {
			return nil
		}
		if r := s.misread(p.Query, unsettled); r != nil {
			// The server never gets this statement: its Binds and
			// Executes are refused too, under any rules.
			st := newPlain(effect{})
			st.refusal = r
			s.stmts[p.Name] = st
			delete(s.texts, p.Name)
			return r
		}
		s.noteDDL(p.Query) // first, so that the statement is analysed once, under the rules that follow its DDL
		st := s.prepare(p.Query, p.ParameterOIDs)
		s.stmts[p.Name] = st
		s.texts[p.Name] = stmtText{p.Query, p.ParameterOIDs}
		return st.refusal
	case 'B':
		// Only the names first: most statements write nothing of ours, and
		// their parameters need not be decoded.
		portalName, stmtName, err := m.BindTarget()
		if err != nil {
			return nil
		}
		st := s.stmts[string(stmtName)]
		if st == nil {
			st = plain
		}
		if st.sql != "" {
			if now := s.underCurrentPath(st); now != st {
				st = now
				s.stmts[string(stmtName)] = now
			}
		}
		if len(st.analyses) == 0 {
			s.portals.bind(string(portalName), st.bare, s.exchanges.sent.Load())
			return nil
		}
		b, err := m.Bind()
		if err != nil {
			return nil
		}
		s.portals.bind(b.DestinationPortal, s.bind(st, b), s.exchanges.sent.Load())
	case 'E':
		e, err := m.Execute()
		if err != nil {
			return nil
		}
		return s.execute(s.portals.get(e.Portal))
	case 'S':
		s.skipping = false
		r := s.settle() // a refused Sync still goes, after the error
		s.lock(func() { s.tx.Sync() })
		return r
	case 'C':
		c, err := m.Close()
		if err != nil {
			return nil
		}
		if c.ObjectType == 'S' {
			delete(s.stmts, c.Name)
			delete(s.texts, c.Name)
		} else {
			s.portals.close(c.Name)
		}
	case 'd':
		return s.copyData(m.Body)
	case 'c':
		return s.copyDone()
	case 'f':
		s.copyDec, s.copyReq, s.copyTags = nil, 0, nil
	case 'F':
		// A function call by OID, answered by one ReadyForQuery. Outside
		// a batch no intent is in flight, so it can commit nothing
		// untracked; capture does not look inside it (docs/capture.md).
		s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
	}
	return nil
}

func (s *session) ServerMessage(m pgwire.Message) {
	s.reading.serverMessage(m) // before a ReadyForQuery is counted, so that the count implies its reports
	var answered uint64
	if m.Type == 'Z' {
		answered = s.exchanges.answered.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Type {
	case 'C':
		tag, _ := m.CommandTag()
		s.tx.Complete(tag)
	case 'I', 's':
		s.tx.Complete("")
	case 'E':
		s.tx.Error()
	case 'Z':
		st, err := m.TxStatus()
		if err == nil {
			s.tx.Ready(st)
			s.portals.ready(st, answered)
			s.ddlReady(st, answered, s.o.catalog.Load())
		}
	}
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

// maxCachedAnalyses bounds the per-connection cache of analyses, since a
// client may send endless distinct texts as unnamed statements.
const maxCachedAnalyses = 256

// prepare classifies a statement text and, when it names a configured
// table, analyses it under the search_paths it may be bound under now.
func (s *session) prepare(sql string, types []uint32) *prepared {
	e := s.effectOf(sql)
	if !s.rules.Mentions(sql) || readsOnly(sql) {
		if e.none() {
			return plain
		}
		return newPlain(e)
	}
	var key string
	var paths [][]string
	s.lock(func() { key, paths = s.tx.paths.candidates() })
	return s.analysed(sql, e, types, key, paths)
}

// underCurrentPath returns st analysed under the search_paths a Bind sent
// now may run under: st itself unless they changed since it was analysed.
func (s *session) underCurrentPath(st *prepared) *prepared {
	var key string
	var paths [][]string
	s.lock(func() { key, paths = s.tx.paths.candidates() })
	if key == st.paths {
		return st
	}
	return s.analysed(st.sql, st.eff, st.types, key, paths)
}

// analysed returns the analyses of sql under paths (named by key),
// computed once per connection.
func (s *session) analysed(sql string, e effect, types []uint32, key string, paths [][]string) *prepared {
	k := analysisKey{paths: key, sql: sql}
	if st, ok := s.byText[k]; ok && sameTypes(st.types, types) {
		return st
	}
	st := &prepared{eff: e, sql: sql, paths: key, types: append([]uint32(nil), types...)}
	st.bare = &portal{stmt: st}
	st.analyses, st.refusal = s.analyze(sql, paths)
	if len(s.byText) >= maxCachedAnalyses {
		clear(s.byText)
	}
	s.byText[k] = st
	return st
}

// analyze parses a statement that names a configured table, resolving
// unqualified names under each of paths, and refuses it when it writes a
// table no rule covers (coverage.mode enforce), or in strict mode when its
// writes cannot be attributed.
func (s *session) analyze(sql string, paths [][]string) ([]*extract.Analysis, *pgwire.Refusal) {
	as, err := s.shapes.AnalyzeUnder(sql, s.resolvable(paths))
	if err != nil {
		if s.c.Mode() == capture.Strict {
			return nil, s.refuseErr("it names a configured table but could not be parsed", err)
		}
		return nil, nil
	}
	for _, a := range as {
		// First: capture.mode has no say over coverage, and a write to an
		// uncovered table may resolve to a configured one too.
		if a.Kind == extract.KindUncovered {
			return nil, wireRefusal(s.c.RefuseUncovered(a.Table, a.Reason))
		}
	}
	for _, a := range as {
		if a.Kind == extract.KindUnattributed && s.c.Mode() == capture.Strict {
			return nil, s.refuse(a.Reason)
		}
	}
	return as, nil
}

// bind computes the tags of a bound write while its parameters are still
// in the relay's buffer.
func (s *session) bind(st *prepared, b pgproto3.Bind) *portal {
	pt := &portal{stmt: st, tags: make([][]extract.Tag, len(st.analyses))}
	params := extract.Params{Values: b.Parameters, Formats: b.ParameterFormatCodes, Types: st.types}
	for i, a := range st.analyses {
		if a.Kind == extract.KindCopy {
			continue
		}
		var err error
		if pt.tags[i], err = a.Tags(params); err != nil {
			pt.err = err
			break
		}
	}
	return pt
}

// execute queues a bound statement for the tracker before the Execute is
// forwarded, and starts making the intents of its writes durable; the
// message that could commit them waits for that (inflight.go). Anything
// but a write of ours (transaction control, a function call, a SELECT)
// first waits for the intents in flight.
func (s *session) execute(pt *portal) *pgwire.Refusal {
	if s.skipping {
		return nil
	}
	if r := s.crowded(); r != nil {
		s.skipping = true
		return r
	}
	if pt == nil || pt.stmt.eff.tx.Kind != extract.TxNone || len(pt.stmt.analyses) == 0 {
		if r := s.settle(); r != nil {
			return r
		}
	}
	if pt == nil {
		s.lock(func() { s.tx.Statement(effect{}, nil) })
		return nil
	}
	if pt.stmt.refusal != nil {
		return pt.stmt.refusal
	}
	if r := s.convertedParameters(pt); r != nil {
		return r
	}
	if pt.err != nil {
		if r := s.unreadable(pt.err); r != nil {
			return r
		}
	}
	var deletes []extract.Tag
	var copyAnalysis *extract.Analysis
	type pending struct {
		entries []ledger.Entry
		table   string
	}
	var writes []pending
	for i, a := range pt.stmt.analyses {
		if a.Kind == extract.KindCopy {
			copyAnalysis = a
			continue
		}
		tags := pt.tags[i]
		deletes = appendDeletes(deletes, tags)
		entries, r := s.c.Prepare(ledger.StorePostgres, tags)
		if r != nil {
			return wireRefusal(r)
		}
		if len(entries) > 0 {
			writes = append(writes, pending{entries, tags[0].Table})
		}
	}
	var refusal *pgwire.Refusal
	var seq uint64
	s.lock(func() {
		seq = s.tx.Statement(pt.stmt.eff, deletes)
		if copyAnalysis != nil {
			refusal = s.startCopy(copyAnalysis, seq)
		}
	})
	if refusal != nil {
		return refusal
	}
	for _, w := range writes {
		if r := s.startIntent(seq, w.entries, w.table); r != nil {
			return r
		}
	}
	return nil
}

// unreadable decides about parameters capture could not decode.
func (s *session) unreadable(err error) *pgwire.Refusal {
	if s.c.Mode() == capture.Strict {
		return s.refuseErr("its parameters could not be read", err)
	}
	return nil
}

// appendDeletes keeps the application's deletes by id among tags.
func appendDeletes(dst []extract.Tag, tags []extract.Tag) []extract.Tag {
	for _, t := range tags {
		if t.Op == extract.OpDelete && t.ID != "" {
			dst = append(dst, t)
		}
	}
	return dst
}

func sameTypes(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
