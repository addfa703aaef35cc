package pgcapture

import "github.com/lethe-privacy/lethe/proxy/pgwire"

// Reading client messages: ClientMessage hands each message type to the
// method that handles it. Query, Sync and FunctionCall are each answered by
// one ReadyForQuery; they are counted (exchanges) after the message's DDL,
// if any, is noted.

func (s *session) ClientMessage(m pgwire.Message) *pgwire.Refusal {
	s.followRules()
	unsettled := s.reading.clientMessage(m.Type, s.exchanges.open())
	if r := s.noteBatch(m.Type); r != nil {
		return r
	}
	switch m.Type {
	case 'Q':
		defer s.exchanges.sent.Add(1)
		return s.clientQuery(m, unsettled)
	case 'P':
		return s.clientParse(m, unsettled)
	case 'B':
		s.clientBind(m)
	case 'E':
		portal, ok := executePortal(m.Body)
		if !ok {
			return nil // the server reports the malformed message
		}
		return s.execute(s.portals.get(string(portal)))
	case 'S':
		defer s.exchanges.sent.Add(1)
		return s.clientSync()
	case 'C':
		s.clientClose(m)
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
		defer s.exchanges.sent.Add(1)
		s.trackOpaqueExchange()
	}
	return nil
}

// noteBatch follows whether extended-protocol messages were sent since the
// last Sync, and ends the session on a Query or FunctionCall inside such a
// batch (batch.go).
func (s *session) noteBatch(typ byte) *pgwire.Refusal {
	switch typ {
	case 'P', 'B', 'D', 'E', 'C':
		s.inBatch = true
	case 'S':
		s.inBatch = false
	case 'Q', 'F':
		if s.inBatch {
			return queryInBatch
		}
	}
	return nil
}

// trackOpaqueExchange queues for the tracker one exchange whose statements
// capture does not follow: a FunctionCall, or a Query refused in place (the
// server answers the raise sent instead with an error and ReadyForQuery).
func (s *session) trackOpaqueExchange() {
	s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
}

// clientQuery handles a simple Query; unsettled: requests sent before it
// may still change how the server reads its text (reading.go).
func (s *session) clientQuery(m pgwire.Message, unsettled bool) *pgwire.Refusal {
	q, ok := queryText(m.Body)
	if !ok {
		return nil // the server reports the malformed message
	}
	r := s.settle()
	if r == nil {
		r = s.crowded()
	}
	if r == nil {
		r = s.misread(q, unsettled)
	}
	if r != nil {
		s.trackOpaqueExchange()
		return r
	}
	return s.query(q)
}

// clientParse judges a statement being prepared; its Binds find it by name.
func (s *session) clientParse(m pgwire.Message, unsettled bool) *pgwire.Refusal {
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
}

// clientBind binds a portal. Only the names are read first: most
// statements write nothing of ours, and their parameters need not be
// decoded. A Bind is never refused (NeverRefuses).
func (s *session) clientBind(m pgwire.Message) {
	portalName, stmtName, err := m.BindTarget()
	if err != nil {
		return
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
		return
	}
	b, err := m.Bind()
	if err != nil {
		return
	}
	s.portals.bind(b.DestinationPortal, s.bind(st, b), s.exchanges.sent.Load())
}

// clientSync ends a batch. A refused Sync still goes, after the error.
func (s *session) clientSync() *pgwire.Refusal {
	s.skipping = false
	r := s.settle()
	s.lock(func() { s.tx.Sync() })
	return r
}

// clientClose forgets a closed statement or portal.
func (s *session) clientClose(m pgwire.Message) {
	c, err := m.Close()
	if err != nil {
		return
	}
	if c.ObjectType == 'S' {
		delete(s.stmts, c.Name)
		delete(s.texts, c.Name)
	} else {
		s.portals.close(c.Name)
	}
}
