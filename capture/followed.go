package capture

import (
	"sync"
	"sync/atomic"
)

// Followed is the set of PostgreSQL tables whose every committed change a
// WAL follower streams now: each is in the follower's publication in full
// (with its inheritance children; partitions through their root) and the
// slot is in place. A committed write to such a table is in the slot
// until the follower makes it durable in the ledger, so the proxy need
// not make a write-ahead intent for it (Config.Followed).
//
// The follower sets the set after each refresh of its publications and
// empties it when it stops streaming. DDL through the proxy suspends the
// set (Suspend) until a refresh that began after the DDL sets it again: a
// table renamed, dropped or re-created may have left the publication, and
// its next writes take intents until the follower says otherwise. Reads
// take no lock.
type Followed struct {
	mu    sync.Mutex // serialises Set and Suspend
	gen   atomic.Uint64
	names atomic.Pointer[map[string]struct{}]
}

// NewFollowed returns an empty set.
func NewFollowed() *Followed {
	f := &Followed{}
	f.names.Store(&map[string]struct{}{})
	return f
}

// Has reports whether table ("schema.name", as in extract.Tag.Table) is
// followed. A nil set follows nothing.
func (f *Followed) Has(table string) bool {
	if f == nil {
		return false
	}
	_, ok := (*f.names.Load())[table]
	return ok
}

// Len is the number of tables followed.
func (f *Followed) Len() int { return len(*f.names.Load()) }

// Generation is read by the follower before a refresh and given to Set
// after it.
func (f *Followed) Generation() uint64 { return f.gen.Load() }

// Set makes tables the followed set, unless the set was suspended since
// generation gen was read: then the refresh may predate DDL, and Set
// reports false and changes nothing.
func (f *Followed) Set(gen uint64, tables []string) bool {
	next := make(map[string]struct{}, len(tables))
	for _, t := range tables {
		next[t] = struct{}{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen.Load() != gen {
		return false
	}
	f.names.Store(&next)
	return true
}

// Suspend empties the set until a refresh that begins after it: DDL went
// through the proxy, or the follower stopped streaming. A nil set has
// nothing to suspend.
func (f *Followed) Suspend() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen.Add(1)
	f.names.Store(&map[string]struct{}{})
}
