package walfollow

import (
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/lethe-privacy/lethe/ledger"
)

// Transactions the server streams while they run (pgoutput's streaming,
// see pgoutput.go) are held here until their Stream Commit, and dropped,
// whole or a subtransaction's part, at a Stream Abort: nothing of a
// transaction reaches the ledger or the late-write backstop before it
// has committed. What is held is a change's id and subject hashes (the
// column lists keep the vectors out of the stream), in memory.

// streamed is one open streamed transaction: its changes and late writes
// in order, each with the (sub)transaction that made it.
type streamed struct {
	changes []streamedChange
	late    []streamedLate
}

type streamedChange struct {
	xid    uint32
	change ledger.Change
}

type streamedLate struct {
	xid  uint32
	late lateWrite
}

// streamChange decodes a change inside a stream block and holds what it
// makes under its transaction.
func (s *session) streamChange(m *message) error {
	lateBefore := len(s.dec.late)
	var err error
	s.scratch, err = s.dec.change(m, s.scratch[:0])
	if err != nil {
		return err
	}
	if len(s.scratch) == 0 && len(s.dec.late) == lateBefore {
		return nil
	}
	t := s.streams[s.streamXid]
	if t == nil {
		t = &streamed{}
		s.streams[s.streamXid] = t
	}
	for _, c := range s.scratch {
		t.changes = append(t.changes, streamedChange{m.xid, c})
	}
	for _, w := range s.dec.late[lateBefore:] {
		t.late = append(t.late, streamedLate{m.xid, w})
	}
	s.dec.late = s.dec.late[:lateBefore]
	if len(s.scratch) > 0 {
		s.f.Stats.Rows.Add(1)
	}
	return nil
}

// streamCommit moves a committed streamed transaction's changes into the
// batch, as if it had come whole.
func (s *session) streamCommit(m *message) {
	if t := s.streams[m.xid]; t != nil {
		if len(s.batch) == 0 && len(t.changes) > 0 {
			s.batchAt = time.Now()
		}
		for _, c := range t.changes {
			s.batch = append(s.batch, c.change)
		}
		for _, w := range t.late {
			s.dec.late = append(s.dec.late, w.late)
		}
		delete(s.streams, m.xid)
	}
	s.committed = pglogrepl.LSN(m.commitEnd)
}

// streamAbort drops what an aborted transaction, or subtransaction, made.
func (s *session) streamAbort(m *message) {
	t := s.streams[m.xid]
	if t == nil {
		return
	}
	if m.subxid == m.xid {
		delete(s.streams, m.xid)
		return
	}
	t.changes = dropXid(t.changes, m.subxid, func(c streamedChange) uint32 { return c.xid })
	t.late = dropXid(t.late, m.subxid, func(w streamedLate) uint32 { return w.xid })
}

func dropXid[T any](items []T, xid uint32, of func(T) uint32) []T {
	kept := items[:0]
	for _, it := range items {
		if of(it) != xid {
			kept = append(kept, it)
		}
	}
	return kept
}
