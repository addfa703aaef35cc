package pgcapture

import (
	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// An extended-protocol write need not wait for its write-ahead intent
// before it is forwarded: nothing it does can commit until a message that
// ends its transaction reaches the server (Sync for an implicit
// transaction, COMMIT for an explicit one, or a Query). So the Execute goes
// out at once and the intent is made durable meanwhile; the session holds
// back the next message that could end the transaction (Sync, Query, an
// Execute of anything but a write of ours) until every intent in flight is
// durable. The server executes the write (milliseconds for a 100-row
// vector INSERT) while the ledger fsyncs (a fraction of one), instead of
// one after the other.
//
// If an intent fails, the held message is refused: the error goes in before
// it and the transaction, write included, aborts. A crash while an intent
// is in flight cannot leave a committed row untagged, because the commit
// was never forwarded; the intent, if it became durable, stays pending for
// recovery.
type inflight struct {
	seq     uint64 // the statement in the tracker
	entries int    // how many entries the intent holds
	intent  *capture.PendingIntent
}

// startIntent queues entries' intent for statement seq; settle waits for
// it. A followed table's write takes none (capture.Followed): nothing is
// queued.
// Past the session's bounds (limits.go) it first waits for the intents in
// flight; a refusal among them is returned instead, and refuses the write
// at hand, whose transaction could not commit anyway.
func (s *session) startIntent(seq uint64, entries []ledger.Entry, table string) *pgwire.Refusal {
	if len(s.inflight) >= maxIntentsInFlight || s.entriesInFlight()+len(entries) > maxEntriesInFlight {
		if r := s.settle(); r != nil {
			return r
		}
	}
	if intent := s.capture.StartDurable(entries, table); intent != nil {
		s.inflight = append(s.inflight, &inflight{seq: seq, entries: len(entries), intent: intent})
	}
	return nil
}

// settle waits for the intents in flight, attaches the durable ones to
// their statements, and returns the first refusal, if any.
func (s *session) settle() *pgwire.Refusal {
	if len(s.inflight) == 0 {
		return nil
	}
	for _, f := range s.inflight {
		f.intent.Wait()
	}
	var refusal *pgwire.Refusal
	s.lock(func() {
		for _, f := range s.inflight {
			switch id, r := f.intent.Wait(); {
			case r != nil:
				if refusal == nil {
					refusal = wireRefusal(r)
				}
			case id != 0:
				s.tx.attach(f.seq, id)
			}
		}
	})
	clear(s.inflight)
	s.inflight = s.inflight[:0]
	return refusal
}

// dropInflight drops the intents still in flight when the session ends:
// the message that could have committed their writes never went to the
// server, so they certainly did not commit.
func (s *session) dropInflight() {
	var ids []ledger.IntentID
	for _, f := range s.inflight {
		if id, _ := f.intent.Wait(); id != 0 {
			ids = append(ids, id)
		}
	}
	s.inflight = nil
	if len(ids) > 0 {
		s.capture.Drop(ids)
	}
}

// WillWait tells the relay which messages settle may hold back, so that
// it forwards the writes before them first (pgwire.Waiter).
func (s *session) WillWait(typ byte) bool {
	switch typ {
	case 'S', 'Q', 'E':
		return len(s.inflight) > 0
	case 'c':
		return s.copyDec != nil // CopyDone waits for the COPY's last intent
	}
	return false
}

// NeverRefuses tells the relay that a Bind is never refused, so that a big
// one may stream to the server as it arrives (pgwire.Streamer): its tags
// are computed when it is complete, and any refusal is made at its Execute.
func (s *session) NeverRefuses(typ byte) bool { return typ == 'B' }
