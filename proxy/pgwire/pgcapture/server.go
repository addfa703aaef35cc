package pgcapture

import "github.com/lethe-privacy/lethe/proxy/pgwire"

// Tracking server replies: completions, errors and ReadyForQuery feed the
// transaction tracker, the portal book and the DDL follower, under mu;
// ParameterStatus feeds the text reading (reading.go) before a
// ReadyForQuery is counted, so that the count implies its reports.

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
		tag, _ := commandTag(m.Body) // a malformed one completes with no tag
		s.tx.Complete(string(tag))
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
