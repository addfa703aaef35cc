package capture

import "github.com/lethe-privacy/lethe/ledger"

// CodeRestored: a store was restored from a backup and the forgets
// completed since may have come back; writes to it are held until
// lethe-proxy replay re-applied them (capture.on_restore: refuse).
const CodeRestored = "LT006"

// Hold refuses every write of store that Prepare sees (writes to
// configured tables, with subjects or unattributed) with r, counted in
// Stats.Refused, until Release. Deletes pass: they add no personal data.
// A wing holds its store when it sees a restore; a second Hold replaces
// the refusal.
func (c *Capture) Hold(store ledger.Store, r Refusal) {
	c.holds.Store(store, &r)
}

// Release ends Hold for store; it reports whether store was held.
func (c *Capture) Release(store ledger.Store) bool {
	_, held := c.holds.LoadAndDelete(store)
	return held
}

// Held reports whether store's writes are held.
func (c *Capture) Held(store ledger.Store) bool {
	_, held := c.holds.Load(store)
	return held
}

// held is the refusal of a held store's write, counted; nil when store
// is not held.
func (c *Capture) held(store ledger.Store) *Refusal {
	r, ok := c.holds.Load(store)
	if !ok {
		return nil
	}
	c.Stats.Refused.Add(1)
	copied := *r.(*Refusal)
	return &copied
}

// Restore is a restore a wing saw of its store, in the words its logs and
// refusals use.
type Restore struct {
	Store  ledger.Store
	Signal string // why the store is taken to be restored
	// What happened and what is refused, for the log ("capture.store was
	// restored from a backup"; "writes to the configured tables").
	Happened, Writes string
	// Message and LogReason of the refusal (see Refusal).
	Message, LogReason string
}

// RestoreSeen applies capture.on_restore to r: refuse holds the store's
// writes with CodeRestored (logged as an error when they were not held
// yet) until Release; otherwise it only warns, and writes are relayed.
func (c *Capture) RestoreSeen(r Restore, refuse bool) {
	const risk = ", which may hold records of subjects forgotten since; "
	if !refuse {
		c.log.Warn("restore detection: "+r.Happened+risk+"run lethe-proxy replay (capture.on_restore is warn: writes are relayed)",
			"signal", r.Signal)
		return
	}
	if !c.Held(r.Store) {
		c.log.Error("restore detection: "+r.Happened+risk+r.Writes+" are refused (LT006) until lethe-proxy replay ran",
			"signal", r.Signal)
	}
	c.Hold(r.Store, Refusal{
		Code:      CodeRestored,
		Message:   r.Message,
		Hint:      "An operator runs: lethe-proxy replay --config FILE (docs/forget.md, \"Replay after a restore\"); capture.on_restore: warn relays writes instead.",
		LogReason: r.LogReason,
	})
}
