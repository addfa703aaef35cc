package config

// OnRestore is capture.on_restore: what the relays do once a store shows
// that it was restored from a backup (capture.store; a Pinecone index
// re-created or replaced), which may hold records of subjects forgotten
// since (docs/forget.md, "Replay after a restore").
type OnRestore string

const (
	OnRestoreRefuse OnRestore = "refuse" // refuse writes to configured tables until lethe-proxy replay ran (default)
	OnRestoreWarn   OnRestore = "warn"   // log a warning and keep relaying
)

// Refuses reports whether writes are refused after a restore (refuse, the
// default when unset).
func (o OnRestore) Refuses() bool { return o != OnRestoreWarn }
