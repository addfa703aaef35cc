package forgetopen

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/coreopen"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine"
)

// Forget is the forget side of a running proxy: the engine, over the
// layers of every wing, and the watch that keeps the core's tombstones
// current.
type Forget struct {
	Engine *engine.Engine
	sides  []connector.ForgetSide
	stop   context.CancelFunc // ends the tombstones' watch
}

// Close stops the engine and the tombstones' watch and closes the wings'
// forget connections. A nil Forget closes nothing.
func (f *Forget) Close() {
	if f == nil {
		return
	}
	f.stop()
	if f.Engine != nil {
		f.Engine.Close()
	}
	for _, s := range f.sides {
		if s.Close != nil {
			s.Close()
		}
	}
}

// Open builds and starts the engine when forget.signing_key is set (nil
// when not) from the wings' forget sides: their layers in wing order, a
// settle that waits for every wing that can lag, and their horizons. The engine registers
// with the capture core as the sink of the WAL follower's late writes,
// and the core's tombstones are refreshed from the ledger while it runs.
// tool is as for Certifier.
func Open(cfg *config.Config, core *coreopen.Core, wings []connector.Wing, tool string, log *slog.Logger) (*Forget, error) {
	fc := cfg.Forget
	if fc.SigningKey == "" {
		return nil, nil
	}
	if core == nil {
		return nil, errors.New("forget needs capture.tables or pinecone.indexes[].namespaces")
	}
	ctx, stop := context.WithCancel(context.Background())
	f := &Forget{stop: stop}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	certifier, signer, err := Certifier(octx, cfg, core.Ledger, tool, log)
	if err != nil {
		f.Close()
		return nil, err
	}
	var (
		layers   []connector.Layer
		settles  []func(context.Context) error
		horizons []connector.HorizonFunc
	)
	for _, w := range wings {
		side, err := w.Forget(octx)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.sides = append(f.sides, side)
		layers = append(layers, side.Layers...)
		if side.Settle != nil {
			settles = append(settles, side.Settle)
		}
		if side.Horizon != nil {
			horizons = append(horizons, side.Horizon)
		}
	}
	e, err := engine.New(engine.Config{
		Ledger: core.Ledger, Hasher: core.Hasher, Layers: layers,
		Certifier: certifier,
		Deadline:  fc.Deadline.D(), TokenTTL: fc.TokenTTL.D(),
		Tombstoned: core.Tombstones.Set, Logger: log, Owner: engineOwner(fc.Admin.Listen),
		Settle: settleAll(settles), Horizons: horizons,
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Engine = e
	core.Capture.OnLateWrite(e) // the WAL follower's late writes are deleted through it
	e.Start(time.Minute)
	go core.Tombstones.Watch(ctx, core.Ledger, fc.TombstoneRefresh.D(), log)
	log.Info("forget enabled", "key_id", signer.KeyID(), "log_origin", fc.LogOrigin, "layers", len(layers))
	return f, nil
}

// settleAll is forget's wait for every wing that can lag (nil when none
// can): each in turn, the first error ending it.
func settleAll(settles []func(context.Context) error) func(context.Context) error {
	if len(settles) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, settle := range settles {
			if err := settle(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// engineOwner names this instance in forget leases: the same host and
// admin address after a restart (so a crashed instance resumes its own
// requests at once), different for each instance sharing a ledger.
func engineOwner(adminListen string) string {
	host, _ := os.Hostname()
	return host + "/" + adminListen
}
