package walfollow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// statusInterval is how often the server hears from the follower when
// nothing else happens; well inside wal_sender_timeout's default (60s).
// The server hears it while a batch is written to the ledger too.
const statusInterval = 10 * time.Second

// session is one replication connection's life. It reads and decodes the
// stream on one goroutine, while its recorder writes the previous batch
// to the ledger on another.
type session struct {
	f    *Follower
	conn *pgx.Conn      // catalog lookups and publication refreshes
	repl *pgconn.PgConn // the replication stream
	dec  *decoder
	msg  message // reused for every message
	rec  recorder

	inTx      bool
	committed pglogrepl.LSN // end of the last transaction read in full
	flushed   pglogrepl.LSN // confirmed to the server: its changes are durable
	statusAt  time.Time
	refreshAt time.Time
	// readDeadline is the deadline armed on the replication socket: the
	// next thing due (tick). Zero when the socket's deadline is not known
	// (a landing flight moved it).
	readDeadline time.Time
	// confirmDue, when set, is when to report a position keepalives
	// moved: at most once per confirmInterval, since a confirmation
	// answered at once draws the next keepalive at once while the server
	// decodes a long transaction.
	confirmDue time.Time
}

func (s *session) run(ctx context.Context) error {
	s.statusAt, s.refreshAt = time.Now(), time.Now().Add(s.f.cfg.RefreshInterval)
	// The stream is read without a context per message (pgconn watches
	// each one): the end of ctx closes the socket instead, which ends a
	// read in progress.
	defer context.AfterFunc(ctx, func() { s.repl.Conn().Close() })()
	// A flight still in the air when the session ends lands first: the
	// next session applies the changes after the confirmed position again,
	// and an older write of the same records must not land after those.
	defer s.awaitFlight()
	for {
		if err := s.land(ctx); err != nil {
			return err
		}
		if err := s.tick(ctx); err != nil {
			return err
		}
		if len(s.f.adopting) > 0 && !s.inTx {
			if err := s.adopt(ctx); err != nil {
				return err
			}
		}
		if s.rec.full() {
			// The ledger is readAhead flights behind: read no more until
			// the flight lands.
			if err := s.waitForFlight(ctx); err != nil {
				return err
			}
			continue
		}
		deadline := s.statusAt.Add(s.f.statusEvery)
		if due, ok := s.rec.deadline(s.f.cfg.FlushInterval); ok {
			deadline = minTime(deadline, due)
		}
		deadline = minTime(deadline, s.refreshAt)
		if !s.confirmDue.IsZero() {
			deadline = minTime(deadline, s.confirmDue)
		}
		if !deadline.Equal(s.readDeadline) {
			// A deadline on the socket, re-armed only when it moves, rather
			// than a context with a deadline per message: that is a timer
			// made and stopped for every message of the stream.
			if err := s.repl.Conn().SetReadDeadline(deadline); err != nil {
				return err
			}
			s.readDeadline = deadline
		}
		// A flight that landed before the deadline was armed may have had
		// its wake-up overwritten: look after arming, before reading.
		if s.rec.flight != nil && s.rec.flight.landed() {
			continue
		}
		msg, err := s.repl.ReceiveMessage(context.Background())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				s.readDeadline = time.Time{} // due, or moved by a landing flight: arm afresh
				continue
			}
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.copyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return pgconn.ErrorResponseToPgError(m)
		}
	}
}

// tick does what is due: send the batch to the ledger, refresh the
// publications, report the position.
func (s *session) tick(ctx context.Context) error {
	now := time.Now()
	if s.rec.due(now, s.f.cfg.FlushInterval) {
		s.launch(ctx, now)
	}
	if !now.Before(s.refreshAt) {
		gen := s.f.generation()
		_, full, joined, err := s.f.refresh(ctx, s.conn)
		if err != nil {
			return err
		}
		s.f.toAdopt(joined)
		s.f.announce(gen, full)
		s.refreshAt = now.Add(s.f.cfg.RefreshInterval)
	}
	if !now.Before(s.statusAt.Add(s.f.statusEvery)) || !s.confirmDue.IsZero() && !now.Before(s.confirmDue) {
		return s.status(ctx, false)
	}
	return nil
}

// launch cuts the batch and writes it to the ledger in the background.
// When the write is done, a read deadline in the past wakes the reading
// loop (a read in progress ends with a timeout), which lands the flight.
func (s *session) launch(ctx context.Context, now time.Time) {
	f := s.rec.cut(now)
	go func() {
		f.run(ctx, s.f.cfg.Core, s.afterDurable)
		s.repl.Conn().SetReadDeadline(time.Now())
	}()
}

// land takes back a flight that is done, and confirms what it made
// durable; a failed flight ends the session, and the next one reads its
// changes again from the confirmed position.
func (s *session) land(ctx context.Context) error {
	landed, err := s.rec.land()
	if err != nil || !landed {
		return err
	}
	if t := s.rec.takeRecorded(); t != nil {
		// What a big transaction costs the lag after its rows arrive: the
		// ledger writes (ledger_ms) within the whole recording (span_ms).
		s.f.log.Info("wal: recorded a transaction read in several batches", "changes", t.changes, "batches", t.flights,
			"ledger_ms", t.ledger.Milliseconds(), "span_ms", t.to.Sub(t.from).Milliseconds())
	}
	if s.rec.confirmable(s.committed) > s.flushed {
		return s.status(ctx, false)
	}
	return nil
}

// waitForFlight waits until the flight lands, and keeps the server
// hearing from the follower meanwhile.
func (s *session) waitForFlight(ctx context.Context) error {
	for {
		timer := time.NewTimer(time.Until(s.statusAt.Add(s.f.statusEvery)))
		select {
		case <-s.rec.flight.done:
			timer.Stop()
			return s.land(ctx)
		case <-timer.C:
			if err := s.status(ctx, false); err != nil {
				return err
			}
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// awaitFlight waits for the flight in the air, if any, to end.
func (s *session) awaitFlight() {
	if s.rec.flight != nil {
		<-s.rec.flight.done
	}
}

// afterDurable runs on the flight's goroutine once its changes, and every
// earlier flight's, are durable.
func (s *session) afterDurable(ctx context.Context, f *flight) error {
	s.f.Stats.Recorded.Add(int64(f.recorded))
	return s.f.lateWrites(ctx, f.late)
}

// status confirms what is durable (recorder.confirmable).
func (s *session) status(ctx context.Context, reply bool) error {
	if pos := s.rec.confirmable(s.committed); pos > s.flushed {
		s.flushed = pos
		s.f.Stats.Flushed.Store(uint64(s.flushed))
	}
	s.statusAt, s.confirmDue = time.Now(), time.Time{}
	return pglogrepl.SendStandbyStatusUpdate(ctx, s.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.flushed, ReplyRequested: reply})
}

func (s *session) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty CopyData", errMalformed)
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		s.f.Stats.ServerEnd.Store(uint64(k.ServerWALEnd))
		advanced := false
		if !s.inTx && k.ServerWALEnd > s.committed {
			// Everything before the server's end was decoded and sent:
			// nothing of ours lies below it.
			s.committed, advanced = k.ServerWALEnd, true
		}
		if k.ReplyRequested {
			return s.status(ctx, false)
		}
		if advanced && s.rec.confirmable(s.committed) > s.flushed && s.confirmDue.IsZero() {
			// Confirming soon lets the server recycle WAL the configured
			// tables had no part in, and lets a wait for the slot
			// (AwaitCommitted) end.
			s.confirmDue = maxTime(time.Now(), s.statusAt.Add(confirmInterval))
		}
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		s.f.Stats.ServerEnd.Store(uint64(x.ServerWALEnd))
		return s.message(ctx, x.WALData)
	}
	return nil
}

func (s *session) message(ctx context.Context, data []byte) error {
	m := &s.msg
	if err := m.decode(data); err != nil {
		return err
	}
	switch m.kind {
	case 'B':
		s.inTx = true
		return nil
	case 'C':
		s.inTx = false
		s.committed = pglogrepl.LSN(m.commitEnd)
		s.rec.commit(s.committed, s.dec.late)
		s.dec.late = nil
		return nil
	}
	n := len(s.rec.batch)
	var err error
	s.rec.batch, err = s.dec.change(m, s.rec.batch)
	if err != nil {
		return err
	}
	if len(s.rec.batch) > n {
		if n == 0 {
			s.rec.batchAt = time.Now()
		}
		s.f.Stats.Rows.Add(1)
	}
	return nil
}

// confirmInterval is the least time between two confirmations of a
// position that only keepalives moved.
const confirmInterval = 100 * time.Millisecond

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
