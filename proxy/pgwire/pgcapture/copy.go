package pgcapture

import (
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// copyFlushTags bounds the tags of a streaming COPY held before their
// intent is made durable; the rest are made durable before CopyDone is
// forwarded, which is the COPY's commit point.
const copyFlushTags = 1000

// startCopy prepares to decode the rows of a COPY FROM STDIN.
func (s *session) startCopy(a *extract.Analysis, req uint64) *pgwire.Refusal {
	dec, err := a.NewCopyDecoder()
	if err != nil {
		return s.unreadable(err)
	}
	s.copyDec, s.copyReq, s.copyTags = dec, req, nil
	return nil
}

// copyData feeds a COPY FROM STDIN of a configured table to its decoder.
func (s *session) copyData(data []byte) *pgwire.Refusal {
	if s.copyDec == nil {
		return nil
	}
	tags, err := s.copyDec.Write(data)
	if err != nil {
		return s.copyUnreadable(err)
	}
	s.copyTags = append(s.copyTags, tags...)
	if len(s.copyTags) >= copyFlushTags {
		return s.flushCopy()
	}
	return nil
}

// copyDone makes the last rows' intent durable before the COPY can commit.
func (s *session) copyDone() *pgwire.Refusal {
	if s.copyDec == nil {
		return nil
	}
	tags, err := s.copyDec.End()
	if err != nil {
		return s.copyUnreadable(err)
	}
	s.copyTags = append(s.copyTags, tags...)
	r := s.flushCopy()
	s.copyDec, s.copyReq = nil, 0
	return r
}

func (s *session) flushCopy() *pgwire.Refusal {
	id, r := s.capture.Intend(ledger.StorePostgres, s.copyTags)
	s.copyTags = s.copyTags[:0]
	if r != nil {
		s.copyDec, s.copyReq = nil, 0
		return wireRefusal(r)
	}
	if id != 0 {
		s.lock(func() { s.tx.AddIntent(s.copyReq, id) })
	}
	return nil
}

func (s *session) copyUnreadable(err error) *pgwire.Refusal {
	s.copyDec, s.copyReq, s.copyTags = nil, 0, nil
	return s.unattributableErr("its COPY data could not be read", err)
}
