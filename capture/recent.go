package capture

import (
	"bytes"
	"crypto/sha256"
	"slices"
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
	cur, prev map[recentKey]recentValue
}

// recentKey is a record. Records whose ids the store generates cannot be
// told apart in an intent's entries, so each of their entries is counted
// under its one subject instead (id "", subject set).
type recentKey struct {
	table, id string
	subject   ledger.SubjectHash
}

// recentValue is a record's set of subjects (subjectSet), or for
// generated ids how many entries named the subject.
type recentValue struct {
	subjects ledger.SubjectHash
	count    int
}

// NewRecent keeps about limit records per generation (default 100000).
func NewRecent(limit int) *Recent {
	if limit <= 0 {
		limit = 100_000
	}
	return &Recent{limit: limit, cur: map[recentKey]recentValue{}, prev: map[recentKey]recentValue{}}
}

// subjectSet names a set of subjects, whatever their order and repeats:
// the subject itself when there is one, else a hash of them sorted.
func subjectSet(subjects []ledger.SubjectHash) ledger.SubjectHash {
	if len(subjects) == 1 {
		return subjects[0]
	}
	s := slices.Clone(subjects)
	slices.SortFunc(s, func(a, b ledger.SubjectHash) int { return bytes.Compare(a[:], b[:]) })
	s = slices.Compact(s)
	if len(s) == 1 {
		return s[0]
	}
	h := sha256.New()
	for _, x := range s {
		h.Write(x[:])
	}
	var out ledger.SubjectHash
	h.Sum(out[:0])
	return out
}

// add remembers the records of an intent's entries, in which the entries
// of one record are consecutive (Capture.entries makes them so).
func (r *Recent) add(entries []ledger.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < len(entries); {
		e := entries[i]
		j := i + 1
		for j < len(entries) && entries[j].Table == e.Table && entries[j].RecordID == e.RecordID && entries[j].Store == e.Store {
			j++
		}
		run := entries[i:j]
		i = j
		switch {
		case e.Store != ledger.StorePostgres || e.Unattributed:
		case e.RecordID != "" && len(run) == 1:
			r.put(recentKey{table: e.Table, id: e.RecordID}, recentValue{subjects: e.Subject})
		case e.RecordID != "":
			subjects := make([]ledger.SubjectHash, len(run))
			for k, x := range run {
				subjects[k] = x.Subject
			}
			r.put(recentKey{table: e.Table, id: e.RecordID}, recentValue{subjects: subjectSet(subjects)})
		default:
			for _, x := range run { // one count per entry
				k := recentKey{table: e.Table, subject: x.Subject}
				v := r.cur[k]
				v.count++
				r.put(k, v)
			}
		}
	}
}

func (r *Recent) put(k recentKey, v recentValue) {
	if _, ok := r.cur[k]; !ok && len(r.cur) >= r.limit {
		r.prev, r.cur = r.cur, make(map[recentKey]recentValue, r.limit)
	}
	r.cur[k] = v
}

// Check compares a committed row of table with the proxy's intent for it
// and forgets the intent (a row is checked once).
func (r *Recent) Check(table, id string, stored []ledger.SubjectHash) Verdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := recentKey{table: table, id: id}
	for _, gen := range []map[recentKey]recentValue{r.cur, r.prev} {
		if v, ok := gen[k]; ok {
			delete(gen, k)
			if len(stored) > 0 && v.subjects == subjectSet(stored) {
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
		if gen[k].count == 0 {
			gen = r.prev
		}
		v := gen[k]
		if v.count == 0 {
			return false
		}
		if dryRun {
			continue
		}
		if v.count == 1 {
			delete(gen, k)
		} else {
			v.count--
			gen[k] = v
		}
	}
	return true
}
