package capture

import (
	"slices"
	"strings"
	"sync"

	"github.com/lethe-privacy/lethe/ledger"
)

// Verdict is how a committed row compares with the proxy's intent for it.
type Verdict uint8

const (
	// Agree: the proxy tagged the record with the subjects it stores.
	Agree Verdict = iota + 1
	// Disagree: the proxy tagged the record, with other subjects (its
	// reading of the statement differs from what the server stored).
	Disagree
	// NotSeen: no recent intent of this proxy names the record (written
	// around it, through another proxy, or longer ago than Recent keeps).
	NotSeen
)

// Recent remembers the subjects of PostgreSQL records this proxy recently
// made intents for, so that the WAL follower can compare them with the
// values stored: a live check of the proxy's parser. It keeps at most
// about twice its limit of records (two generations: the older is dropped
// when the newer fills up); each record is checked once. Safe for
// concurrent use.
type Recent struct {
	mu        sync.Mutex
	limit     int
	cur, prev map[recentKey][]ledger.SubjectHash
}

// recentKey is a record. Records whose ids the store generates cannot be
// told apart in an intent's entries, so each of their entries is counted
// under its one subject instead (id "", subject set).
type recentKey struct {
	table, id string
	subject   ledger.SubjectHash
}

// NewRecent keeps about limit records per generation (default 100000).
func NewRecent(limit int) *Recent {
	if limit <= 0 {
		limit = 100_000
	}
	return &Recent{limit: limit, cur: map[recentKey][]ledger.SubjectHash{}, prev: map[recentKey][]ledger.SubjectHash{}}
}

// subjectsKey is a set of subjects in one string, whatever their order.
func subjectsKey(subjects []ledger.SubjectHash) string {
	s := slices.Clone(subjects)
	slices.SortFunc(s, func(a, b ledger.SubjectHash) int { return strings.Compare(string(a[:]), string(b[:])) })
	s = slices.Compact(s)
	var b strings.Builder
	for _, h := range s {
		b.Write(h[:])
	}
	return b.String()
}

// add remembers the records of an intent's entries.
func (r *Recent) add(entries []ledger.Entry) {
	byRecord := map[recentKey][]ledger.SubjectHash{}
	for _, e := range entries {
		if e.Store != ledger.StorePostgres || e.Unattributed {
			continue
		}
		k := recentKey{table: e.Table, id: e.RecordID}
		byRecord[k] = append(byRecord[k], e.Subject)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, subjects := range byRecord {
		if k.id != "" {
			r.put(k, subjects)
			continue
		}
		for _, s := range subjects { // one count per entry
			g := recentKey{table: k.table, subject: s}
			r.put(g, append(r.cur[g], s))
		}
	}
}

func (r *Recent) put(k recentKey, v []ledger.SubjectHash) {
	if len(r.cur) >= r.limit {
		r.prev, r.cur = r.cur, make(map[recentKey][]ledger.SubjectHash, r.limit)
	}
	r.cur[k] = v
}

// Check compares a committed row of table with the proxy's intent for it
// and forgets the intent (a row is checked once).
func (r *Recent) Check(table, id string, stored []ledger.SubjectHash) Verdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, gen := range []map[recentKey][]ledger.SubjectHash{r.cur, r.prev} {
		k := recentKey{table: table, id: id}
		if tagged, ok := gen[k]; ok {
			delete(gen, k)
			if subjectsKey(tagged) == subjectsKey(stored) {
				return Agree
			}
			return Disagree
		}
	}
	if len(stored) == 0 || !r.takeGenerated(table, stored, true) {
		return NotSeen
	}
	r.takeGenerated(table, stored, false)
	return Agree
}

// takeGenerated reports whether every subject of stored has a count
// among the generated-id records of table, and takes one of each unless
// dryRun.
func (r *Recent) takeGenerated(table string, stored []ledger.SubjectHash, dryRun bool) bool {
	for _, s := range stored {
		k := recentKey{table: table, subject: s}
		gen := r.cur
		if len(gen[k]) == 0 {
			gen = r.prev
		}
		rows := gen[k]
		if len(rows) == 0 {
			return false
		}
		if dryRun {
			continue
		}
		if len(rows) == 1 {
			delete(gen, k)
		} else {
			gen[k] = rows[1:]
		}
	}
	return true
}
