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
