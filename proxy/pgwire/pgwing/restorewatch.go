package pgwing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// restoreWatch compares what the server shows with what the ledger
// recorded, and holds the relay's writes (capture.on_restore: refuse) or
// warns while a restore waits for lethe-proxy replay.
type restoreWatch struct {
	key       string // the store's name in the ledger's marks
	marks     ledger.StoreMarks
	core      *capture.Capture
	onRestore config.OnRestore
	log       *slog.Logger
	// degradedLogged: the log said once that pg_control_* was refused.
	degradedLogged bool
}

// check reads the server through r, records what it saw, and holds or
// releases the store's writes. It returns the restore waiting for replay
// ("" when none).
func (rw *restoreWatch) check(ctx context.Context, r controlReader) (string, error) {
	now, degraded, err := readSeen(ctx, r)
	if err != nil {
		return "", fmt.Errorf("restore detection: %w", err)
	}
	if degraded && !rw.degradedLogged {
		rw.degradedLogged = true
		rw.log.Warn("restore detection: the capture.store role may not call pg_control_system() or pg_control_checkpoint(); " +
			"only a WAL position behind the one recorded is detected as a restore (GRANT EXECUTE ON FUNCTION pg_control_system(), pg_control_checkpoint() TO the role)")
	}
	was, ok, err := rw.marks.StoreSeen(ctx, rw.key)
	if err != nil {
		return "", fmt.Errorf("restore detection: reading what the ledger saw of the store: %w", err)
	}
	switch {
	case !ok:
	case was.Restore != "":
		now.Restore = was.Restore // still waiting for replay
	default:
		now.Restore = restoreSignal(was, now)
		// A signal this role cannot read keeps what was recorded of it.
		if now.System == "" {
			now.System = was.System
		}
		if now.Timeline == 0 {
			now.Timeline = was.Timeline
		}
	}
	if !ok || now != (ledger.StoreSeen{System: was.System, Timeline: was.Timeline, WAL: was.WAL, Restore: was.Restore}) {
		if err := rw.marks.RecordStoreSeen(ctx, rw.key, now); err != nil {
			return "", fmt.Errorf("restore detection: recording what was seen of the store: %w", err)
		}
	}
	rw.apply(now.Restore)
	return now.Restore, nil
}

// apply holds or releases the store's writes for restore.
func (rw *restoreWatch) apply(restore string) {
	if restore == "" {
		if rw.core.Release(ledger.StorePostgres) {
			rw.log.Info("restore detection: lethe-proxy replay ran; writes to the configured tables are relayed again")
		}
		return
	}
	rw.core.RestoreSeen(capture.Restore{
		Store: ledger.StorePostgres, Signal: restore,
		Happened:  "capture.store was restored from a backup",
		Writes:    "writes to the configured tables",
		Message:   "lethe: the database was restored from a backup (" + restore + "); writes to tables under erasure rules are refused until the completed erasures are re-applied",
		LogReason: "store restored, replay pending",
	}, rw.onRestore.Refuses())
}

// watchRestore checks once now, which must succeed for the proxy to
// start, then every interval until work ends. A check that fails later
// keeps the last decision and is logged.
func (w *Wing) watchRestore(ctx, work context.Context) error {
	c := w.cfg.Capture
	key, err := storeKey(c.Store)
	if err != nil {
		return err
	}
	rw := &restoreWatch{key: key, marks: w.ledger, core: w.core, onRestore: c.OnRestore, log: w.log}
	store, err := OpenStore(ctx, c, "restore detection reads the server's identity")
	if err != nil {
		return err
	}
	checkOnce := func(ctx context.Context) error {
		return store.WithConn(ctx, func(conn *pgx.Conn) error {
			_, err := rw.check(ctx, connControl{conn})
			return err
		})
	}
	if err := checkOnce(ctx); err != nil {
		store.Close()
		return err
	}
	w.background.Add(1)
	go func() {
		defer w.background.Done()
		defer store.Close()
		tick := time.NewTicker(c.RecoveryInterval.D())
		defer tick.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-tick.C:
			}
			if err := checkOnce(work); err != nil && work.Err() == nil {
				w.log.Warn("restore detection: the check failed; the last decision stands", "err", err)
			}
		}
	}()
	return nil
}
