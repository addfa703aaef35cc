package ledger

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// pgOwner is a PostgreSQL handle's registration: its row in owners and the
// lease it renews in the background.
type pgOwner struct {
	id    int64
	name  string
	lease *lease
	every time.Duration
	log   *slog.Logger

	stop, done chan struct{}
	stopOnce   sync.Once
}

// register prunes the rows of handles that are gone and left no pending
// intent, then adds this handle with a fresh lease.
func (l *Postgres) register(ctx context.Context, opts Options) error {
	o := &l.owner
	o.name, o.lease, o.every, o.log = opts.owner(), newLease(opts.leaseDuration()), opts.renewInterval(), opts.logger()
	o.stop, o.done = make(chan struct{}), make(chan struct{})
	var earlier int
	sent := o.lease.now()
	err := l.pool.QueryRow(ctx, l.q(`
		WITH pruned AS (
			DELETE FROM ledger.owners o WHERE o.lease_until < now()
				AND NOT EXISTS (SELECT 1 FROM ledger.intents i WHERE i.state = 'pending' AND i.owner_id = o.id)
		), live AS (
			SELECT count(*) AS n FROM ledger.owners WHERE name = $1 AND lease_until >= now()
		)
		INSERT INTO ledger.owners (name, started_at, lease_until)
		SELECT $1::text, now(), now() + $2::bigint * interval '1 microsecond' FROM live
		RETURNING id, (SELECT n FROM live)`),
		o.name, o.lease.d.Microseconds()).Scan(&o.id, &earlier)
	if err != nil {
		return err
	}
	o.lease.secured(sent)
	if earlier > 0 {
		// Expected after a crash when the name is stable; a mistake when
		// another live proxy has the same name.
		o.log.Warn("ledger: a live lease is held under this owner name; its pending intents are treated as orphans, "+
			"which is right if it was this proxy's previous run and wrong if another proxy uses the same name (give each its own)",
			"owner", o.name)
	}
	return nil
}

// renewLoop renews the lease every interval until stopRenewing. A failure
// is logged and retried at the next tick; once the lease has lapsed the
// committer refuses new intents (lease.check) until a renewal succeeds.
func (l *Postgres) renewLoop() {
	o := &l.owner
	defer close(o.done)
	t := time.NewTicker(o.every)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
		}
		wasLapsed := o.lease.lapsed()
		sent := o.lease.now()
		// Up to a whole lease: a renewal that succeeds late still counts
		// from when it was sent.
		ctx, cancel := context.WithTimeout(context.Background(), o.lease.d)
		err := l.renew(ctx)
		cancel()
		if err != nil {
			o.log.Warn("ledger: lease renewal failed; new writes are refused once the lease lapses",
				"owner", o.name, "owner_id", o.id, "lease_left", max(time.Duration(o.lease.until.Load())-sent, 0), "err", err)
			continue
		}
		o.lease.secured(sent)
		if wasLapsed {
			o.log.Warn("ledger: lease renewed after it had lapsed; other proxies may have resolved intents this one left pending meanwhile",
				"owner", o.name, "owner_id", o.id)
		}
	}
}

// renew extends the lease. When the row is gone (pruned after the lease
// expired, or deleted by hand) it is added again under the same id, which
// no other handle can hold.
func (l *Postgres) renew(ctx context.Context) error {
	o := &l.owner
	us := o.lease.d.Microseconds()
	tag, err := l.pool.Exec(ctx, l.q(`UPDATE ledger.owners SET lease_until = now() + $2::bigint * interval '1 microsecond' WHERE id = $1`), o.id, us)
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	o.log.Warn("ledger: this handle's owner row was gone; adding it again", "owner", o.name, "owner_id", o.id)
	_, err = l.pool.Exec(ctx, l.q(`
		INSERT INTO ledger.owners (id, name, started_at, lease_until) OVERRIDING SYSTEM VALUE
		VALUES ($1, $2, now(), now() + $3::bigint * interval '1 microsecond')
		ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`), o.id, o.name, us)
	return err
}

// stopRenewing ends renewLoop and waits for it.
func (o *pgOwner) stopRenewing() {
	o.stopOnce.Do(func() { close(o.stop) })
	<-o.done
}

// unregister removes this handle's row at Close, so that what it left
// pending is an orphan at once rather than when the lease expires. On
// failure the lease expires all the same.
func (l *Postgres) unregister() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.pool.Exec(ctx, l.q(`DELETE FROM ledger.owners WHERE id = $1`), l.owner.id); err != nil {
		l.owner.log.Warn("ledger: could not remove this handle from the owners table; its lease will expire instead",
			"owner", l.owner.name, "owner_id", l.owner.id, "err", err)
	}
}

// PendingOrphans returns the pending intents no live handle will resolve,
// oldest first: those of handles that closed (their row is gone), whose
// lease has expired, or that are an earlier run of this handle's name, and
// those from before owners (schema version 4) once older than a lease,
// which lets a proxy of the older build finish the transactions it had in
// flight at the upgrade. This handle's own intents are never orphans.
func (l *Postgres) PendingOrphans(ctx context.Context) ([]Intent, error) {
	if l.decisions.isClosed() {
		return nil, ErrClosed
	}
	return l.pending(ctx, `
		i.owner_id IS NULL AND i.created_at < now() - $3::bigint * interval '1 microsecond'
		OR i.owner_id <> $1 AND (o.id IS NULL OR o.lease_until < now() OR o.name = $2)`,
		l.owner.id, l.owner.name, l.owner.lease.d.Microseconds())
}
