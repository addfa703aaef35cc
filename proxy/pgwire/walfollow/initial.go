package walfollow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/ledger"
)

// createSlot makes the slot and records, durably, the rows the planned
// relations hold when it starts: the initial copy logical replication
// makes for a new subscription. The slot exports a snapshot at creation
// (CREATE_REPLICATION_SLOT … LOGICAL pgoutput EXPORT_SNAPSHOT) that sees
// exactly the transactions committed before the slot's consistent point;
// the stream carries exactly those committed after. Reading the rows in
// that snapshot, before anything is streamed, leaves no gap and counts no
// row twice. The snapshot lives until the replication connection runs
// its next command, so that connection stays idle until the rows are
// read.
//
// The rows go through the decoder, as streamed rows do: subjects are
// extracted from the stored values by the same rule, and rows about a
// forgotten subject are late writes, handed to the backstop once
// durable. Once they are, the ledger marks the slot's initial read done
// (ledger.InitialReads): a slot without the mark, which a process killed
// before it leaves, is made again at the next start (makeSlot). When any
// of it fails the slot is dropped again at once.
func (f *Follower) createSlot(ctx context.Context, conn *pgx.Conn, key ledger.SlotKey, ps []published) error {
	// A mark left by an earlier slot of the name must not vouch for this
	// one, whatever happens to this process before the new mark.
	if err := f.cfg.Ledger.ClearInitialRead(ctx, key); err != nil {
		return fmt.Errorf("walfollow: clearing the ledger's mark of an earlier slot %s before creating it: %w", f.cfg.Name, err)
	}
	cfg, err := f.replicationConfig()
	if err != nil {
		return err
	}
	repl, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("walfollow: opening a replication connection to create slot %s: %w", f.cfg.Name, err)
	}
	defer repl.Close(context.Background())
	slot, err := pglogrepl.CreateReplicationSlot(ctx, repl, f.cfg.Name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return fmt.Errorf("walfollow: creating replication slot %s: %w", f.cfg.Name, err)
	}
	rows, recorded, err := f.readInitial(ctx, conn, slot.SnapshotName, ps)
	if err == nil {
		if err = f.cfg.Ledger.MarkInitialRead(ctx, key); err != nil {
			err = fmt.Errorf("walfollow: marking in the ledger that the rows before slot %s are recorded: %w", f.cfg.Name, err)
		}
	}
	if err != nil {
		// Closing the replication connection releases the snapshot; the
		// drop runs even when ctx has ended.
		repl.Close(context.Background())
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if dropErr := dropSlot(dctx, conn, f.cfg.Name); dropErr != nil {
			return errors.Join(err, fmt.Errorf("%w; drop it yourself (lethe-proxy wal drop): it keeps the server's WAL", dropErr))
		}
		return err
	}
	f.log.Info("wal: replication slot created; the rows the configured tables held are recorded, rows committed from now on are followed",
		"slot", f.cfg.Name, "rows", rows, "recorded", recorded)
	return nil
}

// readInitial reads every row of ps in the exported snapshot and records
// their changes durably in the ledger, then hands late writes to the
// backstop. It returns how many rows it read and how many changes it
// recorded.
func (f *Follower) readInitial(ctx context.Context, conn *pgx.Conn, snapshot string, ps []published) (rows, recorded int, err error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, 0, fmt.Errorf("walfollow: reading the rows the configured tables held at the slot's creation: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapshot)); err != nil {
		return 0, 0, fmt.Errorf("walfollow: taking the snapshot slot %s exported: %w", f.cfg.Name, err)
	}
	dec := newDecoder(f.cfg.Rules, f.cfg.Core, nil, &f.Stats)
	dec.log = f.log
	var batch []ledger.Change
	for _, p := range ps {
		// Each relation is read under a savepoint: one dropped since the
		// plan fails its read (readRelation answers nil: it holds nothing),
		// and rolling back to the savepoint keeps the transaction, and its
		// snapshot, usable for the relations after it.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return rows, recorded, fmt.Errorf("walfollow: reading the rows the configured tables held at the slot's creation: %w", err)
		}
		n, err := readRelation(ctx, sp, f.cfg.Rules, p, 0, func(r *relation, tuple []column) error {
			if len(batch) >= f.cfg.MaxBatch {
				// All but the last change go without a fsync: the last
				// Observe, which always has one, makes them durable.
				last := batch[len(batch)-1]
				if err := f.cfg.Core.Observe(ctx, batch[:len(batch)-1], false); err != nil {
					return fmt.Errorf("walfollow: recording the rows %s.%s held at the slot's creation: %w", p.schema, p.relation, err)
				}
				recorded += len(batch) - 1
				batch = append(batch[:0], last)
			}
			var err error
			batch, err = dec.write(r, tuple, batch)
			return err
		})
		rows += n
		if err != nil {
			return rows, recorded, err
		}
		if err := sp.Rollback(ctx); err != nil { // a read-only savepoint: nothing to keep
			return rows, recorded, fmt.Errorf("walfollow: reading the rows of %s.%s: %w", p.schema, p.relation, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rows, recorded, fmt.Errorf("walfollow: reading the rows the configured tables held at the slot's creation: %w", err)
	}
	if len(batch) > 0 { // empty only when nothing was recorded at all
		if err := f.cfg.Core.Observe(ctx, batch, true); err != nil {
			return rows, recorded, fmt.Errorf("walfollow: recording the rows the configured tables held at the slot's creation: %w", err)
		}
		recorded += len(batch)
	}
	f.Stats.Recorded.Add(int64(recorded))
	return rows, recorded, f.lateWrites(ctx, dec.late)
}

// replicationConfig is ConnString for a replication connection.
func (f *Follower) replicationConfig() (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(f.cfg.ConnString)
	if err != nil {
		return nil, fmt.Errorf("walfollow: reading capture.store: %w", err)
	}
	cfg.RuntimeParams["replication"] = "database"
	return cfg, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
