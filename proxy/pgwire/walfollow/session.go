package walfollow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/lethe-privacy/lethe/ledger"
)

// statusInterval is how often the server hears from the follower when
// nothing else happens; well inside wal_sender_timeout's default (60s).
const statusInterval = 10 * time.Second

// session is one replication connection's life.
type session struct {
	f    *Follower
	conn *pgx.Conn      // catalog lookups and publication refreshes
	repl *pgconn.PgConn // the replication stream
	dec  *decoder
	msg  message // reused for every message

	batch   []ledger.Change
	batchAt time.Time // when the first change of batch was read

	inTx      bool
	committed pglogrepl.LSN // end of the last transaction read in full
	flushed   pglogrepl.LSN // confirmed to the server: its changes are durable
	statusAt  time.Time
	refreshAt time.Time
	// readDeadline is the deadline armed on the replication socket: the
	// next thing due (tick).
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
	for {
		if err := s.tick(ctx); err != nil {
			return err
		}
		deadline := s.statusAt.Add(statusInterval)
		if len(s.batch) > 0 {
			deadline = minTime(deadline, s.batchAt.Add(s.f.cfg.FlushInterval))
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
		msg, err := s.repl.ReceiveMessage(context.Background())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
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

// tick does what is due: commit the batch, refresh the publications,
// report the position.
func (s *session) tick(ctx context.Context) error {
	now := time.Now()
	if len(s.batch) > 0 && (len(s.batch) >= s.f.cfg.MaxBatch || now.Sub(s.batchAt) >= s.f.cfg.FlushInterval) {
		if err := s.flush(ctx); err != nil {
			return err
		}
	}
	if !now.Before(s.refreshAt) {
		gen := s.f.generation()
		full, err := s.f.refresh(ctx, s.conn)
		if err != nil {
			return err
		}
		s.f.announce(gen, full)
		s.refreshAt = now.Add(s.f.cfg.RefreshInterval)
	}
	if !now.Before(s.statusAt.Add(statusInterval)) || !s.confirmDue.IsZero() && !now.Before(s.confirmDue) {
		return s.status(ctx, false)
	}
	return nil
}

// flush makes the batch durable in the ledger, then confirms to the
// server every transaction read in full.
func (s *session) flush(ctx context.Context) error {
	if err := s.f.cfg.Ledger.Observe(ctx, s.batch); err != nil {
		return fmt.Errorf("walfollow: recording %d changes in the ledger: %w", len(s.batch), err)
	}
	s.f.Stats.Recorded.Add(int64(len(s.batch)))
	clear(s.batch)
	s.batch = s.batch[:0]
	if err := s.lateWrites(ctx); err != nil {
		return err
	}
	return s.status(ctx, false)
}

// lateWrites hands the late writes read so far to the backstop, or only
// logs them when there is none. On an error the session ends, and the
// rows are read and handed over again.
func (s *session) lateWrites(ctx context.Context) error {
	for _, w := range s.dec.late {
		s.f.log.Warn("wal: a committed row is about a forgotten subject (a late write)", "table", w.table,
			"subject_hmac", s.f.cfg.Hasher.Hash(w.subject).String(), "backstop", s.f.cfg.LateWrite != nil)
		if s.f.cfg.LateWrite == nil {
			continue
		}
		if err := s.f.cfg.LateWrite(ctx, w.table, w.subject); err != nil {
			return fmt.Errorf("walfollow: deleting a late write in %s: %w", w.table, err)
		}
	}
	clear(s.dec.late)
	s.dec.late = s.dec.late[:0]
	return nil
}

// status confirms what is durable: every transaction read in full when
// nothing waits for the ledger.
func (s *session) status(ctx context.Context, reply bool) error {
	if len(s.batch) == 0 && s.committed > s.flushed {
		s.flushed = s.committed
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
		if advanced && len(s.batch) == 0 && s.confirmDue.IsZero() {
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
		return nil
	}
	n := len(s.batch)
	var err error
	s.batch, err = s.dec.change(m, s.batch)
	if err != nil {
		return err
	}
	if len(s.batch) > n {
		if n == 0 {
			s.batchAt = time.Now()
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
